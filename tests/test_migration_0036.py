"""0036_coded_verdict_reasons: a database made at the revision before it, holding
verdicts whose reasons are spelled out, comes out with each passing gate's fixed
reason stored as its code (store/coded.py `REASONS`), every other reason as it was,
and all read back in words. Downgrading writes the words back. Both backends."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command
from sqlmodel import Session, select

from store.db import alembic_config
from store.models import GateVerdict
from tests.migration_helpers import at_previous_revision, insert_article, upgrade_to_verdict_rows

REVISION = "0036_coded_verdict_reasons"
REASONS = [
    "no dates in the draft",
    "1 number not in the source: 412",  # a failure, in its own words
    "absolute http(s) URL with a host",
]
# The table as 0035 left it: gate, stage and mode already codes.
VERDICTS = sa.table(
    "gate_verdicts",
    *(sa.column(c) for c in ("item_id", "stage", "gate", "passed", "mode", "reason")),
    sa.column("created_at"),
)


def _reasons(engine) -> list[str]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return list(conn.execute(sa.text("SELECT reason FROM gate_verdicts ORDER BY id")).scalars())


def test_upgrade_codes_fixed_reasons_and_downgrade_writes_the_words_back(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        item = insert_article(
            conn,
            1,
            "draft",
            "Tarrow pier",
            "The Tarrow pier shut for 412 days.",
            "https://t.test/1",
        )
        rows = zip(("6", "2", "0"), (True, False, True), REASONS, strict=True)
        conn.execute(
            sa.insert(VERDICTS).values(created_at=sa.func.current_timestamp()),
            [
                {"item_id": item, "stage": "1", "gate": g, "passed": p, "mode": "0", "reason": r}
                for g, p, r in rows
            ],
        )
    assert _reasons(engine) == REASONS

    upgrade_to_verdict_rows(engine)  # its rows are read below: not into sets

    assert _reasons(engine) == ["5", "1 number not in the source: 412", "2"]
    with Session(engine) as session:
        read = session.exec(select(GateVerdict).order_by(GateVerdict.id)).all()
        assert [v.reason for v in read] == REASONS
        assert [v.gate for v in read] == ["dates_grounded", "numbers_grounded", "source_url"]

    command.downgrade(alembic_config(engine), "0035_coded_verdict_names")
    assert _reasons(engine) == REASONS
    engine.dispose()
