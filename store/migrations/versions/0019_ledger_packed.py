"""ledger packed: model calls' requests and responses and ledger parts stored compressed

Revision ID: 0019_ledger_packed
Revises: 0018_calls_in_flight
Create Date: 2026-12-03

- model_calls.request_json, model_calls.response_json and ledger_parts.content are
  stored as zlib-compressed bytes of their JSON text (BLOB / bytea; store/packing.py).
  They are read back whole by `copydesk audit` and never queried inside by SQL; on
  the 320-article loopback run they were 3.8x the articles' own text (issue 19).
- Every existing row is packed here, in Python (the same function the application
  uses); a part's hash is unchanged (the SHA-256 of its JSON text, which unpacking
  gives back), so the audit reassembles the same requests as before.
- Downgrade unpacks them back to JSON and text.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0019_ledger_packed"
down_revision = "0018_calls_in_flight"
branch_labels = None
depends_on = None

# As store/packing.py packs them (kept here: a migration does not change with the code).
LEVEL = 6


def _pack_json(value: Any) -> bytes | None:
    if isinstance(value, str):  # SQLite hands JSON columns back as their text
        value = json.loads(value)
    if value is None:
        return None
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return zlib.compress(text.encode("utf-8"), LEVEL)


def _pack_text(value: Any) -> bytes | None:
    return None if value is None else zlib.compress(value.encode("utf-8"), LEVEL)


def _unpack_text(value: Any) -> str | None:
    return None if value is None else zlib.decompress(bytes(value)).decode("utf-8")


def _convert(
    table: str,
    key: str,
    columns: dict[str, bool],
    new_type: Callable[[], Any],
    convert: Callable[[Any], Any],
) -> None:
    """Each of `columns` (name -> nullable) becomes `new_type`, its values converted
    row by row: a new column filled, the old one dropped, the new one renamed."""
    bind = op.get_bind()
    with op.batch_alter_table(table) as batch:
        for name in columns:
            batch.add_column(sa.Column(f"{name}_new", new_type(), nullable=True))
    names = ", ".join(columns)
    # Only this module's own table and column names are interpolated.
    rows = bind.execute(sa.text(f"SELECT {key}, {names} FROM {table}")).all()  # noqa: S608
    sets = ", ".join(f"{name}_new = :{name}" for name in columns)
    update = sa.text(f"UPDATE {table} SET {sets} WHERE {key} = :key").bindparams(  # noqa: S608
        *(sa.bindparam(name, type_=new_type()) for name in columns)
    )
    for row in rows:
        values = {name: convert(row[i + 1]) for i, name in enumerate(columns)}
        bind.execute(update, {"key": row[0], **values})
    with op.batch_alter_table(table) as batch:
        for name in columns:
            batch.drop_column(name)
    with op.batch_alter_table(table) as batch:
        for name, nullable in columns.items():
            batch.alter_column(
                f"{name}_new", new_column_name=name, nullable=nullable, existing_type=new_type()
            )


def upgrade() -> None:
    both = {"request_json": True, "response_json": True}
    _convert("model_calls", "id", both, sa.LargeBinary, _pack_json)
    _convert("ledger_parts", "hash", {"content": False}, sa.LargeBinary, _pack_text)


def downgrade() -> None:
    both = {"request_json": True, "response_json": True}
    _convert("model_calls", "id", both, sa.JSON, _json_back)
    _convert("ledger_parts", "hash", {"content": False}, sa.Text, _unpack_text)


def _json_back(value: Any) -> Any:
    text = _unpack_text(value)
    return None if text is None else json.loads(text)
