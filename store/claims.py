"""Claims with leases: several runs (on several machines) share the work, and do
each piece of it once.

A run claims a feed before polling it and a `new` item before fetching its page
or calling the model. A claim is a lease: it names the run and holds until a
time, which the live run pushes forward (its heartbeat). A run that was killed
stops pushing; when its lease has passed, another run takes the work over.

Fencing: taking an item's claim bumps the item's `version`. The worker's result
is committed by the status machine's compare-and-set on (status, version), so a
worker that lost its claim (its lease ran out while it was still busy) gets a
`Conflict` instead of writing over the new holder. A feed's claim carries a
`claim_token` that its write checks the same way.

PostgreSQL: the claim query picks rows with `FOR UPDATE SKIP LOCKED`, so runs
claiming at the same moment take different items without waiting on each other.
SQLite has a single writer: several runs would only queue on its lock, so there
one `copydesk run` works at a time (`acquire_run_slot`), and claims keep the
same code path (and fencing) as on PostgreSQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import (
    Integer,
    and_,
    bindparam,
    exists,
    func,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Connection
from sqlmodel import Session, col

from store.db import connection_of
from store.models import Feed, Item, Run, utcnow

NEW = "new"  # store.status.NEW; claims never change a status
# The waiting items' ids, WHERE status = 'new' (migration 0041): what a claim reads.
WAITING_INDEX = "ix_items_waiting"


@dataclass(frozen=True)
class ClaimedItem:
    """A claimed item's small fields (no source text): what a worker starts from."""

    item_id: int
    version: int  # after the claim: the compare-and-set fence
    dedup_key: str
    source_url: str | None
    title: str | None
    has_text: bool
    attempts: int
    feed_id: int | None
    language: str | None = None  # the language its feed declared


def _free(table, now: Any):  # type: ignore[no-untyped-def]  # a time, or a bound parameter
    return or_(table.c.claim_until.is_(None), table.c.claim_until < now)


def claim_items(session: Session, run_id: int, limit: int, lease: timedelta) -> list[ClaimedItem]:
    """Claim up to `limit` waiting items (oldest first) that no live run holds."""
    now = utcnow()
    postgresql = session.get_bind().dialect.name == "postgresql"
    rows = session.connection().execute(
        _CLAIM[postgresql], {"now": now, "limit": limit, "run_id": run_id, "until": now + lease}
    )
    return sorted((ClaimedItem(*row) for row in rows), key=lambda c: c.item_id)


def _claim_statement(skip_locked: bool):  # type: ignore[no-untyped-def]
    """The claim, one UPDATE ... RETURNING whose values are bound at each call."""
    items = Item.__table__
    free = _free(items, bindparam("now", type_=items.c.claim_until.type))
    # The status written into the statement, not bound: the waiting items' partial index
    # (`ix_items_waiting`, WHERE status = 'new'; migration 0041) serves only a query
    # whose WHERE implies its predicate, which `status = $1` does not in a generic plan
    # (https://www.postgresql.org/docs/15/indexes-partial.html: "parameterized query
    # clauses do not work with a partial index"). Without it a claim walked every item
    # already done (issue 24, session 17).
    waiting = items.c.status == literal_column(f"'{NEW}'")
    pick = (
        select(items.c.id)
        .where(waiting, free)
        .order_by(items.c.id)
        .limit(bindparam("limit", type_=Integer))
    )
    if skip_locked:
        pick = pick.with_for_update(skip_locked=True)
    # A CTE, not `id IN (SELECT ... LIMIT n FOR UPDATE SKIP LOCKED)`: PostgreSQL may run
    # such a subquery again for each row it updates, claiming far more than n rows. A
    # CTE that locks rows is evaluated once. On PostgreSQL the UPDATE joins it (UPDATE
    # ... FROM picked: each row by its key) where `id IN (SELECT ...)` was planned as a
    # hash join over every waiting item; SQLite keeps the IN (UPDATE ... FROM needs
    # SQLite 3.33) and looks each id up by its key either way.
    picked = pick.cte("picked")
    picks = items.c.id == picked.c.id if skip_locked else items.c.id.in_(select(picked.c.id))
    return (
        update(items)
        .where(picks, waiting, free)
        .values(
            claimed_by=bindparam("run_id", type_=items.c.claimed_by.type),
            claim_until=bindparam("until", type_=items.c.claim_until.type),
            version=items.c.version + 1,
        )
        .returning(
            items.c.id,
            items.c.version,
            items.c.dedup_key,
            items.c.source_url,
            items.c.title,
            # Whether it has a text, as `length(...) IS NOT NULL`'s twin: in an UPDATE's
            # RETURNING, SQLite 3.40 answered `source_text IS NOT NULL` with 1 for an
            # item without one (a row later SELECTed says NULL), so every item looked as
            # if it had its text and every page reader read it back for nothing.
            func.coalesce(func.length(items.c.source_text), -1) >= 0,
            items.c.attempts,
            items.c.feed_id,
            items.c.language,
        )
    )


# Built once, by whether rows are picked FOR UPDATE SKIP LOCKED (PostgreSQL) or not
# (issue 24, session 12): building the statement, a CTE inside an UPDATE, cost more
# CPU than running it, and a run claims a few items at a time, about 80 times in 320.
_CLAIM = {skip_locked: _claim_statement(skip_locked) for skip_locked in (False, True)}


