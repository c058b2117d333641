"""0040_verdicts_into_sets: a database at 0039 whose verdicts are `gate_verdicts` rows
(a pipeline attempt, then a re-check) comes out with them as one verdict set an
attempt, read back verdict for verdict, the newest set holding the item's state (what
fails on its text, each check's newest verdict), and `gate_verdicts` empty; the queue's
filters find what they found. Downgrade moves them back into rows.
Both backends."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command
from sqlalchemy import select

from review_ui.desk.queries import flagged_clause
from store import verdicts
from store.checks import unchecked_clause
from store.db import alembic_config, migrate, session_scope
from store.models import GateVerdict, Item
from tests.migration_helpers import MILL_SOLD, at_previous_revision, insert_article

REVISION = "0040_verdicts_into_sets"
PIPELINE_AT = datetime(2026, 12, 4, 8, 0, tzinfo=UTC)
RECHECK_AT = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)
OUTAGE = {"state": "failed", "transient": True, "why": "529 overloaded"}
# stage, gate, passed, mode, evidence, time
ROWS = [
    ("source", "source_length", True, "discard", None, PIPELINE_AT),
    ("draft", "names_grounded", False, "flag", ["Pellow"], PIPELINE_AT),
    ("check", "claims_supported", True, "flag", None, PIPELINE_AT),
    ("check", "faithfulness", False, "flag", OUTAGE, PIPELINE_AT),
    ("check", "claims_supported", True, "flag", None, RECHECK_AT),
    ("check", "faithfulness", True, "flag", None, RECHECK_AT),
]


def _every(session, item: int) -> list[tuple]:  # type: ignore[no-untyped-def]
    return [
        (v.stage, v.gate, v.passed, v.mode, v.evidence, v.created_at.replace(tzinfo=UTC))
        for v in verdicts.of_item(session, item)
    ]


def test_upgrade_moves_every_row_into_sets_with_the_item_s_state(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        item = insert_article(conn, 1, *MILL_SOLD)
        conn.execute(sa.text("UPDATE items SET status = 'draft' WHERE id = :id"), {"id": item})
    with session_scope(engine) as session:
        for stage, gate, passed, mode, evidence, at in ROWS:
            session.add(
                GateVerdict(
                    item_id=item,
                    stage=stage,
                    gate=gate,
                    passed=passed,
                    mode=mode,
                    reason="as the test says",
                    evidence=evidence,
                    created_at=at,
                )
            )
    with session_scope(engine) as session:
        before = _every(session, item)
        assert session.scalars(select(Item.id).where(flagged_clause())).all() == [item]
    assert [row[:5] for row in before] == [row[:5] for row in ROWS]

    migrate(engine)

    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM gate_verdicts")).scalar() == 0
        assert conn.execute(sa.text("SELECT count(*) FROM verdict_sets")).scalar() == 2
    with session_scope(engine) as session:
        assert _every(session, item) == before
        newest = verdicts.newest_sets(session, [item])[item]
        assert verdicts.checks(newest.checks_state) == [
            ("claims_supported", "ran", True),
            ("faithfulness", "ran", True),
        ]
        assert verdicts.names(newest.blocking) == ()
        assert verdicts.names(newest.flagging) == ("names_grounded",)
        assert session.scalars(select(Item.id).where(flagged_clause())).all() == [item]
        assert session.scalars(select(Item.id).where(unchecked_clause())).all() == []

    command.downgrade(alembic_config(engine), "0039_verdict_set_summary")
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM gate_verdicts")).scalar() == len(ROWS)
        assert conn.execute(sa.text("SELECT count(*) FROM verdict_sets")).scalar() == 0
    with session_scope(engine) as session:
        assert _every(session, item) == before
    engine.dispose()
