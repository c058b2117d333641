"""desk_presence: the draft each editor has open (a soft claim with an expiry)

Revision ID: 0007_presence
Revises: 0009_notes
Create Date: 2026-12-01

- desk_presence: one row per editor (the account name is the key): the item they
  have open in the review queue, when they opened it, when the claim was last
  refreshed and when it expires. Other editors' queues skip an item held by an
  unexpired row unless they ask to see it. Not a lock: nothing refuses a decision
  because of it. No existing data changes.
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0007_presence"
down_revision = "0009_notes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "desk_presence",
        sa.Column("editor", sqlmodel.sql.sqltypes.AutoString(), primary_key=True),
        sa.Column("item_id", sa.Integer(), sa.ForeignKey("items.id"), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("refreshed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_desk_presence_item_id", "desk_presence", ["item_id"])
    op.create_index("ix_desk_presence_expires_at", "desk_presence", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_desk_presence_expires_at", table_name="desk_presence")
    op.drop_index("ix_desk_presence_item_id", table_name="desk_presence")
    op.drop_table("desk_presence")
