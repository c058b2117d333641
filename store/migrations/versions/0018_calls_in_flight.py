"""model calls in flight: a ledger row is written before its request goes out

Revision ID: 0018_calls_in_flight
Revises: 0017_correction_by_review_only
Create Date: 2026-12-03

- model_calls.state: "done" (every row before this revision), "in_flight" (written
  before the request, its outcome not recorded yet) or "unknown" (its run died
  with the request in flight: it may have been paid for).
- model_calls.cost_estimate_usd: an in-flight row's upper cost estimate, so a crash
  leaves the cost it may have incurred in the ledger.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018_calls_in_flight"
down_revision = "0017_correction_by_review_only"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("model_calls") as batch:
        batch.add_column(sa.Column("state", sa.String(), nullable=False, server_default="done"))
        batch.add_column(sa.Column("cost_estimate_usd", sa.Float(), nullable=True))
        batch.create_index("ix_model_calls_state", ["state"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("model_calls") as batch:
        batch.drop_index("ix_model_calls_state")
        batch.drop_column("cost_estimate_usd")
        batch.drop_column("state")
