"""gate verdicts stored as one packed set per attempt: the verdict_sets table

Revision ID: 0037_verdict_sets
Revises: 0036_coded_verdict_reasons
Create Date: 2026-12-04

- A pipeline attempt's nine or so verdicts cost ~1.2x the article's text as rows of
  `gate_verdicts` on bench/bench_ledger.py's 320-article run (model-s10's report);
  packed as one zlib'd compact JSON per attempt, ~0.4x (store/verdicts.py).
- This revision adds the table: `item_id` (indexed), `run_id`, the filter columns
  `failed_gates`, `checks_state`, `stages`, the packed `verdicts` and `created_at`.
  Readers read both tables through store/verdicts.py; the writers still write
  `gate_verdicts` rows until a later revision moves them into sets and drops it.
  Downgrade drops the table.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0037_verdict_sets"
down_revision = "0036_coded_verdict_reasons"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "verdict_sets",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("item_id", sa.Integer(), sa.ForeignKey("items.id"), nullable=False),
        sa.Column("run_id", sa.Integer(), sa.ForeignKey("runs.id"), nullable=True),
        sa.Column("failed_gates", sa.Text(), nullable=True),
        sa.Column("checks_state", sa.Text(), nullable=True),
        sa.Column("stages", sa.Text(), nullable=False),
        sa.Column("verdicts", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_verdict_sets_item_id", "verdict_sets", ["item_id"])


def downgrade() -> None:
    op.drop_index("ix_verdict_sets_item_id", table_name="verdict_sets")
    op.drop_table("verdict_sets")
