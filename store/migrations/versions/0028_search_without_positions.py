"""SQLite's search index without word positions (FTS5 detail=none)

Revision ID: 0028_search_without_positions
Revises: 0027_bands_keyed_by_bucket
Create Date: 2026-12-04

- SQLite: `items_fts` is made again with `detail=none`
  (https://www.sqlite.org/fts5.html#the_detail_option): the index keeps which rows
  hold a word, not where. On bench/bench_ledger.py's 320-article run it held 0.46x
  the articles' text with positions, 0.12x without (issue 19 §4). Search sends FTS5
  single words and checks a phrase's order on the rows it finds (store/search.py).
  The table is filled from `items` through `copydesk_text` (the source text is
  stored packed since 0026, and FTS5's 'rebuild' would read the packed bytes); its
  triggers are unchanged (they name the table, not its options). `usermerge` is
  set again at the next run's merge (store/search.py `merge_index`).
- PostgreSQL: nothing changes (its tsvector keeps positions for `phraseto_tsquery`).
- Downgrade gives the index its positions back, filled the same way.
"""

from __future__ import annotations

from alembic import op

from store.packing import SQL_UNPACK

revision = "0028_search_without_positions"
down_revision = "0027_bands_keyed_by_bucket"
branch_labels = None
depends_on = None

COLUMNS = "headline, title, summary, source_text, source_url, original_url"
OPTIONS = "content='items', content_rowid='id', tokenize='unicode61 remove_diacritics 2'"


def _made_again(detail: str) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute("DROP TABLE items_fts")
    op.execute(f"CREATE VIRTUAL TABLE items_fts USING fts5({COLUMNS}, {OPTIONS}{detail})")
    fill = (
        f"INSERT INTO items_fts(rowid, {COLUMNS}) SELECT id, headline, title, summary, "  # noqa: S608
        f"{SQL_UNPACK}(source_text), source_url, original_url FROM items"
    )
    op.execute(fill)  # built from this module's constants only


def upgrade() -> None:
    _made_again(", detail=none")


def downgrade() -> None:
    _made_again("")
