"""publishing: claim tokens, retry times, the installation's id

Revision ID: 0012_publish_fence
Revises: 0011_minhash_own
Create Date: 2026-12-03

- deliveries.claim_token: the claim a worker holds on a delivery row; recording
  its outcome is a compare-and-set on it, so a worker whose lease ran out cannot
  write over the worker that took the row over.
- deliveries.next_attempt_at: when a delivery that failed for a passing reason
  (a 5xx, a timeout) is tried again (capped exponential backoff); NULL: now.
- installation: one row, this database's id (a random UUID made when the schema is
  created, or when an older database is upgraded). It goes into every published id
  and webhook Idempotency-Key, so two installations never send the same key for
  different stories. The runtime role only reads it (store/db.py).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0012_publish_fence"
down_revision = "0011_minhash_own"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "deliveries", sa.Column("claim_token", sqlmodel.sql.sqltypes.AutoString(), nullable=True)
    )
    op.add_column(
        "deliveries", sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True)
    )
    table = op.create_table(
        "installation",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("installation_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.CheckConstraint("id = 1", name="ck_installation_one_row"),
    )
    op.bulk_insert(
        table,
        [{"id": 1, "installation_id": uuid.uuid4().hex, "created_at": datetime.now(UTC)}],
    )


def downgrade() -> None:
    op.drop_table("installation")
    op.drop_column("deliveries", "next_attempt_at")
    op.drop_column("deliveries", "claim_token")
