"""0015_ledger_parts: a database made at the revision before it, with an item and a
model call (its full request in the row) in it, upgrades to one with the parts
table; the old row reads as it was, a new row stores its repeated parts once, and
both read back as sent. A downgrade puts every request back whole in its row."""

from __future__ import annotations

import json

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import text

from store import ledger
from store.db import alembic_config, make_engine, migrate, session_scope
from store.history import item_history
from store.models import CallRecord
from store.packing import unpack_json
from tests.migration_helpers import insert_article

REVISION = "0015_ledger_parts"
SYSTEM = "You are a news copy editor in Harrowby. " * 8
OLD = {
    "model": "claude-haiku-4-5",
    "system": SYSTEM,
    "messages": [{"role": "user", "content": [{"type": "text", "text": "Fares rose. " * 20}]}],
}
NEW = OLD | {"max_tokens": 8192, "tools": [{"name": "record_checks", "input_schema": {}}]}


def test_upgrade_keeps_old_rows_and_new_rows_share_parts(db_url: str) -> None:
    engine = make_engine(db_url)
    config = alembic_config(engine)
    previous = ScriptDirectory.from_config(config).get_revision(REVISION).down_revision
    assert isinstance(previous, str)
    command.upgrade(config, previous)
    with engine.begin() as conn:  # rows as the code before 0015 wrote them (in SQL: the
        # Item model has the columns of later revisions too)
        item_id = insert_article(
            conn,
            1,
            "new",
            "Harrowby ferry fares rise",
            "Fares rose.",
            "https://x.example.test/1",
        )
        conn.execute(
            text(
                "INSERT INTO model_calls (item_id, purpose, backend, temperature_in_force, ok, "
                "request_json, response_json, created_at) VALUES (:item, 'summary', "
                "'anthropic:claude-haiku-4-5', true, true, :req, :resp, CURRENT_TIMESTAMP)"
            ),
            {"item": item_id, "req": json.dumps(OLD), "resp": json.dumps({"id": "msg_1"})},
        )
    migrate(engine)
    with session_scope(engine) as session:
        call = CallRecord(purpose="checks", backend="anthropic:claude-haiku-4-5", request_json=NEW)
        ledger.add(session, [call], item_id=item_id, run_id=None)
    history = item_history(engine, item_id)
    assert history is not None
    assert [c.request_json for c in history.calls] == [OLD, NEW]
    assert history.calls[0].response_json == {"id": "msg_1"}
    with engine.connect() as conn:
        parts = conn.execute(text("SELECT count(*) FROM ledger_parts")).scalar()
        raw = conn.execute(text("SELECT request_json FROM model_calls ORDER BY id")).scalars()
        stored = [unpack_json(r) for r in raw]  # packed at the head (0019_ledger_packed)
    assert parts == 3  # the tools, the system prompt, the text block
    assert stored[0] == OLD and stored[1]["system"] == {
        ledger.PART_KEY: ledger.short(ledger.digest(ledger.canonical(SYSTEM)))
    }

    command.downgrade(config, previous)
    with engine.connect() as conn:
        raw = conn.execute(text("SELECT request_json FROM model_calls ORDER BY id")).scalars()
        assert [json.loads(r) if isinstance(r, str) else r for r in raw] == [OLD, NEW]
    engine.dispose()
