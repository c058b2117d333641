"""review_sessions: a signed-in browser survives a reload, and can be revoked

Revision ID: 0020_review_sessions
Revises: 0019_ledger_packed
Create Date: 2026-12-03

- review_sessions: one row per sign-in to the review queue (issue 25): the SHA-256
  of the session token's random key (never the token), the editor's name, when it
  was made, when it expires and when it was revoked (sign-out, the editor
  disabled or given a new password). No existing data changes.
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0020_review_sessions"
down_revision = "0019_ledger_packed"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "review_sessions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("key_hash", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("editor", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("key_hash"),
    )
    op.create_index("ix_review_sessions_editor", "review_sessions", ["editor"])
    op.create_index("ix_review_sessions_expires_at", "review_sessions", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_review_sessions_expires_at", table_name="review_sessions")
    op.drop_index("ix_review_sessions_editor", table_name="review_sessions")
    op.drop_table("review_sessions")
