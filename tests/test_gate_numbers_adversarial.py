"""numbers_grounded against an article written to slip an invented figure past it.

Each case: (source, draft, passes, why). Every place, person and figure is invented.
"""

from __future__ import annotations

import unicodedata
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guards.numbers import ground_numbers, numbers_grounded, tokenise

URL = "https://news.example.org/ostbrook/budget"

ZW = "\u200b"  # zero-width space
WJ = "\u2060"  # word joiner
SHY = "\u00ad"  # soft hyphen

CASES = [
    # --- invisible characters and other digit forms (NFKC, category Cf)
    ("42 berths", f"4{ZW}2 berths", True, "a zero-width space inside 42 is still 42"),
    ("24 berths", f"4{ZW}2 berths", False, "4<ZWSP>2 is 42, and 42 is not in the source"),
    ("24 berths", f"4{WJ}2 berths", False, "a word joiner does not split a number"),
    ("24 berths", f"4{SHY}2 berths", False, "nor does a soft hyphen"),
    ("24 berths", "4\ufe0f2 berths", False, "nor a variation selector (default-ignorable)"),
    (f"4{ZW}2 berths", "42 berths", True, "the source's 4<ZWSP>2 grounds 42"),
    ("42 berths", "\uff14\uff12 berths", True, "fullwidth digits are digits"),
    ("24 berths", "\uff14\uff12 berths", False, "fullwidth 42 is checked like 42"),
    ("a levy of 10 per cent", "a levy of 1\u2070 per cent", True, "superscript zero is 0"),
    ("a levy of 12 per cent", "a levy of \u2460\u2461 per cent", True, "circled digits are 12"),
    ("a levy of 21 per cent", "a levy of \u2460\u2461 per cent", False, "and 12 is not 21"),
    # --- scale words are part of the value
    ("a budget of 1.2 billion kronor", "a budget of 1.2bn kronor", True, "1.2bn = 1.2 billion"),
    ("a budget of 1.2 billion kronor", "a $1.2bn budget", False, "kronor are not dollars"),
    ("a budget of $1,200m", "a $1.2bn budget", True, "1,200m = 1.2bn"),
    ("a budget of 1.2 million kronor", "a $1.2bn budget", False, "a 1,000-fold error"),
    ("a budget of 1.2 million kronor", "a budget of 1,200,000 kronor", True, "same value"),
    ("a budget of 1.2 million kronor", "a budget of 1.2 kronor", False, "scale dropped"),
    ("cost £3.45m", "cost 3,450,000 pounds", True, "£3.45m is 3,450,000"),
    ("cost £3.45m", "cost £3.45bn", False, "m is not bn"),
    ("45k signatures", "45,000 signatures", True, "k is a thousand"),
    ("45k signatures", "45 signatures", False, "45k is not 45"),
    ("debt of 2.5 trillion", "debt of 2,500bn", True, "trillion = 1,000bn"),
    ("8.7 million kronor", "8.7m kronor", True, "m glued is million"),
    ("a 5 m wall", "a 5 m wall", True, "5 m (with a space) is five metres, not checked"),
    ("at 41,200", "at 41.2 thousand", True, "41.2 thousand is 41,200"),
    ("the 1.5 million visitors", "the 15 million visitors", False, "decimal kept with scale"),
    # --- number words (text2num)
    ("forty-two boats", "42 boats", True, "forty-two is 42"),
    ("42 boats", "forty-two boats", True, "and the other way round"),
    ("Twenty boats sailed", "20 boats sailed", True, "sentence-initial number word"),
    ("Twenty boats sailed", "21 boats sailed", False, "21 is not twenty"),
    ("20 boats sailed", "twenty-one boats sailed", False, "a multi-digit value in words"),
    ("three hundred homes", "300 homes", True, "three hundred"),
    ("one point five million people", "1.5 million people", True, "words with a scale"),
    ("1.5 million people", "one and a half thousand people", False, "1,500 is not 1.5 million"),
    ("a million people", "1,000,000 people", True, "a million"),
    ("half a million people", "500,000 people", True, "half a million"),
    ("a million people", "half a million people", False, "half a million is 500,000"),
    ("two trillion kronor", "2tn kronor", True, "text2num stops at trillion; the gate does not"),
    ("several million people", "2 million people", False, "several million is not a value"),
    ("hundreds of people", "100 people", False, "hundreds is not one hundred"),
    ("nine cranes", "nine cranes", True, "single digits are not checked"),
    ("two thousand and twenty-four", "2024", True, "a year in words"),
    # --- signs and ranges
    ("the index rose 12 percent", "the index fell -12 percent", False, "a sign is part of it"),
    ("the index rose 12 percent", "the index moved \u221212%", False, "U+2212 minus"),
    ("the index moved -12 percent", "the index moved \u221212%", True, "two minus signs agree"),
    ("the index moved -12 percent", "the index moved 12%", False, "the sign was dropped"),
    ("a loss of -$4.2bn", "a loss of -4.2 billion dollars", True, "sign before currency"),
    ("it fell to minus twelve", "it fell to -12", True, "minus in words"),
    ("aged 10-12", "aged 10 to 12", True, "a range is two numbers, not a negative"),
    ("aged 10\u201314", "aged 14", True, "en-dash range"),
    ("aged 10\u201314", "aged -14", False, "but a draft cannot make the end negative"),
    ("COVID-19 wards", "19 wards", True, "a hyphen after a letter is not a sign"),
    # --- space as a thousands separator (rule 6)
    ("41\u202f200 tonnes", "41,200 tonnes", True, "a narrow no-break space groups"),
    ("41 200 tonnes", "41 200 tonnes", True, "the same ambiguous run grounds itself"),
    ("2 145-page reports", "2,145 reports", False, "'2 145' may be 2 and 145"),
    ("2 145-page reports", "2 reports of 145 pages", True, "its parts ground 2 and 145"),
    ("On 15 May 15 200 people marched", "15,200 people", False, "a date then a count"),
    ("2,145 reports", "2 145 reports", True, "a draft's run is read as one number"),
    ("1 250 000 visitors", "1,250,000 visitors", True, "three groups are unambiguous"),
    ("In 2019 20 people", "In 2019, 20 people", True, "2019 20 is two numbers"),
    ("In 2019 20 people", "201,920 people", False, "never one number"),
    # --- old rules kept
    ("8.7 million kronor", "87 million kronor", False, "8.7 is not 87"),
    ("2,310 homes", "31 homes", False, "31 is not inside 2,310"),
]


