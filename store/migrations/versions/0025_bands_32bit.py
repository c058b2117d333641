"""near-duplicate band buckets in 32 bits

Revision ID: 0025_bands_32bit
Revises: 0024_feed_audit_events
Create Date: 2026-12-03

- item_dup_bands.bucket (store/duplicates.py `buckets`) becomes a signed 32-bit
  BLAKE2b hash of its band instead of a 64-bit one: SQLite stores it in 4 bytes
  instead of 8, in the table and in its index (32 rows per draft). Two bands that
  differ share a bucket by chance about once in 2**32 per pair, and a shared
  bucket only makes a candidate that is then compared on its whole signature.
  Measured on bench/bench_ledger.py (320 drafts): the bands went from 0.64x to
  0.50x the source text.
- Every stored item's bands are made again from its stored signature, here, with
  this file's own hash (a migration does not change with the code); downgrade
  makes the 64-bit ones again. The column stays BIGINT (PostgreSQL keeps 8 bytes).
"""

from __future__ import annotations

import hashlib
import struct

import sqlalchemy as sa
from alembic import op

revision = "0025_bands_32bit"
down_revision = "0024_feed_audit_events"
branch_labels = None
depends_on = None

BANDS, ROWS, NUM_PERM = 32, 2, 64  # as store/duplicates.py signs (NUM_PERM 32-bit values)
BATCH = 500

_items = sa.table("items", sa.column("id", sa.Integer), sa.column("dup_signature", sa.LargeBinary))
_bands = sa.table(
    "item_dup_bands",
    sa.column("item_id", sa.Integer),
    sa.column("band", sa.Integer),
    sa.column("bucket", sa.BigInteger),
)


def _buckets(raw: bytes, width: int) -> list[int]:
    size = ROWS * 4
    return [
        int.from_bytes(
            hashlib.blake2b(
                band.to_bytes(2, "little") + raw[band * size : (band + 1) * size],
                digest_size=width,
            ).digest(),
            "little",
            signed=True,
        )
        for band in range(BANDS)
    ]


def _bands_again(width: int) -> None:
    bind = op.get_bind()
    after = 0
    while True:
        rows = bind.execute(
            sa.select(_items.c.id, _items.c.dup_signature)
            .where(_items.c.dup_signature.is_not(None), _items.c.id > after)
            .order_by(_items.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            return
        for item_id, raw in rows:
            raw = bytes(raw)
            bind.execute(sa.delete(_bands).where(_bands.c.item_id == item_id))
            if len(raw) != struct.calcsize(f"<{NUM_PERM}I"):
                continue  # not a signature this scheme reads: no bands, as before
            bind.execute(
                sa.insert(_bands),
                [
                    {"item_id": item_id, "band": band, "bucket": bucket}
                    for band, bucket in enumerate(_buckets(raw, width))
                ],
            )
        after = rows[-1][0]


def upgrade() -> None:
    _bands_again(4)


def downgrade() -> None:
    _bands_again(8)
