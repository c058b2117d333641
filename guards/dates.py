"""dates_grounded: every date the draft states is a date the source states.

What the draft is held to, each kind on its own:

* a weekday ("on Friday", "Fridays", "Fri"): the source names the same weekday,
  in full or abbreviated as a newsroom does. "Tue", "Tues", "Thu", "Thur",
  "Thurs" and "Fri" (with or without a full stop) are read anywhere; "Mon",
  "Wed", "Weds", "Sat" and "Sun" are words or names too ("the board sat", "the
  Sun"), so they are read only capitalised and followed by a day and month
  ("Sat 11 January", "Sun., Jan. 12"). The draft is read the same way;
* a day with its month ("9 January", "January 9th", "Jan. 9", "9 Jan"): the
  source gives the same day and month in any of these styles or as an ISO date
  (2026-01-09) or slashed (09/01/2026, 09/01);
* a slashed date (12/03/2026, 03/11: two digits each, or with a year): day then
  month, or month then day, so it is grounded by either reading the source
  states (13/03 can only be 13 March); "1/2" is a fraction, not a date;
* a bare month after a preposition ("in March", "since April", "by mid-May";
  capitalised), or abbreviated there with its full stop ("in Sept.", "by Oct.";
  "Jan.", a first name too, after a word that takes a time, not a person: "in
  Jan.", "since Jan.", German "im Jan.", "seit Okt."; after "from", "by", "before",
  "after" when no capitalised word follows, "from Jan. onwards", not "from Jan.
  Olde"): the source names that month (capitalised, in any style), or, for "from
  Jan." and the like, a person Jan ("Jan Orrick": the first name reading);
* a month with its year ("January 2026", "9 January 2026"): the source gives
  that month and year together, in words, as an ISO date or slashed with that
  year in four digits or its last two (12/03/2026 and 12/03/26 give March 2026, or
  December 2026 read month first);
* a relative day ("yesterday", "today", "tomorrow", "tonight", "last night",
  "this/last/next week", "...weekend", "...month", "...year"): the source uses
  the same words.

A weekday or a relative day the source gives to another event is flagged: when
the words before the date in its clause (the event: "the last crossing is on
Friday") match no clause of the source where that date stands, but do match a
clause of the source without it ("the service resumes on 12 March"), the draft
moved the date to another event. A draft whose event words the source does
not have at all is given the benefit of the doubt.
A weekday never grounds a calendar date nor the other way round: turning a
source's "on Tuesday" into "on 9 January" needs a calendar the source does
not give. Month names count only when capitalised (the verbs may and march).

Other languages: French, German, Spanish, Italian and Dutch dates are read too
("9 janvier", "9. Januar", "9 de enero", "en mars", "vendredi", "gestern"; see
`_FOREIGN`), in a draft and in a source, and compared by value, so a date grounds
the same date in any language. Abbreviated months ("Sept.", "janv.", "Mrz.", "ene.",
"gen.", "mrt.": `_ABBREVIATED`) are read with their full stop beside a day or a year.
A text is read in English and in its own language only (declared by the feed or page,
or detected; a short draft takes its source's).
Evidence: per date, the words, the kind and value compared, and where the
source has it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from guards.quotes import _source
from guards.sourcetext import SourceText, source_text
from guards.text import Normalised, lowers_as_ascii, non_ascii
from guards.units import detect_language
from guards.verdict import Verdict, all_found

GATE = "dates_grounded"

_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH = (
    r"(?P<{g}>jan(?:uary|\.)?|feb(?:ruary|\.)?|mar(?:ch|\.)?|apr(?:il|\.)?|may|june?|july?|"
    r"aug(?:ust|\.)?|sep(?:t(?:ember|\.)?|\.)?|oct(?:ober|\.)?|nov(?:ember|\.)?|dec(?:ember|\.)?)"
)
_DAY = r"(?P<{g}>[0-3]?[0-9])(?:st|nd|rd|th)?"
# The year after a month, on its line or the next; never after a blank line (the next
# paragraph's first word: "on 9 January<blank line>2026 was...").
_YEAR = r"(?:,?(?:[^\S\n]*\n)?[^\S\n]*(?<=\s)(?P<{g}>(?:1[89]|20)[0-9]{{2}}))?"
_CALENDAR = re.compile(
    r"\b(?:"
    + _DAY.format(g="d1") + r"\s+(?:of\s+)?" + _MONTH.format(g="m1") + _YEAR.format(g="y1")
    + r"|" + _MONTH.format(g="m2") + r"\s+" + _DAY.format(g="d2") + r"(?![0-9])"
    + _YEAR.format(g="y2")
    + r"|" + _MONTH.format(g="m3") + r",?\s+(?P<y3>(?:1[89]|20)[0-9]{2})"
    + r")(?![\w])",
    re.IGNORECASE,
)  # fmt: skip
_ISO = re.compile(r"\b(?P<y>(?:1[89]|20)[0-9]{2})-(?P<m>[01][0-9])-(?P<d>[0-3][0-9])\b")
_WEEKDAY_FULL = re.compile(
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b", re.IGNORECASE
)
# Full names only in the source: "thus", "sat" and "wed" are words too.
_SOURCE_WEEKDAY = re.compile(
    r"\b(?P<w>mon|tue|wed|thu|fri|sat|sun)(?:day|sday|nesday|rsday|urday)s?\b"
)
# Abbreviated weekdays: the unambiguous ones anywhere, the others only as a date's
# weekday (see the module).
_WEEKDAY_ABBREVIATION = re.compile(
    r"\b(?P<w>tues?|thur?s?|fri|mon|weds?|sat|sun)\b\.?", re.IGNORECASE
)
_UNAMBIGUOUS = frozenset({"tue", "tues", "thu", "thur", "thurs", "fri"})
_THEN_DATE = re.compile(r"\.?,?\s+")  # "Sat 11 Jan", "Sat. 11 Jan", "Sat., Jan. 11"
_RELATIVE = re.compile(
    r"\b(?:yesterday|today|tomorrow|tonight|last night|"
    r"(?:this|last|next)\s+(?:week|weekend|month|year|morning|afternoon|evening))\b",
    re.IGNORECASE,
)


_SLASHED = re.compile(
    r"(?<![\d/])(?P<a>[0-3]?[0-9])/(?P<b>[01]?[0-9])(?:/(?P<y>(?:19|20)?[0-9]{2}))?(?![\d/])"
)
_BARE_MONTH = re.compile(
    r"\b(?:(?i:in|since|until|till|by|from|during|before|after|early|late|mid|last|next|this|"
    r"end\s+of|start\s+of|beginning\s+of)[\s-]+"
    r"(?:(?P<m>January|February|March|April|May|June|July|August|September|October|November|"
    r"December)\b|(?P<a>Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.)"
    # "Jan." is also a first name: a month after words that take a time, not a person
    # ("in Jan.", "since Jan.", "mid-Jan."), and after "from", "by", "before", "after"
    # unless a capitalised word follows ("from Jan. onwards"; not "from Jan. Olde", nor
    # "by Jan. The crowd cheered": a name may end the sentence). After those it may
    # still be the name: `_JAN_THE_NAME` grounds it as well.
    r"|(?i:in|since|until|till|during|early|late|mid|last|next|this|"
    r"end\s+of|start\s+of|beginning\s+of)[\s-]+(?P<j>Jan)\."
    r"|(?i:from|by|before|after)\s+(?P<p>Jan)\.(?!\s*[A-Z]))(?![\s,]*[0-9])"
)
# A source naming a person Jan: "Jan" with no full stop (which an abbreviated month
# has) and no day or year after it ("Jan Orrick", "Jan's").
_JAN_THE_NAME = re.compile(r"\bJan\b(?!\.)(?![\s,]*[0-9])")
_FIRST_NAME_BEFORE = re.compile(r"\b(?i:from|by|before|after)\s+$")
# A bare month may be abbreviated with its full stop ("in Sept.", "by Oct."), capitalised;
# "Jan." only where it cannot be the first name (above); "May" has no abbreviation.
_BARE_ABBREVIATIONS = ("Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct",
                       "Nov", "Dec")  # fmt: skip
WEEKDAY_NAMES = "monday tuesday wednesday thursday friday saturday sunday".split()
_MONTH_NAMES = (
    "january february march april may june july august september october november december"
).split()


class DateMention(NamedTuple):
    start: int
    end: int
    kind: str  # weekday, day_month, month_year, relative, month
    value: str  # what is compared: "thu", "9-1" ("12-3|3-12" for 12/03), "1-2026", "3"


def _slashed_readings(m: re.Match[str]) -> list[str]:
    """ "day-month" readings of a slashed date: day first, then month first."""
    a, b = int(m.group("a")), int(m.group("b"))
    out = []
    for day, month in ((a, b), (b, a)):
        if 1 <= day <= 31 and 1 <= month <= 12 and f"{day}-{month}" not in out:
            out.append(f"{day}-{month}")
    return out


def _slashed(text: str) -> list[DateMention]:
    out = []
    if "/" not in text:
        return out
    for m in _SLASHED.finditer(text):
        if m.group("y") is None and (len(m.group("a")) < 2 or len(m.group("b")) < 2):
            continue  # 1/2 is a fraction
        readings = _slashed_readings(m)
        if readings:
            out.append(DateMention(m.start(), m.end(), "day_month", "|".join(readings)))
    return out


def _month(word: str | None) -> int | None:
    return _MONTHS.get(word[:3].lower()) if word else None


def _calendar_match(m: re.Match[str]) -> list[DateMention]:
    """The day-and-month and month-and-year one `_CALENDAR` match states."""
    word = m.group("m1") or m.group("m2") or m.group("m3")
    month = _month(word)
    day = m.group("d1") or m.group("d2")
    year = m.group("y1") or m.group("y2") or m.group("y3")
    out = []
    if day and 1 <= int(day) <= 31:
        out.append(DateMention(m.start(), m.end(), "day_month", f"{int(day)}-{month}"))
    if year:
        out.append(DateMention(m.start(), m.end(), "month_year", f"{month}-{year}"))
    return out


def _calendar(text: str, *, strict_case: bool, low: str | None = None) -> list[DateMention]:
    """The calendar dates of `text`; with `low` (`text` lower-cased, ASCII) the
    case-sensitive twin of the pattern runs over it, twice as fast (see `_LOWER`)."""
    out = []
    for m in _near_months(low) if low is not None else _CALENDAR.finditer(text):
        group = "m1" if m.group("m1") else "m2" if m.group("m2") else "m3"
        if strict_case and not text[m.start(group)].isupper():
            continue  # "may", "march": verbs
        out += _calendar_match(m)
    return out


def _is_weekday_abbreviation(text: str, m: re.Match[str], original: str | None = None) -> bool:
    """Whether an `_WEEKDAY_ABBREVIATION` match of `text` is a weekday: unambiguous,
    or capitalised (in `original`, the same span's text before folding) and
    followed by a day and month."""
    word = m.group("w").lower()
    if word in _UNAMBIGUOUS:
        return True
    if not (original or m.group("w"))[0].isupper():
        return False
    after = _THEN_DATE.match(text, m.end("w"))
    date = _CALENDAR.match(text, after.end()) if after else None
    return bool(date and (date.group("d1") or date.group("d2")))


# What each pattern of `find_dates` needs in a lower-cased ASCII draft: each of the
# case-insensitive patterns above scans every position of the text (sre has no
# literal prefix to skip to), so a pattern is run only when a word it needs is
# there (found with str.find, then read whole: "mayor" names no month). Only for
# ASCII text: there `str.lower` folds case exactly as re.IGNORECASE does (which
# also reads the Kelvin sign as "k" and long s as "s").
_MONTH_HINTS = tuple(_MONTHS)  # every spelling in _MONTH starts with one of these
_MONTH_SPELLINGS = frozenset(_MONTH_NAMES) | set(_MONTHS) | {"sept"}
_WEEKDAY_HINTS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_WEEKDAY_SPELLINGS = frozenset(
    [*WEEKDAY_NAMES, *(w + "s" for w in WEEKDAY_NAMES), *_WEEKDAY_HINTS]
    + ["tues", "thus", "thur", "thurs", "weds"]
)
_RELATIVE_HINTS = ("yesterday", "today", "tomorrow", "tonight", "this", "last", "next")
_RELATIVE_SPELLINGS = frozenset(_RELATIVE_HINTS)
_CAPITALISED_MONTHS = tuple(m.capitalize() for m in _MONTH_NAMES)
_ANY_DIGIT = re.compile(r"[0-9]")
_LETTERS = re.compile(r"[a-z]+")


# The words of a draft, for the prefilter: each run of ASCII letters that no letter, digit
# or "_" precedes (lower-cased), and each capitalised run of them. Read in one C pass each
# (`findall`), then compared as sets; a word these find that a pattern would not read
# (after a non-ASCII letter: "éjanvier") only makes the pattern run, never skips it.
# Written letter first, then the look-behind (two characters back: the one before the
# letter), so that `re` may skip to the next letter in C instead of trying the
# look-behind at every position; the same matches as "(?<![a-z0-9_])[a-z]+".
_WORD_START = re.compile(r"[a-z](?<![a-z0-9_][a-z])[a-z]*")
_CAPITALISED_RUN = re.compile(r"[A-Z][a-z]+")
_BARE_MONTH_WORDS = frozenset(_CAPITALISED_MONTHS + _BARE_ABBREVIATIONS)


def find_dates(
    draft: str,
    *,
    prefilter: bool = True,
    language: str | None = None,
    fallback: Callable[[], str | None] | None = None,
) -> list[DateMention]:
    """The dates the draft states (see the module docstring), in English and in the
    draft's language: `language`, its item's as the feed or page declared it (a draft
    is written in its article's language: a French quotation in an English draft is
    not read as French); when None, the one detected from the draft, else
    `fallback()` (the source's) for a draft too short to tell. `prefilter` skips a
    pattern whose words are not in the draft (same result, see `_MONTH_HINTS`)."""
    # The draft lower-cased once, for both prefilters (English words, other languages').
    low = draft.lower() if prefilter else None
    found = _english_dates(draft, low)
    if low is not None and not _may_be_foreign(low):
        return sorted(found)
    own = language or detect_language(draft) or (fallback() if fallback else None)
    for lang in _languages(own):
        found += [d for d in _foreign_dates(draft, lang) if d.kind != "month name"]
    return sorted(found)


_DAY_REACH = 16  # characters a calendar match may start before its month word ("31st of ")
_DAY_CHARS = frozenset("0123456789stndrhof")  # those of a day, its ordinal suffix and "of"
_MONTH_REACH = 40  # and run on after it (", 2026")


def _near_months(low: str) -> Iterator[re.Match[str]]:
    """`_CALENDAR.finditer` over a lower-cased ASCII text, searched only around its
    month words (every match has one; a scan of every position costs several times
    more): from `_DAY_REACH` characters before each to `_MONTH_REACH` after, a match
    that reaches the window's end read again over the whole text."""
    pattern = _LOWER[_CALENDAR]
    months = sorted(
        i
        for hint in _MONTH_HINTS
        for i in _word_starts(low, hint)
        if _LETTERS.match(low, i).group() in _MONTH_SPELLINGS  # type: ignore[union-attr]
    )
    end = 0
    for i in months:
        # The day may stand further back when spaces pad it ("31st      dec"): the match
        # starts no earlier than the run of spaces and day characters before the month.
        k = i
        while k > end and (low[k - 1].isspace() or low[k - 1] in _DAY_CHARS):
            k -= 1
        pos = max(end, min(i - _DAY_REACH, k))
        while pos <= i:
            window = min(len(low), i + _MONTH_REACH)
            m = pattern.search(low, pos, window)
            if m is None or m.start() > i:
                break
            if m.end() >= window - 1:  # it may go on: read it whole
                full_start = m.start()
                m = pattern.match(low, full_start)
                if m is None:
                    pos = full_start + 1
                    continue
            yield m
            end = m.end()
            break


def _word_starts(low: str, hint: str) -> Iterator[int]:
    i = low.find(hint)
    while i >= 0:
        if not (i and (low[i - 1].isalnum() or low[i - 1] == "_")):
            yield i
        i = low.find(hint, i + 1)


# The words a match of each case-insensitive draft pattern starts with (the other
# spellings begin with one of these: "tues", "thurs", "mondays", "last night").
_HEADS = {
    _WEEKDAY_FULL: tuple(WEEKDAY_NAMES),
    _WEEKDAY_ABBREVIATION: ("tue", "thu", "fri", "mon", "wed", "sat", "sun"),
    _RELATIVE: ("yesterday", "today", "tomorrow", "tonight", "last", "this", "next"),
}


def _matches_at_heads(pattern: re.Pattern[str], low: str) -> Iterator[re.Match[str]]:
    """`_LOWER[pattern].finditer(low)` over a lower-cased text, tried only where one of
    its head words (`_HEADS`) occurs (`str.find`): every match starts at one, so these
    are the same matches, without a `re` scan of every position (one per pattern)."""
    starts = []
    for head in _HEADS[pattern]:
        i = low.find(head)
        while i >= 0:
            starts.append(i)
            i = low.find(head, i + 1)
    match = _LOWER[pattern].match
    end = 0
    for i in sorted(starts):
        if i < end:
            continue  # inside the previous match (finditer's matches never overlap)
        m = match(low, i)
        if m is not None:
            yield m
            end = m.end()


def _english_dates(draft: str, lowered: str | None) -> list[DateMention]:
    """The English dates of `draft`; `lowered` (`draft.lower()`, None: no prefilter)
    lets the patterns whose words the draft lacks be skipped."""
    prefilter = lowered is not None
    low = None
    if prefilter and lowers_as_ascii(draft):
        low = lowered
        words = set(_WORD_START.findall(low))
        calendar = _ANY_DIGIT.search(draft) is not None
        calendar = calendar and not words.isdisjoint(_MONTH_SPELLINGS)
        weekday = not words.isdisjoint(_WEEKDAY_SPELLINGS)
        relative = not words.isdisjoint(_RELATIVE_SPELLINGS)
    else:
        calendar = weekday = relative = True
    # Over an ASCII draft, the case-insensitive patterns run as their case-sensitive
    # twins over the lower-cased text (same matches, see `_LOWER`), the case of a
    # match read from the draft.
    text = draft if low is None else low

    def scan(pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        return pattern.finditer(text) if low is None else _matches_at_heads(pattern, low)

    # `_BARE_MONTH` needs a capitalised month ("May" of "Mayor" is not one), or "Sept.".
    bare_month = not prefilter or not _BARE_MONTH_WORDS.isdisjoint(_CAPITALISED_RUN.findall(draft))
    found = (_calendar(draft, strict_case=True, low=low) if calendar else []) + _slashed(draft)
    for m in _BARE_MONTH.finditer(draft) if bare_month else ():
        group = next(g for g in ("m", "a", "j", "p") if m.group(g))
        month = _MONTHS[m.group(group)[:3].lower()]
        found.append(DateMention(m.start(group), m.end(), "month", str(month)))
    for m in scan(_WEEKDAY_FULL) if weekday else ():
        found.append(DateMention(m.start(), m.end(), "weekday", m.group()[:3].lower()))
    for m in scan(_WEEKDAY_ABBREVIATION) if weekday else ():
        if _is_weekday_abbreviation(text, m, draft[m.start("w") : m.end("w")]):
            found.append(DateMention(m.start(), m.end(), "weekday", m.group("w")[:3].lower()))
    for m in scan(_RELATIVE) if relative else ():
        found.append(
            DateMention(m.start(), m.end(), "relative", " ".join(m.group().lower().split()))
        )
    return found


# --- the other languages the gates read (guards.units.LANGUAGES) -------------------
# Per language: month names, weekday names (the English key of each), relative days
# (the English word each stands for), and the prepositions before a bare month.
# Left out on purpose, being other words too: German "morgen" (also "Morgen", the
# morning), Spanish "mañana" (also the morning), French "hier" is read only in French
# (Dutch and German "hier" is "here"); each language's words are read only in a
# text of that language (declared, or detected from the text; English always).
_FOREIGN: dict[str, tuple[str, dict[str, int], dict[str, str], dict[str, str]]] = {
    "fr": (
        r"en|depuis|dès|jusqu['’]en|début|fin|mi|courant|avant|après",
        dict(janvier=1, février=2, fevrier=2, mars=3, avril=4, mai=5, juin=6, juillet=7,
             août=8, aout=8, septembre=9, octobre=10, novembre=11, décembre=12,
             decembre=12),
        dict(lundi="mon", mardi="tue", mercredi="wed", jeudi="thu", vendredi="fri",
             samedi="sat", dimanche="sun"),
        {"hier": "yesterday", "aujourd'hui": "today", "aujourd’hui": "today",
         "demain": "tomorrow", "ce soir": "tonight"},
    ),
    "de": (
        r"im|seit|bis|ab|anfang|ende|mitte|vor|nach",
        dict(januar=1, jänner=1, februar=2, märz=3, maerz=3, april=4, mai=5, juni=6,
             juli=7, august=8, september=9, oktober=10, november=11, dezember=12),
        dict(montag="mon", dienstag="tue", mittwoch="wed", donnerstag="thu",
             freitag="fri", samstag="sat", sonnabend="sat", sonntag="sun"),
        {"gestern": "yesterday", "heute": "today", "übermorgen": "the day after tomorrow",
         "vorgestern": "the day before yesterday"},
    ),
    "es": (
        r"en|desde|hasta|para|a\s+finales\s+de|a\s+principios\s+de|a\s+mediados\s+de",
        dict(enero=1, febrero=2, marzo=3, abril=4, mayo=5, junio=6, julio=7, agosto=8,
             septiembre=9, setiembre=9, octubre=10, noviembre=11, diciembre=12),
        dict(lunes="mon", martes="tue", miércoles="wed", miercoles="wed", jueves="thu",
             viernes="fri", sábado="sat", sabado="sat", domingo="sun"),
        {"ayer": "yesterday", "hoy": "today", "esta noche": "tonight"},
    ),
    "it": (
        r"a|in|da|dal|entro|fino\s+a|inizio|fine|metà|prima\s+di|dopo",
        dict(gennaio=1, febbraio=2, marzo=3, aprile=4, maggio=5, giugno=6, luglio=7,
             agosto=8, settembre=9, ottobre=10, novembre=11, dicembre=12),
        {"lunedì": "mon", "lunedi": "mon", "martedì": "tue", "martedi": "tue",
         "mercoledì": "wed", "mercoledi": "wed", "giovedì": "thu", "giovedi": "thu",
         "venerdì": "fri", "venerdi": "fri", "sabato": "sat", "domenica": "sun"},
        {"ieri": "yesterday", "oggi": "today", "domani": "tomorrow", "stasera": "tonight"},
    ),
    "nl": (
        r"in|sinds|tot|vanaf|begin|eind|half|medio|voor|na",
        dict(januari=1, februari=2, maart=3, april=4, mei=5, juni=6, juli=7, augustus=8,
             september=9, oktober=10, november=11, december=12),
        dict(maandag="mon", dinsdag="tue", woensdag="wed", donderdag="thu", vrijdag="fri",
             zaterdag="sat", zondag="sun"),
        {"gisteren": "yesterday", "vandaag": "today", "morgen": "tomorrow",
         "vanavond": "tonight"},
    ),
}  # fmt: skip
# Abbreviated month names as each language's newsrooms write them, without their full
# stop (a month only with it, and beside a day or a year: "14 sept. 2026", "am 2. Mrz.";
# "sept" is also seven, "mar." the sea, "gen." a general). Months written in full only
# (mars, mai, juin, août; Mai; mayo in Spain is also "may.") have none, or theirs here.
_ABBREVIATED: dict[str, dict[str, int]] = {
    "fr": dict(janv=1, févr=2, fevr=2, fév=2, fev=2, avr=4, juil=7, sept=9, oct=10, nov=11,
               déc=12, dec=12),
    "de": dict(jan=1, jän=1, feb=2, febr=2, mrz=3, apr=4, jun=6, jul=7, aug=8, sep=9,
               sept=9, okt=10, nov=11, dez=12),
    "es": dict(ene=1, feb=2, mar=3, abr=4, may=5, jun=6, jul=7, ago=8, sep=9, sept=9,
               set=9, oct=10, nov=11, dic=12),
    "it": dict(gen=1, feb=2, mar=3, apr=4, mag=5, giu=6, lug=7, ago=8, set=9, sett=9,
               ott=10, nov=11, dic=12),
    "nl": dict(jan=1, feb=2, mrt=3, apr=4, jun=6, jul=7, aug=8, sep=9, sept=9, okt=10,
               nov=11, dec=12),
}  # fmt: skip
# An abbreviated month is a bare month too after the words that take only a time: German
# "im Jan.", "seit Okt.", "bis Mitte Dez." (no person is "im Jan."). In the other languages
# an abbreviation is another word as well ("sept." seven, "mar." the sea, "gen." a
# general) and is read only beside a day or a year.
_BARE_ABBREVIATED_AFTER = {"de": r"im|seit|bis|ab|anfang|ende|mitte"}
# Every month word of a language, keyed as a match reads lower-cased ("janv." with its stop).
_MONTHS_OF = {
    lang: table[1] | {abbr + ".": n for abbr, n in _ABBREVIATED[lang].items()}
    for lang, table in _FOREIGN.items()
}


def _alternation(words) -> str:
    return "|".join(
        re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True)
    )


def _foreign_patterns(lang: str) -> tuple[re.Pattern[str], ...]:
    prepositions, months, weekdays, relative = _FOREIGN[lang]
    month = _alternation(months)  # in full: a bare month, a month named anywhere
    dated = _alternation(_MONTHS_OF[lang])  # beside a day or a year: abbreviated too
    year = r"(?:1[89]|20)[0-9]{2}"
    calendar = re.compile(
        rf"\b(?:(?P<d>[0-3]?[0-9])(?:er|\.|º|°)?\s+(?:de\s+)?(?P<m1>{dated})"
        rf"(?:,?\s+(?:de\s+)?(?P<y1>{year}))?|(?P<m2>{dated}),?\s+(?:de\s+)?(?P<y2>{year}))(?!\w)",
        re.IGNORECASE,
    )
    abbreviated = ""
    if lang in _BARE_ABBREVIATED_AFTER:
        stops = _alternation(abbr + "." for abbr in _ABBREVIATED[lang])
        abbreviated = rf"|(?:{_BARE_ABBREVIATED_AFTER[lang]})[\s-]+(?P<a>{stops})"
    bare = re.compile(
        rf"\b(?:(?:{prepositions})[\s-]+(?P<m>{month})(?!\w){abbreviated})(?![\s,]*[0-9])",
        re.IGNORECASE,
    )
    names = re.compile(rf"\b(?:{month})(?!\w)", re.IGNORECASE)
    day = re.compile(rf"\b(?:{_alternation(weekdays)})s?(?!\w)", re.IGNORECASE)
    rel = re.compile(rf"\b(?:{_alternation(relative)})(?!\w)", re.IGNORECASE)
    return calendar, bare, names, day, rel


_FOREIGN_PATTERNS = {lang: _foreign_patterns(lang) for lang in _FOREIGN}


def _languages(*given: str | None) -> list[str]:
    """The other languages (not English: always read) among `given`, once each."""
    return [lang for lang in dict.fromkeys(given) if lang in _FOREIGN]


def _detected(read: SourceText) -> str | None:
    return detect_language(read.text)


def _source_dates(read: SourceText, language: str | None) -> list[DateMention]:
    """The source's dates in its own language (declared, and detected), read once."""
    return [
        f
        for lang in _languages(language, read.derived("language", _detected))
        for f in read.derived(
            "dates:" + lang, lambda r, lang=lang: _foreign_dates(r.norm.text, lang)
        )
    ]


# Every word of `_FOREIGN`'s months, weekdays and relative days: a draft without one
# of them has no date in another language to read (and its language is not asked).
_FOREIGN_WORDS = frozenset(
    w.lower().replace("’", "'")
    for _, *tables in _FOREIGN.values()
    for t in tables
    for p in t
    for w in p.split()
)
# As `_LOWER_WORD` reads them, with the full stop after a word: the words above with or
# without one, the abbreviated months (`_ABBREVIATED`) only with theirs.
_FOREIGN_HINTS = (
    _FOREIGN_WORDS
    | {w + "." for w in _FOREIGN_WORDS}
    | {abbr + "." for table in _ABBREVIATED.values() for abbr in table}
)
_LOWER_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?\.?")
# `_LOWER_WORD` over a lower-cased text whose letters are all ASCII. `[^\W\d_]` is a
# letter or a digit that is not a decimal one (Python docs, re: "\w ... matches Unicode
# word characters; this includes alphanumeric characters (as defined by str.isalnum())
# as well as the underscore", https://docs.python.org/3/library/re.html); where no
# other character is alphanumeric (curly quotes, dashes, a euro sign), that is [a-z]:
# the same words, found by a range test instead of a Unicode category look-up for each
# character (about half the instructions).
_ASCII_LOWER_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?\.?")


def _lower_words(low: str) -> list[str]:
    """`_LOWER_WORD.findall(low)` over a lower-cased text."""
    letters_ascii = low.isascii() or not any(c.isalnum() for c in non_ascii(low))
    return (_ASCII_LOWER_WORD if letters_ascii else _LOWER_WORD).findall(low)


def _may_be_foreign(low: str) -> bool:
    """Whether a lower-cased draft has a word of another language's dates."""
    return not _FOREIGN_HINTS.isdisjoint(_lower_words(low.replace("’", "'")))


# The case-insensitive patterns read from a lower-cased ASCII text: their literals
# are lower case, and over ASCII re.IGNORECASE folds exactly as str.lower does, so
# the case-sensitive twin finds the same matches, about twice as fast.
_LOWER = {
    p: re.compile(p.pattern, p.flags & ~re.IGNORECASE)
    for p in (_CALENDAR, _WEEKDAY_FULL, _WEEKDAY_ABBREVIATION, _RELATIVE)
}


def _foreign_dates(text: str, lang: str) -> list[DateMention]:
    """The dates `text` states in `lang` (see `_FOREIGN`): day and month, month and
    year, a bare month after a preposition, a weekday, a relative day; a month named
    anywhere is also listed, as kind "month name" (only a source's are looked up)."""
    calendar, bare, names, day, rel = _FOREIGN_PATTERNS[lang]
    _, months, weekdays, relative = _FOREIGN[lang]
    found = []
    for m in calendar.finditer(text):
        word = m.group("m1") or m.group("m2")
        month = _MONTHS_OF[lang][word.lower()]
        if word.endswith("."):  # an abbreviated month names its month as the full name does
            found.append(DateMention(m.start(), m.end(), "month name", str(month)))
        if m.group("d") and 1 <= int(m.group("d")) <= 31:
            found.append(
                DateMention(m.start(), m.end(), "day_month", f"{int(m.group('d'))}-{month}")
            )
        year = m.group("y1") or m.group("y2")
        if year:
            found.append(DateMention(m.start(), m.end(), "month_year", f"{month}-{year}"))
    for m in bare.finditer(text):
        group = "m" if m.group("m") else "a"
        month = _MONTHS_OF[lang][m.group(group).lower()]
        found.append(DateMention(m.start(group), m.end(group), "month", str(month)))
    for m in names.finditer(text):
        found.append(DateMention(m.start(), m.end(), "month name", str(months[m.group().lower()])))
    for m in day.finditer(text):
        word = m.group().lower()
        found.append(
            DateMention(m.start(), m.end(), "weekday", weekdays.get(word) or weekdays[word[:-1]])
        )
    for m in rel.finditer(text):
        phrase = " ".join(m.group().lower().split())
        found.append(DateMention(m.start(), m.end(), "relative", relative[phrase]))
    return found


def _foreign_in_source(d: DateMention, foreign: list[DateMention]) -> tuple[int, int] | None:
    """Where the source states `d` in its own language (`foreign`: its dates there)."""
    values = set(d.value.split("|"))
    kinds = ("month", "month name") if d.kind == "month" else (d.kind,)
    for f in foreign:
        if f.kind in kinds and f.value in values:
            return f.start, f.end
    return None


_MONTH_WORDS = {
    1: "jan", 2: "feb", 3: "mar", 4: "apr", 5: "may", 6: "jun",
    7: "jul", 8: "aug", 9: "sep", 10: "oct", 11: "nov", 12: "dec",
}  # fmt: skip


def _source_weekday(norm: Normalised, source: str, value: str) -> tuple[int, int] | None:
    """Where the folded source names the weekday `value` ("thu"): in full, else
    abbreviated (`_is_weekday_abbreviation`, case read from the original)."""
    text = norm.text
    full = _around(text, value, _SOURCE_WEEKDAY, lambda m: m.group("w") == value, 0)
    if full:
        return full
    for m in _WEEKDAY_ABBREVIATION.finditer(text):
        if m.group("w")[:3] != value:
            continue
        start, end = norm.original_span(*m.span("w"))
        if _is_weekday_abbreviation(text, m, source[start:end]):
            return m.span()
    return None


def _word_first(word: str, rest: str) -> str:
    r"""The pattern `\b{word}{rest}` for a `word` that starts with a word character,
    written to start with the word itself: `re` skips from one occurrence of a leading
    literal to the next in C, where a pattern that starts with `\b` is tried at every
    position of the source (some 190 µs over a 2,000-word one, to find "yesterday").
    Before a word character `\b` says that the character before is not one ("the
    boundary between a \w and a \W character ... or between \w and the beginning ...
    of the string"), which is what the look-behind after the word asks: the same
    matches (a look-behind's "contained pattern must only match strings of some fixed
    length": one character and the word; https://docs.python.org/3/library/re.html)."""
    literal = re.escape(word)
    return rf"{literal}(?<!\w{literal}){rest}"


def _phrase(value: str) -> str:
    r"""A relative date's words ("last week") as a pattern, any space between them:
    `\blast\s+week\b` (`_word_first`)."""
    first, *others = value.split()
    return _word_first(first, "".join(rf"\s+{re.escape(w)}" for w in others) + r"\b")


def _find_in_source(text: str, d: DateMention) -> tuple[int, int] | None:
    """Where the folded source states what `d` states, or None.

    Each kind is looked for from a literal the source must contain (the weekday
    or month stem, the year, the phrase), found with `str.find`; the date
    patterns then run only around those places. Scanning a long source with
    the full date pattern costs several milliseconds."""
    if d.kind == "weekday":
        return _around(text, d.value, _SOURCE_WEEKDAY, lambda m: m.group("w") == d.value, 0)
    if d.kind == "relative":
        m = re.search(_phrase(d.value), text)
        return m.span() if m else None
    if d.kind == "day_month" and "|" in d.value:
        for value in d.value.split("|"):
            span = _find_in_source(text, d._replace(value=value))
            if span:
                return span
        return None
    if d.kind == "month":
        return _month_in_source(text, int(d.value))
    if d.kind == "day_month":
        day, month = (int(x) for x in d.value.split("-"))
        for m in _slashed(text):
            if d.value in m.value.split("|"):
                return m.start, m.end
        iso = text.find(f"-{month:02d}-{day:02d}")
        if iso >= 4 and _ISO.match(text, iso - 4):
            return iso - 4, iso + 6
        return _around(text, _MONTH_WORDS[month], _CALENDAR, lambda m: _states(m, d), 12)
    month, year = d.value.split("-")
    iso = text.find(f"{year}-{int(month):02d}-")
    if iso >= 0 and _ISO.match(text, iso):
        return iso, iso + 10
    in_words = _around(text, year, _CALENDAR, lambda m: _states(m, d), 24)
    return in_words or _slashed_in(text, int(month), year)


def _slashed_in(text: str, month: int, year: str) -> tuple[int, int] | None:
    """A slashed date of the folded source with that month (either reading: 12/03/2026 is
    12 March or 3 December) and that year, in four digits or its last two (12/03/26),
    which states the month and year."""
    if year[-2:] not in text or "/" not in text:
        return None
    for m in _SLASHED.finditer(text):
        if m.group("y") in (year, year[-2:]) and any(
            r.endswith(f"-{month}") for r in _slashed_readings(m)
        ):
            return m.span()
    return None


def _cased_month(norm: Normalised, source: str, month: int) -> tuple[int, int] | None:
    """`_month_in_source`, where a month name counts only capitalised in the original
    ("may" and "march" are verbs)."""
    text = norm.text
    pos = 0
    while (span := _month_in_source(text[pos:], month)) is not None:
        start, end = span[0] + pos, span[1] + pos
        original = source[norm.original_span(start, end)[0] : norm.original_span(start, end)[1]]
        if not original[:1].isalpha() or original[:1].isupper():
            return start, end
        pos = end
    return None


# Where a clause ends: a sentence end or ; : (not a decimal point or a digit group),
# or a comma that joins two clauses (", and", ", but"); a comma inside a list does not.
_CLAUSE_BREAK = re.compile(
    r"[.!?;:](?![0-9])|\n|,\s+(?:and|but|while|whereas|though|although|"
    r"et|mais|tandis|und|aber|während|y|pero|mientras|e|ma|mentre|en|maar|terwijl)\b"
)
_EVENT_STOP = frozenset(
    """
    this that with from will have been were said says they their there which what when
    also into over after before about would could should than then them these those
    monday tuesday wednesday thursday friday saturday sunday yesterday today tomorrow
    tonight week weekend month year morning afternoon evening night last next
    spoke speaks told tells added stated explained commented remarked speaking saying
    dans pour avec cette sont était être leur leurs aussi selon après avant depuis entre
    sous vers chez sera seront elle elles nous vous dass eine einen einem einer nicht
    sich wird wurde werden haben auch aber nach über unter wieder para como pero desde
    sobre este esta estos fueron será della delle dello degli sono stato anche come dopo
    prima sarà saranno voor zijn niet maar naar over deze werd wordt worden heeft
    """.split()
) | {  # the other languages' date words (`_FOREIGN`, `_ABBREVIATED`): they say when
    word
    for lang, (_, *tables) in _FOREIGN.items()
    for table in [*tables, _ABBREVIATED[lang]]
    for p in table
    for word in p.split()
}


def _clause(text: str, start: int, end: int) -> tuple[int, int]:
    window = max(0, start - 400)
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(text, window, start)]
    cs = breaks[-1] if breaks else window
    after = _CLAUSE_BREAK.search(text, end)
    return cs, after.start() if after else len(text)


_LONG_WORD = re.compile(r"[^\W\d_]{4,}")


def _stems(text: str) -> set[str]:
    """The event words of `text`: lower-case words of four letters or more, cut to five
    (names say who, not what happened; "Mr Salmond met" names no event)."""
    # An ASCII text's letters are [A-Za-z]: that class is scanned faster than [^\W\d_].
    words = (_ASCII_LONG_WORD if text.isascii() else _LONG_WORD).findall(text)
    return {w[:5] for w in words if w.islower() and w not in _EVENT_STOP}


_ASCII_LONG_WORD = re.compile(r"[A-Za-z]{4,}")


def _event(text: str, start: int, end: int) -> tuple[set[str], tuple[int, int]]:
    """(the event words before a date in its clause, the clause). The clause's other
    event words, after the date, are `_stems(text[end:clause_end])`: read only when the
    words before do not decide (`_same_event`)."""
    cs, ce = _clause(text, start, end)
    if not text[cs:start].strip(" ,") and cs > 1 and text[cs - 1] in ",:":
        cs = _clause(text, cs - 1, cs - 1)[0]  # "Board meeting: Thu 9 January": one event
    return _stems(text[cs:start]), (cs, ce)


_FULL_WEEKDAY = {w[:3]: w for w in WEEKDAY_NAMES}


def _occurrences(
    text: str,
    d: DateMention,
    foreign: list[DateMention] = (),  # type: ignore[assignment]
) -> list[tuple[int, int]]:
    """Where the folded source states the weekday or relative day `d`, in English or
    in its own language (`foreign`: the source's dates in that language)."""
    same = [(f.start, f.end) for f in foreign if (f.kind, f.value) == (d.kind, d.value)]
    if d.kind == "weekday":  # found with str.find: a regex over a long source costs more
        word, out, pos = _FULL_WEEKDAY[d.value], [], 0
        while (i := text.find(word, pos)) >= 0:
            pos = i + len(word)
            if not (i and text[i - 1].isalnum()):
                out.append((i, pos))
        return sorted(out + same)
    return sorted([m.span() for m in re.finditer(_phrase(d.value), text)] + same)


def _same_event(
    text: str,
    draft: str,
    d: DateMention,
    span: tuple[int, int],
    foreign: list[DateMention] = (),  # type: ignore[assignment]
) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """(where the source gives the date to the draft's event, or None; the clause of
    the source's date when it belongs to another event)."""
    # The draft's event words: those before its date, else all of its clause's.
    before, (_, draft_end) = _event(draft, d.start, d.end)
    key = before or _stems(draft[d.end : draft_end])
    if not key:
        return span, None
    clauses = []
    for occurrence in _occurrences(text, d, foreign) or [span]:
        s_before, clause = _event(text, *occurrence)
        clauses.append(clause)
        if before and s_before:
            same = not before.isdisjoint(s_before)
        else:  # the words of the source's whole clause
            same = not key.isdisjoint(s_before) or not key.isdisjoint(
                _stems(text[occurrence[1] : clause[1]])
            )
        if same:
            return occurrence, None
    elsewhere = any(
        key & stems
        for cs, ce, stems in _clause_stems(text)
        if not any(cs <= c[0] < ce for c in clauses)
    )
    if elsewhere:
        return None, clauses[0]  # the source's date belongs to another event
    return span, None  # the draft's words are not in the source: the benefit of the doubt


def _clause_stems(text: str) -> tuple[tuple[int, int, frozenset[str]], ...]:
    """Every clause of a source with its event words, once per source (guards.sourcetext)."""
    return source_text(text).derived("clause stems", lambda s: _read_clause_stems(s.text))


def _read_clause_stems(text: str) -> tuple[tuple[int, int, frozenset[str]], ...]:
    breaks = list(_CLAUSE_BREAK.finditer(text))
    ends = [m.start() for m in breaks] + [len(text)]
    starts = [0] + [m.end() for m in breaks]
    return tuple(
        (cs, ce, frozenset(_stems(text[cs:ce]))) for cs, ce in zip(starts, ends, strict=True)
    )


def _month_in_source(text: str, month: int) -> tuple[int, int] | None:
    """The folded source names the month: in full or abbreviated ("Mar."), in an
    ISO or slashed date. Capitalisation is checked by the caller (`_CASED`)."""
    name = _MONTH_NAMES[month - 1]
    # \b(?:september|sep\.|sept\.)(?!\w): the name, else its abbreviation (Sept.)
    short = r"\.|t\." if month == 9 else r"\."
    m = re.search(_word_first(name[:3], rf"(?:{name[3:]}|{short})(?!\w)"), text)
    if m:
        return m.span()
    iso = re.search(rf"\b(?:1[89]|20)[0-9]{{2}}-{month:02d}-[0-3][0-9]\b", text)
    if iso:
        return iso.span()
    for d in _slashed(text):
        if any(r.split("-")[1] == str(month) for r in d.value.split("|")):
            return d.start, d.end
    return None


def _states(m: re.Match[str], d: DateMention) -> bool:
    return any((x.kind, x.value) == (d.kind, d.value) for x in _calendar_match(m))


def _around(text: str, literal: str, pattern: re.Pattern[str], ok, back: int):
    """The first match of `pattern` starting up to `back` characters before an
    occurrence of `literal` that `ok` accepts."""
    pos = 0
    while (i := text.find(literal, pos)) >= 0:
        pos = i + 1
        for start in range(max(0, i - back), i + 1):
            m = pattern.match(text, start)
            if m and m.start() <= i < m.end() and ok(m):
                if start == 0 or not text[start - 1].isalnum():
                    return m.span()
    return None


def _may_be_jan_the_name(draft: str, d: DateMention) -> bool:
    """Whether a month the draft wrote "Jan." after "from", "by", "before" or "after"
    (where it may be the first name too)."""
    return (
        d.kind == "month"
        and draft.startswith("Jan.", d.start)
        and _FIRST_NAME_BEFORE.search(draft, 0, d.start) is not None
    )


def dates_grounded(
    source: str, url: str | None, draft: str, *, language: str | None = None
) -> Verdict:
    """Flag dates of the draft (weekday, day and month, month and year, relative
    day) that the source does not state. Both are read in English and in their own
    language: `language` (the one the feed or page declared) and the one detected."""
    draft = draft or ""
    read = source_text(source or "")

    def source_language() -> str | None:
        return language or read.derived("language", _detected)

    mentions = find_dates(draft, language=language, fallback=source_language)
    if not mentions:
        return Verdict(GATE, True, "no dates in the draft", [])
    norm: Normalised = _source(source or "")
    foreign: list[DateMention] | None = None  # the source's dates in its language, read
    # only when a date is not found in English (most sources: never)
    evidence: list[dict[str, Any]] = []
    missing: list[str] = []
    for d in mentions:
        other = None
        if d.kind == "weekday":
            span = _source_weekday(norm, source or "", d.value)
        elif d.kind == "month":
            span = _cased_month(norm, source or "", int(d.value))
        else:
            span = _find_in_source(norm.text, d)
        own: list[DateMention] = []
        name = None  # "by Jan." grounded by the source's Jan Orrick (original offsets)
        if span is None and _may_be_jan_the_name(draft, d):
            name = _JAN_THE_NAME.search(source or "")
        if span is None and name is None:
            if foreign is None:
                foreign = _source_dates(read, language)
            span = _foreign_in_source(d, foreign)
            own = foreign
        if span is not None and d.kind in ("weekday", "relative"):
            span, other = _same_event(norm.text, draft, d, span, own)
        written = draft[d.start : d.end]
        evidence.append(
            {
                "date": written,
                "kind": d.kind,
                "value": d.value,
                "found": span is not None or name is not None,
                "draft_span": [d.start, d.end],
                "source_span": list(norm.original_span(*span))
                if span
                else list(name.span())
                if name
                else None,
            }
        )
        if other is not None:
            start, end = norm.original_span(*other)
            evidence[-1]["other_event"] = (source or "")[start:end].strip()
        if span is None and name is None and written not in missing:
            missing.append(written)
    if missing:
        distinct = len({e["date"] for e in evidence})
        reason = f"{len(missing)} of {distinct} dates not in the source: {'; '.join(missing)}"
        return Verdict(GATE, False, reason, evidence)
    return Verdict(GATE, True, all_found([e["date"] for e in evidence], "date"), evidence)
