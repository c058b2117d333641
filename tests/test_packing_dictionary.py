"""Packed ledger payloads and verdict evidence use a preset zlib dictionary (issue 19 §4).

A model call's request skeleton and reply, and a gate's evidence, are a few hundred
bytes each of the same JSON keys and shapes: zlib alone, starting from nothing for
every row, stores those keys again in every row. Packed against a preset dictionary
of those shapes (RFC 1950's FDICT), a row stores only what is its own. The
dictionary can never change (every row packed with it needs the same bytes to be
read): it is pinned here, and a row packed before it (plain zlib) still reads."""

from __future__ import annotations

import json
import zlib

import pytest

from store import packing
from store.packing_dictionary import DICTIONARY_1

REPLY = {
    "id": "msg_01Harlow7",
    "type": "message",
    "role": "assistant",
    "model": "claude-haiku-4-5-20251001",
    "content": [
        {
            "type": "tool_use",
            "id": "toolu_01Harlow7",
            "name": "write_summary",
            "input": {
                "headline": "Wenmouth lifeboat crew rescue two from Skerrow sandbank",
                "summary": "The Wenmouth lifeboat rescued two walkers cut off by the tide on the "
                "Skerrow sandbank on Sunday, coxswain Idris Pell said; both were unhurt.",
            },
        }
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 1432,
        "output_tokens": 118,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    },
}
EVIDENCE = [
    {
        "number": "2",
        "value": "2",
        "found": True,
        "draft_span": [61, 64],
        "source_span": [212, 215],
        "source_text": "two",
    },
    {
        "date": "Sunday",
        "kind": "weekday",
        "value": "sun",
        "found": True,
        "draft_span": [99, 105],
        "source_span": [40, 46],
    },
]


def test_the_dictionary_is_pinned() -> None:
    # Changing it would make every row packed with it unreadable: add a new one
    # (store/packing_dictionary.py) and keep this one in DICTIONARIES.
    assert (zlib.adler32(DICTIONARY_1), len(DICTIONARY_1)) == (DICTIONARY_1_ADLER, DICTIONARY_1_LEN)
    assert packing.DICTIONARIES[zlib.adler32(DICTIONARY_1)] == DICTIONARY_1


@pytest.mark.parametrize("value", [REPLY, EVIDENCE], ids=["reply", "evidence"])
def test_a_payload_packs_smaller_against_the_dictionary_and_reads_back(value) -> None:  # type: ignore[no-untyped-def]
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    packed = packing.pack_text(text)
    assert packed[1] & 0x20, "packed without the preset dictionary (RFC 1950 FDICT)"
    assert packing.unpack_text(packed) == text
    assert packing.unpack_json(packing.pack_json(value)) == value
    plain = zlib.compress(text.encode("utf-8"), packing.LEVEL)
    assert len(packed) < 0.7 * len(plain), (len(packed), len(plain))


def test_a_value_packed_before_the_dictionary_reads_as_it_was() -> None:
    text = json.dumps(REPLY, separators=(",", ":"))
    assert packing.unpack_text(zlib.compress(text.encode("utf-8"), 6)) == text
    assert packing.unpack_text(text) == text  # stored as text before 0019


def test_a_value_packed_with_an_unknown_dictionary_is_named() -> None:
    other = b'{"a stranger dictionary":1}'
    packer = zlib.compressobj(6, zdict=other)
    raw = packer.compress(b'{"a stranger dictionary":2}') + packer.flush()
    with pytest.raises(ValueError, match=f"{zlib.adler32(other):08x}"):
        packing.unpack_text(raw)


def test_large_evidence_is_packed_against_the_dictionary() -> None:
    stored = packing.PackedEvidence().process_bind_param(EVIDENCE * 3, None)
    assert packing.is_packed_evidence(stored)
    assert packing.PackedEvidence().process_result_value(stored, None) == EVIDENCE * 3


DICTIONARY_1_ADLER = 842513395
DICTIONARY_1_LEN = 3562
