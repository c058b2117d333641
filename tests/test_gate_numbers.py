"""numbers_grounded: the number tokeniser and the gate, example by example and by property."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from guards.numbers import _NUMBER, _decorate, _tokens, canonical, numbers_grounded, tokenise
from guards.quotes import quotes_verbatim
from guards.text import ascii_digits

URL = "https://news.example.org/ostbrook/harbour"

# An invented article: every figure in it is made up.
ARTICLE = (
    "OSTBROOK, 30.11.2026 - The harbour board of Ostbrook said on Monday that 41,200 "
    "containers passed through the Varga terminal in 2025, up 12% on the year before, "
    "and that the 61-year-old chair, Mira Tallis, would stand down in the 2030s. "
    "The board spent £450,000 on dredging and 8.7 million kronor on new cranes. "
    "In 2019, 2020 and 2021 the terminal was closed for 3 weeks each winter; "
    "aged 31, 45 and 52, the three crane operators hired in 2016 said the 1890s "
    "warehouse would be kept. A meeting is set for 2026-12-04 at 10:30."
)


def verdict(source: str, draft: str):
    return numbers_grounded(source, URL, draft)


def missing(source: str, draft: str) -> list[str]:
    return [e["number"] for e in verdict(source, draft).evidence if not e["found"]]


# --- the tokeniser ----------------------------------------------------------

TOKENS = [
    ("41,200", ["41200"]),
    ("41200", ["41200"]),
    ("41 200", ["41200"]),
    ("41\u2009200", ["41200"]),  # thin space
    ("41\u202f200", ["41200"]),  # narrow no-break space
    ("41\u00a0200", ["41200"]),  # no-break space
    ("1.250.000", ["1250000"]),
    ("1 250 000", ["1250000"]),
    ("12'500", ["12500"]),
    ("12\u2019500", ["12500"]),
    ("8.7 million", ["8700000"]),
    ("3,5 Prozent", ["3.5"]),
    ("3,50 Euro", ["3.5"]),
    ("1.45m", ["1450000"]),
    ("$14.5m", ["14500000"]),
    ("1,250", ["1250"]),
    ("1.250", ["1250"]),
    ("0.250", ["0.25"]),
    ("0.001", ["0.001"]),
    ("1,250.75", ["1250.75"]),
    ("1.250,75", ["1250.75"]),
    ("1 250,75", ["1250.75"]),
    ("12,50,000", ["1250000"]),
    ("in 2019, 2020 and 2021", ["2019", "2020", "2021"]),
    ("aged 31, 45", ["31", "45"]),
    ("in 2019 20 people", ["2019", "20"]),
    ("in 2019 200 people", ["2019", "200"]),
    ("41 2000", ["41", "2000"]),
    ("1,2345", ["1.2345"]),
    ("61st", ["61"]),
    ("1890s", ["1890"]),
    ("£45,000", ["45000"]),
    ("20-year-old", ["20"]),
    ("61-year", ["61"]),
    ("-12", ["-12"]),
    ("\u221212 degrees", ["-12"]),
    ("12%", ["12"]),
    ("2026-11-30", ["2026", "11", "30"]),
    ("30/11/2026", ["30", "11", "2026"]),
    ("30.11.2026", ["30", "11", "2026"]),
    ("1.5.26", ["1", "5", "26"]),
    ("10:30", ["10", "30"]),
    ("10.30am", ["10", "30"]),
    ("7.15 p.m.", ["7", "15"]),
    ("10.30 amid", ["10.3"]),
    ("+44 20 7946 0958", ["44", "20", "7946", "958"]),
    ("1990-91", ["1990", "91"]),
    ("COVID-19", ["19"]),
    ("A380", ["380"]),
    ("2.0", ["2"]),
    ("07", ["7"]),
    ("000", ["0"]),
    ("version 3.11.4", ["3.11", "4"]),
    ("\u0662\u0660\u0662\u0666", ["2026"]),  # Arabic-Indic digits
    ("\uff12\uff10\uff12\uff16", ["2026"]),  # full-width digits
    ("The year was 2019. 200 came.", ["2019", "200"]),
    ("rose to 41,200.", ["41200"]),
    (".45 calibre", ["0.45"]),
    ("...5 more", ["5"]),
    ("no digits at all", []),
]


@pytest.mark.parametrize(("text", "values"), TOKENS, ids=[t for t, _ in TOKENS])
def test_tokeniser_values(text: str, values: list[str]) -> None:
    assert [t.value for t in tokenise(text)] == values


def test_tokens_keep_offsets_and_text_as_written() -> None:
    text = "Up 12% to £41\u202f200 on 2026-11-30."
    tokens = tokenise(text)
    assert [(t.text, text[t.start : t.end]) for t in tokens] == [
        ("12", "12"),
        ("41\u202f200", "41\u202f200"),
        ("2026", "2026"),
        ("11", "11"),
        ("30", "30"),
    ]


def test_offsets_hold_for_non_ascii_digits() -> None:
    text = "sum \uff14\uff15,\uff10\uff10\uff10 paid"
    (token,) = tokenise(text)
    assert token.value == "45000"
    assert text[token.start : token.end] == "\uff14\uff15,\uff10\uff10\uff10"


def reference_tokenise(text: str) -> list:
    """The tokeniser's definition, slowly: `_NUMBER` tried at every position."""
    digits = ascii_digits(text)
    return [_decorate(t, text) for m in _NUMBER.finditer(digits) for t in _tokens(m, text)]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789.,' \u00a0\u2009\u202f\u2019-:/apmAM%x\u0663\n", max_size=40))
