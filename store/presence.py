"""Presence in the review queue: which draft each editor has open, as a soft claim.

One `desk_presence` row per editor. Opening a draft takes (or moves) the
editor's row to it, with an expiry `ttl` ahead; while the draft stays on their
screen the app refreshes it; deciding, opening another draft or signing out
releases it. An expired row means nothing.

It is a claim, not a lock: other editors' queues skip a draft someone else holds
(`held_by_others`), but they can show and open it, and see who has it
(`others_on`). Decisions are still settled by the status machine's
compare-and-set, whatever this table says.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, case, delete, exists, select
from sqlmodel import Session

from store.models import DeskPresence, utcnow
from store.upsert import dialect_insert

__all__ = ["Presence", "held_by_others", "hold", "others_on", "release", "utcnow"]


@dataclass(frozen=True)
class Presence:
    editor: str
    item_id: int
    opened_at: datetime
    expires_at: datetime

    def open_for(self, now: datetime | None = None) -> timedelta:
        return (now or utcnow()) - self.opened_at


def hold(
    session: Session, editor: str, item_id: int, ttl: float, now: datetime | None = None
) -> None:
    """`editor` has `item_id` open: take or refresh their claim for `ttl` seconds.

    One statement (an upsert on the editor's row), so two tabs of one editor or a
    refresh racing a move never leave two rows. `opened_at` is kept while the
    editor stays on the same item, and restarts when they move to another."""
    now = now or utcnow()
    values = {
        "editor": editor,
        "item_id": item_id,
        "opened_at": now,
        "refreshed_at": now,
        "expires_at": now + timedelta(seconds=ttl),
    }
    insert = dialect_insert(session.get_bind().dialect.name)
    statement = insert(DeskPresence).values(**values)
    table: Any = DeskPresence.__table__
    same_item = table.c.item_id == statement.excluded.item_id
    statement = statement.on_conflict_do_update(
        index_elements=["editor"],
        set_={
            "item_id": statement.excluded.item_id,
            # still open since then, or opened just now
            "opened_at": _case(same_item, table.c.opened_at, statement.excluded.opened_at),
            "refreshed_at": statement.excluded.refreshed_at,
            "expires_at": statement.excluded.expires_at,
        },
    )
    session.execute(statement)


def _case(condition: Any, then: Any, otherwise: Any) -> Any:
    return case((condition, then), else_=otherwise)


def release(session: Session, editor: str, item_id: int | None = None) -> None:
    """The editor decided or moved on: drop their claim (only on `item_id`, if given)."""
    statement = delete(DeskPresence).where(DeskPresence.editor == editor)  # type: ignore[arg-type]
    if item_id is not None:
        statement = statement.where(DeskPresence.item_id == item_id)  # type: ignore[arg-type]
    session.execute(statement)


def others_on(
    session: Session, item_id: int, editor: str, now: datetime | None = None
) -> list[Presence]:
    """The other editors who have `item_id` open now (unexpired), longest first."""
    rows = session.scalars(
        select(DeskPresence)
        .where(
            DeskPresence.item_id == item_id,
            DeskPresence.editor != editor,
            DeskPresence.expires_at > (now or utcnow()),
        )
        .order_by(DeskPresence.opened_at)  # type: ignore[arg-type]
    )
    return [Presence(r.editor, r.item_id, r.opened_at, r.expires_at) for r in rows]


def held_by_others(item_id: Any, editor: str, now: datetime | None = None) -> Any:
    """SQL: another editor holds the item `item_id` (a column) with an unexpired
    claim, and `editor` does not hold it too (a draft on one's own screen is never
    skipped, even when a second editor opened it meanwhile)."""
    now = now or utcnow()
    mine = exists().where(
        DeskPresence.item_id == item_id,
        DeskPresence.editor == editor,
        DeskPresence.expires_at > now,
    )
    theirs = exists().where(
        DeskPresence.item_id == item_id,
        DeskPresence.editor != editor,
        DeskPresence.expires_at > now,
    )
    return and_(theirs, ~mine)
