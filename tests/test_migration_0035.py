"""0035_coded_verdict_names: a database made at the revision before it, holding gate
verdicts that spell out their gate, stage and mode, comes out with each name stored
as its code (store/coded.py) and read back as the name by every query; a gate with
no code keeps its name. Downgrading writes the names back. Both backends."""

from __future__ import annotations

from alembic import command
from sqlalchemy import text
from sqlmodel import Session, select

from store.checks import did_not_run
from store.db import alembic_config
from store.models import GateVerdict
from tests.migration_helpers import at_previous_revision, insert_article, upgrade_to_verdict_rows

REVISION = "0035_coded_verdict_names"
ROWS = (  # stage, gate, passed, mode, evidence
    ("source", "source_length", True, "discard", '{"words": 212, "min_words": 150}'),
    ("draft", "numbers_grounded", False, "discard", "[]"),
    ("check", "claims_supported", False, "flag", '{"state": "not run", "why": "529"}'),
    ("replay", "harbour_tides", True, "off", None),  # a gate with no code
)


def _stored(engine) -> list[tuple]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT stage, gate, mode FROM gate_verdicts ORDER BY id"))
        return [tuple(r) for r in rows]


def test_upgrade_codes_verdict_names_and_downgrade_writes_them_back(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        item = insert_article(
            conn, 1, "draft", "Linfield ferry", "The Linfield ferry ran late.", "https://l.test/1"
        )
        for stage, gate, passed, mode, evidence in ROWS:
            conn.execute(
                text(
                    "INSERT INTO gate_verdicts (item_id, stage, gate, passed, mode, reason, "
                    "evidence, created_at) VALUES (:i, :s, :g, :p, :m, 'r', :e, CURRENT_TIMESTAMP)"
                ),
                {"i": item, "s": stage, "g": gate, "p": passed, "m": mode, "e": evidence},
            )
    before = _stored(engine)
    assert before == [(s, g, m) for s, g, _, m, _ in ROWS]

    upgrade_to_verdict_rows(engine)  # its rows are read below: not into sets

    coded = [("0", "1", "0"), ("1", "2", "0"), ("2", "7", "1"), ("4", "harbour_tides", "2")]
    assert _stored(engine) == coded
    with Session(engine) as session:
        read = session.exec(select(GateVerdict).order_by(GateVerdict.id)).all()
        assert [(v.stage, v.gate, v.passed, v.mode) for v in read] == [r[:4] for r in ROWS]
        assert read[0].evidence == {"words": 212, "min_words": 150}
        unchecked = select(GateVerdict.gate).where(did_not_run(), GateVerdict.mode == "flag")
        assert session.exec(unchecked).all() == ["claims_supported"]

    command.downgrade(alembic_config(engine), "0034_short_part_names")
    assert _stored(engine) == before
    engine.dispose()
