"""Payloads stored packed: zlib over their JSON text (issue 19 §4).

A model call's request and response and a ledger part are read back whole (by
`copydesk audit`) and never searched or queried inside by SQL, so they are stored
as zlib-compressed bytes (BLOB on SQLite, bytea on PostgreSQL; migration
0019_ledger_packed) and read back as the same value. A part's hash stays the
SHA-256 of its JSON text (store/ledger.py), so every part still proves its own
content once unpacked.

zlib (RFC 1950) is in Python's standard library; level 6 is its default, a few
tens of microseconds for a ledger payload of some kilobytes. Gate verdicts'
evidence is packed inside its JSON column (`PackedEvidence`, below).
"""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

from sqlalchemy import JSON, LargeBinary
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


# A gate verdict's evidence stays a JSON column, because SQL reads a model check's
# state in it (store/checks.py `did_not_run`, `is_transient`). A large evidence (the
# checks' judged sentences and claims, the numbers and names found: 2.3x the
# articles' text on the 320-article run) is stored as {PACKED_KEY: its JSON text,
# zlib-compressed, in base85 (RFC 1924's alphabet: no character JSON must escape)}.
# A small one, and any evidence that carries a check's "state", stays as it is: a
# check that did not run is always small and always readable by SQL.
PACKED_KEY = "$packed"
PACK_FROM = 256  # characters of JSON text; below, packing saves little


def _packed(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get(PACKED_KEY), str)


class PackedEvidence(TypeDecorator[Any]):
    """A gate verdict's evidence: JSON, large values packed (see PACKED_KEY)."""

    impl = JSON
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        if value is None or (isinstance(value, dict) and "state" in value):
            return value
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        if len(text) < PACK_FROM:
            return value
        return {PACKED_KEY: base64.b85encode(pack_text(text)).decode("ascii")}

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        if _packed(value):
            return unpack_json(base64.b85decode(value[PACKED_KEY]))
        return value  # small, a check's state, or stored before packing


__all__ = [
    "PACKED_KEY",
    "PackedEvidence",
    "PackedJSON",
    "PackedText",
    "pack_json",
    "pack_text",
    "unpack_json",
    "unpack_text",
]
