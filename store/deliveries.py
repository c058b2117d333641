"""What the status machine must know about publishing: whether it has started.

An approval can be taken back (approved -> draft) only while no target has, or may
have, the item: no delivery delivered, tried, or claimed by a worker right now.
Then its untried delivery rows go, so a re-approved text is published afresh.
"""

from __future__ import annotations

from sqlalchemy import delete, or_, select
from sqlmodel import Session, col

from store.models import Delivery, utcnow

PUBLISH, RETRACT = "publish", "retract"
PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"


def publication_started(session: Session, item_id: int) -> list[str]:
    """The targets that have (or may have) the item: delivered, tried or claimed."""
    now = utcnow()
    rows = session.scalars(
        select(Delivery.target).where(
            Delivery.item_id == item_id,
            Delivery.kind == PUBLISH,
            or_(
                Delivery.state == DELIVERED,
                col(Delivery.attempts) > 0,
                col(Delivery.claimed_until) > now,
            ),
        )
    ).all()
    return sorted(rows)


def forget_untried(session: Session, item_id: int) -> None:
    session.execute(
        delete(Delivery).where(
            Delivery.item_id == item_id,  # type: ignore[arg-type]
            Delivery.kind == PUBLISH,  # type: ignore[arg-type]
            Delivery.attempts == 0,  # type: ignore[arg-type]
            Delivery.state != DELIVERED,  # type: ignore[arg-type]
        )
    )
