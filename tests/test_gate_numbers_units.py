"""numbers_grounded reads a number as a reader does: a value with its unit and kind.

Second round of attacks (issue 20), in English, French, German, Spanish, Italian
and Dutch newsroom prose. Each case: (source, draft, passes, why). Every place,
person and figure is invented.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guards.numbers import detect_language, numbers_grounded, tokenise

URL = "https://news.example.org/vellmouth/budget"
DATA = Path(__file__).resolve().parent / "data"

# A lead sentence in the source's language: the gate reads the language from the
# text (or is told it), and one line of figures is too short to tell.
DE = "Der Rat der Stadt hat am Montag entschieden, und die Mehrheit ist nicht mit dem Plan. "
FR = "Le conseil de la ville a voté lundi, et les élus sont pour le projet dans la région. "
ES = "El consejo de la ciudad votó el lunes y los vecinos están en contra del plan. "
IT = "Il consiglio della città ha votato lunedì e gli abitanti sono per il progetto. "
NL = "De raad van de stad heeft maandag gestemd en het plan is niet voor de bewoners. "

LEADS = {"": "", "de": DE, "fr": FR, "es": ES, "it": IT, "nl": NL}


def _cases() -> list[tuple[str, str, bool, str]]:
    """tests/data/numbers_units.jsonl: [lead language, source, draft, passes, why]."""
    lines = (DATA / "numbers_units.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip() and not line.startswith("#")]
    return [(LEADS[lang] + source, draft, passes, why) for lang, source, draft, passes, why in rows]


CASES = _cases()


@pytest.mark.parametrize(
    ("source", "draft", "passes", "why"), CASES, ids=[f"{d!r}<-{s!r}" for s, d, _, _ in CASES]
)
def test_units(source: str, draft: str, passes: bool, why: str) -> None:
    v = numbers_grounded(source, URL, draft)
    assert v.passed is passes, (why, v.reason, v.evidence)


def test_every_language_is_covered() -> None:
    text = " ".join(s for s, _, _, _ in CASES)
    for word in ("Prozent", "millions", "millones", "miliardi", "miljoen"):
        assert word in text


def test_detected_language() -> None:
    assert detect_language("Die Stadt hat mehr Einwohner als der Kreis und die Gemeinde.") == "de"
    assert detect_language("La ville compte plus d'habitants que le département et la.") == "fr"
    assert detect_language("The town has more residents than the county and the city.") == "en"
    assert detect_language("De stad heeft meer inwoners dan het land en de provincie.") == "nl"
    assert detect_language("La ciudad tiene más habitantes que el país y los pueblos.") == "es"
    assert detect_language("La città ha più abitanti della provincia e il comune per gli.") == "it"
    assert detect_language("12 34") is None


def test_language_given_wins_over_detection() -> None:
    # "1,125 million" is 1,125 million to an English reader, 1.125 million to a French one.
    # The item's language reads the source and its draft alike (a draft is written in its
    # article's language): to a French reader "1.125 million" is 1,125 million.
    source = "Le total: 1,125 million."
    french = numbers_grounded(source, URL, "1,125 million", language="fr")
    assert french.passed and french.evidence[0]["value"] == "1125000"
    assert not numbers_grounded(source, URL, "1.125 million", language="fr").passed
    assert not numbers_grounded(source, URL, "1.125 million", language="en").passed
    assert numbers_grounded(source, URL, "1,125 million", language="en").passed


# A short German source may have too few function words to be detected as German (the
# English "in" outnumbers them), yet "Mio.", "Mrd.", "Millionen" or "milliards" after a number
# is a European scale word: the number before it is written with European separators (a
# comma before one group is a decimal mark, a dot groups thousands), whatever the guess. An
# English text with "1,125 Mio." quotes a European figure. A declared language still wins.
SHORT_DE_COMMA = "Die Stadtwerke Ostbrück investieren 1,125 Mio. Euro in das Netz."
SHORT_DE_DOT = "Kelmbach: Umsatz 2025 in Höhe von 1.125 Mio. Euro."
QUOTING_EN = "The Ostbrück utility will invest EUR 1,125 Mio. in its grid, the council said."
EUROPEAN_SCALE_CASES = [
    # (source, draft, passes, why)
    (SHORT_DE_COMMA, "Die Stadtwerke investieren 1.125.000 Euro.", True, "1,125 Mio. is 1.125M"),
    (SHORT_DE_COMMA, "Die Stadtwerke investieren 1,125 Millionen Euro.", True, "same words"),
    (SHORT_DE_COMMA, "Die Stadtwerke investieren 1,125 Mrd. Euro.", False, "not 1.125bn"),
    (SHORT_DE_DOT, "Umsatz 2025: 1,125 Mrd. Euro.", True, "1.125 Mio. is 1,125M"),
    (SHORT_DE_DOT, "Umsatz 2025: 1,125 Mio. Euro.", False, "not 1.125M"),
    (QUOTING_EN, "The utility will invest EUR 1.125 million.", True, "English text, German figure"),
]


@pytest.mark.parametrize("case", EUROPEAN_SCALE_CASES, ids=lambda case: case[3])
def test_a_european_scale_word_settles_the_separators(case: tuple[str, str, bool, str]) -> None:
    source, draft, passes, why = case
    assert detect_language(source) in ("en", None), "the guess must not already be European"
    v = numbers_grounded(source, URL, draft)
    assert v.passed is passes, (why, v.reason)


def test_a_declared_language_wins_over_a_european_scale_word() -> None:
    german = numbers_grounded(SHORT_DE_COMMA, URL, "1.125.000 Euro", language="de")
    assert german.passed, german.reason
    english = numbers_grounded(SHORT_DE_COMMA, URL, "EUR 1,125 million", language="en")
    assert english.passed and english.evidence[0]["value"] == "1125000000", english.reason
    assert not numbers_grounded(SHORT_DE_COMMA, URL, "1.125.000 Euro", language="en").passed


def test_unit_mismatch_is_explained() -> None:
    v = numbers_grounded("The deal was worth £48m.", URL, "The deal was worth $48m.")
    (entry,) = v.evidence
    assert entry["unit"] == "USD" or entry["unit"] == "$"
    assert entry["found"] is False
    assert entry["unit_mismatch"]["number"] == "£48m"
    assert "unit" in v.reason


def test_fraction_token_values() -> None:
    assert [t.value for t in tokenise("2\u00bd metres")] == ["2.5"]
    assert [t.value for t in tokenise("a dozen and a score of")] == ["12", "20"]


# --- properties: a value rendered with its unit, grounded only by the same unit ----

_LENGTH = {"km": ["km", " km", " kilometres", "-kilometre"], "mi": [" miles", "-mile", " mi"]}
_CURRENCY = {"GBP": ["£{}", "GBP {}", "{} pounds"], "EUR": ["€{}", "EUR {}", "{} euros"]}


@st.composite
def value_text(draw) -> str:
    n = draw(st.integers(10, 10**6))
    style = draw(st.sampled_from(["plain", "comma", "thin"]))
    if style == "comma":
        return f"{n:,}"
    if style == "thin":
        return f"{n:,}".replace(",", "\u2009")
    return str(n)


@settings(max_examples=200, deadline=None)
@given(
    text=value_text(),
    unit=st.sampled_from(sorted(_LENGTH)),
    other=st.sampled_from(sorted(_LENGTH)),
    data=st.data(),
)
def test_lengths_ground_only_the_same_unit(text: str, unit: str, other: str, data) -> None:
    src = f"The new cycle path runs {text}{data.draw(st.sampled_from(_LENGTH[unit]))} inland."
    same = data.draw(st.sampled_from(_LENGTH[other]))
    draft = f"A path of {text.replace(chr(0x2009), ',')}{same} was opened."
    v = numbers_grounded(src, URL, draft)
    assert v.passed is (unit == other), (src, draft, v.evidence)


@settings(max_examples=200, deadline=None)
@given(
    text=value_text(),
    cur=st.sampled_from(sorted(_CURRENCY)),
    other=st.sampled_from(sorted(_CURRENCY)),
    data=st.data(),
)
def test_currencies_ground_only_the_same_currency(text: str, cur: str, other: str, data) -> None:
    src = "The harbour board spent " + data.draw(st.sampled_from(_CURRENCY[cur])).format(text)
    src += " on dredging last year."
    draft = "It spent " + data.draw(st.sampled_from(_CURRENCY[other])).format(text) + "."
    v = numbers_grounded(src, URL, draft)
    assert v.passed is (cur == other), (src, draft, v.evidence)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1001, 999_999), scale=st.sampled_from(["million", "bn"]))
def test_decimal_before_scale_word(n: int, scale: str) -> None:
    """d.ddd million is d.ddd times a million, whatever the digits."""
    whole, frac = divmod(n, 1000)
    text = f"{whole}.{frac:03d}"
    power = 6 if scale == "million" else 9
    value = format(Decimal(text).scaleb(power).normalize(), "f")
    src = f"The port expects {text} {scale} passengers this year."
    assert numbers_grounded(src, URL, f"{int(Decimal(value)):,} passengers").passed
    assert not numbers_grounded(src, URL, f"{int(Decimal(value)) * 1000:,} passengers").passed


_EUROPEAN_SCALE = {"Mio.": 6, "Millionen": 6, "Mrd.": 9, "Milliarden": 9, "milliards": 9}


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1001, 999_999),
    mark=st.sampled_from([",", "."]),
    scale=st.sampled_from(sorted(_EUROPEAN_SCALE)),
    lead=st.sampled_from(["", "The harbour board said on Monday that ", "Ostbrück: "]),
)
def test_a_european_scale_word_reads_its_number_the_european_way(
    n: int, mark: str, scale: str, lead: str
) -> None:
    """Undeclared, in any framing (English, none, a German name): d,ddd before a European
    scale word is a decimal and d.ddd a thousands group; a declared "de" reads it alike."""
    whole, frac = divmod(n, 1000)
    written = f"{whole}{mark}{frac:03d}"
    base = Decimal(f"{whole}.{frac:03d}") if mark == "," else Decimal(n)
    expected = format(base.scaleb(_EUROPEAN_SCALE[scale]).normalize(), "f")
    text = f"{lead}{written} {scale} Euro."
    for language in (None, "de"):
        (token,) = [t for t in tokenise(text, language) if t.text.startswith(written)]
        assert token.value == expected, (text, language, token)