def test_fast_tokeniser_equals_its_definition(text: str) -> None:
    """`tokenise` skips the full pattern where it cannot matter; it must not change a token."""
    assert tokenise(text) == reference_tokenise(text)


@pytest.mark.parametrize(
    ("integer", "fraction", "value"),
    [("41,200", "", "41200"), ("007", "", "7"), ("0", "50", "0.5"), ("12", "000", "12")],
)
def test_canonical(integer: str, fraction: str, value: str) -> None:
    assert canonical(integer, fraction) == value


# --- the gate, case by case -------------------------------------------------

# (source, draft, numbers of the draft that must be reported missing)
CASES = [
    # thousands separators do not matter
    ("41,200 containers", "41200 containers", []),
    ("41200 containers", "41,200 containers", []),
    ("41 200 containers", "41,200 containers", ["41,200"]),  # rule 6: "41 200" may be two
    ("41 200 containers", "41 200 containers", []),
    ("41\u2009200 containers", "41200 containers", []),
    ("41\u202f200 containers", "41 200 containers", []),
    ("41\u00a0200 containers", "41.200 containers", []),
    ("1.250.000 visitors", "1,250,000 visitors", []),
    ("1 000 000 visitors", "1,000,000 visitors", []),
    ("12'500 francs", "12,500 francs", []),
    ("12\u2019500 francs", "12500 francs", []),
    ("3.000 Besucher", "3,000 visitors", []),
    ("12,50,000 rupees", "1,250,000 rupees", []),
    ("10,000-strong crowd", "a crowd of 10000", []),
    # a decimal mark does matter
    ("8.7 million kronor", "87 million kronor", ["87 million"]),
    ("87 million kronor", "8.7 million kronor", ["8.7 million"]),
    ("3,5 Prozent", "35 Prozent", ["35"]),
    ("3,5 Prozent", "3.5 per cent", []),
    ("$1.45m budget", "a $14.5m budget", ["14.5m"]),
    ("$1.45m budget", "1.45 million dollars", []),
    ("1,250 jobs", "1.25 jobs", ["1.25"]),
    ("1,250 jobs", "1250 jobs", []),
    ("1.250,75 Euro", "1,250.75 euros", []),
    ("2.50 an hour", "2.5 an hour", []),
    ("rose 25 points", "rose 2.5 points", ["2.5"]),
    ("5 litres", "0.5 litres", ["0.5"]),
    ("up 5 per cent", "up .5 per cent", [".5"]),
    ("up 0.5 per cent", "up .5 per cent", []),
    ("at 41,200", "at 41.2 thousand", []),
    # no substring matches
    ("2,310 homes", "31 homes", ["31"]),
    ("2,310 homes", "3,210 homes", ["3,210"]),
    ("since 2016", "for 20 years", ["20"]),
    ("£450,000 fine", "£45,000 fine", ["45,000"]),
    ("1890s warehouse", "89 warehouses", ["89"]),
    ("room 4512", "room 451", ["451"]),
    # glued to letters, signs and units
    ("a 61-year-old", "her 61st birthday", []),
    ("the 1890s", "built in 1890", []),
    ("built in 1890", "the 1890s", []),
    ("20-year-old", "aged 20", []),
    ("down -12 degrees", "12 degrees", ["12"]),  # a sign is part of the value
    ("up 12%", "up 12 per cent", []),
    ("COVID-19", "19 cases", []),
    ("13.5bn", "13.5 billion", []),
    # lists, dates, times
    ("in 2019, 2020 and 2021", "in 2020", []),
    ("aged 31, 45", "aged 31 and 45", []),
    ("aged 31, 45", "aged 31,45", ["31,45"]),
    ("in 2019 20 people", "20 people in 2019", []),
    ("in 2019 20 people", "201920 people", ["201920"]),
    ("on 2026-11-30", "on 30/11/2026", []),
    ("on 30.11.2026", "on 2026-11-30", []),
    ("at 10:30", "at 10.30am", []),
    ("at 7.15 p.m.", "at 7:15pm", []),
    ("at 10:30", "at 10.30", ["10.30"]),  # without am/pm, 10.30 is a decimal
    ("on 1990-91", "the 1990-91 season", []),
    ("call +44 20 7946 0958", "line 7946", []),
    ("call +44 20 7946 0958", "line 794", ["794"]),
    # single digits are not checked, but ground numbers written with a zero
    ("", "3 people and 7 dogs", []),
    ("on 7 July", "on 07/08", ["08"]),
    ("on 7 July 2025", "on 07 July 2025", []),
    # other scripts
    ("in \u0662\u0660\u0662\u0666", "in 2026", []),
    ("in 2025", "in \uff12\uff10\uff12\uff16", ["\uff12\uff10\uff12\uff16"]),
]


