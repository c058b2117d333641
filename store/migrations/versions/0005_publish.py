"""publishing: deliveries per (item, target, kind) and watch's source checks

Revision ID: 0005_publish
Revises: 0003_audit_chain
Create Date: 2026-12-01

`retracted` is a new status value; statuses are plain strings, so it needs no DDL.
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0005_publish"
down_revision = "0003_audit_chain"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("target", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("state", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("idempotency_key", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=True),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("item_id", "target", "kind"),
    )
    op.create_index("ix_deliveries_item_id", "deliveries", ["item_id"])
    op.create_index("ix_deliveries_state", "deliveries", ["state"])
    op.create_table(
        "source_checks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("state", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("old_hash", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("new_hash", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("new_text", sa.Text(), nullable=True),
        sa.Column("failing", sa.JSON(), nullable=True),
        sa.Column("passages", sa.JSON(), nullable=True),
        sa.Column("etag", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("last_modified", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("resolved_by", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_source_checks_item_id", "source_checks", ["item_id"])
    op.create_index("ix_source_checks_state", "source_checks", ["state"])


def downgrade() -> None:
    op.drop_index("ix_source_checks_state", table_name="source_checks")
    op.drop_index("ix_source_checks_item_id", table_name="source_checks")
    op.drop_table("source_checks")
    op.drop_index("ix_deliveries_state", table_name="deliveries")
    op.drop_index("ix_deliveries_item_id", table_name="deliveries")
    op.drop_table("deliveries")
