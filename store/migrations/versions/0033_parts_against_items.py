"""ledger parts that quote their item's text packed against it

Revision ID: 0033_parts_against_items
Revises: 0032_fewer_index_pages
Create Date: 2026-12-04

- An article's block (sent twice, summary then check) and its draft's are ledger
  parts that quote the item's source text, which `items` already holds. Since this
  revision such a part is packed against that text (store/packing.py `AgainstItem`,
  store/ledger.py `pack_part`): on bench/bench_ledger.py's 320-article run the parts
  took 0.43x the articles' text, 0.14x so (the whole database 4.11x, 3.81x).
- Upgrade repacks the parts already stored: a part belongs to the item of the first
  model call that names it; one that gains little (tools, system, instructions) or
  whose item has no text stays as it was. No column changes, on either backend.
- Downgrade packs every such part by itself again (the form the code before this
  revision, and 0029's downgrade, read).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from alembic import op

from store.db import keyset_batches
from store.ledger import pack_part, part_keys
from store.packing import (
    AGAINST_ITEM,
    AgainstItem,
    pack_text,
    read_digest,
    sql_unpack,
    unpack_json,
    unpack_text,
)

revision = "0033_parts_against_items"
down_revision = "0032_fewer_index_pages"
branch_labels = None
depends_on = None

BATCH = 500
PREFIX = "sha256:"
# Columns read and written as the values they hold (no model types: this revision's form).
_CALLS = sa.table(
    "model_calls", sa.column("id", sa.Integer), sa.column("item_id", sa.Integer),
    sa.column("request_json", sa.LargeBinary),
)  # fmt: skip
_PARTS = sa.table("ledger_parts", sa.column("hash"), sa.column("content", sa.LargeBinary))
_ITEMS = sa.table("items", sa.column("id", sa.Integer), sa.column("source_text"))


def _parts() -> Iterator[list[Any]]:
    """The stored parts (hash as stored, content as bytes), a batch at a time."""
    return keyset_batches(op.get_bind(), _PARTS.c.hash, _PARTS.c.content, size=BATCH)


def _owners() -> dict[str, int]:
    """{part key: the item of the first model call that names it}."""
    owners: dict[str, int] = {}
    calls = keyset_batches(
        op.get_bind(),
        *(_CALLS.c.id, _CALLS.c.item_id, _CALLS.c.request_json),
        where=_CALLS.c.item_id.is_not(None),
        size=BATCH,
    )
    for rows in calls:
        for _, item_id, request in rows:
            if request is not None:
                value = request if isinstance(request, str) else bytes(request)
                for key in part_keys(unpack_json(value)):
                    owners.setdefault(key, item_id)
    return owners


def _sources(ids: set[int]) -> dict[int, str]:
    """The items' source texts (packed on SQLite since 0026, text on PostgreSQL)."""
    rows = op.get_bind().execute(
        sa.select(_ITEMS.c.id, _ITEMS.c.source_text).where(_ITEMS.c.id.in_(sorted(ids)))
    )
    return {i: sql_unpack(bytes(v) if isinstance(v, memoryview) else v) for i, v in rows if v}


def _write(updates: list[dict[str, Any]]) -> None:
    if updates:
        op.get_bind().execute(
            sa.update(_PARTS)
            .where(_PARTS.c.hash == sa.bindparam("key"))
            .values(content=sa.bindparam("packed")),
            updates,
        )


def upgrade() -> None:
    owners = _owners()
    for rows in _parts():
        mine = {
            stored: (owners[key], bytes(content))
            for stored, content in rows
            if (key := read_digest(stored, PREFIX)) in owners and bytes(content)[:1] != AGAINST_ITEM
        }
        sources = _sources({item_id for item_id, _ in mine.values()})
        updates = []
        for stored, (item_id, content) in mine.items():
            packed = pack_part(unpack_text(content), item_id, sources.get(item_id))
            if isinstance(packed, AgainstItem):
                updates.append({"key": stored, "packed": packed.stored()})
        _write(updates)


def downgrade() -> None:
    for rows in _parts():
        against = {
            stored: AgainstItem.read(bytes(content))
            for stored, content in rows
            if bytes(content)[:1] == AGAINST_ITEM
        }
        sources = _sources({part.item_id for part in against.values()})
        _write([{"key": k, "packed": pack_text(_alone(k, p, sources))} for k, p in against.items()])


def _alone(stored: Any, part: AgainstItem, sources: dict[int, str]) -> str:
    """The part's text, or a clear refusal: a part whose item's text is gone or changed
    cannot be put in the form older code reads."""
    try:
        return part.unpack(sources[part.item_id])
    except (KeyError, zlib.error, UnicodeDecodeError):
        raise RuntimeError(
            f"ledger part {read_digest(stored, PREFIX)} was packed against item "
            f"{part.item_id}'s text, which is no longer that text: it cannot be stored "
            "alone for the revision before 0033"
        ) from None
