"""The evidence map: where in the stored source every number, name, date and
quotation of a summary is grounded, taken from the gates' own evidence (their
spans), never re-derived here, and the checks the item passed with their versions.

Offsets are Python string indices (Unicode code points) into `Item.source_text`
and into the field (`headline` or `summary`) the text sits in.
"""

from __future__ import annotations

import hashlib
import inspect
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from typing import Any

from guards import registry
from guards.registry import GateResult

# Which gate grounds which kind of thing. A gate not listed here adds no entries.
KINDS = {
    "numbers_grounded": "number",
    "names_grounded": "name",
    "dates_grounded": "date",
    "quotes_verbatim": "quotation",
}
# The field of an evidence entry that holds the draft text, per gate.
_TEXT_KEYS = ("number", "name", "date", "quote", "text")


@dataclass(frozen=True)
class Grounding:
    """One figure, name, date or quotation of the summary and where the source has it."""

    kind: str
    text: str  # as the summary writes it
    field: str  # "headline" or "summary"
    span: tuple[int, int]  # in that field
    source_span: tuple[int, int]  # in the stored source text
    source_text: str  # the source's own characters at source_span
    gate: str
    fragments: tuple[tuple[int, int], ...] = ()  # a quotation cut with "…": each piece

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.kind,
            "text": self.text,
            "field": self.field,
            "span": list(self.span),
            "source_span": list(self.source_span),
            "source_text": self.source_text,
            "gate": self.gate,
        }
        if self.fragments:
            data["fragments"] = [list(f) for f in self.fragments]
        return data


@dataclass(frozen=True)
class CheckPassed:
    gate: str
    version: str
    mode: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "gate": self.gate,
            "version": self.version,
            "mode": self.mode,
            "reason": self.reason,
        }


def draft_text(headline: str | None, summary: str) -> str:
    """The text the draft gates read (as the pipeline and the review queue build it)."""
    return f"{headline}\n\n{summary}" if headline else summary


def groundings(
    results: Iterable[GateResult], source: str, headline: str | None, summary: str
) -> list[Grounding]:
    """Every grounded span the gates reported, ordered as the summary reads."""
    offset = len(headline) + 2 if headline else 0
    found: list[Grounding] = []
    for result in results:
        kind = KINDS.get(result.gate)
        if kind is None or not isinstance(result.verdict.evidence, list):
            continue
        for entry in result.verdict.evidence:
            grounding = _grounding(result.gate, kind, entry, source, headline, summary, offset)
            if grounding is not None:
                found.append(grounding)
    order = {"headline": 0, "summary": 1}
    return sorted(found, key=lambda g: (order[g.field], g.span, g.kind))


def _grounding(
    gate: str,
    kind: str,
    entry: dict[str, Any],
    source: str,
    headline: str | None,
    summary: str,
    offset: int,
) -> Grounding | None:
    draft_span, source_span = entry.get("draft_span"), entry.get("source_span")
    if not (entry.get("found", True) and draft_span and source_span):
        return None
    start, end = draft_span
    if headline and start < len(headline):
        field, text, span = "headline", headline, (start, end)
    else:
        field, text, span = "summary", summary, (start - offset, end - offset)
    s_start, s_end = source_span
    fragments = tuple(
        tuple(f["source_span"]) for f in entry.get("fragments", ()) if f.get("source_span")
    )
    return Grounding(
        kind=kind,
        text=text[span[0] : span[1]],
        field=field,
        span=span,
        source_span=(s_start, s_end),
        source_text=source[s_start:s_end],
        gate=gate,
        fragments=fragments,  # type: ignore[arg-type]
    )


def checks_passed(results: Iterable[GateResult]) -> list[CheckPassed]:
    """The gates that ran and passed (a flag that the editor accepted is not a pass)."""
    return [
        CheckPassed(r.gate, gate_version(r.gate), r.mode, r.verdict.reason)
        for r in results
        if r.verdict.ran and r.verdict.passed
    ]


@cache
def gate_version(gate: str) -> str:
    """The copydesk release and a hash of the gate's own code: a downstream reader can
    tell two items checked by different rules apart. A gate module that declares
    `VERSION` is taken at its word."""
    release = _release()
    module = _gate_module(gate)
    if module is None:
        return release
    declared = getattr(module, "VERSION", None)
    if declared:
        return f"{release}/{declared}"
    try:
        code = inspect.getsource(module)
    except (OSError, TypeError):
        return release
    return f"{release}+{hashlib.sha256(code.encode()).hexdigest()[:12]}"


def _gate_module(gate: str) -> Any:
    # The registry's table of deterministic gates is private; the model checks live
    # in guards.checks. Either way the function's own module is what we hash.
    table = registry._gates(150)  # noqa: SLF001 - one look-up, not a behaviour
    func = table.get(gate)
    if func is None:
        return sys.modules.get("guards.checks")
    return sys.modules.get(getattr(func, "func", func).__module__)


def _release() -> str:
    try:
        return f"copydesk {metadata.version('copydesk')}"
    except metadata.PackageNotFoundError:
        return "copydesk"
