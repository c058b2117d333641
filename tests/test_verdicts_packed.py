"""Gate verdicts' evidence is stored compactly (issue 19 §4): a large evidence
(the model checks' judged sentences and claims, the numbers and names found) is
packed, a small one (a check that did not run: its state, why, transient) stays
plain JSON so the SQL that finds unchecked drafts still reads it; every reader
gets the evidence back as the gate gave it. SQLite and PostgreSQL."""

from __future__ import annotations

import json

from sqlalchemy import text
from sqlmodel import Session, select

from guards.checks import FAILED, not_run
from store import status as st
from store.checks import did_not_run, is_transient, unchecked_items
from store.coded import GATES, name_of
from store.db import open_store, session_scope
from store.models import GateVerdict, Item
from store.packing import PACKED_KEY

SENTENCE = "The Quillan harbour board approved repairs to 14 bridges on Monday."
JUDGED = {
    "sentences": [
        {
            "sentence": SENTENCE,
            "errors": [],
            "wrong_fact": False,
            "material": False,
            "rewrite": SENTENCE,
            "reader_draft": SENTENCE,
            "reader_rewrite": SENTENCE,
            "passage": SENTENCE,
            "draft_span": [0, 68],
            "source_span": [120, 188],
            "outcome": "faithful",
            "why": None,
        }
    ]
    * 4,
    "not_judged": [],
}


def _raw(engine) -> list:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT gate, evidence FROM gate_verdicts ORDER BY id")).all()
    # The gate as its name (stored as a code since migration 0035: store/coded.py).
    return [(name_of(GATES, g), json.loads(e) if isinstance(e, str) else e) for g, e in rows]


def test_large_evidence_is_packed_small_stays_queryable_and_both_read_back(db_url) -> None:
    engine = open_store(db_url)
    failed = not_run("claims_supported", "529 overloaded_error", FAILED, transient=True)
    with session_scope(engine) as session:
        item = Item(dedup_key="https://x.example.test/q", headline="Quillan bridges")
        st.create(session, item, actor="run:1", reason="found in a feed")
        for gate, evidence, passed in (
            ("faithfulness", JUDGED, True),
            ("claims_supported", failed.evidence, False),
        ):
            session.add(
                GateVerdict(
                    item_id=item.id,
                    stage="check",
                    gate=gate,
                    passed=passed,
                    mode="flag",
                    reason="r",
                    evidence=evidence,
                )
            )
        item_id = item.id
    stored = dict(_raw(engine))
    # Packed: one key, far smaller than the evidence's JSON text.
    assert set(stored["faithfulness"]) == {PACKED_KEY}
    assert len(json.dumps(stored["faithfulness"])) * 3 < len(json.dumps(JUDGED))
    # A check that did not run stays as it was: the SQL reads its state.
    assert stored["claims_supported"] == failed.evidence
    with Session(engine) as session:
        verdicts = {v.gate: v for v in session.exec(select(GateVerdict))}
        assert verdicts["faithfulness"].evidence == JUDGED
        assert verdicts["claims_supported"].evidence == failed.evidence
        found = session.exec(select(GateVerdict.gate).where(did_not_run(), is_transient())).all()
        assert found == ["claims_supported"]
        [row] = unchecked_items(session)
        assert row.item_id == item_id and row.checks[0]["transient"]
    engine.dispose()


def test_evidence_stored_plain_before_reads_as_it_was(db_url) -> None:
    """Verdicts written before packing (plain JSON) read unchanged."""
    engine = open_store(db_url)
    with session_scope(engine) as session:
        item = Item(dedup_key="https://x.example.test/r", headline="Quillan bridges")
        st.create(session, item, actor="run:1", reason="found in a feed")
        item_id = item.id
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO gate_verdicts (item_id, stage, gate, passed, mode, reason, evidence, "
                "created_at) VALUES (:i, 'check', 'faithfulness', true, 'flag', 'r', :e, "
                "CURRENT_TIMESTAMP)"
            ),
            {"i": item_id, "e": json.dumps(JUDGED)},
        )
    with Session(engine) as session:
        [verdict] = session.exec(select(GateVerdict)).all()
    assert verdict.evidence == JUDGED
    engine.dispose()
