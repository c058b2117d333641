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
   In a German, French, Spanish, Italian or Dutch text (the language given
   by the page or feed, else detected from the text: guards.units) a comma
   before three digits is a decimal mark (1,125 is 1.125) and a space groups
   digits without ambiguity (85 000 is 85000; rule 6 is for English).
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
   10.30 is the decimal 10.3 (10.30 Uhr is a time). A decimal written without
   its zero is a decimal: .5 is 0.5, not 5, and is checked (it counts its zero).
   A vulgar fraction after digits, or after them and one space, is their
   decimal part: 2½ and 2 ½ are 2.5 (NFKC would make it "21⁄2"), 1¾ is 1.75.
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
   (hundred, thousand, million, billion, trillion, lakh, crore; Millionen,
   Milliarden, Mio., Mrd., Tsd., millions, milliards, millones, mil millones,
   milioni, miliardi, miljoen, miljard; billón, Billion, biljoen are 10^12, and
   so is "billion" in a text of those languages) follow a space, a hyphen or a
   line break (a hard-wrapped "14.6<newline>million"); bn, mn, mln, tn may
   follow a space; k and m only glued (45k, £3.45m; "5 m" is five metres).
   A number with one group before a scale word is a decimal: "1.125 million"
   is 1,125,000 (in English; "1,125 Millionen" in German). When the language is not
   declared (unknown or guessed English), a European scale word (Mio., Mrd.,
   Millionen, milliards...; not "millions") settles the number before it: "1,125
   Mio." is 1,125,000 and "1.125 Mio." 1,125,000,000; a declared "en" wins.
