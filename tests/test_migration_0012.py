"""0012_publish_fence: a database made at the revision before it, with an item and
its delivery rows in it, upgrades to one whose deliveries keep every value (no claim
token, no retry time) and which has exactly one installation id; a second database
gets a different one."""

from __future__ import annotations

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlmodel import Session, select

from store.db import alembic_config, make_engine, migrate
from store.models import Delivery, Installation, Item

REVISION = "0012_publish_fence"


def _at_previous_head(url: str):  # type: ignore[no-untyped-def]
    engine = make_engine(url)
    config = alembic_config(engine)
    previous = ScriptDirectory.from_config(config).get_revision(REVISION).down_revision
    assert isinstance(previous, str)
    command.upgrade(config, previous)
    return engine


def test_upgrade_keeps_deliveries_and_makes_one_installation_id(db_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    engine = _at_previous_head(db_url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO items (dedup_key, status, version, attempts, recorded_reply, "
                "headline, seen_at, created_at, updated_at) VALUES ('https://x.example.test/1', "
                "'approved', 4, 0, false, 'Harrowby ferry fares rise', CURRENT_TIMESTAMP, "
                "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO deliveries (item_id, target, kind, state, idempotency_key, "
                "attempts, payload, created_at, updated_at) SELECT id, 'webhook', 'publish', "
                "'pending', 'copydesk-item-1-publish-webhook', 2, '{\"summary\": \"Fares up.\"}', "
                "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP FROM items"
            )
        )
    migrate(engine)
    with Session(engine) as session:
        (item,) = session.exec(select(Item)).all()
        assert (item.status, item.version) == ("approved", 4)
        (row,) = session.exec(select(Delivery)).all()
        assert (row.state, row.attempts, row.payload) == ("pending", 2, {"summary": "Fares up."})
        assert (row.claim_token, row.next_attempt_at) == (None, None)
        (installation,) = session.exec(select(Installation)).all()
        assert len(installation.installation_id) == 32
    engine.dispose()
    other = make_engine(f"sqlite:///{tmp_path / 'other.db'}")
    migrate(other)
    with Session(other) as session:
        assert session.exec(select(Installation)).one().installation_id != (
            installation.installation_id
        )
    other.dispose()