@pytest.mark.parametrize(
    ("source", "draft", "absent"), CASES, ids=[f"{s!r}->{d!r}" for s, d, _ in CASES]
)
def test_cases(source: str, draft: str, absent: list[str]) -> None:
    v = verdict(source, draft)
    assert missing(source, draft) == absent
    assert v.passed is (not absent)
    assert v.gate == "numbers_grounded"


def test_reason_counts_and_names_missing_numbers() -> None:
    draft = "The board moved 41,200 containers in 2025, hired 4,800 staff and 38 divers in 2016."
    v = verdict(ARTICLE, draft)
    assert not v.passed
    assert v.reason == "2 of 5 numbers not in the source: 4,800; 38"


def test_reason_names_a_repeated_number_once() -> None:
    v = verdict(ARTICLE, "It hired 77 divers; 77 of them left in 2025.")
    assert v.reason == "1 of 2 numbers not in the source: 77"


def test_evidence_lists_every_number_and_where_it_was_found() -> None:
    draft = "Up 12% to 41 200 containers, with 4,800 more expected."
    v = verdict(ARTICLE, draft)
    start = ARTICLE.index("41,200")
    assert v.evidence == [
        {
            "number": "12",
            "value": "12",
            "found": True,
            "draft_span": [3, 5],
            "source_span": [ARTICLE.index("12%"), ARTICLE.index("12%") + 2],
            "source_text": "12",
            "unit": "per cent",  # the value and what it counts (guards.units)
        },
        {
            "number": "41 200",
            "value": "41200",
            "found": True,
            "draft_span": [10, 16],
            "source_span": [start, start + 6],
            "source_text": "41,200",
            "unit": "a count of containers",
        },
        {
            "number": "4,800",
            "value": "4800",
            "found": False,
            "draft_span": [34, 39],
            "source_span": None,
            "source_text": None,
            "closest_in_source": {
                "number": "2030",
                "value": "2030",
                "source_span": [ARTICLE.index("2030"), ARTICLE.index("2030") + 4],
            },
        },
    ]
    json.dumps(v.to_dict())  # the evidence is stored as JSON


def test_whole_article_summary_passes() -> None:
    draft = (
        "Ostbrook's harbour handled 41200 containers in 2025, 12 per cent more than a "
        "year earlier. The board spent £450,000 on dredging and 8.7m kronor on cranes; "
        "its 61st-year chair leaves in the 2030s. A meeting is set for 4 December 2026 at 10:30."
    )
    v = verdict(ARTICLE, draft)
    assert v.passed, v.reason
    assert v.reason == "all 10 numbers found in the source"


def test_no_numbers_passes_with_reason() -> None:
    v = verdict(ARTICLE, "The harbour board chair will stand down, the board said.")
    assert v.passed
    assert v.reason == "no numbers of two or more digits in the draft"
    assert v.evidence == []


def test_single_digit_numbers_are_not_checked() -> None:
    v = verdict(ARTICLE, "Nine cranes, 4 tugs and 7 barges.")
    assert v.passed and v.evidence == []


def test_empty_source_fails_any_number() -> None:
    assert not verdict("", "It cost 45 kronor.").passed
    assert not numbers_grounded(None, None, "It cost 45 kronor.").passed  # type: ignore[arg-type]


