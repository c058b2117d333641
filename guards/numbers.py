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
5. Letters, currency, signs and units around a number do not change it: 61st
   is 61, 1890s is 1890, £45,000 is 45000, -12 and 12% are 12, 20-year-old is 20.

Only draft numbers written with two or more digits are checked (2.5 is, 7 is
not); every number of the source, single digits included, can ground one.
Number words ("twenty") are not numbers here: a draft that writes 20 where the
source wrote "twenty" fails, which is the safe direction for a hard gate.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from guards.text import ascii_digits
from guards.verdict import Verdict

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
# Any script's digits: a run with non-ASCII digits sends the text through `ascii_digits`.
_DIGIT_RUN = re.compile(r"\d+")


class NumberToken(NamedTuple):
    """A number as written (`start`/`end` offsets, `text`) and its canonical `value`."""

    start: int
    end: int
    text: str
    value: str
    digits: int


def canonical(integer: str, fraction: str = "") -> str:
    """Value as a string: integer digits without leading zeros, '.', decimals
    without trailing zeros (41,200 -> "41200", 3,50 -> "3.5", 07 -> "7")."""
    whole = _digits_of(integer).lstrip("0") or "0"
    fraction = fraction.rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def _digits_of(integer: str) -> str:
    return integer if integer.isdigit() else _NOT_DIGIT.sub("", integer)


def tokenise(text: str) -> list[NumberToken]:
    """Every number in `text`, in order, with offsets into `text` itself."""
    try:
        return list(_scan(text, text))
    except _OtherDigits:
        return list(_scan(ascii_digits(text), text))


class _OtherDigits(Exception):
    """Digits of another script: scan again after `ascii_digits` (same offsets)."""


# A run of digits is a whole number by itself unless it follows a dot (.45) or
# one of these and a digit follow it (41,200  8.7  41 200  10.30am  30.11.2026).
_SEPARATORS = frozenset(".,'\u2019\x20\u00a0\u2007\u2009\u202f")


def _scan(digits: str, text: str) -> Iterator[NumberToken]:
    """The numbers of `digits`, lazily, with written forms taken from `text`.

    Two steps for speed: a simple scan finds the runs of digits (a regex that
    starts with a character class is scanned quickly), then `_NUMBER` reads
    the whole number at each run not already part of the previous number
    (most runs are numbers by themselves and skip that step). Running
    `_NUMBER` over the whole text is several times slower. Being lazy lets
    the gate stop reading the source once every draft number is found."""
    end = 0
    for run in _DIGIT_RUN.finditer(digits):
        start, run_end = run.span()
        raw = run.group()
        if not raw.isascii():
            raise _OtherDigits
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
    return [NumberToken(start, end, text[start:end], value, len(integer) + len(fraction))]


def _part(text: str, match: re.Match[str], group: str) -> NumberToken:
    start, end = match.span(group)
    raw = match.group(group)
    return NumberToken(start, end, text[start:end], canonical(raw), len(raw))


def _first_occurrences(source: str, wanted: set[str]) -> dict[str, NumberToken]:
    """Where the source first writes each wanted value."""
    try:
        return _first_in(_scan(source, source), wanted)
    except _OtherDigits:
        return _first_in(_scan(ascii_digits(source), source), wanted)


def _first_in(tokens: Iterator[NumberToken], wanted: set[str]) -> dict[str, NumberToken]:
    """Reading stops once every wanted value is found: a faithful draft's
    numbers are usually near the top of the source."""
    found: dict[str, NumberToken] = {}
    for token in tokens:
        if token.value in wanted:
            found.setdefault(token.value, token)
            if len(found) == len(wanted):
                break
    return found


def numbers_grounded(source: str, url: str | None, draft: str) -> Verdict:
    """Fail when the draft writes a number (two or more digits) the source does not."""
    checked = [t for t in tokenise(draft or "") if t.digits >= 2]
    index = _first_occurrences(source or "", {t.value for t in checked}) if checked else {}
    evidence: list[dict[str, Any]] = []
    missing: list[str] = []
    for token in checked:
        hit = index.get(token.value)
        evidence.append(
            {
                "number": token.text,
                "value": token.value,
                "found": hit is not None,
                "draft_span": [token.start, token.end],
                "source_span": [hit.start, hit.end] if hit else None,
                "source_text": hit.text if hit else None,
            }
        )
        if hit is None and token.text not in missing:
            missing.append(token.text)
    if not evidence:
        return Verdict(GATE, True, "no numbers of two or more digits in the draft", evidence)
    if missing:
        # Counted as the reader sees them: "40" written twice is one missing number.
        distinct = {e["number"] for e in evidence}
        reason = (
            f"{len(missing)} of {len(distinct)} numbers not in the source: {'; '.join(missing)}"
        )
        return Verdict(GATE, False, reason, evidence)
    return Verdict(GATE, True, f"all {len(evidence)} numbers found in the source", evidence)
