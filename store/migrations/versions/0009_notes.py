"""notes: editors' notes on items

Revision ID: 0009_notes
Revises: 0006_discard_kind
Create Date: 2026-12-01

- notes (item_id indexed, author, body, created_at): a note never changes the
  item it is on. The runtime role gets SELECT and INSERT only (store/db.py).
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0009_notes"
down_revision = "0006_discard_kind"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "notes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("author", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_notes_item_id", "notes", ["item_id"])


def downgrade() -> None:
    op.drop_index("ix_notes_item_id", table_name="notes")
    op.drop_table("notes")
