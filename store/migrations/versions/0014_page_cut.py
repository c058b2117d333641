"""items.page_cut_at: a page cut by max_page_bytes is recorded on its item

Revision ID: 0014_page_cut
Revises: 0013_runtime_roles
Create Date: 2026-12-03

- items.page_cut_at: the bytes kept when the article's page was larger than
  `[ingest] max_page_bytes` and was cut off (issue 26); NULL for a page read whole,
  a feed's own text, or an item from before this revision (whose cut, if any, is
  in its audit event's details, "fetch": {"truncated": true}). The review queue's
  badge, `run --json` and `feeds list --check` read it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014_page_cut"
down_revision = "0013_runtime_roles"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("items", sa.Column("page_cut_at", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("items", "page_cut_at")
