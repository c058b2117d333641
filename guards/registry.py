"""Which gates exist, their default modes, and running them with their modes.

One place decides what a gate failure means: `GateResult.hard_fail` (mode
`discard`) discards the item, `flagged` (mode `flag`) shows it to the editor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from guards.numbers import numbers_grounded
from guards.quotes import quotes_verbatim
from guards.source import source_length, source_url
from guards.verdict import Verdict

Gate = Callable[[str, str | None, str], Verdict]

SOURCE_GATES = ("source_url", "source_length")
DRAFT_GATES = ("numbers_grounded", "quotes_verbatim")
ALL_GATES = SOURCE_GATES + DRAFT_GATES
DEFAULT_MODES: dict[str, str] = {gate: "discard" for gate in ALL_GATES}


@dataclass(frozen=True)
class GateResult:
    verdict: Verdict
    mode: str

    @property
    def gate(self) -> str:
        return self.verdict.gate

    @property
    def hard_fail(self) -> bool:
        return not self.verdict.passed and self.mode == "discard"

    @property
    def flagged(self) -> bool:
        return not self.verdict.passed and self.mode == "flag"

    def to_dict(self) -> dict[str, Any]:
        return self.verdict.to_dict() | {"mode": self.mode}


def _gates(min_source_words: int) -> dict[str, Gate]:
    return {
        "source_url": source_url,
        "source_length": partial(source_length, min_words=min_source_words),
        "numbers_grounded": numbers_grounded,
        "quotes_verbatim": quotes_verbatim,
    }


def run_gates(
    names: tuple[str, ...],
    source: str,
    url: str | None,
    draft: str,
    *,
    modes: Mapping[str, str],
    min_source_words: int = 150,
) -> list[GateResult]:
    """Run the named gates that are not `off`, in order; every verdict is returned."""
    gates = _gates(min_source_words)
    results = []
    for name in names:
        mode = modes.get(name, DEFAULT_MODES[name])
        if mode == "off":
            continue
        results.append(GateResult(gates[name](source, url, draft), mode))
    return results


def hard_failures(results: list[GateResult]) -> list[GateResult]:
    return [r for r in results if r.hard_fail]