def test_empty_draft_passes() -> None:
    assert verdict(ARTICLE, "").passed


# --- properties -------------------------------------------------------------

WORDS = (
    "harbour board council crane ferry tide pier dredging tallis varga ostbrook mira "
    "quay barge tug warden levy toll berth canal lock keeper winter summer said rose fell"
).split()
PREFIXES = ["", "", "", "£", "$", "€", "+"]
# suffix -> power of ten it scales by (0: a unit, not a scale)
SUFFIXES = {"": 0, "%": 0, "km": 0, " per cent": 0, "m": 6, "bn": 9, " million": 6, "k": 3}
SPACES = [" ", "\u2009", "\u202f", "\u00a0"]


def _group(digits: str, sep: str) -> str:
    head = len(digits) % 3 or 3
    groups = [digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)]
    return sep.join(groups)


# Strategies are built once: building them inside a composite on every draw
# costs more than the gates themselves.
_VALUES = st.one_of(
    st.integers(0, 9).map(Decimal),
    st.integers(10, 99_999_999).map(Decimal),
    # one or two decimals, never a whole number
    st.integers(1, 9_999_999).filter(lambda n: n % 100).map(lambda n: Decimal(n).scaleb(-2)),
)
_SIGNED_VALUES = st.tuples(_VALUES, st.booleans()).map(lambda p: -p[0] if p[1] else p[0])
_STYLES = st.tuples(
    st.sampled_from([",", ".", "'", "", "", *SPACES]),  # thousands separator ("" none)
    st.booleans(),  # decimal comma when possible
    st.sampled_from(PREFIXES),
    st.sampled_from(list(SUFFIXES)),
    st.sampled_from(["-", "\u2212"]),  # how a minus sign is written
)
# The source never groups two groups with a plain space: "41 200" may be two
# numbers there (rule 6) and grounds only itself.
_SOURCE_STYLES = _STYLES.filter(lambda style: style[0] != " ")
_WORD_RUNS = st.lists(st.sampled_from(WORDS), min_size=3, max_size=12)
_SLOTS = st.lists(st.integers(1, 11), max_size=3, unique=True)
_QUOTED = st.one_of(
    st.none(),
    st.tuples(
        st.lists(st.sampled_from(WORDS), min_size=2, max_size=6),
        st.sampled_from(['""', "“”", "„“", "«»", "‘’"]),
        st.sampled_from(WORDS),
    ),
)


def write_number(value: Decimal, style: tuple) -> tuple[str, str, str]:
    """(text with sign/prefix/suffix, the number as the tokeniser reports it, canonical value).

    The canonical value comes from `Decimal`, not from the code under test."""
    thousands, decimal_comma, prefix, suffix, minus = style
    expected = format(value.normalize(), "f")
    expected = "0" if expected == "-0" else expected
    power = SUFFIXES[suffix]
    mantissa = abs(value).scaleb(-power).normalize()
    integer, _, fraction = format(mantissa, "f").partition(".")
    if power and (len(fraction) == 3 or value == 0):
        # 1.234k would read as 1234 thousand (a dot before three digits groups): unscaled
        suffix, power = "", 0
        integer, _, fraction = format(abs(value), "f").partition(".")
    if len(integer) <= 3 or (power and thousands == "." and len(integer) <= 6):
        # "1.000k" is one thousand: a dot before one group of three digits and a scale
        # word is a decimal mark (rule 8, "1.125 million"), so such a mantissa is ungrouped
        thousands = ""
    number = _group(integer, thousands) if thousands else integer
    if fraction:
        if thousands in (",", "."):
            mark = "," if thousands == "." else "."
        else:
            mark = "," if decimal_comma else "."
        number = f"{number}{mark}{fraction}"
    sign = minus if value < 0 else ""
    if sign and prefix == "+":
        prefix = ""
    scale = suffix if power else ""
    token = sign + prefix + number + scale if sign else number + scale
    return sign + prefix + number + suffix, token, expected


@st.composite
def written_numbers(
    draw, value: Decimal | None = None, source: bool = False, bare: bool = False
) -> tuple[str, str, str]:
    """A number in one style; `bare`: without a currency, unit or scale word."""
    if value is None:
        value = draw(_SIGNED_VALUES)
    style = draw(_SOURCE_STYLES if source else _STYLES)
    if bare:
        style = (style[0], style[1], "+" if style[2] == "+" else "", "", style[4])
    return write_number(value, style)


