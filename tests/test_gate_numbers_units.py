"""numbers_grounded reads a number as a reader does: a value with its unit and kind.

Second round of attacks (issue 20), in English, French, German, Spanish, Italian
and Dutch newsroom prose. Each case: (source, draft, passes, why). Every place,
person and figure is invented.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guards.numbers import detect_language, numbers_grounded, tokenise

URL = "https://news.example.org/vellmouth/budget"

# A lead sentence in the source's language: the gate reads the language from the
# text (or is told it), and one line of figures is too short to tell.
DE = "Der Rat der Stadt hat am Montag entschieden, und die Mehrheit ist nicht mit dem Plan. "
FR = "Le conseil de la ville a voté lundi, et les élus sont pour le projet dans la région. "
ES = "El consejo de la ciudad votó el lunes y los vecinos están en contra del plan. "
IT = "Il consiglio della città ha votato lunedì e gli abitanti sono per il progetto. "
NL = "De raad van de stad heeft maandag gestemd en het plan is niet voor de bewoners. "

CASES = [
    # --- percent is not percentage points
    ("Support rose 13 percentage points to 41%.", "Support rose 13% to 41%.", False, "pp != %"),
    ("Support rose 13% to 41%.", "Support rose 13 percentage points.", False, "% != pp"),
    ("Support rose 13 percentage points.", "a rise of 13 percentage points", True, "same"),
    (DE + "Die Zustimmung stieg um 12 Prozentpunkte.", "Support rose 12 per cent.", False, "de pp"),
    (FR + "Le chômage a baissé de 12 %.", "Unemployment fell 12 per cent.", True, "fr %"),
    (DE + "Die Quote lag bei 17 Prozent.", "The rate was 17%.", True, "Prozent is %"),
    # --- counts tied to their noun
    ("The motion passed by 31 votes to 17.", "The motion won 17 per cent.", False, "votes"),
    ("The motion passed by 31 votes to 17.", "It passed 31 votes to 17.", True, "same count"),
    ("Between 12 and 17 per cent of berths", "up to 12 per cent", True, "range shares unit"),
    ("Kelbrook has 48 councillors.", "Kelbrook spends 48% of it.", False, "noun vs %"),
    # --- currency by symbol or code
    ("The deal was worth £48m.", "The deal was worth $48m.", False, "£ is not $"),
    ("The deal was worth £48m.", "The deal was worth £48 million.", True, "same"),
    ("a grant of EUR 5 million", "a grant of USD 5 million", False, "EUR is not USD"),
    ("a grant of EUR 5 million", "a grant of €5m", True, "EUR is €"),
    (DE + "eine Förderung von 5 Millionen Euro", "a grant of €5 million", True, "de Euro suffix"),
    (DE + "eine Förderung von 5 Millionen Euro", "a grant of £5 million", False, "de € vs £"),
    (FR + "une aide de 5 millions d'euros", "a grant of EUR 5m", True, "fr euros"),
    (FR + "une aide de 5 millions d'euros", "a grant of $5m", False, "fr € vs $"),
    (ES + "un contrato de 12 millones de euros", "a €12m contract", True, "es millones"),
    (IT + "un contratto da 3 miliardi di euro", "a €3bn contract", True, "it miliardi"),
    (NL + "een subsidie van 7 miljoen euro", "a €7m grant", True, "nl miljoen"),
    ("The fund holds $30m.", "The fund holds US$30m.", True, "$ grounds US$"),
    # --- units of measure
    ("The route is 26 miles long.", "The route is 26 km long.", False, "miles are not km"),
    ("The route is 26 miles long.", "The 26-mile route", True, "26-mile"),
    (DE + "Die Strecke ist 26 Kilometer lang.", "The route is 26 km long.", True, "de km"),
    (FR + "La digue mesure 14 mètres.", "The dyke is 14 metres high.", True, "fr mètres"),
    ("The dyke is 14 metres high.", "The dyke is 14 feet high.", False, "feet != metres"),
    ("The barge carries 40 tonnes.", "The barge carries 40 kg.", False, "tonnes != kg"),
    # --- time: duration and frequency
    ("Buses run every 15 minutes.", "Journeys are 15 minutes longer.", False, "freq vs dur"),
    ("Buses run every 15 minutes.", "a bus every 15 minutes", True, "same frequency"),
    (DE + "Die Busse fahren alle 15 Minuten.", "Buses come every 15 minutes.", True, "de alle"),
    (FR + "Les bus passent toutes les 15 minutes.", "a 15-minute wait", False, "fr frequency"),
    ("The works took 15 hours.", "The works took 15 minutes.", False, "hours != minutes"),
    ("The works took 15 hours.", "a 15-hour job", True, "15-hour"),
    # --- ambiguous "46m": every plausible reading
    ("Crews drilled a well 46m deep.", "a 46-metre well", True, "46m may be metres"),
    ("Crews drilled a well 46m deep.", "a 46 m well", True, "46 m"),
    ("Crews drilled a well 46m deep.", "a well 46 metres deep", True, "46 metres"),
    ("The scheme cost 46m.", "The scheme cost £46 million.", True, "46m may be million"),
    ("Crews drilled a well 46m deep.", "a 46 km well", False, "not km"),
    ("The scheme cost £46m.", "a 46-metre well", False, "£46m is money"),
    # --- a decimal before a scale word is a decimal
    ("1.125 million passengers", "1,125,000 passengers", True, "1.125 million"),
    ("1.125 million passengers", "1.125bn passengers", False, "not a billion"),
    ("1.198 million passengers", "1,198,000 passengers", True, "1.198 million"),
    ("a loan of EUR 1.125bn", "a loan of €1,125,000,000", True, "EUR 1.125bn"),
    (DE + "1,125 Millionen Fahrgäste", "1.125 million passengers", True, "de decimal comma"),
    (FR + "1,125 millions de passagers", "1,125,000 passengers", True, "fr decimal comma"),
    (DE + "Das Defizit beträgt 2,3 Mrd. Euro.", "a deficit of €2.3bn", True, "Mrd."),
    (DE + "Das Defizit beträgt 2,3 Mio. Euro.", "a deficit of €2.3bn", False, "Mio. != bn"),
    (FR + "un déficit de 4,2 milliards d'euros", "a €4.2bn deficit", True, "milliards"),
    (FR + "un déficit de 4,2 milliards d'euros", "a €4.2m deficit", False, "not millions"),
    # --- fractions
    ("The wall is 2\u00bd metres high.", "The wall is 2.5 metres high.", True, "2½ = 2.5"),
    ("The wall is 2\u00bd metres high.", "The wall is 21 metres high.", False, "not 21"),
    ("a wall of two and a half metres", "a wall of 2.5 metres", True, "two and a half"),
    ("a dozen boats sank", "12 boats sank", True, "a dozen"),
    ("a score of boats sank", "20 boats sank", True, "a score"),
    ("a dozen boats sank", "20 boats sank", False, "a dozen is not 20"),
    (DE + "Pegel um 1\u00be Meter gestiegen", "the level rose 1.75 metres", True, "¾"),
    # --- hard-wrapped sources
    ("The port handled 14.6\nmillion tonnes.", "14.6 million tonnes", True, "wrapped"),
    ("The port handled 14.6\nmillion tonnes.", "14.6 tonnes", False, "scale still read"),
    # --- European separators and space-grouped numbers
    (DE + "Die Stadt hat 85 000 Einwohner.", "The town has 85,000 residents.", True, "space"),
    (FR + "La ville compte 85\u202f000 habitants.", "a town of 85 000 people", True, "nnbsp"),
    (FR + "La ville compte 85 000 habitants.", "a town of 85\u00a0000 people", True, "nbsp"),
    (FR + "La ville compte 85 000 habitants.", "a town of 85,000 people", True, "fr space"),
    (DE + "Der Haushalt umfasst 1.250 Stellen.", "The budget covers 1,250 posts.", True, "de dot"),
    (ES + "La obra costó 3,5 millones de euros.", "The work cost €3.5m.", True, "es"),
    (NL + "De bouw kost 2,75 miljard euro.", "The build costs €2.75bn.", True, "nl miljard"),
    (IT + "Il progetto vale 1,8 milioni di euro.", "The project is worth €1.8m.", True, "it"),
    (FR + "Le projet coûte 3 milliards.", "The project costs 3 billion.", True, "fr milliards"),
    # --- clock times are times
    ("The meeting opens at 10am.", "The meeting opens at 10.00am.", True, "10.00am"),
    ("The meeting opens at 10am.", "The meeting opens at 11.00am.", False, "11 is not 10"),
    (DE + "Die Sitzung beginnt um 10.30 Uhr.", "The meeting starts at 10.30am.", True, "Uhr"),
    (FR + "La séance commence à 22h30.", "The session starts at 10.30pm.", True, "22h30"),
    # --- years in words
    ("It was founded in nineteen forty-four.", "It was founded in 1944.", True, "year"),
    ("It was founded in nineteen forty-four.", "It was founded in 1945.", False, "1945"),
]


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
    source = "Le total: 1,125 million."
    assert numbers_grounded(source, URL, "1.125 million", language="fr").passed
    assert not numbers_grounded(source, URL, "1.125 million", language="en").passed
    assert numbers_grounded(source, URL, "1,125 million", language="en").passed


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
