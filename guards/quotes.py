"""quotes_verbatim: every passage the draft puts in quotation marks is in the source word for word.

Finding the quotes (per paragraph; a blank line ends every open quote):

* Double marks pair like a reader pairs them, with a stack so quotes can nest:
  "..." (straight marks alternate), “...”, „...“ or „...”, «...», »...«,
  ‹...›, ”...” (Swedish). A mark that cannot open or close anything is ignored.
  A double quote still open at the end of its paragraph runs to that end.
  A straight " right after a digit is an inch mark, not an opening mark.
* Single marks (‘ ’ ‚ and straight ') are also apostrophes, so they count only
  around two or more words. An opening mark follows the start of the paragraph,
  a space or an opening bracket/dash/quote, and is followed by a non-space; a
  closing mark follows a non-space and is not followed by a letter or digit,
  so don’t and rock'n'roll are never marks. Elisions ('em, 'til, 'cause,
  'tis, 'twas, '90s) never open. A single quote closes at the first closing
  mark before the next opening mark, preferring one that is not a plural
  possessive ("the Smiths’ house": s’ then a space and a word), so
  ‘The Smiths’ house is big,’ is one quote and ‘We won,’ said the Smiths’
  lawyer is "We won,". A single mark that never closes is an apostrophe.

Matching: case, runs of whitespace, the style of quotation marks, apostrophes
and dashes, Unicode composition and invisible characters (soft hyphens,
zero-width spaces) do not matter; punctuation at the ends of a quote (and of
each fragment) is dropped. Everything else is word for word, on word
boundaries: "the port" is not in "the portfolio". Quotation marks inside a
quote must be in the source too (any style, single or double): quoting the
narration around a source's quote would put words in the speaker's mouth.
An ellipsis (… ... . . . or […]) splits a quote into fragments that must
appear in the source in order.
Square-bracketed editorial insertions ("[The mayor] said") are not accepted:
they are not words of the source.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache
from typing import Any, NamedTuple

from guards.text import (
    DASHES,
    DOUBLE_QUOTES,
    SINGLE_QUOTES,
    Normalised,
    clean,
    normalise,
    shorten,
    unify_style,
)
from guards.verdict import Verdict

GATE = "quotes_verbatim"


class Quote(NamedTuple):
    """A quoted passage: offsets of its text (without the marks) in the draft."""

    start: int
    end: int
    closed: bool = True


# --- finding quotes ----------------------------------------------------------

_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n\s*")

# opener -> the marks that close it
_DOUBLE_CLOSERS = {
    '"': '"',
    "\u201c": "\u201d\u201c",  # “ -> ” (or a mistyped “ that looks closing)
    "\u201e": "\u201c\u201d",  # „ -> “ or ”
    "\u201d": "\u201d",  # ” -> ” (Swedish)
    "\u00ab": "\u00bb",  # « -> »
    "\u00bb": "\u00ab",  # » -> « (German, Danish)
    "\u2039": "\u203a",  # ‹ -> ›
    "\u203a": "\u2039",  # › -> ‹
}
_DOUBLE_MARK = re.compile('["\u201c\u201d\u201e\u00ab\u00bb\u2039\u203a]')
# Marks that open only where an opening mark is expected (else they are strays).
_OPEN_IF_LOOKS_OPENING = "\u201d\u00bb\u203a"
_SINGLE_MARK = re.compile("['\u2018\u2019\u201a]")
# ’ opens too when it looks like an opening mark: a badly typeset ’We won,’
_SINGLE_OPENERS = "'\u2018\u201a\u2019"
_OPENING_CONTEXT = set("([{<\"'\u201c\u201e\u00ab\u00bb\u2039\u203a\u2018\u201a-\u2013\u2014/")
_ELISION = re.compile(r"(?:em|til|cause|tis|twas|n|[0-9]{2}s?)\b", re.IGNORECASE)
_WORD_CHUNK = re.compile(r"\S*\w\S*")


def _looks_opening(text: str, i: int, start: int, end: int) -> bool:
    """Preceded by start/space/opening punctuation, followed by a non-space."""
    before_ok = i == start or text[i - 1].isspace() or text[i - 1] in _OPENING_CONTEXT
    return before_ok and i + 1 < end and not text[i + 1].isspace()


def _looks_closing(text: str, i: int, start: int, end: int) -> bool:
    """Preceded by a non-space, not followed by a letter or digit."""
    after_ok = i + 1 >= end or not (text[i + 1].isalnum() or text[i + 1] == "_")
    return after_ok and i > start and not text[i - 1].isspace()


def _possessive(text: str, i: int, end: int) -> bool:
    """s’ followed by a space and a word: probably "the Smiths’ house", not a closing mark."""
    return text[i - 1] in "sS" and i + 2 < end and text[i + 1].isspace() and text[i + 2].isalnum()


def _double_quotes(text: str, start: int, end: int) -> list[Quote]:
    """The double-mark quotes of the paragraph text[start:end]."""
    quotes: list[Quote] = []
    stack: list[tuple[str, int]] = []  # (opening mark, offset just after it)
    for m in _DOUBLE_MARK.finditer(text, start, end):
        mark, i = m.group(), m.start()
        depth = next(
            (d for d in range(len(stack) - 1, -1, -1) if mark in _DOUBLE_CLOSERS[stack[d][0]]),
            None,
        )
        # “ closes a „ quote; it closes a “ quote only when it looks like a closer (a typo).
        if depth is not None and mark == "\u201c" and stack[depth][0] == "\u201c":
            if not _looks_closing(text, i, start, end):
                depth = None
        if depth is not None:
            quotes.append(Quote(stack[depth][1], i))
            del stack[depth:]
        elif mark == '"' and i > start and text[i - 1].isdigit():
            continue  # an inch mark: a 15" screen
        elif mark not in _OPEN_IF_LOOKS_OPENING or _looks_opening(text, i, start, end):
            stack.append((mark, i + 1))
    quotes += (Quote(after, end, closed=False) for _, after in stack)
    return quotes


def _single_quotes(text: str, start: int, end: int) -> list[Quote]:
    """The single-mark quotes of two or more words in the paragraph text[start:end]."""
    openers: list[int] = []
    closers: list[int] = []
    low_closers: list[int] = []  # ‘ closes only a German ‚...‘ quote
    for m in _SINGLE_MARK.finditer(text, start, end):
        mark, i = m.group(), m.start()
        if mark in _SINGLE_OPENERS and _looks_opening(text, i, start, end):
            if not _ELISION.match(text, i + 1, end):
                openers.append(i)
        elif _looks_closing(text, i, start, end) and mark != "\u201a":
            (low_closers if mark == "\u2018" else closers).append(i)
    quotes: list[Quote] = []
    after_last = start
    for n, o in enumerate(openers):
        if o < after_last:
            continue  # inside the quote just found
        limit = openers[n + 1] if n + 1 < len(openers) else end
        candidates = closers + low_closers if text[o] == "\u201a" else closers
        closing = sorted(c for c in candidates if o < c < limit)
        if not closing:
            continue
        strong = [c for c in closing if not _possessive(text, c, end)]
        c = strong[0] if strong else closing[0]
        if len(_WORD_CHUNK.findall(text, o + 1, c)) >= 2:
            quotes.append(Quote(o + 1, c))
            after_last = c + 1
    return quotes


def find_quotes(draft: str) -> list[Quote]:
    """Every quoted passage of the draft, in order of where it starts."""
    quotes: list[Quote] = []
    start = 0
    for brk in [*_PARAGRAPH_BREAK.finditer(draft), None]:
        end = brk.start() if brk else len(draft)
        end = len(draft[start:end].rstrip()) + start
        quotes += _double_quotes(draft, start, end)
        quotes += _single_quotes(draft, start, end)
        if brk:
            start = brk.end()
    quotes.sort()
    return quotes


# --- matching quotes -----------------------------------------------------------

_ELLIPSIS = re.compile(r"[\[(]\s*(?:…|\.\s*\.\s*\.)\s*[\])]|…|\.\s*\.\s*\.")
_ENDS = re.compile(r"^[\W_]+|[\W_]+$")
_PIECES = re.compile(r"\w+|[^\w\s]")
_QUOTE_MARKS = frozenset("'\"" + SINGLE_QUOTES + DOUBLE_QUOTES)
_DASH_MARKS = frozenset("-" + DASHES)


def fragments(quote_text: str) -> list[str]:
    """The quote's words, split at ellipses, each with end punctuation dropped."""
    norm = unify_style(clean(quote_text))
    parts = (_ENDS.sub("", part) for part in _ELLIPSIS.split(norm))
    return [part for part in parts if part]


