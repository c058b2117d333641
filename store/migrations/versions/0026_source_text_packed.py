"""items.source_text packed on SQLite; the search index fed the unpacked text

Revision ID: 0026_source_text_packed
Revises: 0025_bands_32bit
Create Date: 2026-12-04

- On SQLite an item's source text is stored zlib-packed (store/packing.py
  `PackedSourceText`): 1.0x of the 1.71x the `items` table took per article on
  bench/bench_ledger.py's 320-article run. Every stored text is packed here.
- The full-text index (`items_fts`, external content on `items`, migration
  0008_search) is fed by triggers with the row's values; they now pass the source
  text through the SQL function `copydesk_text` (store/db.py registers it on each
  connection), so the index holds the same words as before and nothing in it is
  rebuilt. The triggers are made again from their stored SQL (sqlite_master), with
  only `new.source_text` and `old.source_text` read through the function.
- A connection without the function (the sqlite3 shell) can still read every table,
  but cannot insert or change an item: its triggers name a function it lacks.
- PostgreSQL keeps the text (its generated search column reads it; TOAST compresses
  it): nothing changes there.
- Downgrade unpacks every text and gives the triggers back as they were.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

from store.packing import SOURCE_PACK_FROM, SQL_UNPACK, pack_source, unpack_text

revision = "0026_source_text_packed"
down_revision = "0025_bands_32bit"
branch_labels = None
depends_on = None

BATCH = 500
_READS = ("new.source_text", "old.source_text")


def _rewritten(convert: Callable[[Any], Any], stored_as: str, unpacked: bool) -> None:
    """Rewrite every source text stored as `stored_as` ('text' or 'blob') with
    `convert`, a batch at a time, with the search index's triggers dropped meanwhile
    (the index's words do not change); then make the triggers again from their
    stored SQL, reading the source text through SQL_UNPACK (`unpacked`) or as the
    column holds it."""
    conn = op.get_bind()
    triggers = conn.execute(
        sa.text(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' "
            "AND tbl_name = 'items' AND name LIKE 'items_fts_%' ORDER BY name"
        )
    ).all()
    for name, _ in triggers:
        op.execute(f"DROP TRIGGER {name}")
    last = 0
    while rows := conn.execute(
        sa.text(
            "SELECT id, source_text FROM items WHERE id > :last "
            "AND typeof(source_text) = :kind ORDER BY id LIMIT :n"
        ),
        {"last": last, "kind": stored_as, "n": BATCH},
    ).all():
        conn.execute(
            sa.text("UPDATE items SET source_text = :value WHERE id = :id"),
            [{"id": item_id, "value": convert(value)} for item_id, value in rows],
        )
        last = rows[-1][0]
    for _, sql in triggers:
        for read in _READS:
            wrapped = f"{SQL_UNPACK}({read})"
            sql = sql.replace(wrapped, read)
            if unpacked:
                sql = sql.replace(read, wrapped)
        op.execute(sql)


def _pack(value: str) -> str | bytes:
    return pack_source(value) if len(value) >= SOURCE_PACK_FROM else value


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rewritten(_pack, "text", unpacked=True)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rewritten(unpack_text, "blob", unpacked=False)
