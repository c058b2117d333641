"""Why an item was discarded: a closed set of kinds, stored in `items.discard_kind`.

A discard is either a failed gate (the first hard gate that failed, by name) or
one of the kinds below for discards no gate made. The status machine refuses
any other value, so a misspelt kind fails at the move, not in a chart later.
Labels on screen may differ (the review stats say "refused link").
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from guards.registry import ALL_GATES

# Discards no gate made.
NoGateKind = Literal["duplicate", "robots", "refused", "fetch", "model", "internal", "other"]
NO_GATE_KINDS: Final = get_args(NoGateKind)
OTHER: Final = "other"  # a discard whose kind nobody recorded (a move without one)

DISCARD_KINDS: Final = frozenset(ALL_GATES) | frozenset(NO_GATE_KINDS)


def check_kind(kind: str) -> str:
    """`kind` if it is one of the discard kinds, else a ValueError."""
    if kind not in DISCARD_KINDS:
        raise ValueError(f"not a discard kind: {kind!r}")
    return kind
