"""The source wording closest to a quotation the source does not contain.

When quotes_verbatim fails, the auditor's first question is "what did the source
say instead?". `closest_passage` answers it with the source span most like the
quote: the best-matching window found by rapidfuzz's `partial_ratio_alignment`
(an optimal-alignment search, not a hand-written one), widened to whole words,
and pointed back at the original source's characters.

Both texts are compared as the gates compare them: NFC, invisible characters
dropped, case folded, and one style of quotation marks, apostrophes, dashes and
spaces, so a curly apostrophe or a zero-width space does not make a near miss
look far. Pure: for the evidence and the auditor, never for grounding.
"""

from __future__ import annotations

import re
from typing import Any

from rapidfuzz import fuzz

from guards.text import clean, normalise, unify_style

# Below this similarity (0-100) nothing in the source is close enough to show.
MIN_SIMILARITY = 50.0
WORD_PENALTY = 6.0  # similarity points per word fewer than the quote has
EXTRA_WORD_PENALTY = 1.0  # per word more: a short span is the likelier wrong answer
_WORD_END = " \n\t.,;:!?\"'()[]"


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) grown to whole words and trimmed of surrounding spaces."""
    while start > 0 and text[start - 1] not in _WORD_END:
        start -= 1
    while end < len(text) and text[end] not in _WORD_END:
        end += 1
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


_WORD = re.compile(r"\w+(?:['-]\w+)*")


def _refine(text: str, needle: str, start: int, end: int) -> tuple[int, int]:
    """The whole-word span near [start, end) most like `needle`. The aligned window
    has the quote's length, so it may carry a word too many or too few at an end.
    Spans are scored by similarity less a penalty per word fewer (or, less, more)
    than the quote has: a quote that changed its last word should be shown beside the
    source's last word, not beside a span that just leaves the word out."""
    wanted = len(_WORD.findall(needle))
    lo, hi = max(0, start - 40), min(len(text), end + 40)
    words = [(m.start(), m.end()) for m in _WORD.finditer(text, lo, hi)]
    best, best_score = (start, end), -1.0
    for i, (a, _) in enumerate(words):
        for j in range(i, len(words)):
            b = words[j][1]
            extra = j - i + 1 - wanted
            penalty = WORD_PENALTY * -extra if extra < 0 else EXTRA_WORD_PENALTY * extra
            score = fuzz.ratio(needle, text[a:b]) - penalty
            if score > best_score:
                best, best_score = (a, b), score
    return best


def closest_passage(source: str, quote: str) -> dict[str, Any] | None:
    """{"text", "source_span": [start, end], "similarity": 0-100} of the source
    passage most like `quote`, or None when the source has nothing close."""
    if not source or not quote or not quote.strip():
        return None
    norm = normalise(source)
    haystack = unify_style(norm.text)
    needle = unify_style(norm.fold(clean(quote))).strip()
    if not needle:
        return None
    if len(needle) >= len(haystack):
        start, end, score = 0, len(haystack), fuzz.ratio(needle, haystack)
    else:
        found = fuzz.partial_ratio_alignment(needle, haystack)
        start, end, score = found.dest_start, found.dest_end, found.score
    if score < MIN_SIMILARITY:
        return None
    start, end = _refine(haystack, needle, *_widen(haystack, start, end))
    if end <= start:
        return None
    o_start, o_end = norm.original_span(start, end)
    return {
        "text": source[o_start:o_end],
        "source_span": [o_start, o_end],
        "similarity": round(fuzz.ratio(needle, haystack[start:end]), 1),
    }


def closest_pairs(evidence: Any) -> list[tuple[str, str | None, float | None]]:
    """(the draft's quotation, the closest source wording or None, its similarity)
    for each quotation a quotes_verbatim verdict did not find in the source."""
    pairs = []
    for entry in evidence if isinstance(evidence, list) else []:
        if isinstance(entry, dict) and entry.get("found") is False and "quote" in entry:
            closest = entry.get("closest_in_source") or {}
            pairs.append((str(entry["quote"]), closest.get("text"), closest.get("similarity")))
    return pairs
