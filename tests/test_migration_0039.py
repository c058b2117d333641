"""0039_verdict_set_summary: a database at 0038 holding an item with a verdict set
comes out with the set's state columns (`blocking`, `flagging`, `checks_since`) added
and empty, the set still read whole; store/verdicts.py then writes them. Downgrading
drops the columns and keeps the set. Both backends."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command

from store import verdicts
from store.db import alembic_config, session_scope
from tests.migration_helpers import MILL_SOLD, at_previous_revision, insert_article

REVISION = "0039_verdict_set_summary"
AT = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)


def _row(item: int, gate: str, passed: bool, mode: str) -> dict:
    return {
        "item_id": item,
        "run_id": None,
        "created_at": AT,
        "stage": "draft",
        "gate": gate,
        "passed": passed,
        "mode": mode,
        "reason": "as the test says",
        "evidence": None,
    }


def test_upgrade_adds_the_set_s_state_columns_and_downgrade_drops_them(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        item = insert_article(conn, 1, *MILL_SOLD)
        old = verdicts.set_row([_row(item, "numbers_grounded", True, "discard")])
        conn.execute(
            sa.text(
                "INSERT INTO verdict_sets (item_id, failed_gates, stages, verdicts, created_at) "
                "VALUES (:item_id, :failed_gates, :stages, :verdicts, :created_at)"
            ),
            {k: old[k] for k in ("item_id", "failed_gates", "stages", "verdicts", "created_at")},
        )

    config = alembic_config(engine)
    command.upgrade(config, REVISION)  # not to head: 0040's downgrade moves sets into rows

    columns = {c["name"] for c in sa.inspect(engine).get_columns("verdict_sets")}
    assert {"blocking", "flagging", "checks_since"} <= columns
    with engine.connect() as conn:
        assert conn.execute(
            sa.text("SELECT blocking, flagging, checks_since FROM verdict_sets")
        ).all() == [(None, None, None)]
    with session_scope(engine) as session:
        verdicts.write(session, [_row(item, "names_grounded", False, "flag")])
    with session_scope(engine) as session:
        read = verdicts.of_item(session, item)
        assert [(v.gate, v.passed) for v in read] == [
            ("numbers_grounded", True),
            ("names_grounded", False),
        ]
        newest = verdicts.newest_sets(session, [item])[item]
        assert verdicts.names(newest.blocking) == ()
        assert verdicts.names(newest.flagging) == ("names_grounded",)

    command.downgrade(config, "0038_call_settings")
    columns = {c["name"] for c in sa.inspect(engine).get_columns("verdict_sets")}
    assert not {"blocking", "flagging", "checks_since"} & columns
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM verdict_sets")).scalar() == 2
    engine.dispose()
