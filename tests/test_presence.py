"""Soft claims in the review queue (store/presence.py): who has which draft open,
for how long, and which drafts another editor's queue skips. On SQLite and
PostgreSQL, with items made by the real pipeline; and the 0007 migration from
the revision before it, with data in it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import select, text
from sqlalchemy.engine import Engine
from sqlmodel import Session

from store import presence
from store.db import alembic_config, make_engine, migrate, session_scope
from store.models import DeskPresence, Item
from tests.review_seed import seed_queue

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
TTL = 300


def _held(engine: Engine, editor: str, now: datetime) -> set[int]:
    """The drafts `editor`'s queue would skip at `now`."""
    with Session(engine) as session:
        statement = select(Item.id).where(presence.held_by_others(Item.id, editor, now))
        return set(session.scalars(statement))


def test_a_claim_is_seen_by_others_refreshed_moved_and_expires(engine: Engine) -> None:
    ids = seed_queue(engine, ("bridge", "school"))
    bridge, school = ids["bridge"], ids["school"]
    with session_scope(engine) as session:
        presence.hold(session, "alice", bridge, TTL, now=T0)
    assert _held(engine, "bob", T0 + timedelta(seconds=10)) == {bridge}
    assert _held(engine, "alice", T0 + timedelta(seconds=10)) == set()  # not her own
    with Session(engine) as session:
        (seen,) = presence.others_on(session, bridge, "bob", now=T0 + timedelta(seconds=120))
        assert presence.others_on(session, bridge, "alice", now=T0) == []
    assert (seen.editor, seen.open_for(T0 + timedelta(seconds=120))) == (
        "alice",
        timedelta(seconds=120),
    )
    # Refreshed while open: the opening time stays, the expiry moves on.
    with session_scope(engine) as session:
        presence.hold(session, "alice", bridge, TTL, now=T0 + timedelta(seconds=280))
    later = T0 + timedelta(seconds=400)
    assert _held(engine, "bob", later) == {bridge}
    with Session(engine) as session:
        (seen,) = presence.others_on(session, bridge, "bob", now=later)
    assert seen.opened_at == T0
    # Past the expiry nobody holds it.
    assert _held(engine, "bob", T0 + timedelta(seconds=280 + TTL + 1)) == set()
    # Moving on moves the claim (one row per editor), and restarts its clock.
    with session_scope(engine) as session:
        presence.hold(session, "alice", school, TTL, now=later)
    assert _held(engine, "bob", later) == {school}
    with Session(engine) as session:
        rows = list(session.scalars(select(DeskPresence)))
    assert [(r.editor, r.item_id, r.opened_at) for r in rows] == [("alice", school, later)]
    # Deciding releases it.
    with session_scope(engine) as session:
        presence.release(session, "alice", bridge)  # not the held one: kept
    assert _held(engine, "bob", later) == {school}
    with session_scope(engine) as session:
        presence.release(session, "alice")
    assert _held(engine, "bob", later) == set()


def test_two_editors_hold_one_draft_each_and_see_each_other(engine: Engine) -> None:
    ids = seed_queue(engine, ("bridge", "school"))
    with session_scope(engine) as session:
        presence.hold(session, "alice", ids["bridge"], TTL, now=T0)
        presence.hold(session, "bob", ids["bridge"], TTL, now=T0 + timedelta(seconds=30))
    now = T0 + timedelta(seconds=60)
    with Session(engine) as session:
        assert [p.editor for p in presence.others_on(session, ids["bridge"], "carol", now)] == [
            "alice",
            "bob",
        ]
        assert [p.editor for p in presence.others_on(session, ids["bridge"], "bob", now)] == [
            "alice"
        ]


REVISION = "0007_presence"


def test_upgrade_to_0007_keeps_items_and_adds_an_empty_presence_table(db_url: str) -> None:
    engine = make_engine(db_url)
    config = alembic_config(engine)
    previous = ScriptDirectory.from_config(config).get_revision(REVISION).down_revision
    assert isinstance(previous, str)
    command.upgrade(config, previous)
    with engine.begin() as conn:
        for n in range(3):
            conn.execute(
                text(
                    "INSERT INTO items (dedup_key, status, version, attempts, recorded_reply, "
                    "seen_at, created_at, updated_at, headline) VALUES (:key, 'draft', 1, 0, "
                    "false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, :h)"
                ),
                {"key": f"https://harrowby.example.test/{n}", "h": f"Headline {n}"},
            )
    migrate(engine)
    with session_scope(engine) as session:
        items = list(session.scalars(select(Item).order_by(Item.id)))
        assert [i.headline for i in items] == ["Headline 0", "Headline 1", "Headline 2"]
        assert list(session.scalars(select(DeskPresence))) == []
        presence.hold(session, "alice", items[0].id or 0, TTL, now=T0)
    assert _held(engine, "bob", T0) == {items[0].id}
    engine.dispose()
