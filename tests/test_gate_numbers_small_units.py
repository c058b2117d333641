"""numbers_grounded checks a single-digit number that carries a unit or a percent sign.

The unit rules (issue 20) apply to any number with a unit: "3 percentage points" is
not grounded by "3%", "3 km" not by "3 miles", "£5" not by "$5", whatever the size
of the figure. A single-digit count ("3 people") or clock hour ("at 9am") is still
not checked: a source writes those as words or another way ("both", "a pair",
"nine o'clock") too often. The cases, in English, French and German, are in
tests/data/numbers_units.jsonl (run by tests/test_gate_numbers_units.py); every
place, person and figure is invented.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from guards.numbers import numbers_grounded

URL = "https://news.example.org/kelvard/levy"


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
