"""queue order index: drafts by story time

Revision ID: 0010_story_order
Revises: 0008_search
Create Date: 2026-12-01

- `ix_items_story_order` on items (status, coalesce(published_at, seen_at), id):
  the queue's "oldest story first" order (review_ui/queries.py `_story_time`).
  Without it every page, count of the place and next/previous in that order
  sorted all drafts (hundreds of ms at 100,000); with it the database walks the
  drafts in order and stops after a page, a search included (each row is tested
  against the text index). The expression must stay written exactly as the
  query writes it, or neither database uses the index.
  NOTE: SQLite keeps an expression index through a batch-mode rebuild of `items`
  only if the later migration creates it again (as for 0008's triggers).
"""

from __future__ import annotations

from alembic import op

revision = "0010_story_order"
down_revision = "0008_search"
branch_labels = None
depends_on = None

INDEX = "ix_items_story_order"  # store/search.py STORY_ORDER_INDEX


def upgrade() -> None:
    op.execute(f"CREATE INDEX {INDEX} ON items (status, coalesce(published_at, seen_at), id)")
    if op.get_bind().dialect.name == "postgresql":
        # Statistics for the new expression, so the planner can weigh walking it.
        op.execute("ANALYZE items")


def downgrade() -> None:
    op.execute(f"DROP INDEX IF EXISTS {INDEX}")
