"""model calls name their ledger parts by a 64-bit prefix of the part's hash

Revision ID: 0034_short_part_names
Revises: 0033_parts_against_items
Create Date: 2026-12-04

- A row's request names each repeated part (tools, system prompt, instruction, the
  article's block, the draft's) by its SHA-256 key: 64 hex digits that zlib cannot
  shrink below about 32 bytes, most of a packed request (store/ledger.py). Since this
  revision a row names a part by "sha256:" and the first 16 hex digits of its key
  (`ledger.short`); the part keeps its full key, and the ledger finds it by the prefix.
  On bench/bench_ledger.py's 320-article run requests took 0.22x the articles' text,
  0.09x so.
- Upgrade shortens the names in every stored request, a batch at a time; downgrade
  puts the full keys back (a name no stored part, or two, begins with stays as it is).
  A reply packed against its request's parts is unchanged (it depends on the parts'
  texts and their order, not on their names). No column changes, on either backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

from store.db import keyset_batches
from store.ledger import PART_KEY, short
from store.packing import pack_json, read_digest, unpack_json

revision = "0034_short_part_names"
down_revision = "0033_parts_against_items"
branch_labels = None
depends_on = None

BATCH = 500
_CALLS = sa.table(
    "model_calls", sa.column("id", sa.Integer), sa.column("request_json", sa.LargeBinary)
)
_PARTS = sa.table("ledger_parts", sa.column("hash"))
_SET_REQUEST = (
    sa.update(_CALLS)
    .where(_CALLS.c.id == sa.bindparam("row"))
    .values(request_json=sa.bindparam("request"))
)


def _renamed(value: Any, rename: Callable[[str], str]) -> Any:
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get(PART_KEY), str):
        return {PART_KEY: rename(value[PART_KEY])}
    if isinstance(value, dict):
        return {k: _renamed(v, rename) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, rename) for v in value]
    return value


def _rewrite(rename: Callable[[str], str]) -> None:
    conn = op.get_bind()
    for rows in keyset_batches(
        conn,
        _CALLS.c.id,
        _CALLS.c.request_json,
        where=_CALLS.c.request_json.is_not(None),
        size=BATCH,
    ):
        updates = []
        for call_id, stored in rows:
            request = unpack_json(stored if isinstance(stored, str) else bytes(stored))
            renamed = _renamed(request, rename)
            if renamed != request:
                updates.append({"row": call_id, "request": pack_json(renamed)})
        if updates:
            conn.execute(_SET_REQUEST, updates)


def upgrade() -> None:
    _rewrite(short)


def downgrade() -> None:
    full: dict[str, list[str]] = {}
    for rows in keyset_batches(op.get_bind(), _PARTS.c.hash, size=BATCH):
        for (stored,) in rows:
            key = read_digest(stored, "sha256:")
            full.setdefault(short(key), []).append(key)
    _rewrite(lambda name: found[0] if len(found := full.get(name, [])) == 1 else name)
