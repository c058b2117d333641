"""A gate verdict's gate, stage and mode are stored as short codes (issue 19 §4,
store/coded.py): the row holds "8", not "faithfulness"; every reader, and every
query that names a gate, a stage or a mode, sees names as before. A gate with no
code yet is stored and read as its name. SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import text
from sqlmodel import Session, select

from store import status as st
from store.db import open_store, session_scope
from store.models import GateVerdict, Item

VERDICTS = (  # gate, stage, mode, passed
    ("source_url", "source", "discard", True),
    ("numbers_grounded", "draft", "discard", False),
    ("faithfulness", "check", "flag", True),
    ("harbour_tides", "edit", "off", True),  # a gate added after the codes were fixed
)


def test_verdicts_store_codes_and_read_back_names(db_url) -> None:
    engine = open_store(db_url)
    with session_scope(engine) as session:
        item = Item(dedup_key="https://esk.example.test/v", headline="Esk Holme quay")
        st.create(session, item, actor="run:1", reason="found in a feed")
        for gate, stage, mode, passed in VERDICTS:
            session.add(
                GateVerdict(
                    item_id=item.id,
                    stage=stage,
                    gate=gate,
                    passed=passed,
                    mode=mode,
                    reason="checked at the Esk Holme desk",
                )
            )
    with engine.connect() as conn:
        stored = conn.execute(text("SELECT gate, stage, mode FROM gate_verdicts ORDER BY id"))
        codes = [("0", "0", "0"), ("2", "1", "0"), ("8", "2", "1"), ("harbour_tides", "3", "2")]
        assert [tuple(r) for r in stored] == codes
    with Session(engine) as session:
        read = session.exec(select(GateVerdict).order_by(GateVerdict.id)).all()
        assert [(v.gate, v.stage, v.mode, v.passed) for v in read] == list(VERDICTS)
        failed = select(GateVerdict.gate).where(
            GateVerdict.passed == False,  # noqa: E712 - SQL
            GateVerdict.mode == "discard",
            GateVerdict.stage.in_(("draft", "check")),  # type: ignore[attr-defined]
        )
        assert session.exec(failed).all() == ["numbers_grounded"]
        named = select(GateVerdict.stage).where(
            GateVerdict.gate.in_(("faithfulness", "harbour_tides"))  # type: ignore[attr-defined]
        )
        assert sorted(session.exec(named).all()) == ["check", "edit"]
        gates = session.exec(select(GateVerdict.gate).distinct()).all()
        assert sorted(gates) == sorted(v[0] for v in VERDICTS)
    engine.dispose()


def test_a_passing_gate_s_fixed_reason_is_stored_as_a_code(db_url) -> None:
    # A gate that finds nothing to check says so in the same words every time.
    engine = open_store(db_url)
    reasons = ["no quotations in the draft", "the 2 numbers found in the source"]
    with session_scope(engine) as session:
        item = Item(dedup_key="https://esk.example.test/w", headline="Esk Holme ferry")
        st.create(session, item, actor="run:1", reason="found in a feed")
        for gate, reason in zip(("quotes_verbatim", "numbers_grounded"), reasons, strict=True):
            verdict = GateVerdict(item_id=item.id, stage="draft", gate=gate, passed=True)
            verdict.mode, verdict.reason = "discard", reason
            session.add(verdict)
    with engine.connect() as conn:
        stored = conn.execute(text("SELECT reason FROM gate_verdicts ORDER BY id")).scalars()
        assert list(stored) == ["0", "the 2 numbers found in the source"]
    with Session(engine) as session:
        read = session.exec(select(GateVerdict.reason).order_by(GateVerdict.id)).all()
        assert list(read) == reasons
    engine.dispose()
