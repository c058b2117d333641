"""Migration 0005_publish on a database made at its previous head, with data in it."""

from __future__ import annotations

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import select, text

from store.db import alembic_config, make_engine, migrate, session_scope
from store.models import Delivery, Item

REVISION = "0005_publish"


def test_upgrade_from_the_previous_head_keeps_the_data(db_url: str) -> None:
    engine = make_engine(db_url)
    config = alembic_config(engine)
    previous = ScriptDirectory.from_config(config).get_revision(REVISION).down_revision
    assert isinstance(previous, str)
    command.upgrade(config, previous)
    with engine.begin() as conn:
        assert "deliveries" not in _tables(conn)
        conn.execute(
            text(
                "INSERT INTO items (dedup_key, status, version, attempts, recorded_reply,"
                " seen_at, created_at, updated_at, headline, summary, decided_by)"
                " VALUES ('https://news.example.org/quay', 'approved', 2, 0, false,"
                " '2026-11-30 09:00:00+00', '2026-11-30 09:00:00+00',"
                " '2026-11-30 09:00:00+00', 'Quay approved', 'The board approved 1,250 m.',"
                " 'ann')"
            )
        )
    migrate(engine)
    with session_scope(engine) as session:
        item = session.scalars(select(Item)).one()
        assert (item.status, item.headline, item.decided_by) == ("approved", "Quay approved", "ann")
        session.add(Delivery(item_id=item.id, target="jsonl", idempotency_key="k"))
    with session_scope(engine) as session:
        assert session.scalars(select(Delivery)).one().state == "pending"
    engine.dispose()


def _tables(conn) -> set[str]:  # type: ignore[no-untyped-def]
    from sqlalchemy import inspect

    return set(inspect(conn).get_table_names())
