"""packed values against a preset zlib dictionary

Revision ID: 0022_packed_dictionary
Revises: 0021_bands_without_rowid
Create Date: 2026-12-03

- From this revision, model calls' requests and responses, ledger parts and large
  gate-verdict evidence are packed against a preset zlib dictionary
  (store/packing_dictionary.py; the stream's header names it, RFC 1950 §2.2), so a
  row stores only what is its own. No schema change, and no existing row is
  rewritten on upgrade: a value packed before (plain zlib) reads as it was.
- The revision marks the format: a copydesk older than it cannot read the new rows,
  and refuses a database at a revision it does not know.
- Downgrade packs every value that names a dictionary again as plain zlib, as
  0019_ledger_packed and store/packing.py before this revision read them.
"""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

import sqlalchemy as sa
from alembic import op

from store.packing import unpack_text

revision = "0022_packed_dictionary"
down_revision = "0021_bands_without_rowid"
branch_labels = None
depends_on = None

LEVEL = 6
PACKED_KEY = "$packed"
BATCH = 500


def upgrade() -> None:
    pass


def _plain(value: Any) -> bytes | None:
    """A packed value as plain zlib, or None when it already is (or is not packed)."""
    if value is None or isinstance(value, str):
        return None
    raw = bytes(value)
    if len(raw) < 6 or not raw[1] & 0x20:
        return None
    return zlib.compress(unpack_text(raw).encode("utf-8"), LEVEL)


def _plain_evidence(value: Any) -> Any:
    if isinstance(value, str):  # SQLite hands JSON columns back as their text
        value = json.loads(value)
    if not (isinstance(value, dict) and len(value) == 1 and isinstance(value.get(PACKED_KEY), str)):
        return None
    again = _plain(base64.b85decode(value[PACKED_KEY]))
    return None if again is None else {PACKED_KEY: base64.b85encode(again).decode("ascii")}


def _rewrite(table: sa.Table, key: str, columns: list[str], convert: Any) -> None:
    bind = op.get_bind()
    after: Any = None
    while True:
        query = sa.select(table.c[key], *(table.c[c] for c in columns)).order_by(table.c[key])
        if after is not None:
            query = query.where(table.c[key] > after)
        rows = bind.execute(query.limit(BATCH)).all()
        if not rows:
            return
        for row in rows:
            changes = {}
            for name, value in zip(columns, row[1:], strict=True):
                again = convert(value)
                if again is not None:
                    changes[name] = again
            if changes:
                bind.execute(sa.update(table).where(table.c[key] == row[0]).values(**changes))
        after = rows[-1][0]


def downgrade() -> None:
    calls = sa.table(
        "model_calls",
        sa.column("id", sa.Integer),
        sa.column("request_json", sa.LargeBinary),
        sa.column("response_json", sa.LargeBinary),
    )
    parts = sa.table(
        "ledger_parts", sa.column("hash", sa.String), sa.column("content", sa.LargeBinary)
    )
    verdicts = sa.table(
        "gate_verdicts", sa.column("id", sa.Integer), sa.column("evidence", sa.JSON)
    )
    _rewrite(calls, "id", ["request_json", "response_json"], _plain)
    _rewrite(parts, "hash", ["content"], _plain)
    _rewrite(verdicts, "id", ["evidence"], _plain_evidence)
