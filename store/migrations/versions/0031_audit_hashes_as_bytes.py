"""the audit chain's hashes stored as 32 bytes on SQLite

Revision ID: 0031_audit_hashes_as_bytes
Revises: 0030_digests_as_bytes
Create Date: 2026-12-04

- `audit_events.hash` and `prev_hash` (64 hex digits each, `prev_hash` also in its
  unique index) are stored on SQLite as their 32 bytes (store/packing.py `Digest`,
  as 0030 did for the other digests) and read back as the same hex, so the chain,
  `copydesk audit --verify`, `--head` and an anchor kept outside prove exactly what
  they proved (each event's hash is still the SHA-256 over its content and the hex
  of the previous one: store/audit_chain.py `event_hash`). The unique index still
  refuses a second event linking to the same one. About 190 bytes per article on
  bench/bench_ledger.py's run (issue 19 §4).
- The log is append-only by trigger: on SQLite `audit_events_no_update` is dropped
  while the values are rewritten and made again from its stored SQL, in the same
  transaction. PostgreSQL: nothing changes.
- Downgrade writes the hex back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

from store.packing import digest_bytes, read_digest

revision = "0031_audit_hashes_as_bytes"
down_revision = "0030_digests_as_bytes"
branch_labels = None
depends_on = None

BATCH = 500
GUARD = "audit_events_no_update"


def _rewritten(convert: Callable[[Any], Any]) -> None:
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        return
    guard = conn.execute(
        sa.text("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = :n"), {"n": GUARD}
    ).scalar_one()
    op.execute(f"DROP TRIGGER {GUARD}")
    last = 0
    while events := conn.execute(
        sa.text(
            "SELECT id, prev_hash, hash FROM audit_events WHERE id > :last ORDER BY id LIMIT :n"
        ),
        {"last": last, "n": BATCH},
    ).all():
        last = events[-1][0]
        conn.execute(
            sa.text("UPDATE audit_events SET prev_hash = :p, hash = :h WHERE id = :id"),
            [{"id": i, "p": convert(p), "h": convert(h)} for i, p, h in events],
        )
    op.execute(guard)


def upgrade() -> None:
    _rewritten(digest_bytes)


def downgrade() -> None:
    _rewritten(read_digest)
