"""0024_feed_audit_events: a database made at the revision before it, holding drafts
and their chained audit events, comes out with `audit_events.item_id` nullable and
nothing else changed: every event hashes as before (the chain and its head hold),
SQLite's append-only triggers are the same ones (UPDATE, DELETE and INSERT OR
REPLACE refused), the unique prev_hash index still refuses a fork, PostgreSQL's
grants on the table are unchanged; and a feed's change, an event with no item,
joins the same chain and verifies. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import inspect, text
from sqlalchemy.exc import DatabaseError
from sqlmodel import Session

from copydesk.services import feeds
from store import audit_chain
from store.db import alembic_config, migrate
from store.models import Feed
from tests.migration_helpers import at_previous_revision, draft_in_sql

REVISION = "0024_feed_audit_events"


def _table_parts(engine) -> tuple[list[str], list[str], list[tuple[str, ...]]]:  # type: ignore[no-untyped-def]
    """SQLite: the triggers' SQL and the indexes' SQL on audit_events; PostgreSQL:
    its triggers' names, its indexes' definitions and the grants on it."""
    sqlite = (
        "SELECT sql FROM sqlite_master WHERE tbl_name = 'audit_events' AND type = '{}' "
        "ORDER BY name"
    )
    postgres = (
        "SELECT tgname FROM pg_trigger WHERE tgrelid = 'audit_events'::regclass "
        "AND NOT tgisinternal ORDER BY 1",
        "SELECT indexdef FROM pg_indexes WHERE tablename = 'audit_events' ORDER BY 1",
        "SELECT grantee, privilege_type FROM information_schema.role_table_grants "
        "WHERE table_name = 'audit_events' ORDER BY 1, 2",
    )
    queries = (
        (sqlite.format("trigger"), sqlite.format("index"), "SELECT 1 WHERE 0 = 1")
        if engine.dialect.name == "sqlite"
        else postgres
    )
    with engine.connect() as conn:
        found = [[tuple(row) for row in conn.execute(text(q))] for q in queries]
    return found[0], found[1], found[2]  # type: ignore[return-value]


def test_upgrade_makes_item_id_nullable_and_keeps_the_chain_and_its_guards(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    for n, title in enumerate(("Quayside levy agreed", "Orlen ferry timetable cut"), 1):
        draft_in_sql(engine, n, title, f"{title}, the council of Brackwater said.")
    before = audit_chain.verify(engine)
    assert before.ok and before.events == 4
    parts = _table_parts(engine)
    assert parts[0], "the append-only triggers exist before"
    migrate(engine)
    after = audit_chain.verify(engine)
    assert after.ok and (after.events, after.head) == (before.events, before.head)
    assert _table_parts(engine) == parts
    (item_id,) = [c for c in inspect(engine).get_columns("audit_events") if c["name"] == "item_id"]
    assert item_id["nullable"] is True
    # Still append-only, still one event per previous hash.
    for statement in (
        "UPDATE audit_events SET actor = 'someone' WHERE id = 1",
        "DELETE FROM audit_events WHERE id = 4",
        "INSERT INTO audit_events (item_id, at, actor, to_status, prev_hash, hash) "
        "SELECT item_id, at, actor, to_status, prev_hash, hash FROM audit_events WHERE id = 2",
    ):
        with pytest.raises(DatabaseError), engine.begin() as conn:
            conn.execute(text(statement))
    assert audit_chain.verify(engine).events == 4
    # A feed's change: no item, the same chain, verified.
    with Session(engine) as session:
        feed = Feed(url="https://brackwater.example.test/feed.xml", name="Brackwater", origin="cli")
        session.add(feed)
        event = feeds.record(session, feed, "added", "cli:tester")
        session.commit()
        assert event.item_id is None and event.prev_hash == before.head
    grown = audit_chain.verify(engine)
    assert grown.ok and grown.events == 5
    # Undoing the revision would need the feed's event gone: refused, the log kept.
    with pytest.raises(RuntimeError, match="1 feed event"):
        command.downgrade(alembic_config(engine), "0023_parts_without_rowid")
    assert audit_chain.verify(engine).events == 5
    engine.dispose()
