"""Which gates exist, their default modes, and running them with their modes.

One place decides what a gate failure means: `GateResult.hard_fail` (mode
`discard`) discards the item, `flagged` (mode `flag`) shows it to the editor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

from guards.checks import CheckReply, claims_supported, faithfulness, not_run
from guards.dates import dates_grounded
from guards.names import names_grounded
from guards.numbers import numbers_grounded
from guards.quotes import quotes_verbatim
from guards.source import source_length, source_url
from guards.speakers import speakers_match
from guards.units import gate_language
from guards.verdict import Verdict

Gate = Callable[[str, str | None, str], Verdict]

SOURCE_GATES = ("source_url", "source_length")
DRAFT_GATES = (
    "numbers_grounded",
    "quotes_verbatim",
    "speakers_match",
    "names_grounded",
    "dates_grounded",
)
# The model checks: their verdicts come from a checking model's reply (guards.checks).
CHECK_GATES = ("claims_supported", "faithfulness")
ALL_GATES = SOURCE_GATES + DRAFT_GATES + CHECK_GATES
DEFAULT_MODES: dict[str, str] = {gate: "discard" for gate in ALL_GATES} | {
    "claims_supported": "flag",
    # Heuristics: they show the editor what to look at, they do not discard.
    "names_grounded": "flag",
    "dates_grounded": "flag",
    "speakers_match": "flag",
}


@dataclass(frozen=True)
class GateResult:
    verdict: Verdict
    mode: str

    @property
    def gate(self) -> str:
        return self.verdict.gate

    @property
    def hard_fail(self) -> bool:
        """Discards the item: a failure that ran, in mode `discard`, not flag-only."""
        v = self.verdict
        return v.ran and not v.passed and self.mode == "discard" and not v.flag_only

    @property
    def flagged(self) -> bool:
        """Shown to the editor as a warning: any other failure of a gate that is on
        (a check that did not run included: it never counts as a pass)."""
        return not self.verdict.passed and not self.hard_fail and self.mode != "off"

    @property
    def not_run(self) -> bool:
        return not self.verdict.ran

    @property
    def stored_mode(self) -> str:
        """The mode written beside the verdict: what it did. A flag-only failure under
        `discard` only flagged, so it is stored as `flag` (the review queue blocks
        approval on a stored failing `discard`). A check that did not run keeps its
        given mode: `discard` there means `[checks] require`, which blocks approval."""
        v = self.verdict
        if v.ran and not v.passed and self.mode == "discard" and v.flag_only:
            return "flag"
        return self.mode

    def to_dict(self) -> dict[str, Any]:
        return self.verdict.to_dict() | {"mode": self.stored_mode}


@lru_cache(maxsize=64)
def _gates(min_source_words: int, language: str | None = None) -> Mapping[str, Gate]:
    """The gate functions with their settings bound; built once per (minimum, language):
    `check --jsonl` runs the gates on thousands of pairs a second. Read only."""
    return {
        "source_url": source_url,
        "source_length": partial(source_length, min_words=min_source_words),
        "numbers_grounded": partial(numbers_grounded, language=language),
        "quotes_verbatim": quotes_verbatim,
        "speakers_match": speakers_match,
        "names_grounded": names_grounded,
        "dates_grounded": partial(dates_grounded, language=language),
    }


def run_gates(
    names: tuple[str, ...],
    source: str,
    url: str | None,
    draft: str,
    *,
    modes: Mapping[str, str],
    min_source_words: int = 150,
    language: str | None = None,
) -> list[GateResult]:
    """Run the named gates that are not `off`, in order; every verdict is returned.
    `language` is the source's as its page or feed declares it ("de"), None to detect
    it from the text; a three-letter code of one the gates read ("fre") is that language
    (guards.units.gate_language); a language the gates do not read is detected too."""
    gates = _gates(min_source_words, gate_language(language))
    results = []
    for name in names:
        mode = modes.get(name, DEFAULT_MODES[name])
        if mode == "off":
            continue
        results.append(GateResult(gates[name](source, url, draft), mode))
    return results


def hard_failures(results: list[GateResult]) -> list[GateResult]:
    return [r for r in results if r.hard_fail]


def run_checks(
    source: str,
    draft: str,
    reply: CheckReply | None,
    *,
    modes: Mapping[str, str],
    why_not: str = "no model",
    state: str = "not run",
    require: bool = False,
    transient: bool = False,
) -> list[GateResult]:
    """The model checks that are not `off`, on one check reply. Without a reply
    (`why_not` says why, `state` is "not run" or "failed") every check is recorded
    as not run: never a pass, and in mode `discard` only when `require` is set
    (a stored failing `discard` makes the draft unapprovable), else `flag`.
    `transient` marks a failure a later run may re-check."""
    results = []
    for name in CHECK_GATES:
        mode = modes.get(name, DEFAULT_MODES[name])
        if mode == "off":
            continue
        if reply is None:
            results.append(
                GateResult(
                    not_run(name, why_not, state, transient=transient),
                    "discard" if require else "flag",
                )
            )
        elif name == "claims_supported":
            results.append(GateResult(claims_supported(source, draft, reply.claims), mode))
        else:
            results.append(GateResult(faithfulness(source, draft, reply.sentences), mode))
    return results
