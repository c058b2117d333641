"""no index no query needs: ix_items_status dropped, FTS5 without column sizes

Revision ID: 0032_fewer_index_pages
Revises: 0031_audit_hashes_as_bytes
Create Date: 2026-12-04

- `ix_items_status` is dropped (both backends): `ix_items_story_order` (migration
  0010) starts with the status, so every query by status searches that one (SQLite's
  plan: `SEARCH items USING INDEX ix_items_story_order (status=?)`), and the second
  index was only pages to write (issue 19 §4: list every index and its users).
- SQLite: `items_fts` is made again with `columnsize=0`
  (https://www.sqlite.org/fts5.html#the_columnsize_option): the per-row column sizes
  serve only ranking functions (bm25), and search never ranks (store/search.py). It
  is filled from `items` as 0028 filled it (`copydesk_text` unpacks the source text).
- Downgrade gives both back.
"""

from __future__ import annotations

from alembic import op

from store.search import remake_sqlite_index

revision = "0032_fewer_index_pages"
down_revision = "0031_audit_hashes_as_bytes"
branch_labels = None
depends_on = None

# As 0028 left the index (its tokenizer, no positions).
OPTIONS = (
    "content='items', content_rowid='id', tokenize='unicode61 remove_diacritics 2', detail=none"
)


def _search_index(options: str) -> None:
    if op.get_bind().dialect.name == "sqlite":
        remake_sqlite_index(op.execute, options)


def upgrade() -> None:
    op.drop_index("ix_items_status", table_name="items")
    _search_index(OPTIONS + ", columnsize=0")


def downgrade() -> None:
    op.create_index("ix_items_status", "items", ["status"])
    _search_index(OPTIONS)