9. Number words are numbers, parsed by text2num: "forty-two", "Twenty boats",
   "three hundred", "two thousand and twenty-four", "one point five million".
   "a million" is 1,000,000 and "half a million" 500,000; plurals (hundreds,
   millions) are not numbers; any other phrase ending in a scale word
   ("several million", "a third of a million") grounds only the same words.
   "a dozen" is 12 ("two dozen" 24, "half a dozen" 6; in the other languages
   "une douzaine", "ein Dutzend" 12, "deux douzaines", "zwei Dutzend" 24, "une
   demi-douzaine" 6), "a score of" 20, "two and a half" 2.5. In French, German,
   Spanish, Italian and Dutch the words from ten to twenty and the tens are read
   ("zwölf" 12, "quinze" 15, "veinte" 20, "quatre-vingt-dix" 90: `_EUROPEAN_WORDS`);
   not a compound ("vingt-trois", "dreiundzwanzig", "treinta y dos"), nor a word
   before a scale word ("douze mille"), nor one that is also a word of another
   language ("elf", "once", "onze") outside its own language. A year in words
   ("nineteen eighty-four", "twenty twenty-four") is the year: a number from
   eleven to twenty, a space, and a number from ten to ninety-nine.
10. A number is a value with a unit (guards.units): percent or percentage
   points, a currency by symbol or code (£, €, $, US$, EUR, "Millionen Euro",
   "millions d'euros"), a unit of measure or time (km, miles, metres, tonnes,
   minutes...), a frequency ("every 15 minutes") apart from a duration, the
   hour and minute of a clock time, or a count tied to its noun ("31 votes",
   and "31 votes to 17": the other end of a range shares its unit). A draft
   number is grounded only by a source number of the same value whose unit is
   compatible: the same, or either one unstated. "46m" is 46 million or 46
   metres and grounds both readings ("£46m" is money only). The 00 of
   "10.00am" is not asked of the source; "10.30pm" is grounded by 22.30.

Before any of this both texts are read in Unicode NFKC with invisible
characters (category Cf and other default-ignorable code points) dropped:
"4<U+200B>2" is 42, fullwidth and superscript digits are digits.

Draft numbers written with two or more digits (2.5, 07), or whose value has
two or more digits (twenty, 5m, a million), are checked; so is a smaller one
with a unit that rule 10 reads (3%, 3 percentage points, 3 km, £5, every 5
minutes), but not a single-digit count ("3 people") or clock hour ("9am"),
which a source often writes otherwise ("three", "both", "nine o'clock"). Every
number of the source, single digits included, can ground one. Evidence gives, per draft
number, the value compared and where the source has it; for a missing one,
the source number it most likely stands for (`closest_in_source`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache, partial
from typing import Any, NamedTuple

from text_to_num import find_numbers

from guards.sourcetext import SourceText, source_text
from guards.text import (
    VULGAR_FRACTIONS,
    Folded,
    ascii_bytes,
    ascii_digits,
    compat_fold,
    non_ascii,
)
from guards.units import (
    LANGUAGES,
    compatible,
    currency_before,
    describe,
    detect_language,
    european,
    kind,
    unit_after,
)
from guards.verdict import Verdict, all_found

GATE = "numbers_grounded"

_NUMBER = re.compile(
    r"""
    (?<![0-9])
    (?:
        # A clock time written with a dot: 10.30am, 7.15 p.m.
        (?P<hour>[0-9]{1,2})\.(?P<minute>[0-5][0-9])(?=\s?(?:[AaPp]\.?[Mm]\b|Uhr\b))
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


def _raw_tokens(text: str, lang: str | None = None) -> Iterator[NumberToken]:
    """`_scan`, lazily. A text with digits of another script is read through
    `ascii_digits` (same offsets); converting costs a pass over the text that
    most texts do not need, and finding out costs a few microseconds."""
    other = not text.isascii() and any(ch.isdecimal() for ch in non_ascii(text))
    return _scan(ascii_digits(text) if other else text, text, lang)


def _digit_tokens(text: str, lang: str | None = None) -> Iterator[NumberToken]:
    """The numbers written in digits (`_scan`), with their signs and scale words."""
    return (_decorate(t, text, lang) for t in list(_raw_tokens(text, lang)))


def _folded_tokens(folded: str, lang: str | None = None) -> list[NumberToken]:
    tokens = list(_digit_tokens(folded, lang))
    words = list(_word_numbers(folded, lang))
    return sorted(tokens + words) if words else tokens


def _to_original(token: NumberToken, folded: Folded, text: str) -> NumberToken:
    if folded.text is text:
        return token
    start, end = folded.span(token.start, token.end)
    return token._replace(start=start, end=end, text=text[start:end])


def tokenise(text: str, language: str | None = None) -> list[NumberToken]:
    """Every number in `text`, in order, with offsets into `text` itself.

    The text is read in Unicode NFKC without invisible characters (`compat_fold`):
    "4<U+200B>2" is 42 and a fullwidth or superscript digit is a digit.
    `language` (en, de, fr, es, it, nl) decides what a comma before three digits
    and "billion" mean; by default it is detected from the text."""
    folded = compat_fold(text)
    lang = language or language_for_numbers(folded.text)
    return [_to_original(t, folded, text) for t in _folded_tokens(folded.text, lang)]


# A comma before three digits, or a space before three digits and no fourth: what a
# text's language changes besides "illion" (found with `in`: "[0-9],[0-9]{3}" holds
# "[0-9],[0-9]{3}(?![0-9])"). Starting with a digit class, the pattern is searched by
# skipping to the next digit in C; an alternation with "illion" was tried at every
# position.
_GROUP_OF_THREE = re.compile(r"[0-9](?:,[0-9]{3}|\s[0-9]{3}(?![0-9]))")


def _numbers_language(read: SourceText) -> str | None:
    return language_for_numbers(read.folded.text)


def _language_matters(text: str) -> bool:
    return "illion" in text or _GROUP_OF_THREE.search(text) is not None


def language_for_numbers(text: str) -> str | None:
    """The language of `text` where it changes how its numbers read (a comma or a space
    before three digits, "billion"), else None: detecting it costs more than the rest.
    A guess of English is None too: English by default, but a number before a European
    scale word is read with European separators ("1,125 Mio.": `_decimal_before_scale`),
    since a short German text may have too few function words to be told from English;
    only a declared "en" reads it the English way."""
    if not _language_matters(text):
        return None
    guess = detect_language(text)
    return None if guess == "en" else guess


# A run of digits is a whole number by itself unless it follows a dot (.45) or
# one of these and a digit follow it (41,200  8.7  41 200  10.30am  30.11.2026).
_SEPARATORS = frozenset(".,'\u2019\x20\u00a0\u2007\u2009\u202f")

# The runs of digits are found in a byte view of the text: one byte per
# character (`str.encode` with "replace" writes "?" for each non-ASCII one, so
# offsets hold) with every digit turned into "0", the characters that may join a
# run to the next (. , ' and a space) kept, "?" kept, and every other character
# an "x". A pattern that starts with a literal byte is searched with a tight C
# loop, several times faster than the `re` character-class scan that `[0-9]+` or
# `\d+` needs over a long text. A run that may be more than itself (a dot before
# it; a separator then a digit or a non-ASCII character after it; a non-ASCII
# character after it: a vulgar fraction, a typographic space) sets a group
# (`lastindex`), and `_scan` reads it in full; any other run is a number by itself.
_RUN_VIEW = bytes(0x30 if 0x30 <= b <= 0x39 else b if b in b".,' ?" else 0x78 for b in range(256))
_RUN = re.compile(rb"0(?:(?<=\.0)())?0*(?:(?=[.,' ][0?]|\?)())?")
_token = partial(tuple.__new__, NumberToken)  # NumberToken(*t), without a frame
# One space may stand between a number and its vulgar fraction: "2 ½" (French and German
# typesetting put a no-break or thin one there).
_FRACTION_GAP = frozenset("\x20\u00a0\u2007\u2009\u202f")


def _scan(digits: str, text: str, lang: str | None = None) -> Iterator[NumberToken]:
    """The numbers of `digits`, lazily, with written forms taken from `text`.

    Two steps for speed: a simple scan finds the runs of digits (`_RUN`), then
    `_NUMBER` reads the whole number at each run not already part of the previous
    number. Most runs are numbers by themselves: `_RUN` tells them apart in C (no
    dot before, no separator and digit after, nothing non-ASCII after), and they
    become a token without any further test; so do the two joined forms most of the
    others are, an integer grouped by commas and a one-digit decimal (`_joined`, read
    in the same byte view). Running `_NUMBER` over the whole text is several times
    slower. Being lazy lets the gate stop reading the source once
    every draft number is found."""
    end = 0
    same = digits is text
    view = ascii_bytes(digits).translate(_RUN_VIEW)
    for run in _RUN.finditer(view):
        start, run_end = run.span()
        if start < end:
            continue  # read already, as part of the previous number
        if run.lastindex is None:  # a whole number by itself: the common case
            raw = digits[start:run_end]
            yield _token((start, run_end, raw if same else text[start:run_end],
                          raw.lstrip("0") or "0", run_end - start, False))  # fmt: skip
            continue
        raw = digits[start:run_end]
        before = digits[start - 1] if start else ""
        joins = (
            run_end + 1 < len(digits)
            and digits[run_end] in _SEPARATORS
            and digits[run_end + 1].isdigit()
        )
        if before != "." and not joins:
            gap = 1 if digits[run_end : run_end + 1] in _FRACTION_GAP else 0
            fraction = VULGAR_FRACTIONS.get(digits[run_end + gap : run_end + gap + 1])
            if fraction:  # 2½ and 2 ½ are 2.5 (NFKC would make it 21⁄2)
                stop = run_end + gap + 1
                value = canonical(raw, fraction)
                yield NumberToken(start, stop, text[start:stop], value, len(raw) + 1)
                end = stop
                continue
            written = raw if same else text[start:run_end]
            yield NumberToken(start, run_end, written, raw.lstrip("0") or "0", len(raw))
            end = run_end
            continue
        if before != ".":
            token = _joined(view, digits, text, start, lang)
            if token is not None:
                yield token
                end = token.end
                continue
        m = _NUMBER.match(digits, start - 1) if before == "." else None  # .45
        m = m or _NUMBER.match(digits, start)
        assert m is not None  # a run of digits is always a number
        yield from _tokens(m, text, lang)
        end = m.end()


# The two joined forms most numbers of news prose take, read in the byte view (C) instead
# of by `_NUMBER` and `_tokens` (Python): an integer grouped by commas ("210,840",
# "£333,000") and a decimal with one digit after its mark ("1.5 million", "8,7 %"). Neither
# may be followed by a digit, a non-ASCII character ("?": a fraction, another script's
# digit, a typographic space) or a separator and one of those, after which `_NUMBER` reads
# more (a decimal part, another group, a dotted date). What `_NUMBER` makes of them then:
# the grouped integer is its digits, when its first digit is not 0 (else `_NUMBER` reads
# "012,345" as 12.345) and a comma groups (not in a European text, where "1,125" with one
# group is 1.125); the decimal is the same in every language, and with one digit after the
# mark it is neither a clock time ("10.30am": two) nor a group of thousands ("1.250": three).
_JOINED = re.compile(rb"(?:0{1,3}(?:,000)+()|0+[.,]0)(?![0?]|[.,' ][0?])")


def _joined(
    view: bytes, digits: str, text: str, start: int, lang: str | None
) -> NumberToken | None:
    """The number at `start` (a run of digits not after a dot) when it is one of the two
    joined forms `_JOINED` reads, else None (`_NUMBER` reads it)."""
    m = _JOINED.match(view, start)
    if m is None:
        return None
    end = m.end()
    written = digits[start:end]
    if m.lastindex is None:  # a decimal
        whole, fraction = written[:-2], written[-1]
        value = canonical(whole, fraction)
        return _token((start, end, text[start:end], value, len(whole) + 1, False))
    if written[0] == "0" or (lang is not None and lang != "en"):
        return None
    integer = written.replace(",", "")
    return _token((start, end, text[start:end], integer, len(integer), False))


def _tokens(m: re.Match[str], text: str, lang: str | None = None) -> list[NumberToken]:
    """The number(s) of one `_NUMBER` match: a time or a dotted date is several."""
    hour, _, day, _, _, bare, written, sep, frac = m.groups()  # one call: this runs per number
    if written is None:
        if hour is not None:
            return [_part(text, m, "hour"), _part(text, m, "minute")]
        if day is not None:
            return [_part(text, m, "day"), _part(text, m, "month"), _part(text, m, "year")]
        # .5 counts its implied zero: it is checked like 0.5
        start, end = m.span()
        return [NumberToken(start, end, text[start:end], canonical("0", bare), len(bare) + 1)]
    start, end = m.span()
    integer = _digits_of(written)
    fraction = frac or ""
    europe = lang is not None and lang != "en"  # guards.units.european, inlined
    if sep == "," and not fraction and europe and _ONE_GROUP.match(m.group()):
        integer, _, fraction = written.partition(",")  # 1,125 is 1.125 in Europe
    value = canonical(integer, fraction)
    # Rule 6: two groups joined by a plain space may be two numbers ("May 15 200 people");
    # in the other European languages a space is how digits are grouped.
    ambiguous = sep == " " and not fraction and not europe and written.count(" ") == 1
    return [
        NumberToken(start, end, text[start:end], value, len(integer) + len(fraction), ambiguous)
    ]


def _part(text: str, match: re.Match[str], group: str) -> NumberToken:
    start, end = match.span(group)
    raw = match.group(group)
    return NumberToken(start, end, text[start:end], canonical(raw), len(raw))


# --- signs, scale words, number words ------------------------------------------

_ONE_GROUP = re.compile(r"[1-9][0-9]{0,2}[.,][0-9]{3}$")

_SIGNS = "-\u2212\u2013\u2012+"  # hyphen-minus, minus, en dash, figure dash, plus
_MINUS_WORD = re.compile(r"(?:^|(?<=[^\w]))(?:minus|negative)\s+$", re.IGNORECASE)
# Scale words: full words after a space or hyphen, bn/mn/tn after an optional
# space, k and m only glued to the number (5 m is five metres, 5m is five million).
# European scale words (German, French, Spanish, Italian, Dutch) and their powers;
# "billion" is a thousand million in English, a million million elsewhere.
_EUROPEAN_SCALES = {
    "millionen": 6, "milliarden": 9, "milliarde": 9, "milliards": 9, "milliard": 9,
    "millones": 6, "millón": 6, "mil millones": 9, "milioni": 6, "milione": 6,
    "miliardi": 9, "miliardo": 9, "miljoen": 6, "miljard": 9, "miljarden": 9,
    "billones": 12, "billón": 12, "biljoen": 12, "billionen": 12, "mio.": 6, "mio": 6,
    "mrd.": 9, "mrd": 9, "tsd.": 3, "tsd": 3,
}  # fmt: skip
_EUROPEAN_WORDS = "|".join(
    re.escape(w).replace(" ", r"\s+") for w in sorted(_EUROPEAN_SCALES, key=len, reverse=True)
)
# A scale word may follow after a line break: a hard-wrapped "14.6<newline>million".
_SCALE = re.compile(
    rf"""(?:(?:[ \u00a0\u2009\u202f-]|[^\S\n]*\n[^\S\n]*)
            (?:(?P<word>hundred|thousand|million|billion|trillion|lakh|crore)s?
              |(?P<euro>{_EUROPEAN_WORDS}))
         |[ \u00a0\u2009\u202f]?(?P<abbr>bn|mn|mln|tn|trn)
         |(?P<glued>k|m)(?!-)
        )(?!\w)""",
    re.IGNORECASE | re.VERBOSE,
)
_SCALE_START = frozenset(" \u00a0\u2009\u202f\n\t\r-kKmMbBtT")
_POWERS = {
    "hundred": 2, "thousand": 3, "k": 3, "lakh": 5, "million": 6, "m": 6, "mn": 6, "mln": 6,
    "crore": 7, "billion": 9, "bn": 9, "trillion": 12, "tn": 12, "trn": 12,
} | _EUROPEAN_SCALES  # fmt: skip


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


def _scale_at(text: str, end: int, lang: str | None = None) -> tuple[int, int]:
    """(power of ten, new end) of a scale word right after a number: 1.2bn, 45k, 3 million,
    2,3 Mrd., 4,2 milliards."""
    if end >= len(text) or text[end] not in _SCALE_START:
        return 0, end
    m = _SCALE.match(text, end)
    if m is None:
        return 0, end
    word = (m.group("word") or m.group("euro") or m.group("abbr") or m.group("glued")).lower()
    word = " ".join(word.split())
    if word == "billion" and european(lang):
        return 12, m.end()  # un billion, eine Billion: a million million
    return _POWERS[word], m.end()


def _decimal_before_scale(token: NumberToken, text: str, lang: str | None) -> str | None:
    """The value of "1.125" read as a decimal before a scale word ("1.125 million" is
    1,125,000): a dot in English. When the language is not declared (None: unknown, or
    guessed English), a European scale word ("Mio.", "Mrd.", "Millionen", "milliards")
    settles the separators of the number before it: a comma there is a decimal mark
    ("1,125 Mio." is 1,125,000) and a dot groups thousands ("1.125 Mio." is 1,125 Mio.)."""
    written = token.text
    if not _ONE_GROUP.match(written):
        return None
    mark = written[-4]
    after = _SCALE.match(text, token.end) if lang is None else None
    if after is not None and after.group("euro"):
        decimal = mark == ","  # "1,125 Mio.": European separators
    else:
        decimal = mark == "." and (lang is None or lang == "en")
    return canonical(written[:-4], written[-3:]) if decimal else None


def _decorate(token: NumberToken, text: str, lang: str | None = None) -> NumberToken:
    """A token of `_scan` with its sign and scale word (offsets still in `text`)."""
    power, end = _scale_at(text, token.end, lang)
    start, negative = _signed_start(text, token.start)
    if not power and not negative:
        return token
    base = (_decimal_before_scale(token, text, lang) if power else None) or token.value
    value = _decimal(base).scaleb(power)
    value = format_value(-value if negative else value)
    return token._replace(start=start, end=end, text=text[start:end], value=value)


def _split_ambiguous(raw: NumberToken, text: str, lang: str | None = None) -> list[NumberToken]:
    """The two numbers a plain-space run "15 200" may also be (before `_decorate`)."""
    head = raw.text.index(" ")
    parts = [(raw.start, raw.start + head), (raw.end - 3, raw.end)]
    return [
        _decorate(NumberToken(s, e, text[s:e], canonical(text[s:e]), e - s), text, lang)
        for s, e in parts
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
# Matched only where a candidate starts (below), so the text is not lower-cased first.
_WORD_RUN = re.compile(
    rf"\b{_NUM_WORD}(?:(?:[^\S\n]+|[^\S\n]*-[^\S\n]*)(?:(?:and|point)[^\S\n]+)?{_NUM_WORD})*\b",
    re.IGNORECASE,
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


def _word_view(text: str) -> bytes:
    """`text` as `_WORD_VIEW` reads it, after one space (offsets shifted by one)."""
    return b" " + ascii_bytes(text).translate(_WORD_VIEW)


def _word_candidates(view: bytes) -> list[int]:
    """Where a number word may start in the text of `view` (`_word_view`): an English
    one (`_WORD_RUN`) or one of the other languages (`_EUROPEAN_WORD`), found in one
    pass over the view."""
    return [m.start() for m in _WORD_CANDIDATE.finditer(view)]


def _word_runs(text: str, starts: list[int]) -> Iterator[re.Match[str]]:
    """The matches of `_WORD_RUN` in `text` at the candidates `starts`, in order."""
    end = 0
    for start in starts:
        if start < end:
            continue  # inside the previous run
        run = _WORD_RUN.match(text, start)
        if run is not None:
            yield run
            end = run.end()


def _word_numbers(text: str, lang: str | None = None) -> Iterator[NumberToken]:
    """Numbers written in words: "forty-two", "Twenty boats", "three hundred",
    "one point five million", "a million", "minus twelve", "two trillion",
    "two and a half", "nineteen forty-four" (a year), "a dozen", "a score of",
    and ten to twenty and the tens in the other languages (`_european_words`)."""
    view = _word_view(text)
    starts = _word_candidates(view)
    dozens = list(_dozens(text, view))
    european = list(_european_words(text, starts, lang)) if starts else []
    if not dozens and not european:
        yield from _run_numbers(text, lang, starts)
        return
    inside = [(d.start, d.end) for d in dozens]  # "ten dozen" is 120, not also 10
    words = [t for t in [*_run_numbers(text, lang, starts), *european]
             if not any(a <= t.start < b for a, b in inside)]  # fmt: skip
    yield from sorted([*words, *dozens])


# How many dozens, in each language the gates read: "two dozen", "deux douzaines", "zwei
# Dutzend", "dos docenas", "due dozzine", "twee dozijn"; one dozen with an article ("a
# dozen", "une douzaine", "ein Dutzend", "una docena", "una dozzina", "een dozijn"); half a
# dozen ("une demi-douzaine", "ein halbes Dutzend", "media docena", "mezza dozzina", "een
# half dozijn").
_DOZENS_OF = {  # the word for dozen: (one dozen, then two to ten dozen)
    "dozen": ("a an one", "two three four five six seven eight nine ten"),
    "douzaines?": ("une", "deux trois quatre cinq six sept huit neuf dix"),
    "dutzend": ("ein eine einem einer", "zwei drei vier fünf sechs sieben acht neun zehn"),
    "docenas?": ("una", "dos tres cuatro cinco seis siete ocho nueve diez"),
    "dozzin[ae]": ("una", "due tre quattro cinque sei sette otto nove dieci"),
    "dozijn": ("een", "twee drie vier vijf zes zeven acht negen tien"),
}
_HOW_MANY = {word: 1 for one, _ in _DOZENS_OF.values() for word in one.split()} | {
    word: n for _, more in _DOZENS_OF.values() for n, word in enumerate(more.split(), start=2)
}
_HALF_A_DOZEN = (
    r"half\s+a\s+dozen|une\s+demi-douzaine|(?:ein|einem|einer)\s+halb(?:es|en)\s+dutzend"
    r"|media\s+docena|mezza\s+dozzina|een\s+(?:half|halve)\s+dozijn"
)
_DOZEN = re.compile(
    rf"\b(?:(?P<half>{_HALF_A_DOZEN})"
    rf"|(?P<n>{'|'.join(sorted(_HOW_MANY, key=len, reverse=True))})\s+(?:{'|'.join(_DOZENS_OF)})"
    r"|(?P<score>a\s+score)\s+of)\b",
    re.IGNORECASE,
)
# What `_dozens` looks for in `_word_view` (ASCII letters only, lower-cased) before it
# runs `_DOZEN`: each search costs a pass over a long source, so the words with a "z"
# (douzaine, Dutzend, dozzina, dozijn) are looked for only in a text with a "z" at all
# (one `memchr`), and the others by their longest part.
_Z_DOZENS = (b"douz", b"utzend", b"dozzin", b"dozijn")
_OTHER_DOZENS = (b"docena",)


def _dozens(text: str, view: bytes) -> Iterator[NumberToken]:
    """ "a dozen" (12), "two dozen" (24), "half a dozen" (6), "a score of" (20), the
    same in the other languages ("une douzaine" 12, "zwei Dutzend" 24, "media docena"
    6; `_DOZENS_OF`).
    `view` (`_word_view(text)`) has "score" exactly where `text.lower()` has it: only
    ASCII letters become letters there, and no other character lower-cases to one of
    s, c, o, r, e (only İ and the Kelvin sign lower-case to ASCII: i and k), so the
    long text is not lower-cased to find out. The other languages' words are looked for
    there too; one spelt with a dotted İ (which `re` matches to i) is not read: the safe
    side, its 12 is then not offered to the draft."""
    if (
        "dozen" not in text
        and b"score" not in view
        and not (b"z" in view and any(w in view for w in _Z_DOZENS))
        and not any(w in view for w in _OTHER_DOZENS)
    ):
        return
    for m in _DOZEN.finditer(text):
        end = m.end()
        if m.group("score"):
            value, end = "20", m.end("score")
        elif m.group("half"):
            value = "6"
        else:
            value = str(12 * _HOW_MANY[" ".join(m.group("n").lower().split())])
        yield NumberToken(m.start(), end, text[m.start() : end], value, len(value))


# Ten to twenty and the tens in the other languages the gates read (text2num reads
# the English ones): each word is its value, as "twelve" is 12; so is each compound from
# twenty-one to ninety-nine (`_COMPOUND_VALUE`: "vingt-trois", "dreiundzwanzig",
# "veintitrés", "treinta y dos", "vingt et un"; the word inside one is not its value).
# Not read, on the safe side (neither grounded nor refused by value, as "several
# million" is not): a word or a compound before a scale word ("zwanzig Millionen",
# "douze mille": `_scale_at` reads only digits before one). French counts 70 to 90 in
# compounds of their own, read whole.
_EUROPEAN_WORDS = {
    "fr": "dix onze douze treize quatorze quinze seize dix-sept dix-huit dix-neuf vingt "
    "trente quarante cinquante soixante soixante-dix quatre-vingts quatre-vingt-dix",
    "de": "zehn elf zwölf dreizehn vierzehn fünfzehn sechzehn siebzehn achtzehn neunzehn "
    "zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig",
    "es": "diez once doce trece catorce quince dieciséis diecisiete dieciocho diecinueve "
    "veinte treinta cuarenta cincuenta sesenta setenta ochenta noventa",
    "it": "dieci undici dodici tredici quattordici quindici sedici diciassette diciotto "
    "diciannove venti trenta quaranta cinquanta sessanta settanta ottanta novanta",
    "nl": "tien elf twaalf dertien veertien vijftien zestien zeventien achttien negentien "
    "twintig dertig veertig vijftig zestig zeventig tachtig negentig",
}
_EUROPEAN_VALUE = {
    word: str(value)
    for words in _EUROPEAN_WORDS.values()
    for word, value in zip(words.split(), [*range(10, 21), 30, 40, 50, 60, 70, 80, 90],
                           strict=True)
} | {"dreissig": "30", "septante": "70", "huitante": "80", "octante": "80", "nonante": "90",
     "quatre-vingt": "80"}  # fmt: skip
# Also an ordinary word of another language the gates read ("elf" in English, "onze" is
# "our" in Dutch, "venti" also "winds"): a number only in these languages.
_ONLY_IN = {"elf": ("de", "nl"), "once": ("es",), "seize": ("fr",), "onze": ("fr",),
            "quince": ("es",), "venti": ("it",)}  # fmt: skip
_SCALE_AFTER = (
    r"\s+(?:mille|cents?|millions?|milliards?|tausend|hundert|millionen|milliarden|mil"
    r"|cientos|millones|mila|cento|milioni|miliardi|duizend|honderd|miljoen|miljard)\b"
)
_EUROPEAN_WORD = re.compile(
    r"(?<![\w-])(?P<w>"
    + "|".join(sorted(map(re.escape, _EUROPEAN_VALUE), key=len, reverse=True))
    + r")(?![\w-]|\s+(?:y\s+(?:un[oa]?|dos|tres|cuatro|cinco|seis|siete|ocho|nueve)"
    r"|et\s+(?:une?|onze))\b|" + _SCALE_AFTER + ")",
    re.IGNORECASE,
)


# The tens of each language with their values ("dreissig" too, the Swiss spelling).
_TENS = {
    lang: list(zip(range(20, 100, 10), words.split()[10:], strict=True))
    for lang, words in _EUROPEAN_WORDS.items()
    if lang != "fr"
} | {"fr": [(20, "vingt"), (30, "trente"), (40, "quarante"), (50, "cinquante"), (60, "soixante")]}
_TENS["de"].append((30, "dreissig"))


def _fr(ten: str, unit: str, n: int) -> list[str]:
    if n == 1:  # "vingt et un", "vingt-et-une"
        return [f"{ten}{sep}et{sep}{one}" for sep in (" ", "-") for one in ("un", "une")]
    if n == 0:  # "quatre-vingt-un" takes no "et"
        return [f"{ten}-un", f"{ten}-une"]
    return [f"{ten}-{unit}"]


def _es(ten: str, unit: str, n: int) -> list[str]:
    if ten == "veinte":  # one word: "veintiuno", "veintitrés" (and without the accent)
        stems = {"uno": ["uno", "ún", "una"], "dos": ["dós", "dos"], "tres": ["trés", "tres"],
                 "seis": ["séis", "seis"]}.get(unit, [unit])  # fmt: skip
        return [f"veinti{stem}" for stem in stems]
    ones = ["uno", "un", "una"] if n == 1 else [unit]
    return [f"{ten} y {one}" for one in ones]


def _it(ten: str, unit: str, n: int) -> list[str]:
    stem = ten[:-1] if unit in ("uno", "otto") else ten  # "ventuno", "trentotto"
    return [f"{stem}{unit}"] + ([f"{stem}tré"] if unit == "tre" else [])


# Each language's units one to nine and how a compound joins one to the tens: the unit
# first in German and Dutch ("dreiundzwanzig"; "ën" after a unit that ends in e:
# "drieëntwintig"), after them in French, Spanish and Italian.
_COMPOUND_UNITS: dict[str, tuple[str, Callable[[str, str, int], list[str]]]] = {
    "fr": ("un deux trois quatre cinq six sept huit neuf", _fr),
    "de": ("ein zwei drei vier fünf sechs sieben acht neun",
           lambda ten, unit, n: [f"{unit}und{ten}"]),
    "es": ("uno dos tres cuatro cinco seis siete ocho nueve", _es),
    "it": ("uno due tre quattro cinque sei sette otto nove", _it),
    "nl": ("een twee drie vier vijf zes zeven acht negen",
           lambda ten, unit, n: [f"{unit}{'ën' if unit.endswith('e') else 'en'}{ten}"]),
}  # fmt: skip


def _compound_values() -> dict[str, str]:
    """Twenty-one to ninety-nine as French, German, Spanish, Italian and Dutch write
    them, lower-case, one space between words (see `_COMPOUND_UNITS`)."""
    out: dict[str, int] = {}
    for lang, (written, join) in _COMPOUND_UNITS.items():
        tens = [(t, ten) for t, ten in _TENS[lang] if t < 70 or lang != "fr"]
        if lang == "fr":  # seventy to ninety-nine: sixty and eighty with ten to nineteen
            tens += [(70, "septante"), (80, "huitante"), (80, "octante"), (90, "nonante")]
            teens = _EUROPEAN_WORDS["fr"].split()[1:10]  # onze to dix-neuf
            for n, teen in enumerate(teens, start=11):
                out[f"quatre-vingt-{teen}"] = 80 + n
                out[f"soixante-{teen}"] = 60 + n
            out["soixante et onze"] = out["soixante-et-onze"] = 71
        for n, unit in enumerate(written.split(), start=1):
            for t, ten in tens:
                for word in join(ten, unit, n):
                    out[word] = t + n
            if lang == "fr":
                for word in join("quatre-vingt", unit, n if n > 1 else 0):
                    out[word] = 80 + n
    return {word: str(value) for word, value in out.items()}


_COMPOUND_VALUE = _compound_values()
# The compounds as one trie (`_trie`: at each character `re` follows one branch, not
# 462 words in turn), any space between the words of one ("treinta  y dos").
_EUROPEAN_COMPOUND = re.compile(
    r"(?<![\w-])(?P<w>"
    + _trie(list(_COMPOUND_VALUE)).replace(r"\ ", r"\s+")
    + r")(?![\w-]|"
    + _SCALE_AFTER
    + ")",
    re.IGNORECASE,
)
# Where a number word may start: an English one or one of `_EUROPEAN_VALUE` or
# `_COMPOUND_VALUE`, as it is in `_word_view` ("zwölf" is "zw lf" there, "dix-sept"
# "dix sept"), after one space.
_WORD_CANDIDATE = re.compile(
    b" "
    + _trie(
        _UNITS
        + _ORDINALS
        + [_word_view(w)[1:].decode() for w in [*_EUROPEAN_VALUE, *_COMPOUND_VALUE]]
    ).encode()
)


def _european_words(text: str, starts: list[int], lang: str | None) -> Iterator[NumberToken]:
    """Ten to twenty and the tens in French, German, Spanish, Italian and Dutch
    ("zwölf" 12, "quatre-vingt-dix" 90; `_EUROPEAN_WORDS`) and the compounds between
    them ("dreiundzwanzig" 23; `_COMPOUND_VALUE`); a word in `_ONLY_IN` only when `text`
    is in its language (`lang`, else detected from `text`)."""
    end = 0
    language = lang
    for start in starts:
        if start < end:
            continue
        compound = _EUROPEAN_COMPOUND.match(text, start)
        if compound is not None:  # "vingt-trois", "treinta y dos": the whole is the value
            value = _COMPOUND_VALUE.get(" ".join(compound.group("w").lower().split()))
            if value is not None:
                end = compound.end()
                yield NumberToken(start, end, compound.group(), value, 2)
                continue
        m = _EUROPEAN_WORD.match(text, start)
        if m is None:
            continue
        word = m.group().lower()
        if word in _ONLY_IN:
            if language is None:
                language = detect_language(text) or "en"
            if language not in _ONLY_IN[word]:
                continue
        end = m.end()
        yield NumberToken(start, end, m.group(), _EUROPEAN_VALUE[word], 2)


_AND_A_FRACTION = re.compile(
    r"[^\S\n]+and[^\S\n]+(?:(?P<half>a[^\S\n]+half)|(?P<quarter>a[^\S\n]+quarter)"
    r"|(?P<three>three[^\S\n]+quarters))\b",
    re.IGNORECASE,
)


def _run_numbers(text: str, lang: str | None, starts: list[int]) -> Iterator[NumberToken]:
    previous: NumberToken | None = None
    for token in _plain_word_numbers(text, lang, starts):
        year = _year_in_words(previous, token, text)
        if year is not None:
            previous = year
            continue
        if previous is not None:
            yield previous
        previous = token
    if previous is not None:
        yield previous


def _year_in_words(first: NumberToken | None, second: NumberToken, text: str) -> NumberToken | None:
    """ "nineteen forty-four" is 1944 and "twenty twenty-four" 2024: a number from
    eleven to twenty then one from ten to ninety-nine, one space apart."""
    if first is None or first.value.startswith("words:") or second.value.startswith("words:"):
        return None
    if not (first.value.isdigit() and second.value.isdigit()):
        return None
    if not (11 <= int(first.value) <= 20 and 10 <= int(second.value) <= 99):
        return None
    if text[first.end : second.start] != " " or "-" in first.text:
        return None
    value = str(int(first.value) * 100 + int(second.value))
    return NumberToken(first.start, second.end, text[first.start : second.end], value, 4)


def _plain_word_numbers(text: str, lang: str | None, starts: list[int]) -> Iterator[NumberToken]:
    for run in _word_runs(text, starts):
        written = run.group()
        parsed = _parse_run(written)
        base = run.start()
        if parsed is None:  # unreadable: only the same words ground it
            words = "words:" + written.lower()
            yield NumberToken(run.start(), run.end(), written, words, 9)
            continue
        merged: list[list] = []
        for s, e, value in parsed:
            lone = value in _LONE_SCALES and written[s:e].lower() == _LONE_SCALES[value]
            if lone and merged and merged[-1][1] + 1 >= s:
                scaled = _decimal(merged[-1][2]) * _decimal(value)
                merged[-1][1], merged[-1][2] = e, format_value(scaled)
                continue  # "one point five million"
            merged.append([s, e, value, lone])
        for s, e, value, lone in merged:
            for token in _word_token(text, base + s, base + e, value, lone, lang):
                yield _with_fraction(token, text)


def _with_fraction(token: NumberToken, text: str) -> NumberToken:
    """ "two and a half" is 2.5, "three and three quarters" 3.75."""
    if token.value.startswith("words:") or "." in token.value:
        return token
    m = _AND_A_FRACTION.match(text, token.end)
    if m is None:
        return token
    part = ".5" if m.group("half") else ".25" if m.group("quarter") else ".75"
    value = format_value(_decimal(token.value) + _decimal("0" + part))
    return token._replace(end=m.end(), text=text[token.start : m.end()], value=value)


def _word_token(
    text: str, start: int, end: int, value: str, lone: bool, lang: str | None = None
) -> Iterator[NumberToken]:
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
    power, end = _scale_at(text, end, lang)  # "two trillion" (text2num stops at trillion)
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
    or when its value has two or more digits (twenty, 5m, a million); a smaller one
    only when it carries a unit (`checked_unit`)."""
    if token.digits >= 2 or token.value.startswith("words:"):
        return True
    return abs(_decimal(token.value)) >= 10


# The units that make a number checked whatever its size (issue 20's unit rules):
# percent and percentage points, a currency, a unit of measure, time or frequency.
# Not a count ("3 people": a source writes "three", "both", "a pair") nor a clock
# hour ("at 9am": "nine o'clock"), which stay unchecked below 10.
_CHECKED_UNITS = ("%", "pp", "cur:", "len:", "mass:", "vol:", "area:", "speed:", "temp:")
_CHECKED_UNITS += ("power:", "energy:", "time:", "freq:")


def checked_unit(readings: list[Reading]) -> bool:
    """Whether a number read as `readings` carries a unit that is checked at any size."""
    return any(unit is not None and unit.startswith(_CHECKED_UNITS) for _, unit in readings)


def _keys(token: NumberToken, value: str) -> tuple[str, ...]:
    """Index keys a source reading grounds: its value; an ambiguous run only the
    same ambiguous run (key "~value"), its parts are indexed on their own."""
    return ("~" + value,) if token.ambiguous else (value,)


_TYPOGRAPHIC_PAIR = re.compile(r"[1-9][0-9]{0,2}[\u00a0\u2007\u2009\u202f][0-9]{3}$")


def _wanted(token: NumberToken, value: str) -> tuple[str, ...]:
    """Keys that ground a draft reading: a plain-space run "2 145" is read as 2145
    and grounded by 2145 in any unambiguous form or by the same run; so is a run
    grouped by another space ("85 000" with a no-break space)."""
    if token.ambiguous or _TYPOGRAPHIC_PAIR.match(token.text):
        return (value, "~" + value)
    return (value,)


# --- units ------------------------------------------------------------------------

Reading = tuple[str, "str | None"]  # (value, unit): see guards.units

_CLOCK_AFTER = re.compile(
    r"(?:[.:h][0-5][0-9])?[^\S\n]?(?:(?P<ap>[ap])\.?m\b\.?|uhr\b)|:[0-5][0-9](?![0-9])|h[0-5][0-9]\b",
    re.IGNORECASE,
)
_CLOCK_BEFORE = re.compile(r"(?<![0-9.,])[0-9]{1,2}[:h.]$")
_RANGE_NEXT = re.compile(
    r"[^\S\n]*(?:to|and|or|-|\u2013|bis|à|et|y|e|tot|en)[^\S\n]*[£€$]?[0-9][0-9.,]*(?:[.,][0-9]+)?",
    re.IGNORECASE,
)
_RANGE_PREV = re.compile(
    r"(?<![0-9.,])[0-9][0-9.,]*(?P<n>)(?:%|[^\S\n]?[^\W\d_]+)?[^\S\n]+"
    r"(?:to|and|-|\u2013|bis|à|et|y|e|tot|en)[^\S\n]*$",
    re.IGNORECASE,
)
_WORD_NEXT = re.compile(r"[^\S\n]*[^\W\d_]")


def _readings(token: NumberToken, text: str) -> list[Reading]:
    """What a number may be, as (value, unit) (see guards.units): one reading, or
    several for an ambiguous form ("46m": 46 million or 46 metres; "10pm": 22)."""
    value = token.value
    if value.startswith("words:"):
        return [(value, None)]
    written = token.text
    if written[:1].isdigit():  # most numbers: no sign or currency written before
        digit_at = token.start
    else:
        digit_at = token.start + next((i for i, c in enumerate(written) if c.isdigit()), 0)
    clock = _clock(token, text, digit_at)
    if clock:
        return clock
    currency = currency_before(text, digit_at)
    glued_m = currency is None and token.text[-1:] in "mM" and token.text[-2:-1].isdigit()
    unit = "cur:" + currency if currency else unit_after(text, token.end, glued_m)
    if unit is None and not glued_m:
        unit = _range_unit(token, text)
    if glued_m and unit is None:  # 46m: 46 million (a count or a sum) or 46 metres
        metres = format_value(_decimal(value).scaleb(-6))
        return [(value, "scaled"), (metres, "len:m")]
    return [(value, kind(text, token.start, unit))]


def _clock(token: NumberToken, text: str, digit_at: int) -> list[Reading]:
    """The readings of the hour or minute of a clock time (10.30am, 22h30, 10:30,
    10.30 Uhr): the hour as on a 24-hour clock (10pm may be written 22:00)."""
    after = _CLOCK_AFTER.match(text, token.end)
    # The minute after an hour ("10.30"): `_CLOCK_BEFORE` matches at most three characters
    # ending at the minute, so it is searched there only (its look-behind still sees the
    # character before), not from the text's start for every two-digit number.
    before = max(0, digit_at - 3)
    if (
        token.text.isdigit()
        and len(token.text) == 2
        and _CLOCK_BEFORE.search(text, before, digit_at)
    ):
        if text[digit_at - 1] != "." or _ampm_after(text, token.end):
            return [(token.value, "clock:min")]
    if after and token.text.isdigit() and int(token.value) <= 24:
        hour = int(token.value)
        if after.group("ap") and after.group("ap").lower() == "p" and hour < 12:
            return [(str(hour + 12), "clock"), (token.value, "clock")]
        return [(token.value, "clock")]
    return []


def _ampm_after(text: str, end: int) -> bool:
    return bool(re.match(r"[^\S\n]?(?:[ap]\.?m\b|uhr\b)", text[end : end + 6], re.IGNORECASE))


def _range_unit(token: NumberToken, text: str) -> str | None:
    """The unit a number shares with the other end of its range: "between 12 and
    17 per cent" (12 is a percentage), "31 votes to 17" (17 is a count of votes)."""
    nxt = _RANGE_NEXT.match(text, token.end)
    if nxt:
        return unit_after(text, nxt.end())
    if _WORD_NEXT.match(text, token.end):
        return None  # "4% and 17 were": 17 says what it is (or not), it does not inherit
    prev = _RANGE_PREV.search(text, max(0, token.start - 40), token.start)
    if prev:
        return unit_after(text, prev.start("n"))
    return None


class _Undecorated(NumberToken):
    """A source token given without its sign and scale (see `_source_digits`)."""

    __slots__ = ()


_undecorated = partial(tuple.__new__, _Undecorated)  # _Undecorated(*raw), without a frame


def _significant(value: str) -> str:
    """The significant digits of a value: a sign and a scale word change the
    value, never these, so a token whose digits differ cannot match (41200,
    41.2 thousand and -4.12 all give "412")."""
    return value.lstrip("~-").replace(".", "").strip("0")


class _SourceNumbers:
    """A source's numbers, read once per source and language (cached on its
    `SourceText`) and shared by every draft checked against it: its numbers in digits
    in order, read only as far as a draft needs (a faithful draft's are often near the
    top) and indexed by their significant digits, so the next draft's are looked up,
    not searched for; each one decorated (sign, scale) and read for its units the first
    time a draft asks for it (the costly part of a long source); its numbers in words,
    read when a draft first needs them.

    A token whose significant digits no draft number has cannot ground one (a sign
    and a scale word change a value, never these), so only the others are offered."""

    def __init__(self, folded: str, lang: str | None):
        self.folded = folded
        self.lang = lang
        self._unread: Iterator[NumberToken] | None = _raw_tokens(folded, lang)
        self.raws: list[NumberToken] = []
        self.sigs: list[str | None] = []  # each one's significant digits (None: ambiguous)
        self.by_digits: dict[str, list[int]] = {}
        self.ambiguous: list[int] = []  # a run grouped by a plain space: always offered
        self._expanded: dict[int, list[NumberToken]] = {}
        self._words: list[NumberToken] | None = None
        self._readings: dict[NumberToken, list[Reading]] = {}

    def _read_one(self) -> str | None:
        """Read and index the next number in digits of the source (`raws[-1]`): its
        significant digits ("*" for an ambiguous run), None at the source's end."""
        if self._unread is None:
            return None
        raw = next(self._unread, None)
        if raw is None:
            self._unread = None
            return None
        i = len(self.raws)
        self.raws.append(raw)
        if raw.ambiguous:
            self.ambiguous.append(i)
            self.sigs.append(None)
            return "*"
        sig = _significant(raw.value)
        self.sigs.append(sig)
        if sig in self.by_digits:
            self.by_digits[sig].append(i)
        else:
            self.by_digits[sig] = [i]
        return sig

    def _candidates(self, digits: set[str]) -> list[int]:
        """The tokens read so far (by position) that a draft number with one of these
        significant digits may be grounded by, in source order."""
        found = set(self.ambiguous)
        for d in digits:
            found.update(self.by_digits.get(d, ()))
        return sorted(found)

    def expanded(self, i: int) -> list[NumberToken]:
        """Token `i` decorated, and an ambiguous run's parts after it."""
        if i not in self._expanded:
            raw = self.raws[i]
            out = [_decorate(raw, self.folded, self.lang)]
            if raw.ambiguous:
                out += _split_ambiguous(raw, self.folded, self.lang)
            self._expanded[i] = out
        return self._expanded[i]

    def words(self) -> list[NumberToken]:
        if self._words is None:
            self._words = list(_word_numbers(self.folded, self.lang))
        return self._words

    def readings(self, token: NumberToken) -> list[Reading]:
        if token not in self._readings:
            self._readings[token] = _readings(token, self.folded)
        return self._readings[token]

    def seen(self, digits: set[str]) -> list[tuple[NumberToken, str]]:
        """Every number in digits, as `_closest` reads them, with its significant
        digits: the candidates decorated, the others as written (`_Undecorated`, their
        digits as indexed: a sign and a scale word change a value, never these)."""
        while self._read_one() is not None:
            pass
        chosen = set(self._candidates(digits))
        out: list[tuple[NumberToken, str]] = []
        for i, raw in enumerate(self.raws):
            if i in chosen:
                out += [(t, _significant(t.value)) for t in self.expanded(i)]
            else:
                sig = self.sigs[i]
                out.append((_undecorated(raw), _significant(raw.value) if sig is None else sig))
        return out

    def search(self, search: _Search, digits: set[str]) -> None:
        """Offer the source's numbers in order until every draft number is grounded:
        those in digits that may match (`digits`: the draft's significant digits),
        then (only when some are still missing) those in words."""
        for i in self._candidates(digits):
            for token in self.expanded(i):
                if search.offer(token, self.readings):
                    return
        while (sig := self._read_one()) is not None:
            if sig == "*" or sig in digits:
                for token in self.expanded(len(self.raws) - 1):
                    if search.offer(token, self.readings):
                        return
        for token in self.words():
            if search.offer(token, self.readings):
                return


def _source_numbers(read: SourceText, lang: str | None) -> _SourceNumbers:
    return read.derived(f"numbers:{lang}", lambda r: _SourceNumbers(r.folded.text, lang))


class _Wanted(NamedTuple):
    index: int  # which checked draft number
    unit: str | None


@dataclass
class _Search:
    """What the source is searched for: per key, the draft readings it may ground;
    per draft number, the source token that grounds it, or one with its value in
    another unit."""

    wanted: dict[str, list[_Wanted]]
    hits: dict[int, NumberToken]
    clashes: dict[int, tuple[NumberToken, str | None]]
    total: int

    def offer(self, token: NumberToken, read: Callable[[NumberToken], list[Reading]]) -> bool:
        """Try a source token (`read` gives its readings); True once every draft number
        is grounded."""
        readings = None
        for value in _candidate_values(token):
            for key in _keys(token, value):
                if key not in self.wanted:
                    continue
                if readings is None:
                    readings = read(token)
                for want in self.wanted[key]:
                    if want.index in self.hits:
                        continue
                    units = [u for v, u in readings if v == value]
                    if not units:
                        continue  # "£46m" is money: it has no reading as 46 (metres)
                    unit = units[0]
                    if compatible(want.unit, unit):
                        self.hits[want.index] = token
                    elif want.index not in self.clashes:
                        self.clashes[want.index] = (token, unit)
        return len(self.hits) == self.total


def _candidate_values(token: NumberToken) -> tuple[str, ...]:
    """The values a source token may be read as, before its unit is read: a glued
    "46m" is also 46 (metres)."""
    if token.text[-1:] in "mM" and token.text[-2:-1].isdigit():
        return (token.value, format_value(_decimal(token.value).scaleb(-6)))
    return (token.value,)


@dataclass(frozen=True)
class NumbersCheck:
    """The draft's checked numbers, each grounded in the passage or not."""

    evidence: list[dict[str, Any]]
    missing: list[str]  # as written, each once

    @property
    def passed(self) -> bool:
        return not self.missing


def ground_numbers(passage: str, text: str, language: str | None = None) -> NumbersCheck:
    """Ground every checked number of `text` in `passage`, by value and unit, with
    the rules of `numbers_grounded` (module docstring). Other gates use it to ask
    whether a claim's numbers are all in the passage that supports it.
    `language` is the item's, the passage's and the text's alike (a draft is written
    in its article's language); when None, each is detected from itself."""
    text = text or ""
    checked: list[NumberToken] = []
    readings: list[list[Reading]] = []
    for token in tokenise(text, language if language in LANGUAGES else None):
        own = _readings(token, text)
        if not is_checked(token) and not checked_unit(own):
            continue
        if own == [("0", "clock:min")]:
            continue  # the 00 of 10.00am is not a number the source must write
        checked.append(token)
        readings.append(own)
    if not checked:  # nothing to ground: the source is not read (not even folded)
        return NumbersCheck([], [])
    passage = passage or ""
    read = source_text(passage)
    folded = read.folded
    wanted: dict[str, list[_Wanted]] = {}
    for i, (token, own) in enumerate(zip(checked, readings, strict=True)):
        for value, unit in own:
            for key in _wanted(token, value):
                wanted.setdefault(key, []).append(_Wanted(i, unit))
    search = _Search(wanted, {}, {}, len(checked))
    seen: list[tuple[NumberToken, str]] | None = None  # the source's numbers for `_closest`
    lang = language or read.derived("numbers language", _numbers_language)
    numbers = _source_numbers(read, lang)
    digits = {_significant(k) for k in search.wanted}
    numbers.search(search, digits)
    evidence: list[dict[str, Any]] = []
    missing: list[str] = []
    for i, token in enumerate(checked):
        hit = search.hits.get(i)
        entry: dict[str, Any] = {
            "number": token.text,
            "value": token.value,
            "found": hit is not None,
            "draft_span": [token.start, token.end],
            "source_span": None,
            "source_text": None,
        }
        unit = readings[i][0][1]
        if unit is not None and len(readings[i]) == 1:
            entry["unit"] = describe(unit)
        if hit is not None:
            start, end = folded.span(hit.start, hit.end)
            entry |= {"source_span": [start, end], "source_text": passage[start:end]}
        else:
            if seen is None:
                seen = numbers.seen(digits)
            entry["closest_in_source"] = _closest(token, seen, folded, passage)
            written = token.text
            clash = search.clashes.get(i)
            if clash is not None:
                start, end = folded.span(clash[0].start, clash[0].end)
                if start and unicodedata.category(passage[start - 1]) == "Sc":
                    start -= 1  # show the currency: £48m
                entry["unit_mismatch"] = {
                    "number": passage[start:end],
                    "unit": describe(clash[1]),
                    "source_span": [start, end],
                }
                written = (
                    f"{token.text} (unit: {describe(unit)}; the source has "
                    f"{passage[start:end]}, {describe(clash[1])})"
                )
            if written not in missing:
                missing.append(written)
        evidence.append(entry)
    return NumbersCheck(evidence, missing)


def _closest(
    token: NumberToken, seen: list[tuple[NumberToken, str]], folded: Folded, passage: str
) -> dict[str, Any] | None:
    """The source number a missing one most likely stands for (the true figure):
    the same significant digits at another scale or sign first (1.2 million
    for 1.2bn), else the nearest value (read without sign and scale words, to
    stay cheap). For the auditor and the error analysis, never for grounding."""
    if token.value.startswith("words:"):
        return None
    want_digits = _significant(token.value)
    same = [c for c, sig in seen if sig == want_digits]
    if same:
        pool = [
            _decorate(NumberToken(*c), folded.text) if isinstance(c, _Undecorated) else c
            for c in same
        ]
    else:
        pool = [c for c, _ in seen if not c.value.startswith("words:")]
    if not pool:
        return None
    # Nearest by float: the same order as by Decimal but for values of more than 15
    # significant digits, at a fraction of the cost (one float per source number).
    want = float(token.value)
    distances = [abs(float(c.value) - want) for c in pool]
    hit = pool[distances.index(min(distances))]
    start, end = folded.span(hit.start, hit.end)
    return {"number": passage[start:end], "value": hit.value, "source_span": [start, end]}


def numbers_grounded(
    source: str, url: str | None, draft: str, *, language: str | None = None
) -> Verdict:
    """Fail when the draft writes a number (two or more digits) the source does not,
    or writes it with another unit (see guards.units). `language` is the source's
    (from the page or the feed); detected from the source text when None."""
    check = ground_numbers(source or "", draft or "", language)
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
