"""item_dup_bands keyed by (band, bucket, item_id), without a second index

Revision ID: 0027_bands_keyed_by_bucket
Revises: 0026_source_text_packed
Create Date: 2026-12-04

- The near-duplicate bands (32 rows per draft, store/duplicates.py) were keyed by
  (item_id, band), with an index on `bucket` for the look-up: every band stored
  twice, once in the table and once in the index (0.49x the source text of
  bench/bench_ledger.py's 320-article run, half of it the index). The look-up asks
  for (band, bucket) pairs, and an item's own pairs are computed from its stored
  signature, so the key becomes (band, bucket, item_id) and the bucket index goes.
  SQLite: the table is made again WITHOUT ROWID with the new key (migration 0021's
  form); PostgreSQL: the primary key is replaced and the index dropped.
- Nothing reads the bands by item alone but a migration that signs items again
  (`write_bands` replacing), which then walks the table; no foreign key points at
  the bands, and items are never deleted.
- Downgrade gives the (item_id, band) key and the bucket index back.
"""

from __future__ import annotations

from alembic import op

revision = "0027_bands_keyed_by_bucket"
down_revision = "0026_source_text_packed"
branch_labels = None
depends_on = None

INDEX = "ix_item_dup_bands_bucket"
NEW_KEY = ("band", "bucket", "item_id")
OLD_KEY = ("item_id", "band")


def _keyed(key: tuple[str, ...], *, index: bool) -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "CREATE TABLE item_dup_bands_new (item_id INTEGER NOT NULL, band INTEGER NOT NULL, "
            f"bucket BIGINT NOT NULL, PRIMARY KEY ({', '.join(key)}), "
            "FOREIGN KEY(item_id) REFERENCES items (id)) WITHOUT ROWID"
        )
        op.execute(
            "INSERT INTO item_dup_bands_new (item_id, band, bucket) "
            "SELECT item_id, band, bucket FROM item_dup_bands"
        )
        op.execute(f"DROP INDEX IF EXISTS {INDEX}")
        op.drop_table("item_dup_bands")
        op.rename_table("item_dup_bands_new", "item_dup_bands")
    else:
        op.execute(f"DROP INDEX IF EXISTS {INDEX}")
        op.drop_constraint("item_dup_bands_pkey", "item_dup_bands", type_="primary")
        op.create_primary_key("item_dup_bands_pkey", "item_dup_bands", list(key))
    if index:
        op.create_index(INDEX, "item_dup_bands", ["bucket"])


def upgrade() -> None:
    _keyed(NEW_KEY, index=False)


def downgrade() -> None:
    _keyed(OLD_KEY, index=True)
