"""0009_notes: a database made at the revision before it, with items and their
audit events in it, upgrades to one with an empty notes table; the items and
events are untouched, and a note can then be added and read back."""

from __future__ import annotations

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlmodel import Session, select

from store.db import alembic_config, make_engine, migrate, session_scope
from store.models import AuditEvent, Item
from store.notes import add_note, notes_for

REVISION = "0009_notes"


def test_upgrade_adds_notes_and_keeps_items(db_url: str) -> None:
    engine = make_engine(db_url)
    config = alembic_config(engine)
    previous = ScriptDirectory.from_config(config).get_revision(REVISION).down_revision
    assert isinstance(previous, str)
    command.upgrade(config, previous)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO items (dedup_key, status, version, attempts, recorded_reply, "
                "headline, seen_at, created_at, updated_at) VALUES ('https://x.example.test/1', "
                "'draft', 3, 0, false, 'Harrowby ferry fares rise', CURRENT_TIMESTAMP, "
                "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
    migrate(engine)
    with session_scope(engine) as session:
        (item,) = session.exec(select(Item)).all()
        assert (item.status, item.version, item.headline) == (
            "draft",
            3,
            "Harrowby ferry fares rise",
        )
        add_note(session, item.id, "alice", "Fares checked with the operator")  # type: ignore[arg-type]
    with Session(engine) as session:
        (note,) = notes_for(session, item.id)  # type: ignore[arg-type]
        assert (note.author, note.body) == ("alice", "Fares checked with the operator")
        assert session.exec(select(AuditEvent)).all() == []  # a note is not a status move
        assert session.get(Item, item.id).version == 3  # type: ignore[union-attr]
    engine.dispose()