@st.composite
def sentences(draw) -> tuple[str, list[str]]:
    """A sentence of words and numbers (never two numbers side by side), maybe a quote."""
    words = draw(_WORD_RUNS)
    slots = draw(_SLOTS)
    parts: list[str] = [words[0].capitalize()]
    values: list[str] = []
    for k, word in enumerate(words[1:], start=1):
        if k in slots:
            text, _, value = draw(written_numbers(source=True))
            parts.append(text)
            values.append(value)
        parts.append(word)
    quoted = draw(_QUOTED)
    if quoted:
        run, (opening, closing), after = quoted
        parts += [f"{opening}{' '.join(run)}{closing}", after]
    return " ".join(parts) + ".", values


articles = st.lists(sentences(), min_size=3, max_size=10)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(article=articles, data=st.data())
def test_draft_of_whole_source_sentences_passes(article, data) -> None:
    source = " ".join(s for s, _ in article)
    picks = data.draw(st.lists(st.sampled_from(article), min_size=1, max_size=5))
    draft = " ".join(s for s, _ in picks)
    v = numbers_grounded(source, URL, draft)
    assert v.passed, v.reason
    q = quotes_verbatim(source, URL, draft)
    assert q.passed, q.reason


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(article=articles, data=st.data())
def test_a_number_absent_from_the_source_fails_and_is_named(article, data) -> None:
    source = " ".join(s for s, _ in article)
    source_values = {v for _, values in article for v in values}
    text, number, value = data.draw(written_numbers())
    digits = sum(ch.isdigit() for ch in number)
    assume(value not in source_values and (digits >= 2 or abs(Decimal(value)) >= 10))
    picks = data.draw(st.lists(st.sampled_from(article), max_size=4))
    position = data.draw(st.integers(0, len(picks)))
    inserted = f"Officials counted {text} tolls."
    draft = " ".join(
        [s for s, _ in picks[:position]] + [inserted] + [s for s, _ in picks[position:]]
    )
    v = numbers_grounded(source, URL, draft)
    assert not v.passed
    assert {"number": number, "value": value, "found": False} in [
        {k: e[k] for k in ("number", "value", "found")} for e in v.evidence
    ]
    assert number in v.reason


@settings(max_examples=100, deadline=None)
@given(article=articles, data=st.data())
def test_regrouping_the_source_numbers_still_passes(article, data) -> None:
    """The draft may write 41 200 where the source wrote 41,200: same value."""
    source = " ".join(s for s, _ in article)
    values = [v for _, vs in article for v in vs]
    assume(values)
    # Only how the number is written changes: a unit or currency the draft adds
    # (10% where the source has "10 harbour") is another figure (guards.units).
    rewritten = [data.draw(written_numbers(Decimal(v), bare=True))[0] for v in values]
    draft = "Figures: " + "; ".join(rewritten) + "."
    v = numbers_grounded(source, URL, draft)
    assert v.passed, v.reason


@settings(max_examples=100, deadline=None)
@given(value=st.integers(100, 10**9), data=st.data())
def test_no_part_of_a_number_grounds_a_different_number(value: int, data) -> None:
    """31 is not in 2,310: a run of the source number's digits is not its value."""
    source_text, _, _ = data.draw(written_numbers(Decimal(value), source=True))
    assume(not any(source_text.endswith(s) for s in ("m", "bn", "k", " million")))
    digits = str(value)
    i = data.draw(st.integers(0, len(digits) - 2))
    j = data.draw(st.integers(i + 2, len(digits)))
    part = digits[i:j]
    assume(int(part) != value and part[0] != "0")
    v = numbers_grounded(f"The levy was {source_text} kronor.", URL, f"The levy was {part}.")
    assert not v.passed
    assert v.evidence[0]["number"] == part


def test_a_draft_without_checked_numbers_does_not_read_the_source() -> None:
    """Nothing to ground (no number, or only a single-digit count): the source is not
    read for numbers, not even folded (NFKC), and the verdict is the usual pass."""
    from guards.sourcetext import source_text

    source = ARTICLE + " The Vaulmont ferry made 41 crossings on the Tarnbeck line."
    for draft in ("The board chair will stand down.", "Nine cranes and 4 tugs."):
        v = verdict(source, draft)
        assert v.passed and v.evidence == []
        assert v.reason == "no numbers of two or more digits in the draft"
        assert "folded" not in vars(source_text(source))
    assert not verdict(source, "The ferry made 42 crossings.").passed
    assert "folded" in vars(source_text(source))
