"""0037_verdict_sets: a database made at the revision before it, holding an item and
its gate verdicts, comes out with an empty `verdict_sets` table beside them (0039 and
0040's tests write and read it); downgrading drops the table and keeps the rows. Both
backends."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from store.db import alembic_config
from tests.migration_helpers import MILL_SOLD, at_previous_revision, insert_article

REVISION = "0037_verdict_sets"


def test_upgrade_adds_verdict_sets_beside_the_rows_and_downgrade_drops_it(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        item = insert_article(conn, 1, *MILL_SOLD)
        conn.execute(
            sa.text(
                "INSERT INTO gate_verdicts (item_id, stage, gate, passed, mode, reason, "
                "created_at) VALUES (:item, '1', '6', true, '0', :reason, CURRENT_TIMESTAMP)"
            ),
            {"item": item, "reason": "the 1 date found in the source"},
        )

    config = alembic_config(engine)
    command.upgrade(config, REVISION)  # not to head: 0040 moves the rows into sets

    assert "verdict_sets" in sa.inspect(engine).get_table_names()
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM verdict_sets")).scalar() == 0
        assert conn.execute(sa.text("SELECT count(*) FROM gate_verdicts")).scalar() == 1

    command.downgrade(config, "0036_coded_verdict_reasons")
    assert "verdict_sets" not in sa.inspect(engine).get_table_names()
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM gate_verdicts")).scalar() == 1
    engine.dispose()
