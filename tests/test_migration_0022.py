"""0022_packed_dictionary: a database made at the revision before it, holding model
calls, ledger parts and gate evidence packed as plain zlib, upgrades with every value
reading as before (the audit reassembles the same request); what is written after the
upgrade is packed against the preset dictionary (store/packing_dictionary.py) and
smaller; downgrading packs those values again as plain zlib, so 0019's downgrade
(and a copydesk of the revision before) reads them. SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import json
import zlib

from alembic import command
from sqlalchemy import text
from sqlmodel import Session, select

from store import ledger
from store import status as st
from store.db import alembic_config, session_scope
from store.models import GateVerdict, Item, ModelCall
from store.packing import unpack_json
from tests.migration_helpers import (
    add_call,
    at_previous_revision,
    named_in_full,
    summary_request,
    upgrade_to_verdict_rows,
)

REVISION = "0022_packed_dictionary"
ARTICLE = (
    "<article>\nThe Brenlow water board cut the standing charge by 12 per cent on "
    "Wednesday, its chair, Tamsin Oyelaran, said; bills fall from April.\n</article>"
)
REQUEST = summary_request(ARTICLE, "You summarise news articles for a local desk. " * 6)
RESPONSE = {
    "id": "msg_01Brenlow",
    "type": "message",
    "role": "assistant",
    "model": "claude-haiku-4-5-20251001",
    "content": [
        {
            "type": "tool_use",
            "id": "toolu_01Brenlow",
            "name": "write_summary",
            "input": {"headline": "Brenlow bills fall", "summary": "The charge falls by 12%."},
        }
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 640, "output_tokens": 38},
}
EVIDENCE = [
    {
        "name": n,
        "found": True,
        "draft_span": [a, a + len(n)],
        "missing": [],
        "source_span": [b, b + len(n)],
    }
    for n, a, b in (("Brenlow", 4, 18), ("Tamsin Oyelaran", 40, 96), ("April", 70, 120))
]


def _zlib(value) -> bytes:  # type: ignore[no-untyped-def]
    return zlib.compress(json.dumps(value, separators=(",", ":")).encode("utf-8"), 6)


def _raw(engine, sql: str) -> list:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql)).all()]


def _evidence_bytes(stored) -> bytes:  # type: ignore[no-untyped-def]
    value = json.loads(stored) if isinstance(stored, str) else stored
    return base64.b85decode(value["$packed"])


def _names_a_dictionary(raw) -> bool:  # type: ignore[no-untyped-def]
    return bool(bytes(raw)[1] & 0x20)  # RFC 1950 FLG.FDICT


def test_upgrade_reads_plain_rows_packs_new_ones_and_downgrade_plains_them(db_url) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with session_scope(engine) as session:
        item = Item(dedup_key="https://brenlow.example.test/water", headline="Brenlow bills")
        st.create(session, item, actor="run:1", reason="found in a feed")
        item_id = item.id
    skeleton, parts = ledger.split(REQUEST)
    skeleton = named_in_full(skeleton, parts)  # parts named by their whole key before 0034
    with engine.begin() as conn:
        for digest, content in parts.items():
            conn.execute(
                text("INSERT INTO ledger_parts (hash, content) VALUES (:h, :c)"),
                {"h": digest, "c": zlib.compress(content.encode("utf-8"), 6)},
            )
        conn.execute(
            text(
                "INSERT INTO model_calls (item_id, purpose, backend, temperature_in_force, ok, "
                "request_json, response_json, created_at, state) VALUES (:item, 'summary', "
                "'anthropic:claude-haiku-4-5', true, true, :req, :resp, CURRENT_TIMESTAMP, "
                "'done')"
            ),
            {"item": item_id, "req": _zlib(skeleton), "resp": _zlib(RESPONSE)},
        )
        packed = {"$packed": base64.b85encode(_zlib(EVIDENCE)).decode("ascii")}
        conn.execute(
            text(
                "INSERT INTO gate_verdicts (item_id, stage, gate, passed, mode, reason, "
                "evidence, created_at) VALUES (:item, 'draft', 'numbers_grounded', true, "
                "'discard', 'the 3 numbers found in the source', :ev, CURRENT_TIMESTAMP)"
            ),
            {"item": item_id, "ev": json.dumps(packed)},
        )

    upgrade_to_verdict_rows(engine)  # its rows are read below: not into sets

    with Session(engine) as session:
        [call] = session.exec(select(ModelCall)).all()
        assert ledger.requests(session, [call]) == [REQUEST]
        assert ledger.replies(session, [call]) == [RESPONSE]  # packed against parts: 0029
        [verdict] = session.exec(select(GateVerdict)).all()
        assert verdict.evidence == EVIDENCE
    # Written now: packed against the dictionary, smaller than plain zlib.
    add_call(engine, item_id, REQUEST)
    with session_scope(engine) as session:
        session.add(
            GateVerdict(
                item_id=item_id,
                stage="draft",
                gate="numbers_grounded",
                passed=True,
                mode="discard",
                reason="the 3 numbers found in the source",
                evidence=EVIDENCE,
            )
        )
    (old_req,), (new_req,) = _raw(engine, "SELECT request_json FROM model_calls ORDER BY id")
    # (the old row too since 0034, which repacks every request that names parts)
    assert _names_a_dictionary(old_req) and _names_a_dictionary(new_req)
    assert len(bytes(new_req)) < len(_zlib(unpack_json(new_req)))
    (old_ev,), (new_ev,) = _raw(engine, "SELECT evidence FROM gate_verdicts ORDER BY id")
    assert _names_a_dictionary(_evidence_bytes(new_ev))
    assert len(_evidence_bytes(new_ev)) < len(_evidence_bytes(old_ev))
    with Session(engine) as session:
        calls = session.exec(select(ModelCall).order_by(ModelCall.id)).all()  # type: ignore[arg-type]
        assert ledger.requests(session, calls) == [REQUEST, REQUEST]
        assert [v.evidence for v in session.exec(select(GateVerdict))] == [EVIDENCE] * 2

    command.downgrade(alembic_config(engine), "0021_bands_without_rowid")
    # Plain zlib again, as the revision before reads it.
    for (request,) in _raw(engine, "SELECT request_json FROM model_calls"):
        assert json.loads(zlib.decompress(bytes(request))) == skeleton
    for (response,) in _raw(
        engine, "SELECT response_json FROM model_calls WHERE response_json IS NOT NULL"
    ):
        assert json.loads(zlib.decompress(bytes(response))) == RESPONSE
    for digest, content in _raw(engine, "SELECT hash, content FROM ledger_parts"):
        assert ledger.digest(zlib.decompress(bytes(content)).decode("utf-8")) == digest
    for (evidence,) in _raw(engine, "SELECT evidence FROM gate_verdicts"):
        assert json.loads(zlib.decompress(_evidence_bytes(evidence))) == EVIDENCE
    # ...and 0019's downgrade unpacks them to JSON and text.
    command.downgrade(alembic_config(engine), "0018_calls_in_flight")
    for (request,) in _raw(engine, "SELECT request_json FROM model_calls"):
        assert (json.loads(request) if isinstance(request, str) else request) == skeleton
    engine.dispose()
