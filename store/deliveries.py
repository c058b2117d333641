"""What the status machine must know about publishing: whether it has started.

An approval can be taken back (approved -> draft) only while no target has, or may
have, the item: no delivery delivered, tried, or claimed by a worker right now.
Then its untried delivery rows go, so a re-approved text is published afresh.

Also the deliveries that need a person (`troubles`: refused for good, or failing
and waiting for their next try), each target's state of an item (`states`), and the
audit event of an editor's Retry (`record_retry`). A Retry is not a status move: its
event keeps the item's status on both sides (as an assignment's does,
store/assignments.py) and does not bump the item's version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, delete, or_, select, update
from sqlalchemy.orm import aliased
from sqlmodel import Session, col

from store import audit_chain
from store.models import AuditEvent, Delivery, Item, utcnow

PUBLISH, RETRACT = "publish", "retract"
PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"
# The item statuses in which a delivery of each kind is still to be made.
LIVE = {PUBLISH: "approved", RETRACT: "retracted"}
RETRIED = "delivery retried"  # the reason of a Retry's audit event


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


def still_wanted():  # type: ignore[no-untyped-def]
    """SQL: the delivery's item is in the status its kind is still made in (a
    publication of an approved item, a retraction of a retracted one)."""
    item = aliased(Item)  # its own FROM: the caller may join Item too
    live = (and_(Delivery.kind == kind, item.status == st) for kind, st in LIVE.items())
    return select(item.id).where(item.id == Delivery.item_id, or_(*live)).exists()


@dataclass(frozen=True)
class Trouble:
    """A delivery that needs a person: refused for good (`failed`), or failing for
    a passing reason and waiting until `next_attempt_at` (`pending`)."""

    item_id: int
    headline: str
    item_status: str
    target: str
    kind: str
    state: str
    attempts: int
    error: str
    since: datetime
    next_attempt_at: datetime | None


def troubles(session: Session, item_ids: Sequence[int] | None = None) -> list[Trouble]:
    """Failed deliveries, and pending ones that failed and wait for their next try,
    of items still to be published or retracted; oldest item first."""
    query = (
        select(Delivery, Item.headline, Item.title, Item.status)
        .join(Item, Item.id == Delivery.item_id)  # type: ignore[arg-type]
        .where(
            still_wanted(),
            or_(
                Delivery.state == FAILED,
                and_(Delivery.state == PENDING, col(Delivery.next_attempt_at).is_not(None)),
            ),
        )
        .order_by(col(Delivery.item_id), col(Delivery.id))
    )
    if item_ids is not None:
        query = query.where(col(Delivery.item_id).in_(item_ids))
    return [
        Trouble(
            d.item_id,
            headline or title or f"item {d.item_id}",
            status,
            d.target,
            d.kind,
            d.state,
            d.attempts,
            d.last_error or "",
            d.updated_at,
            d.next_attempt_at,
        )
        for d, headline, title, status in session.execute(query).all()
    ]


NOT_SENT, SENDING = "not sent yet", "sending"


@dataclass(frozen=True)
class TargetState:
    """An item's publication on one target: delivered, failed, sending (a worker
    holds it now), pending (not tried yet, or `next_attempt_at` after a passing
    failure), or not sent yet (no row: the next publish writes it)."""

    state: str
    attempts: int = 0
    next_attempt_at: datetime | None = None


def target_states(
    session: Session, item_ids: Sequence[int], targets: Sequence[str]
) -> dict[int, dict[str, TargetState]]:
    """Each item's publication state on each target named (and on any other target
    it has a row for)."""
    out = {item_id: dict.fromkeys(targets, TargetState(NOT_SENT)) for item_id in item_ids}
    now = utcnow()
    rows = session.scalars(
        select(Delivery).where(col(Delivery.item_id).in_(list(item_ids)), Delivery.kind == PUBLISH)
    ).all()
    for row in rows:
        state = row.state
        if state == PENDING and row.claimed_until is not None and row.claimed_until > now:
            state = SENDING
        out[row.item_id][row.target] = TargetState(state, row.attempts, row.next_attempt_at)
    return out


def record_retry(
    session: Session, item_id: int, *, actor: str, targets: Sequence[str]
) -> AuditEvent:
    """The audit event of a Retry: who asked, for which targets. The caller commits."""
    status = session.execute(select(Item.status).where(Item.id == item_id)).scalar_one()
    event = AuditEvent(
        item_id=item_id,
        at=utcnow(),
        actor=actor,
        from_status=status,
        to_status=status,
        reason=RETRIED,
        details={"targets": sorted(targets)},
    )
    return audit_chain.append(session, event)


# ----------------------------------------------------------------- corrections

CORRECTION_KEY = "correction"  # in the audit event of published -> draft: its revision


@dataclass(frozen=True)
class Correction:
    """An item reopened as a correction: its `revision` (1 for the first), the
    editor's `note` (the move's reason) and when it was reopened."""

    revision: int
    note: str
    at: datetime
    first_published_at: str | None  # the first publication's time, as it was sent


def archive_publication(session: Session, item_id: int) -> int:
    """A published item reopened as a correction: its publication rows are kept,
    under the kind `publish-r<N>` (the Atom feed still reads them until the
    correction replaces them), so the corrected text gets delivery rows of its own.
    Returns N, the correction's revision."""
    earlier = session.scalars(
        select(Delivery.kind).where(
            Delivery.item_id == item_id, col(Delivery.kind).like(f"{PUBLISH}-r%")
        )
    ).all()
    revision = 1 + max((int(k.rsplit("-r", 1)[1]) for k in earlier), default=0)
    session.execute(
        update(Delivery)
        .where(Delivery.item_id == item_id, Delivery.kind == PUBLISH)  # type: ignore[arg-type]
        .values(kind=f"{PUBLISH}-r{revision}")
    )
    return revision


def correction(session: Session, item_id: int) -> Correction | None:
    """The item's latest reopening as a correction, None if it never was one."""
    event = session.scalars(
        select(AuditEvent)
        .where(
            AuditEvent.item_id == item_id,
            AuditEvent.from_status == "published",
            AuditEvent.to_status == "draft",
        )
        .order_by(col(AuditEvent.id).desc())
    ).first()
    if event is None:
        return None
    revision = int((event.details or {}).get(CORRECTION_KEY) or 1)
    first = session.scalars(
        select(Delivery.payload)
        .where(Delivery.item_id == item_id, Delivery.kind == f"{PUBLISH}-r1")
        .order_by(col(Delivery.id))
    ).first()
    return Correction(revision, event.reason or "", event.at, (first or {}).get("published_at"))
