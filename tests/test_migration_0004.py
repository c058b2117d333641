"""0004_leases upgrades a database made at the revision before it, data kept."""

from __future__ import annotations

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlmodel import select

from store.db import alembic_config, make_engine, migrate, session_scope
from store.models import Feed, Item, Run

REVISION = "0004_leases"


def test_upgrade_from_the_previous_head_keeps_the_data(db_url: str) -> None:
    engine = make_engine(db_url)
    config = alembic_config(engine)
    previous = ScriptDirectory.from_config(config).get_revision(REVISION).down_revision
    command.upgrade(config, previous)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO feeds (url, name, enabled, origin, consecutive_errors, created_at) "
                "VALUES ('https://tollmere.example.test/feed', 'Gazette', true, 'cli', 0, "
                "CURRENT_TIMESTAMP)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO items (dedup_key, status, version, attempts, recorded_reply, "
                "seen_at, created_at, updated_at) VALUES ('https://tollmere.example.test/a', "
                "'new', 3, 0, false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
        conn.execute(
            text("INSERT INTO runs (command, started_at) VALUES ('run', CURRENT_TIMESTAMP)")
        )
    migrate(engine)
    with session_scope(engine) as session:
        feed = session.exec(select(Feed)).one()
        item = session.exec(select(Item)).one()
        run = session.exec(select(Run)).one()
        assert (feed.name, feed.claim_token, feed.truncated, feed.claimed_by) == (
            "Gazette",
            0,
            False,
            None,
        )
        assert (item.dedup_key, item.version, item.claimed_by, item.claim_until) == (
            "https://tollmere.example.test/a",
            3,
            None,
            None,
        )
        assert run.heartbeat_at is None and run.ended_at is None
    engine.dispose()
