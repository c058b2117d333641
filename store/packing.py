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

Since migration 0022, values are packed against a preset dictionary of the shapes
they all repeat (store/packing_dictionary.py: request skeleton, the API's reply,
the gates' evidence), so a row stores only what is its own: on the 320-article run
requests, replies and evidence packed 1.8x, 1.9x and 1.4x smaller than zlib alone.
The stream's header names its dictionary (RFC 1950 §2.2: FDICT and DICTID, the
dictionary's Adler-32); a value packed without one (before 0022) reads as it was.
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import JSON, LargeBinary, String, Text
from sqlalchemy.types import TypeDecorator

from store.packing_dictionary import DICTIONARY_1

LEVEL = 6
# Every dictionary a stored value may name, by its Adler-32 (never remove one).
DICTIONARIES = {zlib.adler32(d): d for d in (DICTIONARY_1,)}
DICTIONARY = DICTIONARY_1  # what new values are packed against
_FDICT = 0x20  # RFC 1950 §2.2: FLG bit 5, a DICTID follows the two header bytes


def pack_text(text: str) -> bytes:
    packer = zlib.compressobj(LEVEL, zdict=DICTIONARY)
    return packer.compress(text.encode("utf-8")) + packer.flush()


def unpack_text(value: bytes | str) -> str:
    """The text packed in `value`, against the dictionary its header names or none
    (packed before 0022); a value stored as text (written before 0019 on SQLite,
    whose columns take any type) is read as it is."""
    if isinstance(value, str):
        return value
    raw = bytes(value)
    if len(raw) < 6 or not raw[1] & _FDICT:
        return zlib.decompress(raw).decode("utf-8")
    key = int.from_bytes(raw[2:6], "big")
    dictionary = DICTIONARIES.get(key)
    if dictionary is None:
        raise ValueError(f"packed against an unknown zlib dictionary {key:08x}")
    unpacker = zlib.decompressobj(zdict=dictionary)
    return (unpacker.decompress(raw) + unpacker.flush()).decode("utf-8")


def pack_json(value: Any) -> bytes:
    return pack_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def unpack_json(value: bytes | str) -> Any:
    return json.loads(unpack_text(value))


# A model call's reply is packed against its own request's parts (store/ledger.py
# `pack_reply`): the reply quotes what it was sent (a check's passages are the
# article's words, its sentences the draft's), and the parts are stored once and
# never changed, so the stream is zlib's against a dictionary of this dictionary and
# those parts' texts (in the order the request names them). Such a value starts with
# AGAINST_PARTS, never the first byte of a zlib stream (RFC 1950 §2.2: CMF 0x?8),
# and reads as `AgainstParts` until the ledger puts its parts to it (`ledger.replies`).
AGAINST_PARTS = b"\x01"


@dataclass(frozen=True)
class AgainstParts:
    """A value packed against the parts its row's request names (see AGAINST_PARTS)."""

    stream: bytes

    def unpack(self, parts: Sequence[str]) -> Any:
        unpacker = zlib.decompressobj(zdict=parts_dictionary(parts))
        return json.loads((unpacker.decompress(self.stream) + unpacker.flush()).decode("utf-8"))


def parts_dictionary(parts: Sequence[str]) -> bytes:
    """The preset dictionary, then the parts' texts (zlib reads the last 32 KB: the
    parts, nearest the value, win)."""
    return DICTIONARY + "".join(parts).encode("utf-8")


def pack_against(value: Any, parts: Sequence[str]) -> AgainstParts:
    packer = zlib.compressobj(LEVEL, zdict=parts_dictionary(parts))
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return AgainstParts(packer.compress(text) + packer.flush())


# A ledger part that quotes an item's text (the article's block, its draft's) is packed
# against that text, already stored once in `items`: the zlib dictionary is the preset
# one, then the item's source text, so the part keeps only what it adds (its tags and
# title; a draft's rewording). Such a value is AGAINST_ITEM, the item's id (8 bytes,
# big-endian), then the stream; it reads as `AgainstItem` until the ledger puts the
# item's text to it (store/ledger.py). zlib refuses a dictionary other than the one
# the stream was packed with (RFC 1950 §2.2: its DICTID is the dictionary's Adler-32;
# https://docs.python.org/3/library/zlib.html#zlib.decompressobj, `zdict`: "must be
# the same dictionary as used by the compressor"), so a changed text is never misread.
AGAINST_ITEM = b"\x02"
_ITEM_ID_BYTES = 8


@dataclass(frozen=True)
class AgainstItem:
    """A ledger part packed against its item's source text (see AGAINST_ITEM)."""

    item_id: int
    stream: bytes

    @classmethod
    def pack(cls, text: str, item_id: int, source: str) -> AgainstItem:
        packer = zlib.compressobj(LEVEL, zdict=_item_dictionary(source))
        return cls(item_id, packer.compress(text.encode("utf-8")) + packer.flush())

    @classmethod
    def read(cls, value: bytes) -> AgainstItem:
        end = 1 + _ITEM_ID_BYTES
        return cls(int.from_bytes(value[1:end], "big"), value[end:])

    def stored(self) -> bytes:
        return AGAINST_ITEM + self.item_id.to_bytes(_ITEM_ID_BYTES, "big") + self.stream

    def unpack(self, source: str) -> str:
        """The part's text; zlib.error when `source` is not the text it was packed
        against."""
        unpacker = zlib.decompressobj(zdict=_item_dictionary(source))
        return (unpacker.decompress(self.stream) + unpacker.flush()).decode("utf-8")


def _item_dictionary(source: str) -> bytes:
    """The preset dictionary, then the item's text (nearest the part: zlib reads the
    last 32 KB of a dictionary)."""
    return DICTIONARY + source.encode("utf-8")


class PackedJSON(TypeDecorator[Any]):
    """A JSON value stored as zlib-compressed bytes (or packed against parts)."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> bytes | None:
        if isinstance(value, AgainstParts):
            return AGAINST_PARTS + value.stream
        return None if value is None else pack_json(value)

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, str) and bytes(value[:1]) == AGAINST_PARTS:
            return AgainstParts(bytes(value[1:]))
        return unpack_json(value)


class PackedText(TypeDecorator[str]):
    """A text stored as zlib-compressed bytes (or packed against an item's text: a
    ledger part, read as `AgainstItem`)."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value: str | AgainstItem | None, dialect: Any) -> bytes | None:
        if isinstance(value, AgainstItem):
            return value.stored()
        return None if value is None else pack_text(value)

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, str) and bytes(value[:1]) == AGAINST_ITEM:
            return AgainstItem.read(bytes(value))
        return unpack_text(value)