def _is_word(piece: str) -> bool:
    return piece[0].isalnum() or piece[0] == "_"


def _find(text: str, pieces: list[str], pos: int) -> tuple[int, int] | None:
    """The first [start, end) at or after `pos` where `pieces` (words and single
    punctuation marks, already folded like `text`) appear in order: whole words
    at both ends, whitespace required between two words and optional around
    punctuation, any style of quotation mark, apostrophe or dash. A quotation
    mark inside the quote must be in the source too: a draft that quotes the
    narration around a source's quote puts words in a speaker's mouth.

    Candidates are the occurrences of the first piece (`str.find`, in C); a
    regex compiled per quote would cost more than the rest of the gate."""
    first = pieces[0]
    while (start := text.find(first, pos)) >= 0:
        pos = start + 1
        if start and _is_word(first) and _is_word(text[start - 1]):
            continue
        end = _match_rest(text, start + len(first), pieces)
        if end is not None:
            return start, end
    return None


def _match_rest(text: str, i: int, pieces: list[str]) -> int | None:
    n = len(text)
    for k in range(1, len(pieces)):
        piece = pieces[k]
        j = i
        while j < n and text[j].isspace():
            j += 1
        if j == i and _is_word(piece) and _is_word(pieces[k - 1]):
            return None  # two words need a space between them
        if piece in _QUOTE_MARKS:
            ok = j < n and text[j] in _QUOTE_MARKS
        elif piece in _DASH_MARKS:
            ok = j < n and text[j] in _DASH_MARKS
        else:
            ok = text.startswith(piece, j)
        if not ok:
            return None
        i = j + len(piece)
    if i < n and _is_word(pieces[-1]) and _is_word(text[i]):
        return None  # the last word goes on in the source: "the port" in "the portfolio"
    return i


