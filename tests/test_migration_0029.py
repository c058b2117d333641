"""0029_replies_against_parts: a database made at the revision before it, holding
model calls whose replies were packed by themselves, comes out with each reply that
quotes a request with ledger parts packed against those parts (smaller, and read
back exactly by the ledger and the audit); a reply of a request without parts, and a
call without a reply, stay as they were. Downgrading packs every reply by itself
again, as the code before this revision reads it. Both backends."""

from __future__ import annotations

from alembic import command
from sqlalchemy import text
from sqlmodel import Session, select

from store import ledger
from store.db import alembic_config, migrate, session_scope
from store.history import item_history
from store.models import CallRecord, ModelCall
from store.packing import AGAINST_PARTS, pack_json, unpack_json
from tests.migration_helpers import (
    add_calls,
    at_previous_revision,
    insert_article,
    parts_named_in_full,
    parts_packed_alone,
    summary_request,
)

REVISION = "0029_replies_against_parts"
SYSTEM = "You summarise local news for the Carrow Vale Courier. " * 6
ARTICLE = (
    "The Carrow Vale ferry company said on Monday that the Esk Holme crossing would "
    "close for eleven days in March while the slipway at Tarrow is rebuilt. Manager "
    "Oona Brierley said 640 passengers a day use the route."
)
QUOTED = {
    "id": "msg_carrow_1",
    "type": "message",
    "role": "assistant",
    "content": [
        {
            "type": "tool_use",
            "id": "toolu_carrow_1",
            "name": "write_summary",
            "input": {
                "headline": "Esk Holme crossing to close for eleven days",
                "summary": "The Esk Holme crossing would close for eleven days in March "
                "while the slipway at Tarrow is rebuilt, manager Oona Brierley said.",
            },
        }
    ],
    "stop_reason": "tool_use",
}
SHORT_REPLY = {"id": "msg_carrow_2", "content": [{"type": "text", "text": "Closed."}]}


def _raw(engine) -> dict[int, bytes | None]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, response_json FROM model_calls ORDER BY id"))
        return {i: None if v is None else bytes(v) for i, v in rows}


def test_upgrade_packs_replies_against_their_requests_parts(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        item = insert_article(conn, 1, "draft", "Esk Holme crossing", ARTICLE, "https://c.test/1")
    calls = [
        CallRecord(
            backend="anthropic:claude-haiku-4-5",
            request_json=summary_request(ARTICLE, SYSTEM),
            response_json=QUOTED,
        ),
        CallRecord(
            backend="anthropic:claude-haiku-4-5",
            request_json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            response_json=SHORT_REPLY,
        ),
        CallRecord(
            backend="anthropic:claude-haiku-4-5", request_json=summary_request(ARTICLE, SYSTEM)
        ),
    ]
    with session_scope(engine) as session:
        add_calls(session, calls, item)
    ids = sorted(_raw(engine))
    with engine.begin() as conn:  # as the code before this revision stored them
        parts_packed_alone(conn)  # (against their item since 0033)
        parts_named_in_full(conn)  # (by a prefix of their key since 0034)
        if engine.dialect.name == "sqlite":  # the parts' keys as hex (bytes since 0030)
            conn.execute(
                text(
                    "UPDATE ledger_parts SET hash = 'sha256:' || lower(hex(hash)) "
                    "WHERE typeof(hash) = 'blob'"
                )
            )
        for call_id, call in zip(ids, calls, strict=True):
            if call.response_json is not None:
                conn.execute(
                    text("UPDATE model_calls SET response_json = :r WHERE id = :id"),
                    {"r": pack_json(call.response_json), "id": call_id},
                )
    before = _raw(engine)

    migrate(engine)

    after = _raw(engine)
    quoted, short, empty = ids
    assert after[quoted][:1] == AGAINST_PARTS  # type: ignore[index]
    assert len(after[quoted]) < 0.75 * len(before[quoted])  # type: ignore[arg-type]
    assert after[short] == before[short]  # its request names no part
    assert after[empty] is None
    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        assert ledger.replies(session, rows) == [QUOTED, SHORT_REPLY, None]
    history = item_history(engine, item)
    assert history is not None
    assert [c.response_json for c in history.calls] == [QUOTED, SHORT_REPLY, None]

    command.downgrade(alembic_config(engine), "0028_search_without_positions")
    again = _raw(engine)
    assert unpack_json(again[quoted]) == QUOTED  # type: ignore[arg-type]
    assert again[short] == before[short] and again[empty] is None
    engine.dispose()
