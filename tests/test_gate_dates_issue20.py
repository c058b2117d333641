"""dates_grounded, issue 20: slashed dates, a bare month, and a weekday or relative
day that the source gives only to another event. Every place and event is invented.
"""

from __future__ import annotations

import pytest

from guards.dates import dates_grounded, find_dates

URL = "https://news.example.org/kelbrook/ferry"

SOURCE = (
    "Kelbrook council announced on Tuesday that the ferry to Orrin Island will stop "
    "running for repairs. The last crossing is on Friday, and the service resumes on "
    "12 March 2026. Bids for the repair contract close in April. Yesterday the harbour "
    "master inspected the slipway. The council meets on 03/11/2026 to choose a builder."
)

CASES = [
    # (draft, passes, why)
    ("The ferry resumes on 12/03/2026.", True, "slashed: 12 March 2026"),
    ("The ferry resumes on 12/04/2026.", False, "slashed: neither 12 April nor 4 December"),
    ("The ferry resumes on 03/12/2026.", True, "slashed, month first: 12 March"),
    ("The ferry resumes on 13/03/2026.", False, "13 March is not stated"),
    ("The council meets on 3 November to choose a builder.", True, "source slashed date"),
    ("The council meets on 3 December to choose a builder.", False, "not 3 December"),
    ("The ferry service resumes in March.", True, "a bare month the source gives"),
    ("The ferry service resumes in May.", False, "May is not in the source"),
    ("Bids close in April.", True, "bare month"),
    ("Bids close in June.", False, "June is not stated"),
    ("May we see the contract, councillors asked.", True, "May as a verb is not a month"),
    ("The last crossing is on Friday.", True, "weekday of the same event"),
    ("The council announced the closure on Tuesday.", True, "same event: announced"),
    ("The last ferry crossing is on Tuesday.", False, "Tuesday belongs to the announcement"),
    ("The ferry resumes on Friday.", False, "Friday is the last crossing, not resumption"),
    ("Yesterday the harbour master inspected the slipway.", True, "relative, same event"),
    ("The council announced the closure yesterday.", False, "yesterday was the inspection"),
]


@pytest.mark.parametrize(("draft", "passes", "why"), CASES, ids=[c[2] for c in CASES])
def test_dates(draft: str, passes: bool, why: str) -> None:
    v = dates_grounded(SOURCE, URL, draft)
    assert v.passed is passes, (why, v.reason, v.evidence)


def test_slashed_and_bare_month_are_read() -> None:
    kinds = [(d.kind, d.value) for d in find_dates("On 12/03/2026, in March and on 03/11.")]
    assert ("day_month", "12-3|3-12") in kinds
    assert ("month", "3") in kinds
    assert ("day_month", "3-11|11-3") in kinds


def test_other_event_is_explained() -> None:
    v = dates_grounded(SOURCE, URL, "The ferry resumes on Friday.")
    (entry,) = v.evidence
    assert entry["found"] is False
    assert "last crossing" in entry["other_event"]
