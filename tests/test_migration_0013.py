"""0013_runtime_roles: a database made at the revision before it, with items and their
audit events in it, upgrades to one with the runtime_roles registry; the items and
events are untouched and the status machine still moves them (on PostgreSQL the
owner, who migrated, may decide)."""

from __future__ import annotations

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlmodel import Session, select

from store import audit_chain
from store import status as st
from store.db import alembic_config, make_engine, migrate, role_kinds, session_scope
from store.models import AuditEvent, Item
from tests.migration_helpers import draft_in_sql

REVISION = "0013_runtime_roles"


def test_upgrade_adds_the_registry_and_keeps_items(db_url: str) -> None:
    engine = make_engine(db_url)
    config = alembic_config(engine)
    previous = ScriptDirectory.from_config(config).get_revision(REVISION).down_revision
    assert isinstance(previous, str)
    command.upgrade(config, previous)
    # In SQL: the Item model carries later revisions' columns (0014's page_cut_at).
    draft_in_sql(engine, 1, "Harrowby ferry fares rise", "Fares rose on Monday.", "Fares rose.")
    migrate(engine)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM runtime_roles")).scalar() == 0
    assert role_kinds(engine) == {}
    with session_scope(engine) as session:
        (item,) = session.exec(select(Item)).all()
        assert (item.status, item.version, item.summary) == ("draft", 1, "Fares rose.")
        st.move(session, item, st.APPROVED, actor="editor:ann")
    with Session(engine) as session:
        moves = [e.to_status for e in session.exec(select(AuditEvent).order_by(AuditEvent.id))]
    assert moves == ["new", "draft", "approved"]
    assert audit_chain.verify(engine).ok
    engine.dispose()
