"""SHA-256 digests stored as 32 bytes on SQLite

Revision ID: 0030_digests_as_bytes
Revises: 0029_replies_against_parts
Create Date: 2026-12-04

- `items.content_hash` (64 hex digits, and its index), `model_calls.prompt_hash` and
  `ledger_parts.hash` (71 characters with "sha256:") hold a SHA-256 digest. On SQLite
  each is now stored as its 32 bytes (store/packing.py `Digest`) and read back as the
  same text, so every comparison, look-up and the audit are unchanged (issue 19 §4:
  about 220 bytes per article on bench/bench_ledger.py's run). SQLite keeps any
  value in any column, so no table is rebuilt: the values are rewritten, a batch at
  a time. A value that is not a digest stays as it is.
- PostgreSQL: nothing changes (text, as before).
- Downgrade writes the hex back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

from store.packing import digest_bytes, read_digest

revision = "0030_digests_as_bytes"
down_revision = "0029_replies_against_parts"
branch_labels = None
depends_on = None

BATCH = 500
# (table, its key, the digest's column, the digest's prefix)
COLUMNS = (
    ("items", "id", "content_hash", ""),
    ("model_calls", "id", "prompt_hash", "sha256:"),
    ("ledger_parts", "hash", "hash", "sha256:"),
)


def _rewrite(stored_as: str, convert: Callable[[Any, str], Any]) -> None:
    conn = op.get_bind()
    for table, key, column, prefix in COLUMNS:
        after: Any = None
        while True:
            rows = conn.execute(
                sa.text(
                    f"SELECT {key}, {column} FROM {table} WHERE typeof({column}) = :kind "  # noqa: S608
                    f"{'' if after is None else f'AND {key} > :after '}ORDER BY {key} LIMIT :n"
                ),
                {"kind": stored_as, "after": after, "n": BATCH},
            ).all()
            if not rows:
                break
            after = rows[-1][0]
            updates = [
                {"k": k, "v": new} for k, value in rows if (new := convert(value, prefix)) != value
            ]
            if updates:
                conn.execute(
                    sa.text(f"UPDATE {table} SET {column} = :v WHERE {key} = :k"),  # noqa: S608
                    updates,
                )


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rewrite("text", digest_bytes)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rewrite("blob", read_digest)
