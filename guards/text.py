"""Text normalisation shared by the draft gates.

The gates report *where* in the source they found something, so every
normalisation of source text here either keeps its length (one character for
one: digits, case folding) or returns a map back to the original offsets.
That lets the gates search a normalised copy and still point the editor at
the exact characters of the original source.
"""

from __future__ import annotations

import bisect
import functools
import re
import sys
import unicodedata
from collections.abc import Callable
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
INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\ufeff"


def unify_style(text: str) -> str:
    """One style for quotation marks, apostrophes, dashes and spaces (same length).

    `str.translate` is slow on long non-ASCII text, so this is for drafts and
    quotes; source text is matched with character classes instead."""
    if "`" not in text and not (non_ascii(text) & _STYLE_CHARS):
        return text  # nothing to change: found in C, where `translate` loops per character
    return text.translate(_STYLE)


_STYLE_CHARS = frozenset(map(chr, _STYLE))
_DROP_INVISIBLE = dict.fromkeys(map(ord, INVISIBLE))


def translated(text: str, table: dict[int, str | None], keys: frozenset[str]) -> str:
    """`text.translate(table)` for a table of non-ASCII `keys` only: the same text
    without the per-character loop of `str.translate` when none of them is there
    (most text: an English article's non-ASCII characters are a few curly quotes)."""
    if text.isascii() or not (non_ascii(text) & keys):
        return text
    return text.translate(table)


_INVISIBLE_CHARS = frozenset(INVISIBLE)


def drop_invisible(text: str) -> str:
    """`text` without the invisible characters of INVISIBLE."""
    return translated(text, _DROP_INVISIBLE, _INVISIBLE_CHARS)


def clean(text: str) -> str:
    """NFC without invisible characters, for short text (a quote) whose offsets don't matter."""
    if text.isascii():
        return text  # ASCII is NFC and has no invisible character
    return unicodedata.normalize("NFC", drop_invisible(text))


