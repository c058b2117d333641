"""Ledger payloads stored packed: zlib over their canonical JSON text (issue 19 §4).

A model call's request and response and a ledger part are read back whole (by
`copydesk audit`) and never searched or queried inside by SQL, so they are stored
as zlib-compressed bytes (BLOB on SQLite, bytea on PostgreSQL; migration
0019_ledger_packed) and read back as the same value. A part's hash stays the
SHA-256 of its JSON text (store/ledger.py), so every part still proves its own
content once unpacked.

zlib (RFC 1950) is in Python's standard library; level 6 is its default, a few
tens of microseconds for a ledger payload of some kilobytes.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from sqlalchemy import LargeBinary
from sqlalchemy.types import TypeDecorator

LEVEL = 6


def pack_text(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8"), LEVEL)


def unpack_text(value: bytes | str) -> str:
    """The text packed in `value`; a value stored as text (written before 0019 on
    SQLite, whose columns take any type) is read as it is."""
    if isinstance(value, str):
        return value
    return zlib.decompress(bytes(value)).decode("utf-8")


def pack_json(value: Any) -> bytes:
    return pack_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def unpack_json(value: bytes | str) -> Any:
    return json.loads(unpack_text(value))


class PackedJSON(TypeDecorator[Any]):
    """A JSON value stored as zlib-compressed bytes."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> bytes | None:
        return None if value is None else pack_json(value)

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        return None if value is None else unpack_json(value)


class PackedText(TypeDecorator[str]):
    """A text stored as zlib-compressed bytes."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Any) -> bytes | None:
        return None if value is None else pack_text(value)

    def process_result_value(self, value: Any, dialect: Any) -> str | None:
        return None if value is None else unpack_text(value)


__all__ = ["PackedJSON", "PackedText", "pack_json", "pack_text", "unpack_json", "unpack_text"]