def claim_feed(session: Session, feed_id: int, run_id: int, lease: timedelta) -> int | None:
    """The feed's new claim token, or None when a live run is polling it."""
    feeds = Feed.__table__
    now = utcnow()
    token = (
        session.connection()
        .execute(
            update(feeds)
            .where(feeds.c.id == feed_id, _free(feeds, now))
            .values(claimed_by=run_id, claim_until=now + lease, claim_token=feeds.c.claim_token + 1)
            .returning(feeds.c.claim_token)
        )
        .scalar()
    )
    return token


def release_feed(session: Session, feed_id: int, token: int) -> bool:
    """Inside the transaction that writes what the poll brought: end the claim, and
    say whether it was still ours (False: another run took it over, write nothing).
    On PostgreSQL the row stays locked until the commit, so no takeover can slip in."""
    feeds = Feed.__table__
    result = session.connection().execute(
        update(feeds)
        .where(feeds.c.id == feed_id, feeds.c.claim_token == token)
        .values(claimed_by=None, claim_until=None)
    )
    return result.rowcount == 1


def renew(session: Session, run_id: int, lease: timedelta) -> None:
    """Push forward the leases this run still holds (called by its heartbeat)."""
    until = utcnow() + lease
    items, feeds = Item.__table__, Feed.__table__
    connection = session.connection()
    held = select(items.c.id).where(items.c.claimed_by == run_id, items.c.status == NEW)
    if connection.dialect.name == "postgresql":
        # Rows the run's writer has locked are being finished (their claim ends with
        # that commit): skip them rather than wait. Waiting would deadlock against a
        # writer committing several items at once, each transaction holding rows the
        # other wants. A row skipped now is renewed on the next beat.
        held = held.with_for_update(skip_locked=True)
    picked = held.cte("held")
    connection.execute(
        update(items).where(items.c.id.in_(select(picked.c.id))).values(claim_until=until)
    )
    connection.execute(
        update(feeds)
        .where(feeds.c.claimed_by == run_id, feeds.c.claim_until.is_not(None))
        .values(claim_until=until)
    )


@dataclass(frozen=True)
class Hold:
    """Whether a worker may still work on an item (`check_hold`), and the item's text
    as stored, read in the same SELECT: the ledger packs a model call's parts against
    it (issue 24: one read of the item per model call, not two)."""

    held: bool
    source_text: str | None


def check_hold(
    session: Session | Connection, item_id: int, run_id: int | None, version: int
) -> Hold:
    """Whether a worker of run `run_id` that took the item at `version` may still
    work on it (before each model call: a lost lease sends nothing). The item must
    be `new` at that version (a claim by another run bumps it), and a claimed item's
    lease this run's and not run out. An item never claimed (a submitted one) is
    fenced by its version alone."""
    row = connection_of(session).execute(_HOLDS, {"item_id": item_id}).first()
    if row is None:
        return Hold(False, None)
    if row.status != NEW or row.version != version:
        held = False
    elif row.claimed_by is None:
        held = True
    else:
        held = row.claimed_by == run_id and row.claim_until is not None
        held = held and row.claim_until > utcnow()
    return Hold(held, row.source_text)


_ITEMS = Item.__table__
# Built once (issue 24: a query built for every model call cost more CPU than running it).
_HOLDS = select(
    _ITEMS.c.status,  # type: ignore[attr-defined]
    _ITEMS.c.version,  # type: ignore[attr-defined]
    _ITEMS.c.claimed_by,  # type: ignore[attr-defined]
    _ITEMS.c.claim_until,  # type: ignore[attr-defined]
    _ITEMS.c.source_text,  # type: ignore[attr-defined]
).where(_ITEMS.c.id == bindparam("item_id"))  # type: ignore[attr-defined]


# check_hold's test in SQL, for a statement that writes only while the claim holds (a
# model call's ledger row: store/ledger.py `begin`); its parameters from `fence`.
HELD = exists().where(
    _ITEMS.c.id == bindparam("fence_item"),  # type: ignore[attr-defined]
    _ITEMS.c.status == NEW,  # type: ignore[attr-defined]
    _ITEMS.c.version == bindparam("fence_version"),  # type: ignore[attr-defined]
    or_(
        _ITEMS.c.claimed_by.is_(None),  # type: ignore[attr-defined]
        and_(
            _ITEMS.c.claimed_by == bindparam("fence_run"),  # type: ignore[attr-defined]
            _ITEMS.c.claim_until.is_not(None),  # type: ignore[attr-defined]
            _ITEMS.c.claim_until > bindparam("fence_now"),  # type: ignore[attr-defined]
        ),
    ),
)


def fence(item_id: int, run_id: int | None, version: int) -> dict[str, Any]:
    """HELD's parameters: a worker of run `run_id` that took the item at `version`."""
    return {
        "fence_item": item_id,
        "fence_run": run_id,
        "fence_version": version,
        "fence_now": utcnow(),
    }


def release_all(session: Session, run_id: int) -> None:
    """A run that ends hands back what it claimed and did not finish."""
    items, feeds = Item.__table__, Feed.__table__
    connection = session.connection()
    connection.execute(
        update(items)
        .where(items.c.claimed_by == run_id, items.c.status == NEW)
        .values(claimed_by=None, claim_until=None)
    )
    connection.execute(
        update(feeds).where(feeds.c.claimed_by == run_id).values(claimed_by=None, claim_until=None)
    )


def live_runs(session: Session, stale_after: timedelta, *, exclude: int | None = None) -> list[Run]:
    """`copydesk run`s that have not ended and whose heartbeat is recent."""
    since = utcnow() - stale_after
    query = select(Run).where(
        col(Run.ended_at).is_(None),
        Run.command == "run",
        col(Run.heartbeat_at) > since,
    )
    if exclude is not None:
        query = query.where(Run.id != exclude)
    return list(session.scalars(query.order_by(Run.id)))
