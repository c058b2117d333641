"""Text normalisation shared by the draft gates.

The gates report *where* in the source they found something, so every
normalisation here either keeps the text's length (a one-to-one character
mapping, done in C by `str.translate`) or returns a map back to the original
offsets. That lets the gates search a normalised copy and still point the
editor at the exact characters of the original source.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# --- digits -----------------------------------------------------------------
# Every Unicode decimal digit (Arabic-Indic, Devanagari, full-width...) is read
# as its ASCII digit, so a number written in another script is still checked
# instead of slipping past an ASCII-only tokeniser. One character for one, so
# offsets are unchanged. (In a `str` pattern `\d` matches every Unicode digit.)
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")


def _ascii_digit(match: re.Match[str]) -> str:
    return str(unicodedata.decimal(match.group()))


def ascii_digits(text: str) -> str:
    """`text` with every Unicode decimal digit replaced by its ASCII digit (same length)."""
    if text.isascii():
        return text
    return _OTHER_DIGIT.sub(_ascii_digit, text)


# --- quotation marks, apostrophes, dashes, spaces ---------------------------
# ‘ ’ ‚ ‛ ′ ` ´ ʼ ‹ ›
SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032\u0060\u00b4\u02bc\u2039\u203a"
DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"  # “ ” „ ‟ ″ « »
DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"  # ‐ ‑ ‒ – — ― −
SPACES = "\u00a0\u2007\u2009\u202f\u2002\u2003\u2004\u2005\u2006\u2008\u200a\u3000"

_STYLE = str.maketrans(
    {
        **dict.fromkeys(map(ord, SINGLE_QUOTES), "'"),
        **dict.fromkeys(map(ord, DOUBLE_QUOTES), '"'),
        **dict.fromkeys(map(ord, DASHES), "-"),
        **dict.fromkeys(map(ord, SPACES), " "),
    }
)

# Characters that change nothing a reader sees: soft hyphen, zero-width
# space/joiners, word joiner, byte-order mark. Scraped pages are full of them.
INVISIBLE = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff")


def unify_style(text: str) -> str:
    """One style for quotation marks, apostrophes, dashes and spaces (same length)."""
    return text.translate(_STYLE)


@dataclass(frozen=True)
class Normalised:
    """A normalised copy of a text plus the way back to the original offsets.

    `starts[i]` is the original offset of normalised character i, and
    `ends[i]` the original offset just after it. Both are None when the
    normalisation kept every offset (the common, fast case).
    """

    text: str
    starts: tuple[int, ...] | None = None
    ends: tuple[int, ...] | None = None

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original [start, end) of the normalised span [start, end)."""
        if self.starts is None or self.ends is None or end <= start:
            return start, end
        return self.starts[start], self.ends[end - 1]


def normalise(text: str) -> Normalised:
    """NFC, invisible characters removed, one quote/dash/space style.

    Case is left alone: the gates match with `re.IGNORECASE`, which keeps
    offsets intact. The slow path (a Python loop) runs only for text that is
    not already NFC or carries invisible characters.
    """
    clean = not INVISIBLE.intersection(text)
    if clean and unicodedata.is_normalized("NFC", text):
        return Normalised(unify_style(text))
    return _normalise_slow(text)


def _normalise_slow(text: str) -> Normalised:
    """Compose each base character with its combining marks, drop invisibles."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] in INVISIBLE:
            i += 1
            continue
        j = i + 1
        while j < n and (unicodedata.combining(text[j]) or text[j] in INVISIBLE):
            j += 1
        cluster = "".join(c for c in text[i:j] if c not in INVISIBLE)
        for ch in unicodedata.normalize("NFC", cluster):
            out.append(ch)
            starts.append(i)
            ends.append(j)
        i = j
    return Normalised(unify_style("".join(out)), tuple(starts), tuple(ends))


def shorten(text: str, limit: int = 80) -> str:
    """A one-line excerpt for a reason string."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