@pytest.mark.parametrize(
    ("source", "draft", "passes", "why"), CASES, ids=[f"{d!r}<-{s!r}" for s, d, _, _ in CASES]
)
def test_adversarial(source: str, draft: str, passes: bool, why: str) -> None:
    v = numbers_grounded(source, URL, draft)
    assert v.passed is passes, (why, v.evidence)


def test_enough_cases() -> None:
    assert len(CASES) >= 40
    assert sum(not passes for _, _, passes, _ in CASES) >= 20


def test_evidence_carries_value_and_true_figure() -> None:
    """The evaluator reads the value compared and the figure the source gave."""
    source = "The council approved a budget of 1.2 million kronor on Monday."
    v = numbers_grounded(source, URL, "Ostbrook approved a $1.2bn budget.")
    (entry,) = v.evidence
    assert entry["number"] == "1.2bn" and entry["value"] == "1200000000"
    assert entry["found"] is False
    assert entry["closest_in_source"] == {
        "number": "1.2 million",
        "value": "1200000",
        "source_span": [source.index("1.2"), source.index(" kronor")],
    }
    assert v.reason == "1 of 1 numbers not in the source: 1.2bn"


def test_offsets_point_at_the_original_text() -> None:
    """Folding (NFKC, dropped invisibles) must not shift the evidence spans."""
    source = f"Crews\u2026 moved 4{ZW}1{SHY},200 crates \u2460 and forty-two pallets."
    v = numbers_grounded(source, URL, "Crews moved 41,200 crates and 42 pallets.")
    assert v.passed
    spans = [source[slice(*e["source_span"])] for e in v.evidence]
    assert spans == [f"4{ZW}1{SHY},200", "forty-two"]


def test_ground_numbers_is_public_for_other_gates() -> None:
    passage = "The levy rose to 4.5 million kronor in 2025."
    assert ground_numbers(passage, "The levy was 4.5m kronor in 2025.").passed
    check = ground_numbers(passage, "The levy was 45m kronor in 2025.")
    assert not check.passed and check.missing == ["45m"]