# An item's source text (issue 19 §4: 1.0x of the 1.71x `items` took, per article, on
# the 320-article run) is packed on SQLite only: plain zlib, no dictionary (prose
# shares nothing with the ledger's shapes), from SOURCE_PACK_FROM characters (below,
# zlib's header and checksum outweigh what it saves). The full-text index's triggers
# read it through the SQL function SQL_UNPACK (store/db.py registers it on every
# connection; migration 0026). PostgreSQL keeps text: its generated search column
# reads the column, and TOAST compresses a long value already.
SOURCE_PACK_FROM = 64
SQL_UNPACK = "copydesk_text"


def pack_source(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8"), LEVEL)


def sql_unpack(value: Any) -> Any:
    """SQL_UNPACK: a packed source text as text; any other value as it is (a text
    stored before 0026, NULL)."""
    return unpack_text(value) if isinstance(value, bytes) else value


class PackedSourceText(TypeDecorator[str]):
    """An item's source text: packed on SQLite (see SOURCE_PACK_FROM), text elsewhere;
    a text stored before packing reads as it was."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Any) -> Any:
        if value is None or dialect.name != "sqlite" or len(value) < SOURCE_PACK_FROM:
            return value
        return pack_source(value)

    def process_result_value(self, value: Any, dialect: Any) -> str | None:
        return None if value is None else unpack_text(value)


# A SHA-256 digest (an item's text hash, a call's prompt hash, a ledger part's key)
# is stored on SQLite as its 32 bytes, not 64 characters of hex (71 with "sha256:"):
# issue 19 §4, migration 0030. It reads back as the same text. A value that is not
# a digest (64 lower-case hex digits after the column's prefix) is stored as it is,
# and PostgreSQL keeps text (its columns are unchanged).
_HEX_DIGEST = re.compile(r"[0-9a-f]{64}")


def digest_bytes(value: Any, prefix: str = "") -> Any:
    """A digest's 32 bytes; any other value (bytes already, not a digest) as it is."""
    if not isinstance(value, str):
        return value
    hex_part = value[len(prefix) :] if value.startswith(prefix) else ""
    return bytes.fromhex(hex_part) if _HEX_DIGEST.fullmatch(hex_part) else value


def read_digest(value: Any, prefix: str = "") -> Any:
    """A stored digest as its text (for readers of raw SQL too); any other value as it is."""
    return prefix + bytes(value).hex() if isinstance(value, bytes | memoryview) else value


class Digest(TypeDecorator[str]):
    """A SHA-256 digest in hex, after `prefix`: 32 bytes on SQLite (see above)."""

    impl = String
    cache_ok = True

    def __init__(self, prefix: str = "", length: int | None = None) -> None:
        super().__init__(length)
        self.prefix = prefix

    def process_bind_param(self, value: str | None, dialect: Any) -> Any:
        if value is None or dialect.name != "sqlite":
            return value
        return digest_bytes(value, self.prefix)

    def process_result_value(self, value: Any, dialect: Any) -> str | None:
        return read_digest(value, self.prefix)


# A gate verdict's evidence stays a JSON column, because SQL reads a model check's
# state in it (store/checks.py `did_not_run`, `is_transient`). A large evidence (the
# checks' judged sentences and claims, the numbers and names found: 2.3x the
# articles' text on the 320-article run) is stored as {PACKED_KEY: its JSON text,
# zlib-compressed, in base85 (RFC 1924's alphabet: no character JSON must escape)}.
# A small one, and any evidence that carries a check's "state", stays as it is: a
# check that did not run is always small and always readable by SQL.
PACKED_KEY = "$packed"
# Characters of JSON text; below, packing saves little (with the dictionary, a
# 100-256 character evidence, a gate's numbers or names found, packs to half).
PACK_FROM = 100


def is_packed_evidence(value: Any) -> bool:
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
        if is_packed_evidence(value):
            return unpack_json(base64.b85decode(value[PACKED_KEY]))
        return value  # small, a check's state, or stored before packing


__all__ = [
    "AGAINST_ITEM",
    "AGAINST_PARTS",
    "AgainstItem",
    "AgainstParts",
    "DICTIONARIES",
    "Digest",
    "PACKED_KEY",
    "PackedEvidence",
    "PackedJSON",
    "PackedSourceText",
    "PackedText",
    "SOURCE_PACK_FROM",
    "SQL_UNPACK",
    "digest_bytes",
    "is_packed_evidence",
    "pack_against",
    "pack_json",
    "pack_source",
    "pack_text",
    "parts_dictionary",
    "read_digest",
    "sql_unpack",
    "unpack_json",
    "unpack_text",
]
