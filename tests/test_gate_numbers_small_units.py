"""numbers_grounded checks a single-digit number that carries a unit or a percent sign.

The unit rules (issue 20) apply to any number with a unit: "3 percentage points" is
not grounded by "3%", "3 km" not by "3 miles", "£5" not by "$5", whatever the size
of the figure. A single-digit count ("3 people") or clock hour ("at 9am") is still
not checked: a source writes those as words or another way ("both", "a pair",
"nine o'clock") too often. English, French and German; every place, person and
figure is invented.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guards.numbers import numbers_grounded

URL = "https://news.example.org/kelvard/levy"
FR = "Le conseil de la ville a voté lundi, et les élus sont pour le projet dans la région. "
DE = "Der Rat der Stadt hat am Montag entschieden, und die Mehrheit ist nicht mit dem Plan. "

CASES = [
    # --- percent is not percentage points, whatever the size
    ("Support for the Kelvard levy rose 3 percentage points.",
     "Support for the Kelvard levy rose 3%.", False, "pp is not %"),
    ("Support for the Kelvard levy rose 3%.",
     "Support for the Kelvard levy rose 3 percentage points.", False, "% is not pp"),
    ("Support for the Kelvard levy rose 3 per cent.",
     "Support for the Kelvard levy rose 3%.", True, "per cent is %"),
    ("Support for the Kelvard levy rose three per cent.",
     "Support for the Kelvard levy rose 3%.", True, "three per cent grounds 3%"),
    ("The levy on Kelvard ferries rose 6% this winter.",
     "The levy on Kelvard ferries rose 4% this winter.", False, "an invented 4%"),
    ("Kelvard's turnout fell to 0.5 per cent.",
     "Kelvard's turnout fell to 5%.", False, "5% is not 0.5%"),
    # --- units of measure and time
    ("The Orlan trail is 3 miles long.", "The Orlan trail is 3 km long.", False, "km is not miles"),
    ("The Orlan trail is 3 km long.", "The Orlan trail is 3 km long.", True, "same unit"),
    ("The Orlan trail is five kilometres long.",
     "The Orlan trail is 5 km long.", True, "five kilometres grounds 5 km"),
    ("The Orlan ferry leaves every 5 minutes.",
     "The Orlan ferry now takes 5 minutes longer.", False, "a frequency is not a duration"),
    ("The Orlan ferry crossing takes 8 minutes.",
     "The Orlan ferry crossing takes 7 minutes.", False, "an invented 7 minutes"),
    # --- currency
    ("Each Kelvard pass costs $5.", "Each Kelvard pass costs £5.", False, "£ is not $"),
    ("Each Kelvard pass costs £5.", "Each Kelvard pass costs £5.", True, "same currency"),
    ("Each Kelvard pass costs £5.", "Each Kelvard pass costs £6.", False, "an invented £6"),
    # --- French and German
    (FR + "Le soutien a progressé de 3 points de pourcentage.",
     "Le soutien a progressé de 3 %.", False, "fr: points de pourcentage are not %"),
    (FR + "Le soutien a progressé de 3 %.",
     "Le soutien a progressé de 3 pour cent.", True, "fr: pour cent is %"),
    (DE + "Die Zustimmung stieg um 3 Prozentpunkte.",
     "Die Zustimmung stieg um 3 Prozent.", False, "de: Prozentpunkte are not Prozent"),
    (DE + "Der Steg ist 5 Meter lang.", "Der Steg ist 5 km lang.", False, "de: Meter are not km"),
    (DE + "Der Steg ist 5 Meter lang.", "Der Steg ist 5 Meter lang.", True, "de: same unit"),
    # --- still not checked: single-digit counts and clock hours
    ("The board met in Kelvard.", "3 people and 7 dogs were at the board.", True,
     "a single-digit count is not checked"),
    ("The board met in Kelvard at nine o'clock.", "The board met at 9am.", True,
     "a single-digit clock hour is not checked"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("source", "draft", "passes", "why"), CASES, ids=[f"{d!r}<-{s!r}" for s, d, _, _ in CASES]
)
def test_single_digit_with_a_unit(source: str, draft: str, passes: bool, why: str) -> None:
    v = numbers_grounded(source, URL, draft)
    assert v.passed is passes, (why, v.reason, v.evidence)


def test_a_clash_names_both_units() -> None:
    v = numbers_grounded(
        "Support for the Kelvard levy rose 3 percentage points.",
        URL,
        "Support for the Kelvard levy rose 3%.",
    )
    assert not v.passed
    [entry] = v.evidence
    assert entry["number"] == "3" and entry["unit"] == "per cent"
    assert entry["unit_mismatch"]["unit"] == "percentage points"


# Unit spellings, each with its kind: the same kind grounds, another kind does not.
UNITS = {
    "%": "%", " per cent": "%", " percentage points": "pp", " km": "km",
    " kilometres": "km", " miles": "mi", " kg": "kg", " tonnes": "t", " hours": "h",
    " minutes": "min",
}  # fmt: skip


@settings(max_examples=120, deadline=None)
@given(
    value=st.integers(1, 9),
    mine=st.sampled_from(sorted(UNITS)),
    theirs=st.sampled_from(sorted(UNITS)),
)
def test_a_single_digit_is_grounded_only_in_its_own_unit(
    value: int, mine: str, theirs: str
) -> None:
    source = f"The Kelvard figure was {value}{theirs} on the quay, the warden said."
    draft = f"The Kelvard figure was {value}{mine} on the quay."
    v = numbers_grounded(source, URL, draft)
    assert v.passed is (UNITS[mine] == UNITS[theirs]), (source, draft, v.reason)
