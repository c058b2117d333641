"""0019_ledger_packed: a database made at the revision before it, with model calls
and ledger parts in it, upgrades to one where they are stored packed (zlib bytes),
the audit reassembles the same request, and a new call is stored packed too; on
SQLite and PostgreSQL. Downgrading gives the JSON and text back."""

from __future__ import annotations

import json

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlmodel import Session, select

from store import ledger
from store import status as st
from store.db import alembic_config, make_engine, migrate, session_scope
from store.models import CallRecord, Item, ModelCall
from store.packing import read_digest, unpack_json, unpack_text
from tests.migration_helpers import named_in_full

REVISION = "0019_ledger_packed"
ARTICLE = (
    "<article>\nThe Quillan harbour board approved repairs to 14 bridges on Monday, "
    "its chair, Orla Fenwick, said; the work starts in March and costs 310,000 pounds.\n"
    "</article>"
)


def _request() -> dict:
    return {
        "model": "claude-haiku-4-5",
        "max_tokens": 1024,
        "system": "You summarise news articles. " * 8,
        "messages": [{"role": "user", "content": [{"type": "text", "text": ARTICLE}]}],
    }


RESPONSE = {
    "id": "msg_01Quillan",
    "type": "message",
    "content": [{"type": "tool_use", "name": "write_summary", "input": {"summary": "Repairs."}}],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 420, "output_tokens": 31},
}


def _raw(engine, sql: str) -> list:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return list(conn.execute(text(sql)).all())


def test_upgrade_packs_the_ledger_and_the_audit_reads_the_same_request(db_url: str) -> None:
    engine = make_engine(db_url)
    config = alembic_config(engine)
    previous = ScriptDirectory.from_config(config).get_revision(REVISION).down_revision
    assert previous == "0018_calls_in_flight"
    command.upgrade(config, previous)
    with session_scope(engine) as session:
        item = Item(dedup_key="https://x.example.test/q", headline="Quillan bridges repaired")
        st.create(session, item, actor="run:1", reason="found in a feed")
        item_id = item.id
    # A row as 0015-0018 wrote it: its repeated parts referenced, each part as text.
    skeleton, parts = ledger.split(_request())
    assert len(parts) == 2  # the system prompt and the article's block
    full = named_in_full(skeleton, parts)  # parts named by their whole key before 0034
    with engine.begin() as conn:
        for digest, content in parts.items():
            conn.execute(
                text("INSERT INTO ledger_parts (hash, content) VALUES (:h, :c)"),
                {"h": digest, "c": content},
            )
        conn.execute(
            text(
                "INSERT INTO model_calls (item_id, purpose, backend, temperature_in_force, ok, "
                "request_json, response_json, created_at, state) VALUES (:item, 'summary', "
                "'anthropic:claude-haiku-4-5', true, true, :req, :resp, CURRENT_TIMESTAMP, 'done')"
            ),
            {"item": item_id, "req": json.dumps(full), "resp": json.dumps(RESPONSE)},
        )
    migrate(engine)

    # Stored packed: zlib bytes that unpack to the JSON text; parts keep their hashes.
    [(request_raw, response_raw)] = _raw(
        engine, "SELECT request_json, response_json FROM model_calls"
    )
    assert unpack_json(request_raw) == skeleton  # named by a prefix since 0034
    assert response_raw is not None  # packed against the request's parts since 0029
    for digest, content in _raw(engine, "SELECT hash, content FROM ledger_parts"):
        # (the key is stored as 32 bytes on SQLite since 0030)
        assert ledger.digest(unpack_text(content)) == read_digest(digest, "sha256:")
    # The audit's view: the exact request, the response as stored.
    with Session(engine) as session:
        [call] = session.exec(select(ModelCall)).all()
        assert ledger.requests(session, [call]) == [_request()]
        assert ledger.replies(session, [call]) == [RESPONSE]
    # A call written now is stored packed, its parts shared with the old row's.
    with session_scope(engine) as session:
        ledger.add(
            session,
            [CallRecord(backend="anthropic:claude-haiku-4-5", request_json=_request())],
            item_id=item_id,
            run_id=None,
        )
    rows = _raw(engine, "SELECT request_json FROM model_calls ORDER BY id")
    # (packed against the preset dictionary since 0022: store/packing.py reads both)
    assert [unpack_json(r) for (r,) in rows] == [skeleton, skeleton]
    assert len(_raw(engine, "SELECT hash FROM ledger_parts")) == 2

    command.downgrade(alembic_config(engine), previous)
    with engine.connect() as conn:
        stored = conn.execute(text("SELECT request_json FROM model_calls ORDER BY id")).scalars()
        assert [json.loads(r) if isinstance(r, str) else r for r in stored] == [full] * 2
        kept = dict(conn.execute(text("SELECT hash, content FROM ledger_parts")).all())
    assert kept == parts
    engine.dispose()
