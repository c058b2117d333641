"""What a flag says (issue 25 point 2): the flagged sentences of a draft, marked in
the draft itself, and one plain line per problem for beside the decision buttons.

A flag must not look like a pass: inside a flagged sentence nothing is marked
green (a name found in the source does not make the sentence right), and the
line says what is wrong in words ("This sentence says the ferry is certain; the
source says the ferry is planned"), not by the checks' code names. Everything
here is article or model text: the HTML is built from `escape_text`d pieces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from review_ui.desk import highlight as hl
from review_ui.desk.queries import MODEL_GATE_LABELS

PROBLEM_OUTCOMES = ("wrong fact", "material error")  # guards/checks.py WRONG_FACT, MATERIAL
SENTENCE_STYLE = (
    "background:#fff4d6;text-decoration:underline wavy #b58100;text-underline-offset:3px"
)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_CLOSING = ".!?\"'\u201d\u2019)"
SHORT = 70  # characters of a sentence quoted in a line


@dataclass(frozen=True)
class Flag:
    """One problem: the draft range it is about (offsets of `highlight.draft_text`),
    when it is about one, and a plain line saying what is wrong."""

    span: tuple[int, int] | None
    line: str


def _span(value: Any, text: str) -> tuple[int, int] | None:
    """A judged sentence's range in the draft, with its closing punctuation."""
    if isinstance(value, list | tuple) and len(value) == 2:
        lo, hi = value
        if isinstance(lo, int) and isinstance(hi, int) and 0 <= lo < hi <= len(text):
            while hi < len(text) and text[hi] in _CLOSING:
                hi += 1
            return lo, hi
    return None


def _quote(text: str) -> str:
    text = " ".join(str(text or "").split())
    return f"\u201c{text if len(text) <= SHORT else text[: SHORT - 1].rstrip() + '…'}\u201d"


def _judged_line(entry: Mapping[str, Any]) -> str:
    said = str(entry.get("reader_draft") or "").strip()
    source = str(entry.get("reader_rewrite") or "").strip()
    kinds = ", ".join(str(k) for k in entry.get("errors") or [])
    sentence = _quote(str(entry.get("sentence") or ""))
    if entry.get("outcome") == "wrong fact":
        line = f"The source contradicts {sentence}"
        return line + (f": it says {source}." if source else ".")
    if said and source:
        line = f"{sentence} says {said}; the source says {source}"
    else:
        line = f"{sentence} does not say what the source says"
    return line + (f" ({kinds})." if kinds else ".")


def _claim_line(entry: Mapping[str, Any]) -> str:
    why = str(entry.get("rule") or entry.get("outcome") or "not supported")
    return f"The source does not support the claim {_quote(str(entry.get('claim') or ''))} ({why})."


def sentence_around(text: str, pos: int, lo: int = 0) -> tuple[int, int]:
    """The sentence of `text` holding offset `pos` (not before `lo`)."""
    start = lo
    for match in _SENTENCE_END.finditer(text, lo, pos):
        start = match.end()
    found = _SENTENCE_END.search(text, pos)
    end = found.end() if found else len(text)
    while start < end and text[start].isspace():
        start += 1
    return start, end


def flags_of(view: Any, draft: str, marks: Sequence[hl.Mark]) -> list[Flag]:
    """Every flag on the current text of `view` (an ItemView): the judge's
    problem sentences, the claims with no support, and the deterministic gates
    in flag mode (their amber terms' sentences)."""
    out: list[Flag] = []
    for verdict in view.flags:
        evidence = verdict.evidence
        if verdict.gate == "faithfulness" and isinstance(evidence, Mapping):
            for entry in evidence.get("sentences") or []:
                if isinstance(entry, Mapping) and entry.get("outcome") in PROBLEM_OUTCOMES:
                    span = _span(entry.get("draft_span"), draft)
                    out.append(Flag(span, _judged_line(entry)))
        elif verdict.gate == "claims_supported" and isinstance(evidence, list):
            for entry in evidence:
                if isinstance(entry, Mapping) and entry.get("outcome") != "supported":
                    out.append(Flag(None, _claim_line(entry)))
        else:
            label = MODEL_GATE_LABELS.get(verdict.gate, verdict.gate.replace("_", " "))
            out.append(Flag(None, f"{label.capitalize()}: {verdict.reason}"))
    for mark in marks:  # a term a flag-mode gate did not find: its sentence
        if mark.kind == hl.FLAGGED:
            out.append(Flag(sentence_around(draft, mark.start), ""))
    # What is wrong with a sentence of the draft first: it is marked there too.
    return sorted(out, key=lambda f: f.span is None)


def spans(flags: Iterable[Flag]) -> list[tuple[int, int]]:
    """The flagged ranges, merged, in text order."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(f.span for f in flags if f.span):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def render(
    text: str,
    marks: Sequence[hl.Mark],
    flagged: Sequence[tuple[int, int]],
    start: int = 0,
    end: int | None = None,
) -> str:
    """`highlight.render` of text[start:end], each flagged range wrapped in a
    `cd-flag-sentence` span with no green mark inside it."""
    end = len(text) if end is None else end
    pieces: list[str] = []
    pos = start
    for lo, hi in flagged:
        lo, hi = max(lo, pos), min(hi, end)
        if lo >= hi:
            continue
        pieces.append(hl.render(text, marks, pos, lo))
        inside = [m for m in marks if m.kind != hl.GROUNDED]
        pieces.append(
            f'<span class="cd-flag-sentence" style="{SENTENCE_STYLE}">'
            f"{hl.render(text, inside, lo, hi)}</span>"
        )
        pos = hi
    pieces.append(hl.render(text, marks, pos, end))
    return "".join(pieces)