@dataclass(frozen=True)
class Normalised:
    """A normalised, case-folded copy of a text plus the way back to the original offsets.

    `fold` is how case was folded, one character for one so that offsets hold:
    `str.casefold` when that keeps the length, else `str.lower` (text with ß),
    else character by character (text with İ). Fold a needle the same way
    before searching `text` for it. `starts[i]` is the original offset of
    normalised character i and `ends[i]` the original offset just after it;
    both are None when every offset was kept (the common, fast case).
    """

    text: str
    fold: Callable[[str], str]
    starts: tuple[int, ...] | None = None
    ends: tuple[int, ...] | None = None

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original [start, end) of the normalised span [start, end)."""
        if self.starts is None or self.ends is None or end <= start:
            return start, end
        return self.starts[start], self.ends[end - 1]


def normalise(text: str) -> Normalised:
    """NFC, invisible characters removed, case folded.

    The slow path (a Python loop) runs only for text that is not already NFC
    or carries invisible characters; the fast path costs a few C-level scans.
    """
    if not any(ch in text for ch in INVISIBLE) and _is_nfc(text):
        if _uncased(non_ascii(text)):
            # Lower-casing the ASCII letters gives the same text as `str.casefold`
            # when no non-ASCII character has case (they agree on ASCII).
            return Normalised(_lower_ascii_letters(text), str.casefold)
        return _fold(text, None, None)
    return _normalise_slow(text)


def _is_nfc(text: str) -> bool:
    """`unicodedata.is_normalized("NFC", text)`, answered from the text's distinct
    non-ASCII characters (`non_ascii`, cached for a source) when each is one that NFC
    keeps and that never joins the character before it: a letter or sign of Latin-1,
    Latin Extended-A, general punctuation or currency symbols (combining class 0, not
    a second part of any composition; UAX #15, "Stable Code Points"), which NFC keeps
    exactly when it maps it to itself (en quad U+2000 becomes U+2002). Otherwise,
    and for a text with any other character, the full check in C."""
    if text.isascii():
        return True
    if all(_nfc_stable(ch) for ch in non_ascii(text)):
        return True
    return unicodedata.is_normalized("NFC", text)


@functools.lru_cache(maxsize=8192)
def _nfc_stable(ch: str) -> bool:
    code = ord(ch)
    return (
        (0xA0 <= code <= 0x17F or 0x2000 <= code <= 0x206F or 0x20A0 <= code <= 0x20CF)
        and unicodedata.combining(ch) == 0
        and unicodedata.normalize("NFC", ch) == ch
    )


def _lower_ascii_letters(text: str) -> str:
    """`text` with its ASCII letters lower-cased and every other character kept. For a
    text with a non-ASCII character `str.lower` looks up the case of every character
    (some sixty instructions each); lower-casing the UTF-8 bytes (`bytes.lower` touches
    only ASCII letters, and no byte of a multi-byte sequence is ASCII) and decoding
    costs less than half of that over a long source."""
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def non_ascii(text: str) -> frozenset[str]:
    """The distinct non-ASCII characters of `text`, found in C.

    Every byte of a UTF-8 sequence for a non-ASCII character is >= 0x80, so
    deleting the ASCII bytes leaves exactly those characters, still valid
    UTF-8; this costs a few microseconds where a regex or Python loop over a
    long text costs a hundred or more. `surrogatepass` keeps a lone surrogate
    (it can come from JSON) instead of raising. A long text (a source) is asked
    about by several gates and steps (its folding, its style, its digits, its
    quotation marks: about a dozen times a pair), so its answer is cached."""
    if text.isascii():
        return frozenset()
    if len(text) >= _CACHED_FROM:
        return _non_ascii_cached(text)
    if len(text) >= _DRAFT_FROM:
        return _non_ascii_recent(text)
    return _non_ascii(text)


def _non_ascii(text: str) -> frozenset[str]:
    raw = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES)
    return frozenset(raw.decode("utf-8", "surrogatepass"))


# Shorter text (a draft's sentence, a quotation) costs less to read than to hash and
# keep; the cache holds as many sources as `guards.sourcetext.source_text` does, twice.
_CACHED_FROM = 512
_non_ascii_cached = functools.lru_cache(maxsize=512)(_non_ascii)
# A draft (a few sentences) is asked about by every gate too (its digits, folding,
# quotation marks, dates): its answer is kept in a small cache of its own, which the
# other texts of that length (a quotation, a sentence) pass through without pushing
# sources out of the large one.
_DRAFT_FROM = 160
_non_ascii_recent = functools.lru_cache(maxsize=8)(_non_ascii)


_ASCII_BYTES = bytes(range(128))


def ascii_bytes(text: str) -> bytes:
    """`text.encode("ascii", "replace")`: one byte per character, "?" for each
    non-ASCII one, so offsets hold (the byte views the numbers gate searches). A long
    text's is cached: the numbers gate makes two views of a source (its digits, its
    number words), and encoding a source with one curly quote in it is a pass of
    its own."""
    if len(text) >= _CACHED_FROM:
        return _ascii_bytes_cached(text)
    return text.encode("ascii", "replace")


@functools.lru_cache(maxsize=256)  # as many as guards.sourcetext.source_text keeps
def _ascii_bytes_cached(text: str) -> bytes:
    return text.encode("ascii", "replace")


@functools.lru_cache(maxsize=8192)
def _uncased_char(ch: str) -> bool:
    return ch.lower() == ch and ch.casefold() == ch and ch.upper() == ch


def _uncased(chars: frozenset[str]) -> bool:
    return all(_uncased_char(ch) for ch in chars)


# The non-ASCII characters that re.IGNORECASE matches to an ASCII letter (dotless ı and
# dotted İ to i, long ſ to s, the Kelvin sign to k: CPython's sre case table).
_FOLDS_TO_ASCII = frozenset("\u0131\u0130\u017f\u212a")


@functools.lru_cache(maxsize=8192)
def _lowers_alike(ch: str) -> bool:
    low = ch.lower()
    return len(low) == 1 and not low.isascii() and low.isalnum() == ch.isalnum()


def lowers_as_ascii(text: str) -> bool:
    """Whether `text.lower()` may stand for `text` under a case-insensitive pattern whose
    literals are ASCII: one character for one (offsets hold), and no non-ASCII character
    that re.IGNORECASE would match to an ASCII letter or that changes what \\w reads.
    Checked on the text's distinct non-ASCII characters, in C (`non_ascii`)."""
    if text.isascii():
        return True
    chars = non_ascii(text)
    return chars.isdisjoint(_FOLDS_TO_ASCII) and all(_lowers_alike(ch) for ch in chars)


def _fold_each(text: str) -> str:
    return "".join(c if len(f := c.casefold()) != 1 else f for c in text)


def _fold(text: str, starts: tuple[int, ...] | None, ends: tuple[int, ...] | None) -> Normalised:
    for fold in (str.casefold, str.lower):
        folded = fold(text)
        if len(folded) == len(text):
            return Normalised(folded, fold, starts, ends)
    return Normalised(_fold_each(text), _fold_each, starts, ends)


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
    return _fold("".join(out), tuple(starts), tuple(ends))


# ASCII characters that are not word characters (re's `\w` in a str pattern:
# str.isalnum(), or "_"), each made a space; and "_" too, for `[^\W_]`.
_ASCII_NOT_WORD = {i: " " for i in range(128) if not (chr(i).isalnum() or chr(i) == "_")}
_ASCII_NOT_ALNUM = _ASCII_NOT_WORD | {ord("_"): " "}
_WORD_RUN = re.compile(r"\w+")
_ALNUM_RUN = re.compile(r"[^\W_]+")


