"""dates_grounded reads the weekday forms a newsroom writes, in the source (and
the draft): "Tue", "Tues.", "Thurs", "Weds", "Sat 11 January"... without taking
the words "sat", "wed", "sun", "mon" or "thus" for days."""

from __future__ import annotations

import pytest

from guards.dates import dates_grounded

DRAFT = "The Orrin Dyke board met on Thursday."

# (source, passes, why): does the source ground "on Thursday"?
SOURCES = [
    ("The board met on Thursday.", True, "the full name"),
    ("Board meeting, Thu 9 January: pumps.", True, "Thu"),
    ("Board meeting (Thur.) on the pumps.", True, "Thur."),
    ("Board meeting, Thurs., Jan. 9: pumps.", True, "Thurs., with a date"),
    ("BOARD MEETING THURS 9 JAN", True, "capitals, as a listing sets it"),
    ("Thus the board met again.", False, "thus is a word"),
    ("The board met on Friday.", False, "another day"),
    ("Listings: Fri 10 Jan, board meeting.", False, "Fri is Friday"),
]

# Ambiguous abbreviations: a word unless capitalised and followed by a date.
AMBIGUOUS = [
    ("Board meeting, Sat 11 January.", "Saturday", True, "Sat with a date"),
    ("Board meeting, Sat., Jan. 11.", "Saturday", True, "Sat. with a date"),
    ("The board sat until late.", "Saturday", False, "sat: a verb"),
    ("The chair sat. 11 members stayed.", "Saturday", False, "sat, full stop: a verb"),
    ("Dredging, Wed 8 January.", "Wednesday", True, "Wed with a date"),
    ("Dredging, Weds 8 January.", "Wednesday", True, "Weds with a date"),
    ("The chair will wed in June.", "Wednesday", False, "wed: a verb"),
    ("Read it in the Sun. 12 letters came.", "Sunday", False, "the Sun, a newspaper"),
    ("Open day Sun 12 January.", "Sunday", True, "Sun with a date"),
    ("The Mon valley flooded.", "Monday", False, "Mon: a name"),
    ("Vote: Mon. 13 Jan.", "Monday", True, "Mon. with a date"),
    ("Hearing Tues. at the hall.", "Tuesday", True, "Tues. is unambiguous"),
    ("Hearing Tue at the hall.", "Tuesday", True, "Tue"),
]


@pytest.mark.parametrize(("source", "passes", "why"), SOURCES, ids=[s[0] for s in SOURCES])
def test_source_weekday_forms(source: str, passes: bool, why: str) -> None:
    v = dates_grounded(source, None, DRAFT)
    assert v.passed is passes, (why, v.reason, v.evidence)


@pytest.mark.parametrize(
    ("source", "day", "passes", "why"), AMBIGUOUS, ids=[s[0] for s in AMBIGUOUS]
)
def test_ambiguous_abbreviations(source: str, day: str, passes: bool, why: str) -> None:
    v = dates_grounded(source, None, f"The board met on {day}.")
    assert v.passed is passes, (why, v.reason, v.evidence)


def test_the_source_span_points_at_the_abbreviation() -> None:
    source = "Board meeting, Thurs., Jan. 9: pumps."
    v = dates_grounded(source, None, DRAFT)
    (entry,) = v.evidence
    start, end = entry["source_span"]
    assert source[start:end].lower().startswith("thurs")


# The draft's own abbreviations are held to the source too.
DRAFTS = [
    ("The board met Thu 9 January.", True, "Thu in the draft"),
    ("The board met Fri 9 January.", False, "Fri: the source says Thursday"),
    ("The board met Sat. 9 January.", False, "Sat. with a date: Saturday"),
    ("The board sat until late.", True, "sat: a verb in the draft too"),
]


@pytest.mark.parametrize(("draft", "passes", "why"), DRAFTS, ids=[d[0] for d in DRAFTS])
def test_draft_abbreviations(draft: str, passes: bool, why: str) -> None:
    source = "The board met on Thursday, 9 January 2026, and sat until late."
    v = dates_grounded(source, None, draft)
    assert v.passed is passes, (why, v.reason, v.evidence)
