"""item_dup_bands keyed by (item, band) alone: SQLite WITHOUT ROWID

Revision ID: 0021_bands_without_rowid
Revises: 0020_review_sessions
Create Date: 2026-12-03

- item_dup_bands (32 rows per draft, store/duplicates.py) was a rowid table with
  its primary key (item_id, band) kept a second time in SQLite's automatic index:
  the key's values stored twice, beside a rowid nothing reads. On SQLite it is
  made again WITHOUT ROWID (https://www.sqlite.org/withoutrowid.html: the table
  is a B-tree on its primary key), same columns, same key, same rows, and the
  index on `bucket` is made again on it. Measured on bench/bench_ledger.py (320
  drafts): the bands and their indexes went from 0.84x to 0.62x the source text.
- PostgreSQL keeps its table (a heap with a separate primary-key index has no
  such second copy to drop): nothing changes there.
"""

from __future__ import annotations

from alembic import op

revision = "0021_bands_without_rowid"
down_revision = "0020_review_sessions"
branch_labels = None
depends_on = None

_COLUMNS = (
    "item_id INTEGER NOT NULL, band INTEGER NOT NULL, bucket BIGINT NOT NULL, "
    "PRIMARY KEY (item_id, band), FOREIGN KEY(item_id) REFERENCES items (id)"
)


def _rebuild(options: str) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute(f"CREATE TABLE item_dup_bands_new ({_COLUMNS}){options}")
    op.execute(
        "INSERT INTO item_dup_bands_new (item_id, band, bucket) "
        "SELECT item_id, band, bucket FROM item_dup_bands"
    )
    op.drop_index("ix_item_dup_bands_bucket", table_name="item_dup_bands")
    op.drop_table("item_dup_bands")
    op.rename_table("item_dup_bands_new", "item_dup_bands")
    op.create_index("ix_item_dup_bands_bucket", "item_dup_bands", ["bucket"])


def upgrade() -> None:
    _rebuild(" WITHOUT ROWID")


def downgrade() -> None:
    _rebuild("")