def test_a_text2num_failure_fails_safe(monkeypatch) -> None:
    import guards.numbers as numbers

    def boom(*args, **kwargs):
        raise RuntimeError("parser failure")

    monkeypatch.setattr(numbers, "find_numbers", boom)
    # Parses are cached: an earlier test's "twenty" must not answer for the parser.
    numbers._parse_run.cache_clear()
    assert not numbers_grounded("20 boats", URL, "twenty boats").passed
    assert numbers_grounded("twenty boats", URL, "twenty boats").passed  # same words
    numbers._parse_run.cache_clear()  # nothing parsed by the failing parser outlives it


# --- properties: any accepted style, grounded by the same value only -----------

_UNITS = "zero one two three four five six seven eight nine".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


def in_words(n: int) -> str:
    """English words for 0 <= n < 1,000,000 (test oracle, independent of text2num)."""
    if n < 10:
        return _UNITS[n]
    if n < 20:
        return _TEENS[n - 10]
    if n < 100:
        return _TENS[n // 10 - 2] + ("-" + _UNITS[n % 10] if n % 10 else "")
    if n < 1000:
        rest = n % 100
        return _UNITS[n // 100] + " hundred" + (" and " + in_words(rest) if rest else "")
    rest = n % 1000
    head = in_words(n // 1000) + " thousand"
    if not rest:
        return head
    return head + (" and " if rest < 100 else " ") + in_words(rest)


INVISIBLES = ["\u200b", "\u2060", "\u00ad", "\ufeff", "\u200c", "\u200d", "\u034f", "\ufe0f"]


@st.composite
def renderings(draw, n: int) -> str:
    """n written in one accepted style, perhaps with invisible characters inside."""
    style = draw(st.sampled_from(["plain", "comma", "thin", "words", "fullwidth", "scale"]))
    if style == "words" and n < 1_000_000:
        return in_words(n)
    if style == "comma":
        text = f"{n:,}"
    elif style == "thin":
        text = f"{n:,}".replace(",", "\u2009")
    elif style == "fullwidth":
        text = "".join(chr(0xFF10 + int(d)) for d in str(n))
    elif style == "scale" and n % 1000 == 0 and n:
        text = f"{Decimal(n).scaleb(-3).normalize():f}k"
        if len(text.partition(".")[2].rstrip("k")) == 3:
            text = str(n)
    else:
        text = str(n)
    if draw(st.booleans()) and len(text) > 1:
        at = draw(st.integers(1, len(text) - 1))
        text = text[:at] + draw(st.sampled_from(INVISIBLES)) + text[at:]
    return text


@settings(max_examples=300, deadline=None)
@given(n=st.integers(10, 10**7), data=st.data())
def test_any_style_is_grounded_by_the_same_value(n: int, data) -> None:
    source = f"Officials counted {data.draw(renderings(n))} crates on the quay."
    draft = f"There were {data.draw(renderings(n))} crates."
    v = numbers_grounded(source, URL, draft)
    assert v.passed, (source, draft, v.evidence)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(10, 10**7), m=st.integers(10, 10**7), data=st.data())
def test_any_style_is_not_grounded_by_another_value(n: int, m: int, data) -> None:
    if n == m:
        return
    source = f"Officials counted {data.draw(renderings(m))} crates on the quay."
    draft = f"There were {data.draw(renderings(n))} crates."
    v = numbers_grounded(source, URL, draft)
    assert not v.passed, (source, draft, v.evidence)


@given(n=st.integers(0, 999_999))
@settings(max_examples=300, deadline=None)
def test_text2num_reads_every_number_in_words(n: int) -> None:
    """Edges of the parser: whatever English words we write, it reads the value."""
    values = [t.value for t in tokenise(in_words(n))]
    assert values == [str(n)], in_words(n)


def test_fold_drops_every_invisible_character() -> None:
    """Every Cf and default-ignorable code point is dropped, checked against the
    `regex` package's Unicode properties (a dependency of trafilatura's)."""
    regex = pytest.importorskip("regex")
    from guards.text import fold_char

    invisible = regex.compile(r"[\p{Cf}\p{Default_Ignorable_Code_Point}]")
    for code in range(0x80, 0x110000):
        ch = chr(code)
        if invisible.match(ch) and unicodedata.category(ch) != "Cn":
            assert fold_char(ch) == "", hex(code)