def word_runs(text: str, *, underscore: bool = True) -> list[str]:
    r"""`re.findall(r"\w+", text)`; with `underscore=False`, `[^\W_]+` (an underscore
    parts words). Found in C: every other character made a space (str.translate, its
    ASCII fast path; a non-ASCII one that is no word character, a curly quote or a
    dash, by str.replace first), then str.split. A regex tries its pattern at every
    character, about 20 ns each whatever it finds: 30 -> 8 us for a 1.5 kB article,
    76 -> 33 for the 62 real ones (issue 24, session 17). A text with a non-ASCII
    word character ("café") is read by the regex itself."""
    if not text.isascii():
        chars = _non_ascii(text)  # not kept: the text is a lower-cased copy, read once
        if any(c.isalnum() or c == "_" for c in chars):
            return (_WORD_RUN if underscore else _ALNUM_RUN).findall(text)
        for c in chars:
            text = text.replace(c, " ")
    return text.translate(_ASCII_NOT_WORD if underscore else _ASCII_NOT_ALNUM).split()


def shorten(text: str, limit: int = 80) -> str:
    """A one-line excerpt for a reason string."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


# --- compatibility folding (numbers, names, dates) ---------------------------
# Unicode NFKC reads fullwidth digits, superscripts, ligatures and the like as
# their plain forms, and invisible characters (category Cf: zero-width space,
# word joiner, soft hyphen, bidi controls; plus the other default-ignorable
# code points such as variation selectors and the combining grapheme joiner)
# are dropped, so "4<U+200B>2" reads 42.
# The typographic spaces that group digits (no-break, figure, thin, narrow
# no-break) are kept as they are: the numbers gate tells them from a plain space.

# Default_Ignorable_Code_Point (Unicode DerivedCoreProperties) that are not Cf.
_DEFAULT_IGNORABLE = [
    (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x2065, 0x2065), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8), (0xE0000, 0xE0FFF),
]  # fmt: skip
# Vulgar fractions are kept too: NFKC writes "2½" as "21⁄2", which reads 21
# (the numbers gate reads ½ ¼ ¾ ⅓ ... itself).
VULGAR_FRACTIONS = {
    "\u00bd": "5", "\u00bc": "25", "\u00be": "75", "\u215b": "125", "\u215c": "375",
    "\u215d": "625", "\u215e": "875", "\u2155": "2", "\u2156": "4", "\u2157": "6",
    "\u2158": "8",
}  # fmt: skip
_KEEP = frozenset("\u00a0\u2007\u2009\u202f") | frozenset(VULGAR_FRACTIONS)
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


@functools.lru_cache(maxsize=8192)
def fold_char(ch: str) -> str:
    """What compat_fold makes of one non-ASCII character ("" when it is dropped)."""
    code = ord(ch)
    if unicodedata.category(ch) == "Cf" or any(lo <= code <= hi for lo, hi in _DEFAULT_IGNORABLE):
        return ""
    return ch if ch in _KEEP else unicodedata.normalize("NFKC", ch)


def _run_unchanged(run: str) -> bool:
    """True when no character of a non-ASCII run changes (checked in C first)."""
    return unicodedata.is_normalized("NFKC", run) and all(fold_char(c) == c for c in run)


@dataclass(frozen=True)
class Folded:
    """NFKC text without invisible characters, and the way back to the original offsets.

    `breaks` lists, for each original character whose folded form is not one
    character long, (folded offset, original offset, folded length); between
    two breaks offsets move one for one."""

    text: str
    breaks: tuple[tuple[int, int, int], ...] = ()

    def original(self, i: int, *, end: bool = False) -> int:
        """The original offset of folded offset `i` (an end offset when `end`)."""
        if not self.breaks:
            return i
        k = bisect.bisect_right(self.breaks, (i, sys.maxsize, 0)) - 1
        if k < 0:
            return i
        at, orig, length = self.breaks[k]
        if i < at + length or (end and i == at + length and length):
            return orig + 1 if end else orig  # inside the expansion of one character
        return orig + 1 + (i - at - length)

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.original(start), self.original(end, end=True) if end > start else start


def compat_fold(text: str) -> Folded:
    """`text` in NFKC with invisible characters dropped (see above).

    Only runs of non-ASCII characters are looked at, so an English article
    with a few curly quotes costs a few microseconds."""
    if text.isascii() or all(fold_char(ch) == ch for ch in non_ascii(text)):
        # Nothing to fold (an English article with curly quotes and a £ sign):
        # checking each distinct character once is far cheaper than the loop below.
        return Folded(text)
    pieces: list[str] = []
    breaks: list[tuple[int, int, int]] = []
    pos = out = 0
    for m in _NON_ASCII_RUN.finditer(text):
        if _run_unchanged(m.group()):
            continue
        for i in range(m.start(), m.end()):
            ch = text[i]
            new = fold_char(ch)
            if new == ch:
                continue
            pieces.append(text[pos:i])
            out += i - pos
            if len(new) != 1:
                breaks.append((out, i, len(new)))
            pieces.append(new)
            out += len(new)
            pos = i + 1
    if not pieces:
        return Folded(text)
    pieces.append(text[pos:])
    return Folded("".join(pieces), tuple(breaks))
