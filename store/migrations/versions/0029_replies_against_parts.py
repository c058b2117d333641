"""model calls' replies packed against their requests' ledger parts

Revision ID: 0029_replies_against_parts
Revises: 0028_search_without_positions
Create Date: 2026-12-04

- A reply quotes what it was sent (a check's passages are the article's words, its
  sentences the draft's), and the request's parts are stored once and never changed
  (`ledger_parts`). Since this revision a reply is packed against them
  (store/packing.py AGAINST_PARTS; store/ledger.py `replies` reads it back): on
  bench/bench_ledger.py's 320-article run, replies took 0.23x the articles' text
  packed alone, 0.12x so.
- Upgrade repacks the replies already stored whose request names parts, a batch at
  a time; a reply of a request without parts, or whose parts are not all there,
  stays as it was. No column changes, on either backend.
- Downgrade packs every such reply by itself again (the form the code before this
  revision reads).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

from store.ledger import part_keys
from store.packing import (
    AGAINST_PARTS,
    AgainstParts,
    pack_against,
    pack_json,
    unpack_json,
    unpack_text,
)

revision = "0029_replies_against_parts"
down_revision = "0028_search_without_positions"
branch_labels = None
depends_on = None

BATCH = 500
# Columns read and written as the bytes they hold (no model types: this revision's form).
_CALLS = sa.table(
    "model_calls",
    sa.column("id", sa.Integer),
    *(sa.column(name, sa.LargeBinary) for name in ("request_json", "response_json")),
)
_PARTS = sa.table("ledger_parts", sa.column("hash"), sa.column("content", sa.LargeBinary))


def _repacked(reply: bytes, texts: list[str]) -> bytes | None:
    if reply[:1] == AGAINST_PARTS:
        return None
    return AGAINST_PARTS + pack_against(unpack_json(reply), texts).stream


def _unpacked(reply: bytes, texts: list[str]) -> bytes | None:
    if reply[:1] != AGAINST_PARTS:
        return None
    return pack_json(AgainstParts(reply[1:]).unpack(texts))


def _rewrite(convert: Callable[[bytes, list[str]], bytes | None]) -> None:
    conn = op.get_bind()
    last = 0
    while rows := conn.execute(
        sa.select(_CALLS.c.id, _CALLS.c.request_json, _CALLS.c.response_json)
        .where(_CALLS.c.id > last, _CALLS.c.response_json.is_not(None))
        .order_by(_CALLS.c.id)
        .limit(BATCH)
    ).all():
        last = rows[-1][0]
        named = {row[0]: part_keys(_request(row[1])) for row in rows}
        wanted = sorted({key for keys in named.values() for key in keys})
        texts = {
            key: unpack_text(content)
            for key, content in conn.execute(
                sa.select(_PARTS.c.hash, _PARTS.c.content).where(_PARTS.c.hash.in_(wanted))
            )
        }
        updates = []
        for call_id, _, reply in rows:
            keys = named[call_id]
            if not keys or any(key not in texts for key in keys):
                continue
            value = convert(bytes(reply), [texts[key] for key in keys])
            if value is not None:
                updates.append({"row": call_id, "reply": value})
        if updates:
            conn.execute(
                sa.update(_CALLS)
                .where(_CALLS.c.id == sa.bindparam("row"))
                .values(response_json=sa.bindparam("reply")),
                updates,
            )


def _request(value: Any) -> Any:
    return (
        None
        if value is None
        else unpack_json(bytes(value) if not isinstance(value, str) else value)
    )


def upgrade() -> None:
    _rewrite(_repacked)


def downgrade() -> None:
    _rewrite(_unpacked)
