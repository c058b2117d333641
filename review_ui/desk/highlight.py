"""Evidence highlighting: escaped HTML of a text with the gates' evidence marked.

Pure functions, no Streamlit. The only tags in the output are the ones built
here (`<div>`, `<mark>`, `<span>`); every character of the article, draft or
model output goes through `html.escape` first, so `<script>` or
`<img onerror=...>` in an article stays text.

The result must be shown with `st.html`, never with `st.markdown`: escaping
stops HTML but not markdown, and markdown would still turn an article's
`![](https://tracker/pixel.png)` into an image request or `[x](javascript:...)`
into a link.

Evidence shapes, as the gates write them: a list of entries, each naming the
term it checked (`number`, `quote`, `name`, `date`, `claim` or `text`), whether it was
`found` (or `supported`), and where: `source_span` [start, end) in the item's
source text, `draft_span` in the draft text `f"{headline}\\n\\n{summary}"`.
Entries of unknown shape are ignored, so a new gate cannot break the page.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

GROUNDED = "grounded"  # the gate found this in the source
MISSING = "missing"  # a hard gate did not find it: the reason a draft fails
FLAGGED = "flagged"  # a gate in `flag` mode did not find it: the editor should look
SELECTED = "selected"  # the passage of the claim the editor picked in the claims table

STYLES = {
    GROUNDED: "background:#c9f2d0;color:#0b3d17;border-radius:3px;padding:0 1px",
    MISSING: "background:#ffc9c9;color:#5c0000;border-radius:3px;padding:0 1px;"
    "text-decoration:underline wavy #c00000",
    FLAGGED: "background:#ffe9a8;color:#4d3800;border-radius:3px;padding:0 1px;"
    "text-decoration:underline dotted #8a6100",
    SELECTED: "background:#cfe3ff;color:#0d2f57;border-radius:3px;padding:0 1px;"
    "outline:2px solid #1c6dd0",
}
# The picked passage wins, then problems win over grounded marks where two
# overlap (a quote holding a number).
_RANK = {SELECTED: -1, MISSING: 0, FLAGGED: 1, GROUNDED: 2}
_TERM_KEYS = ("number", "quote", "name", "date", "claim", "text")
_BLOCK_STYLE = "white-space:pre-wrap;line-height:1.55;font-size:0.95rem;overflow-wrap:anywhere"
# Bidi overrides and isolates can make text read differently from what it is:
# show them as visible escapes instead of applying them.
_BIDI = re.compile(r"[\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Mark:
    """One highlighted range [start, end) of a text, with a tooltip note."""

    start: int
    end: int
    kind: str
    note: str


@dataclass(frozen=True)
class VerdictInfo:
    """What highlighting needs from a stored gate verdict."""

    gate: str
    passed: bool
    mode: str
    reason: str = ""
    evidence: Any = None


def escape_text(text: str) -> str:
    """HTML-escaped text with bidi controls made visible."""
    escaped = html.escape(text, quote=True)
    return _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", escaped)


def _entries(evidence: Any) -> list[Mapping[str, Any]]:
    if isinstance(evidence, Mapping):
        # Some gates may wrap their list: {"items": [...]} or {"claims": [...]}.
        for key in ("items", "claims", "names", "numbers", "quotes"):
            if isinstance(evidence.get(key), list):
                return [e for e in evidence[key] if isinstance(e, Mapping)]
        return []
    if isinstance(evidence, list):
        return [e for e in evidence if isinstance(e, Mapping)]
    return []


def _term(entry: Mapping[str, Any]) -> str | None:
    for key in _TERM_KEYS:
        value = entry.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _found(entry: Mapping[str, Any]) -> bool | None:
    for key in ("found", "supported", "grounded"):
        if isinstance(entry.get(key), bool):
            return entry[key]
    return None


def _span(value: Any, length: int) -> tuple[int, int] | None:
    """A [start, end) pair that fits inside a text of `length`, or None."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    start, end = value
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
        return None
    if 0 <= start < end <= length:
        return start, end
    return None


def _problem_kind(verdict: VerdictInfo) -> str:
    return FLAGGED if verdict.mode == "flag" else MISSING


def source_marks(source: str, verdicts: Iterable[VerdictInfo]) -> list[Mark]:
    """Where the source has what the draft says (grounded), and any flagged
    passage a gate located in the source (an unsupported claim's quote)."""
    marks = []
    for verdict in verdicts:
        for entry in _entries(verdict.evidence):
            span = _span(entry.get("source_span"), len(source))
            term = _term(entry)
            if span is None or term is None:
                continue
            found = _found(entry)
            kind = GROUNDED if found else _problem_kind(verdict)
            label = "found in source" if found else "problem"
            marks.append(Mark(span[0], span[1], kind, f"{verdict.gate}: {term} ({label})"))
        marks += _settling_marks(source, verdict)
    return resolve(marks)


# The judge's outcomes for a sentence whose settling passage was verified in the
# source: a problem marks the passage as one, a faithful sentence as grounded.
_JUDGED_PROBLEMS = ("wrong fact", "material error")


