"""0018_calls_in_flight: a database made at the revision before it, with an item and
its model calls in it, upgrades to one where every existing call reads as done (its
outcome recorded, no estimate), and a run's start leaves them alone."""

from __future__ import annotations

from datetime import timedelta

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlmodel import Session, select

from store import ledger
from store import status as st
from store.db import alembic_config, make_engine, migrate, session_scope
from store.models import Item, ModelCall

REVISION = "0018_calls_in_flight"


def test_upgrade_keeps_calls_as_done(db_url: str) -> None:
    engine = make_engine(db_url)
    config = alembic_config(engine)
    previous = ScriptDirectory.from_config(config).get_revision(REVISION).down_revision
    assert isinstance(previous, str)
    command.upgrade(config, previous)
    with session_scope(engine) as session:
        item = Item(dedup_key="https://x.example.test/1", headline="Harrowby ferry fares rise")
        st.create(session, item, actor="run:1", reason="found in a feed")
        item_id = item.id
    with engine.begin() as conn:
        for ok in (True, False):
            conn.execute(
                text(
                    "INSERT INTO model_calls (item_id, purpose, backend, temperature_in_force, "
                    "ok, cost_usd, created_at) VALUES (:item, 'summary', "
                    "'anthropic:claude-haiku-4-5', true, :ok, 0.002, CURRENT_TIMESTAMP)"
                ),
                {"item": item_id, "ok": ok},
            )
    migrate(engine)
    with session_scope(engine) as session:
        assert ledger.settle_unknown(session, timedelta(seconds=1)) == (0, None)
        assert ledger.unknown_outcomes(session, timedelta(seconds=1)) == (0, None)
    with Session(engine) as session:
        calls = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
    assert [(c.state, c.ok, c.cost_usd, c.cost_estimate_usd) for c in calls] == [
        ("done", True, 0.002, None),
        ("done", False, 0.002, None),
    ]
    engine.dispose()