@lru_cache(maxsize=256)
def _source(source: str) -> Normalised:
    return normalise(source)


def _locate(source: Normalised, parts: list[str], pos: int = 0) -> list[tuple[int, int] | None]:
    """Where each fragment is, each searched after the previous one; None from
    the first fragment that is not there (the later ones cannot be in order)."""
    spans: list[tuple[int, int] | None] = []
    for part in parts:
        found = _find(source.text, _PIECES.findall(source.fold(part)), pos)
        if found is None:
            return spans + [None] * (len(parts) - len(spans))
        spans.append(source.original_span(*found))
        pos = found[1]
    return spans


def quotes_verbatim(source: str, url: str | None, draft: str) -> Verdict:
    """Fail when a quotation in the draft is not word for word in the source."""
    quotes = find_quotes(draft or "")
    evidence: list[dict[str, Any]] = []
    missing: list[str] = []
    for q in quotes:
        raw = draft[q.start : q.end]
        parts = fragments(raw)
        if not parts:
            continue  # "" or “…”: nothing was quoted
        spans = _locate(_source(source or ""), parts)
        located = [span for span in spans if span is not None]
        found = len(located) == len(spans)
        entry: dict[str, Any] = {
            "quote": raw.strip(),
            "found": found,
            "draft_span": [q.start, q.end],
            "source_span": [located[0][0], located[-1][1]] if found else None,
            "closed": q.closed,
        }
        if len(parts) > 1:
            entry["fragments"] = [
                {"text": part, "found": bool(span), "source_span": list(span) if span else None}
                for part, span in zip(parts, spans, strict=True)
            ]
        evidence.append(entry)
        if not found:
            missing.append(raw.strip())
    if not evidence:
        return Verdict(GATE, True, "no quotations in the draft", evidence)
    if missing:
        reason = (
            f"{len(missing)} of {len(evidence)} quotations not in the source;"
            f" first: “{shorten(missing[0])}”"
        )
        return Verdict(GATE, False, reason, evidence)
    return Verdict(GATE, True, f"all {len(evidence)} quotations found in the source", evidence)


def locate_passage(source: str, passage: str, start: int = 0) -> tuple[int, int] | None:
    """Where `passage` is in `source`, word for word with the normalisation the
    quotes use (case, whitespace, quotation style, invisibles, end punctuation),
    as the original [start, end); None when it is not there.

    Unlike a quotation, a passage is one contiguous run: an ellipsis is not a
    gap here (it must be in the source too), so a passage cannot stitch far
    apart words into a sentence the source never wrote. The search starts at
    the original offset `start`."""
    norm = _ENDS.sub("", unify_style(clean(passage or "")))
    if not norm:
        return None
    text = _source(source or "")
    if start and text.starts is not None:  # `start` is an original offset
        start = bisect_left(text.starts, start)
    return _locate(text, [norm], start)[0]
