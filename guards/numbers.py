"""numbers_grounded: every number of two or more digits in the draft is a number the source writes.

Numbers are compared as whole tokens by value, never as substrings: 31 is not
in 2,310, 20 is not in 2016, £45,000 is not in £450,000. The tokeniser below
is the heart of the gate; its rules, in order of precedence:

1. A number is a run of digits, optionally grouped and with a decimal part.
   It never starts inside another run of digits.
2. Grouping (thousands) separators are `,` `.` `'` `’` and a single space
   (plain, no-break U+00A0, figure U+2007, thin U+2009, narrow no-break
   U+202F). A separator groups only when the first group has 1-3 digits and
   does not start with 0, every later group has exactly three digits, the
   same separator is used throughout, and no digit follows the last group:
   41,200 = 41200 = 41 200 = 41.200 = 12'500 style. Consequences, on purpose:
   "in 2019 20 people" stays 2019 and 20 (2019 has four digits), "aged 31, 45"
   stays 31 and 45 (comma then space is a list), but "1,250" and "1.250" are
   1250, never 1.25. Indian grouping (12,50,000) is also read as one number.
3. A decimal mark is `.` or `,` followed by digits that are not a thousands
   group (and not the grouping separator already used): 8.7 million is not
   87 million, 3,5 Prozent is not 35 Prozent, 1.45m is not 14.5m, 1.250,75
   and 1,250.75 are both 1250.75. Trailing zeros of the decimal part and
   leading zeros of the integer part do not matter (2.50 = 2.5, 07 = 7).
4. Anything else separates numbers: dates 2026-11-30 and 30/11/2026 are 2026,
   11 and 30; times 10:30 are 10 and 30; phone numbers are their digit groups;
   ranges 1990-91 are 1990 and 91. Two dotted forms are read as several
   numbers too: a clock time before am/pm (10.30am is 10 and 30) and a dotted
   date d.m.yyyy or d.m.yy (30.11.2026 is 30, 11 and 2026); without am/pm,
   10.30 is the decimal 10.3. A decimal written without its zero is a
   decimal: .5 is 0.5, not 5, and is checked (it counts its zero).
5. Letters, currency and units around a number do not change it: 61st is
   61, 1890s is 1890, £45,000 is 45000, 12% is 12, 20-year-old is 20.
6. A plain space groups digits only ambiguously when it joins exactly two
   groups ("41 200", "2 145", "May 15 200 people"): that may be one number or
   two. In the draft such a run is read as one number (2145) and must be
   grounded by that value; in the source it grounds only the same run and,
   separately, each of its parts (2 and 145), never a draft's 2,145 or 2145.
   Typographic spaces (no-break, thin, narrow no-break, figure) and runs of
   three or more groups (1 250 000) or with a decimal part group unambiguously.
7. A sign is part of the value: -12, −12%, (–12), -$4.2bn and "minus 12" are
   negative and differ from 12; a dash after a letter, digit or dot is not a
   sign (10-12 and 10–14 are ranges, COVID-19 is 19); "+12" is 12.
8. Scale words are part of the value, compared exactly (decimal arithmetic):
   1.2bn = 1.2 billion = 1,200m = 1,200,000,000, never 1.2 million. Full words
   (hundred, thousand, million, billion, trillion, lakh, crore) follow a space
   or hyphen; bn, mn, mln, tn may follow a space; k and m only glued (45k, £3.45m;
   "5 m" is five metres and stays 5).
9. Number words are numbers, parsed by text2num: "forty-two", "Twenty boats",
   "three hundred", "two thousand and twenty-four", "one point five million".
   "a million" is 1,000,000 and "half a million" 500,000; plurals (hundreds,
   millions) are not numbers; any other phrase ending in a scale word
   ("several million", "a third of a million") grounds only the same words.
   "a dozen" is not read. A year in words ("nineteen eighty-four") reads as
   19 and 84, so it does not ground 1984: the safe direction.

Before any of this both texts are read in Unicode NFKC with invisible
characters (category Cf and other default-ignorable code points) dropped:
"4<U+200B>2" is 42, fullwidth and superscript digits are digits.

Only draft numbers written with two or more digits (2.5, 07), or whose value
has two or more digits (twenty, 5m, a million), are checked; every number of
the source, single digits included, can ground one. Evidence gives, per draft
number, the value compared and where the source has it; for a missing one,
the source number it most likely stands for (`closest_in_source`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any, NamedTuple

from text_to_num import find_numbers

from guards.text import Folded, ascii_digits, compat_fold, non_ascii
from guards.verdict import Verdict, all_found

GATE = "numbers_grounded"

_NUMBER = re.compile(
    r"""
    (?<![0-9])
    (?:
        # A clock time written with a dot: 10.30am, 7.15 p.m.
        (?P<hour>[0-9]{1,2})\.(?P<minute>[0-5][0-9])(?=\s?[AaPp]\.?[Mm]\b)
      | # A date written with dots: 30.11.2026, 1.5.26
        (?P<day>[0-9]{1,2})\.(?P<month>[0-9]{1,2})\.(?P<year>[0-9]{4}|[0-9]{2})
        (?![0-9]|[.,][0-9])
      | # A decimal without its zero: .45 calibre, .5 per cent
        (?<![\w.])\.(?P<bare>[0-9]+)
      | (?P<int>
            # 41,200  1.250.000  12'500  41 200 (one plain, thin or no-break space)
            [1-9][0-9]{0,2}
            (?P<sep>[,.'\u2019\x20\u00a0\u2007\u2009\u202f])[0-9]{3}
            (?:(?P=sep)[0-9]{3})*(?![0-9])
          | # Indian grouping: 12,50,000  1,20,00,000
            [1-9][0-9]?(?:,[0-9]{2})+,[0-9]{3}(?![0-9])
          | [0-9]+
        )
        # A decimal part, with a mark other than the grouping separator.
        (?:(?!(?P=sep))[.,](?P<frac>[0-9]+))?
    )
    """,
    re.VERBOSE,
)
_NOT_DIGIT = re.compile(r"[^0-9]")


class NumberToken(NamedTuple):
    """A number as written (`start`/`end` offsets, `text`) and its canonical `value`.

    `digits` counts the digits written (a number in words counts those of its
    value); `ambiguous` marks a run grouped by a plain space ("2 145"), which
    may be one number or two (see rule 6)."""

    start: int
    end: int
    text: str
    value: str
    digits: int
    ambiguous: bool = False


def canonical(integer: str, fraction: str = "") -> str:
    """Value as a string: integer digits without leading zeros, '.', decimals
    without trailing zeros (41,200 -> "41200", 3,50 -> "3.5", 07 -> "7")."""
    whole = _digits_of(integer).lstrip("0") or "0"
    fraction = fraction.rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def _digits_of(integer: str) -> str:
    return integer if integer.isdigit() else _NOT_DIGIT.sub("", integer)


def _raw_tokens(text: str) -> Iterator[NumberToken]:
    """`_scan`, lazily. A text with digits of another script is read through
    `ascii_digits` (same offsets); converting costs a pass over the text that
    most texts do not need, and finding out costs a few microseconds."""
    other = not text.isascii() and any(ch.isdecimal() for ch in non_ascii(text))
    return _scan(ascii_digits(text) if other else text, text)


def _digit_tokens(text: str) -> Iterator[NumberToken]:
    """The numbers written in digits (`_scan`), with their signs and scale words."""
    return (_decorate(t, text) for t in list(_raw_tokens(text)))


def _folded_tokens(folded: str) -> list[NumberToken]:
    tokens = list(_digit_tokens(folded))
    words = list(_word_numbers(folded))
    return sorted(tokens + words) if words else tokens


def _to_original(token: NumberToken, folded: Folded, text: str) -> NumberToken:
    if folded.text is text:
        return token
    start, end = folded.span(token.start, token.end)
    return token._replace(start=start, end=end, text=text[start:end])


def tokenise(text: str) -> list[NumberToken]:
    """Every number in `text`, in order, with offsets into `text` itself.

    The text is read in Unicode NFKC without invisible characters (`compat_fold`):
    "4<U+200B>2" is 42 and a fullwidth or superscript digit is a digit."""
    folded = compat_fold(text)
    return [_to_original(t, folded, text) for t in _folded_tokens(folded.text)]


# A run of digits is a whole number by itself unless it follows a dot (.45) or
# one of these and a digit follow it (41,200  8.7  41 200  10.30am  30.11.2026).
_SEPARATORS = frozenset(".,'\u2019\x20\u00a0\u2007\u2009\u202f")

# The runs of digits are found in a byte view of the text: one byte per
# character (`str.encode` with "replace" writes "?" for each non-ASCII one, so
# offsets hold) with every digit turned into "0". A pattern that starts with a
# literal byte is searched with a tight C loop, several times faster than the
# `re` character-class scan that `[0-9]+` or `\d+` needs over a long text.
_DIGIT_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else b for b in range(256))
_ZERO_RUN = re.compile(rb"00*")


def _digit_runs(digits: str) -> Iterator[re.Match[bytes]]:
    """The runs of ASCII digits of `digits` (a text with no digit of another script)."""
    return _ZERO_RUN.finditer(digits.encode("ascii", "replace").translate(_DIGIT_AS_ZERO))


def _scan(digits: str, text: str) -> Iterator[NumberToken]:
    """The numbers of `digits`, lazily, with written forms taken from `text`.

    Two steps for speed: a simple scan finds the runs of digits (`_digit_runs`),
    then `_NUMBER` reads
    the whole number at each run not already part of the previous number
    (most runs are numbers by themselves and skip that step). Running
    `_NUMBER` over the whole text is several times slower. Being lazy lets
    the gate stop reading the source once every draft number is found."""
    end = 0
    for run in _digit_runs(digits):
        start, run_end = run.span()
        raw = digits[start:run_end]
        if start < end:
            continue  # read already, as part of the previous number
        before = digits[start - 1] if start else ""
        joins = (
            run_end + 1 < len(digits)
            and digits[run_end] in _SEPARATORS
            and digits[run_end + 1].isdigit()
        )
        if before != "." and not joins:
            written = raw if digits is text else text[start:run_end]
            yield NumberToken(start, run_end, written, raw.lstrip("0") or "0", len(raw))
            end = run_end
            continue
        m = _NUMBER.match(digits, start - 1) if before == "." else None  # .45
        m = m or _NUMBER.match(digits, start)
        assert m is not None  # a run of digits is always a number
        yield from _tokens(m, text)
        end = m.end()


def _tokens(m: re.Match[str], text: str) -> list[NumberToken]:
    """The number(s) of one `_NUMBER` match: a time or a dotted date is several."""
    if m.group("hour") is not None:
        return [_part(text, m, "hour"), _part(text, m, "minute")]
    if m.group("day") is not None:
        return [_part(text, m, "day"), _part(text, m, "month"), _part(text, m, "year")]
    start, end = m.span()
    if m.group("bare") is not None:
        # .5 counts its implied zero: it is checked like 0.5
        bare = m.group("bare")
        return [NumberToken(start, end, text[start:end], canonical("0", bare), len(bare) + 1)]
    integer = _digits_of(m.group("int"))
    fraction = m.group("frac") or ""
    value = canonical(integer, fraction)
    # Rule 6: two groups joined by a plain space may be two numbers ("May 15 200 people").
    ambiguous = m.group("sep") == " " and not fraction and m.group("int").count(" ") == 1
    return [
        NumberToken(start, end, text[start:end], value, len(integer) + len(fraction), ambiguous)
    ]


def _part(text: str, match: re.Match[str], group: str) -> NumberToken:
    start, end = match.span(group)
    raw = match.group(group)
    return NumberToken(start, end, text[start:end], canonical(raw), len(raw))


# --- signs, scale words, number words ------------------------------------------

_SIGNS = "-\u2212\u2013\u2012+"  # hyphen-minus, minus, en dash, figure dash, plus
_MINUS_WORD = re.compile(r"(?:^|(?<=[^\w]))(?:minus|negative)\s+$", re.IGNORECASE)
# Scale words: full words after a space or hyphen, bn/mn/tn after an optional
# space, k and m only glued to the number (5 m is five metres, 5m is five million).
_SCALE = re.compile(
    r"""(?:[ \u00a0\u2009\u202f-](?P<word>hundred|thousand|million|billion|trillion|lakh|crore)s?
         |[ \u00a0\u2009\u202f]?(?P<abbr>bn|mn|mln|tn|trn)
         |(?P<glued>k|m)(?!-)
        )(?!\w)""",
    re.IGNORECASE | re.VERBOSE,
)
_SCALE_START = frozenset(" \u00a0\u2009\u202f-kKmMbBtT")
_POWERS = {
    "hundred": 2, "thousand": 3, "k": 3, "lakh": 5, "million": 6, "m": 6, "mn": 6, "mln": 6,
    "crore": 7, "billion": 9, "bn": 9, "trillion": 12, "tn": 12, "trn": 12,
}  # fmt: skip


def _decimal(value: str) -> Decimal:
    return Decimal(value)


def format_value(value: Decimal) -> str:
    """Canonical text of a value: no exponent, no trailing zeros, no "-0"."""
    text = format(value.normalize(), "f")
    return "0" if text == "-0" else text


def _signed_start(text: str, start: int) -> tuple[int, bool]:
    """Where the number really starts, and whether a minus sign is part of it:
    "-12", "−12%", "(–12)", "-$4.2bn", "minus 12" are negative; "10-12" and
    "COVID-19" are not (a sign never follows a letter, digit or dot)."""
    j = start
    if j and not text[j - 1].isalnum() and unicodedata.category(text[j - 1]) == "Sc":
        j -= 1
    if j and text[j - 1] in _SIGNS:
        k = j - 1
        if text[k] != "+" and (k == 0 or not (text[k - 1].isalnum() or text[k - 1] in ".,")):
            return k, True
    if j > 5 and text[j - 1].isspace() and text[j - 2] in "sSeE":  # minus, negative
        m = _MINUS_WORD.search(text, max(0, j - 12), j)
        if m:
            return m.start(), True
    return start, False


def _scale_at(text: str, end: int) -> tuple[int, int]:
    """(power of ten, new end) of a scale word right after a number: 1.2bn, 45k, 3 million."""
    if end >= len(text) or text[end] not in _SCALE_START:
        return 0, end
    m = _SCALE.match(text, end)
    if m is None:
        return 0, end
    word = (m.group("word") or m.group("abbr") or m.group("glued")).lower()
    return _POWERS[word], m.end()


def _decorate(token: NumberToken, text: str) -> NumberToken:
    """A token of `_scan` with its sign and scale word (offsets still in `text`)."""
    power, end = _scale_at(text, token.end)
    start, negative = _signed_start(text, token.start)
    if not power and not negative:
        return token
    value = _decimal(token.value).scaleb(power)
    value = format_value(-value if negative else value)
    return token._replace(start=start, end=end, text=text[start:end], value=value)


def _split_ambiguous(raw: NumberToken, text: str) -> list[NumberToken]:
    """The two numbers a plain-space run "15 200" may also be (before `_decorate`)."""
    head = raw.text.index(" ")
    parts = [(raw.start, raw.start + head), (raw.end - 3, raw.end)]
    return [
        _decorate(NumberToken(s, e, text[s:e], canonical(text[s:e]), e - s), text) for s, e in parts
    ]


# Number words. text2num parses them (it knows "two thousand and twenty-four",
# "one point five", "twenty-first"); this list only finds where to look, so that
# the parser does not run over every word of a long source.
_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety hundred thousand million billion trillion"
).split()
_ORDINALS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth "
    "thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth hundredth thousandth "
    "millionth billionth"
).split()


def _trie(words: list[str]) -> str:
    """A regex for a set of words as a trie, (?:t(?:en|wo|...)|...): at each
    position `re` follows one branch instead of trying sixty words in turn,
    which makes the scan several times faster."""
    tree: dict = {}
    for word in words:
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        alts = [re.escape(ch) + build(node[ch]) for ch in sorted(node) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return build(tree)


_NUM_WORD = _trie(_UNITS + _ORDINALS)
# Matched in lower-cased text (`re` is slow with IGNORECASE over a long text).
_WORD_RUN = re.compile(
    rf"\b{_NUM_WORD}(?:(?:[^\S\n]+|[^\S\n]*-[^\S\n]*)(?:(?:and|point)[^\S\n]+)?{_NUM_WORD})*\b"
)
# Where a run may start: a number word after a non-word character, looked for
# in a byte view of the text (one byte per character, offsets hold) in which
# ASCII letters are lower-cased and every other character is a space. The
# search then starts from a literal space, which `re` finds with a tight C
# loop; `_WORD_RUN` over a whole long text costs ten times more. Every place
# `_WORD_RUN` matches is such a candidate: the letters of a number word are
# ASCII in the lower-cased text and come from ASCII letters (the only other
# character that lower-cases to an ASCII letter is the Kelvin sign, and no
# number word has a k), and the character before it is not a word character.
_WORD_VIEW = (
    bytes(
        b + 32 if 0x41 <= b <= 0x5A else b if chr(b).isalnum() or b == 0x5F else 0x20
        for b in range(128)
    )
    + b" " * 128
)
_WORD_CANDIDATE = re.compile(b" " + _NUM_WORD.encode())
_RUN_TOKEN = re.compile(r"\w+|-")
_LONE_SCALES = {"1000000": "million", "1000000000": "billion", "1000": "thousand", "100": "hundred"}
_BEFORE_WORDS = re.compile(r"(?:(\w+)[^\S\n]+)?(\w+)[^\S\n]+$")


class _Word:
    """A token for text2num's `find_numbers` (it calls these three methods)."""

    __slots__ = ("word",)

    def __init__(self, word: str) -> None:
        self.word = word

    def text(self) -> str:
        return self.word

    def nt_separated(self, previous: _Word) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return False


@lru_cache(maxsize=4096)
def _parse_run(run: str) -> tuple[tuple[int, int, str], ...] | None:
    """(start, end, value) of each number text2num reads in a run of number words.
    Cached: the same short runs ("million" after 1.5, "two") come back often."""
    tokens = list(_RUN_TOKEN.finditer(run))
    try:
        found = find_numbers([_Word(t.group()) for t in tokens], "en", 0)
    except Exception:  # noqa: BLE001 (a parser failure must not crash a gate)
        return None
    out = []
    for occ in found:
        value = occ.text.rstrip("stndrh") if occ.is_ordinal else occ.text
        out.append((tokens[occ.start].start(), tokens[occ.end - 1].end(), value))
    return tuple(out)


def _word_runs(text: str) -> Iterator[re.Match[str]]:
    """The matches of `_WORD_RUN` in `text` lower-cased, as `finditer` gives them."""
    view = b" " + text.encode("ascii", "replace").translate(_WORD_VIEW)
    lower = None
    end = 0
    for candidate in _WORD_CANDIDATE.finditer(view):
        start = candidate.start()  # in `text` (the view has one more byte in front)
        if start < end:
            continue  # inside the previous run
        if lower is None:
            lower = text.lower()
            if len(lower) != len(text):  # a few characters (İ) lower-case to two
                lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
        run = _WORD_RUN.match(lower, start)
        if run is not None:
            yield run
            end = run.end()


def _word_numbers(text: str) -> Iterator[NumberToken]:
    """Numbers written in words: "forty-two", "Twenty boats", "three hundred",
    "one point five million", "a million", "minus twelve", "two trillion"."""
    for run in _word_runs(text):
        parsed = _parse_run(text[run.start() : run.end()])
        base = run.start()
        if parsed is None:  # unreadable: only the same words ground it
            words = "words:" + run.group()
            yield NumberToken(run.start(), run.end(), text[run.start() : run.end()], words, 9)
            continue
        merged: list[list] = []
        for s, e, value in parsed:
            lone = value in _LONE_SCALES and run.group()[s:e] == _LONE_SCALES[value]
            if lone and merged and merged[-1][1] + 1 >= s:
                scaled = _decimal(merged[-1][2]) * _decimal(value)
                merged[-1][1], merged[-1][2] = e, format_value(scaled)
                continue  # "one point five million"
            merged.append([s, e, value, lone])
        for s, e, value, lone in merged:
            yield from _word_token(text, base + s, base + e, value, lone)


def _word_token(text: str, start: int, end: int, value: str, lone: bool) -> Iterator[NumberToken]:
    if lone:
        if text[max(0, start - 2) : start].rstrip()[-1:].isdigit():
            return  # "1.5 million": the scale of a number in digits, read with it
        before = _BEFORE_WORDS.search(text, max(0, start - 30), start)
        words = [w.lower() for w in (before.groups() if before else ()) if w]
        if words and words[-1] in ("a", "an") and (len(words) < 2 or words[0] not in _FRACTION):
            start = before.start(2)  # "a million"
        elif len(words) == 2 and words[0] == "half" and words[1] in ("a", "an"):
            start, value = before.start(1), format_value(_decimal(value) / 2)
        else:  # "several million", "a third of a million": only the same words ground it
            start = before.start() if before else start
            value = "words:" + " ".join(text[start:end].lower().split())
            yield NumberToken(start, end, text[start:end], value, 9)
            return
    power, end = _scale_at(text, end)  # "two trillion" (text2num stops at trillion)
    if power and not value.startswith("words:"):
        value = format_value(_decimal(value).scaleb(power))
    new_start, negative = _signed_start(text, start)
    if negative:
        start, value = new_start, format_value(-_decimal(value))
    digits = len(value.lstrip("-").split(".")[0]) + len(value.partition(".")[2])
    yield NumberToken(start, end, text[start:end], value, digits)


_FRACTION = frozenset("of half and quarter quarters third thirds".split())


# --- grounding ------------------------------------------------------------------


def is_checked(token: NumberToken) -> bool:
    """A draft number is checked when written with two or more digits (2.5, 07),
    or when its value has two or more digits (twenty, 5m, a million)."""
    if token.digits >= 2 or token.value.startswith("words:"):
        return True
    return abs(_decimal(token.value)) >= 10


def _keys(token: NumberToken) -> tuple[str, ...]:
    """Index keys a source token grounds: its value; an ambiguous run only the
    same ambiguous run (key "~value"), its parts are indexed on their own."""
    return ("~" + token.value,) if token.ambiguous else (token.value,)


def _wanted(token: NumberToken) -> tuple[str, ...]:
    """Keys that ground a draft token: a plain-space run "2 145" is read as 2145
    and grounded by 2145 in any unambiguous form or by the same run."""
    return (token.value, "~" + token.value) if token.ambiguous else (token.value,)


class _Undecorated(NumberToken):
    """A source token given without its sign and scale (see `_source_digits`)."""

    __slots__ = ()


def _significant(value: str) -> str:
    """The significant digits of a value: a sign and a scale word change the
    value, never these, so a token whose digits differ cannot match (41200,
    41.2 thousand and -4.12 all give "412")."""
    return value.lstrip("~-").replace(".", "").strip("0")


def _source_digits(folded: str, digits: set[str] | None = None) -> Iterator[NumberToken]:
    """The source's numbers in digits, lazily; an ambiguous run also as its parts.
    With `digits`, a token whose significant digits are not among them is given
    undecorated (its sign and scale cannot make it match: reading them is the
    costly part of a long source)."""
    for raw in _raw_tokens(folded):
        if digits is None or raw.ambiguous or _significant(raw.value) in digits:
            yield _decorate(raw, folded)
        else:
            yield _Undecorated(*raw)
        if raw.ambiguous:
            yield from _split_ambiguous(raw, folded)


def _index(folded: str, wanted: set[str], seen: list[NumberToken]) -> dict[str, NumberToken]:
    """Where the source first writes each wanted key. Reading stops once every
    wanted key is found: a faithful draft's numbers are usually near the top.
    Numbers in words are read only when the digits did not ground them all.
    `seen` collects the tokens in digits read (all of them when one is missing)."""
    digits = {_significant(k) for k in wanted}
    found = _first(_source_digits(folded, digits), wanted, {}, seen)
    if len(found) < len(wanted):
        found = _first(_word_numbers(folded), wanted, found, [])
    return found


def _first(
    tokens: Iterator[NumberToken],
    wanted: set[str],
    found: dict[str, NumberToken],
    seen: list[NumberToken],
) -> dict[str, NumberToken]:
    for token in tokens:
        seen.append(token)
        if type(token) is _Undecorated:
            continue  # none of the wanted digits (see `_source_digits`): it cannot match
        for key in _keys(token):
            if key in wanted and key not in found:
                found[key] = token
        if len(found) == len(wanted):
            break
    return found


@dataclass(frozen=True)
class NumbersCheck:
    """The draft's checked numbers, each grounded in the passage or not."""

    evidence: list[dict[str, Any]]
    missing: list[str]  # as written, each once

    @property
    def passed(self) -> bool:
        return not self.missing


def ground_numbers(passage: str, text: str) -> NumbersCheck:
    """Ground every checked number of `text` in `passage`, by value, with the
    rules of `numbers_grounded` (module docstring). Other gates use it to ask
    whether a claim's numbers are all in the passage that supports it."""
    checked = [t for t in tokenise(text or "") if is_checked(t)]
    passage = passage or ""
    folded = compat_fold(passage)
    wanted = {k for t in checked for k in _wanted(t)}
    seen: list[NumberToken] = []
    index = _index(folded.text, wanted, seen) if checked else {}
    evidence: list[dict[str, Any]] = []
    missing: list[str] = []
    for token in checked:
        hit = next((index[k] for k in _wanted(token) if k in index), None)
        entry: dict[str, Any] = {
            "number": token.text,
            "value": token.value,
            "found": hit is not None,
            "draft_span": [token.start, token.end],
            "source_span": None,
            "source_text": None,
        }
        if hit is not None:
            start, end = folded.span(hit.start, hit.end)
            entry |= {"source_span": [start, end], "source_text": passage[start:end]}
        else:
            entry["closest_in_source"] = _closest(token, seen, folded, passage)
            if token.text not in missing:
                missing.append(token.text)
        evidence.append(entry)
    return NumbersCheck(evidence, missing)


def _closest(
    token: NumberToken, seen: list[NumberToken], folded: Folded, passage: str
) -> dict[str, Any] | None:
    """The source number a missing one most likely stands for (the true figure):
    the same significant digits at another scale or sign first (1.2 million
    for 1.2bn), else the nearest value (read without sign and scale words, to
    stay cheap). For the auditor and the error analysis, never for grounding."""
    if token.value.startswith("words:"):
        return None
    want = _decimal(token.value)
    want_digits = _significant(token.value)
    same = [c for c in seen if _significant(c.value) == want_digits]
    if same:
        pool = [
            _decorate(NumberToken(*c), folded.text) if isinstance(c, _Undecorated) else c
            for c in same
        ]
    else:
        pool = [c for c in seen if not c.value.startswith("words:")]
    if not pool:
        return None
    hit = min(pool, key=lambda c: abs(_decimal(c.value) - want))
    start, end = folded.span(hit.start, hit.end)
    return {"number": passage[start:end], "value": hit.value, "source_span": [start, end]}


def numbers_grounded(source: str, url: str | None, draft: str) -> Verdict:
    """Fail when the draft writes a number (two or more digits) the source does not."""
    check = ground_numbers(source or "", draft or "")
    evidence, missing = check.evidence, check.missing
    if not evidence:
        return Verdict(GATE, True, "no numbers of two or more digits in the draft", evidence)
    if missing:
        # Counted as the reader sees them: "40" written twice is one missing number.
        distinct = {e["number"] for e in evidence}
        reason = (
            f"{len(missing)} of {len(distinct)} numbers not in the source: {'; '.join(missing)}"
        )
        return Verdict(GATE, False, reason, evidence)
    return Verdict(GATE, True, all_found([e["number"] for e in evidence], "number"), evidence)