def _settling_marks(source: str, verdict: VerdictInfo) -> list[Mark]:
    """The passages that settle each judged sentence (the faithfulness judge's
    evidence: {"sentences": [...]}), where code verified them in the source.
    A passage that is not verified has no span and is not marked."""
    evidence = verdict.evidence if isinstance(verdict.evidence, Mapping) else {}
    sentences = evidence.get("sentences")
    if not isinstance(sentences, list):
        return []
    marks = []
    for n, entry in enumerate(sentences, 1):
        if not isinstance(entry, Mapping):
            continue
        span = _span(entry.get("source_span"), len(source))
        outcome = entry.get("outcome")
        if span is None or outcome not in (*_JUDGED_PROBLEMS, "faithful"):
            continue
        kind = _problem_kind(verdict) if outcome in _JUDGED_PROBLEMS else GROUNDED
        note = f"{verdict.gate}: settles sentence {n} ({outcome})"
        marks.append(Mark(span[0], span[1], kind, note))
    return marks


def draft_marks(draft: str, verdicts: Iterable[VerdictInfo]) -> list[Mark]:
    """Every checked term in the draft: grounded ones green, the ones the source
    lacks red (hard gate) or amber (flag mode). Uses `draft_span` when the gate
    gave one that matches the text, else finds the term itself."""
    marks = []
    for verdict in verdicts:
        for entry in _entries(verdict.evidence):
            term = _term(entry)
            found = _found(entry)
            if term is None or found is None:
                continue
            kind = GROUNDED if found else _problem_kind(verdict)
            note = f"{verdict.gate}: {term} " + (
                "(found in source)" if found else "(NOT in source)"
            )
            span = _span(entry.get("draft_span"), len(draft))
            if span is not None:
                marks.append(Mark(span[0], span[1], kind, note))
                continue
            for start in _occurrences(draft, term):
                marks.append(Mark(start, start + len(term), kind, note))
    return resolve(marks)


def _occurrences(text: str, term: str) -> list[int]:
    """Start offsets of `term` in `text`; a term that starts or ends with a digit
    must not touch another digit (31 is not inside 2310)."""
    found = []
    start = text.find(term)
    while start != -1:
        end = start + len(term)
        before_ok = not (term[0].isdigit() and start > 0 and text[start - 1].isdigit())
        after_ok = not (term[-1].isdigit() and end < len(text) and text[end].isdigit())
        if before_ok and after_ok:
            found.append(start)
        start = text.find(term, start + 1)
    return found


def resolve(marks: Iterable[Mark]) -> list[Mark]:
    """Non-overlapping marks in text order: problems first, then longer marks win."""
    chosen: list[Mark] = []
    for mark in sorted(marks, key=lambda m: (_RANK.get(m.kind, 9), -(m.end - m.start), m.start)):
        if all(mark.end <= c.start or mark.start >= c.end for c in chosen):
            chosen.append(mark)
    return sorted(chosen, key=lambda m: m.start)


def render(text: str, marks: Iterable[Mark], start: int = 0, end: int | None = None) -> str:
    """Escaped HTML of text[start:end] with the marks that fall inside it.

    Marks are in offsets of the whole `text`, so the draft's headline and
    summary can be drawn separately from one set of draft marks."""
    end = len(text) if end is None else end
    pieces: list[str] = []
    pos = start
    for mark in sorted(marks, key=lambda m: m.start):
        lo, hi = max(mark.start, start), min(mark.end, end)
        if lo >= hi or lo < pos:
            continue
        pieces.append(escape_text(text[pos:lo]))
        style = STYLES.get(mark.kind, STYLES[FLAGGED])
        pieces.append(
            f'<mark class="cd-{mark.kind}" style="{style}" title="{escape_text(mark.note)}">'
            f"{escape_text(text[lo:hi])}</mark>"
        )
        pos = hi
    pieces.append(escape_text(text[pos:end]))
    return "".join(pieces)


def block(inner_html: str, *, style: str = "") -> str:
    """Wrap already-escaped HTML in a block that keeps the text's line breaks."""
    return f'<div class="cd-text" style="{_BLOCK_STYLE};{style}">{inner_html}</div>'


def text_block(text: str | None, *, style: str = "", empty: str = "(none)") -> str:
    """Plain untrusted text as an escaped HTML block, for `st.html`."""
    if not text:
        return block(f'<span style="opacity:0.6">{escape_text(empty)}</span>', style=style)
    return block(escape_text(text), style=style)


def legend() -> str:
    """A key to the colours; the labels are our own text."""
    items = [
        (GROUNDED, "in the source"),
        (MISSING, "not in the source (hard gate)"),
        (FLAGGED, "flagged for the editor"),
    ]
    spans = " ".join(
        f'<mark style="{STYLES[kind]}">{html.escape(label)}</mark>' for kind, label in items
    )
    return f'<div style="font-size:0.8rem;opacity:0.85">Marks: {spans}</div>'


def draft_text(headline: str | None, summary: str | None) -> str:
    """The text the draft gates check: the spans in their evidence index into it."""
    return f"{headline or ''}\n\n{summary or ''}"
