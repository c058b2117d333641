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


# --- the same rules in French and German (issue 20: adversarial cases in three languages).
# A source that writes a date with slashes grounds the draft that writes it in words, month
# and year included ("12/03/2026" states 12 March 2026, and so March 2026).

SOURCE_FR = (
    "Le conseil de Vellmont a annoncé mardi l'arrêt du bac vers l'île d'Orrin. La dernière "
    "traversée aura lieu vendredi, et le service reprendra le 12/03/2026. Les offres pour "
    "les réparations sont attendues en avril."
)
SOURCE_DE = (
    "Der Stadtrat von Ostbrück hat am Dienstag angekündigt, dass die Fähre zur Insel Orrin "
    "eingestellt wird. Die letzte Überfahrt ist am Freitag, der Betrieb beginnt wieder am "
    "12/03/2026. Angebote für die Reparatur sind bis April möglich."
)
SOURCE_SLASHED_EN = (
    "Kelbrook council said on Tuesday that the ferry will stop running. The service "
    "resumes on 12/03/2026, after repairs to the slipway."
)

SOURCE_SHORT_YEAR = "Kelbrook council said the ferry returns on 12/03/26, after repairs."

OTHER_LANGUAGE_CASES = [
    # (source, language, draft, passes, why)
    (SOURCE_FR, "fr", "Le service reprendra le 12 mars 2026.", True, "fr: 12/03/2026 in words"),
    (SOURCE_FR, "fr", "Le service reprendra en mars 2026.", True, "fr: its month and year"),
    (SOURCE_FR, "fr", "Le service reprendra le 12 avril 2026.", False, "fr: not 12 April"),
    (SOURCE_FR, "fr", "Le service reprendra en mars 2027.", False, "fr: not in 2027"),
    (SOURCE_FR, "fr", "Les offres sont attendues en juin.", False, "fr: June is not stated"),
    (SOURCE_FR, "fr", "Le service reprendra vendredi.", False, "fr: Friday is the last crossing"),
    (SOURCE_FR, "fr", "La dernière traversée aura lieu vendredi.", True, "fr: same event"),
    (SOURCE_DE, "de", "Der Betrieb beginnt wieder am 12. März 2026.", True, "de: in words"),
    (SOURCE_DE, "de", "Der Betrieb beginnt im März 2026 wieder.", True, "de: month and year"),
    (SOURCE_DE, "de", "Der Betrieb beginnt wieder am 12. April 2026.", False, "de: not April"),
    (SOURCE_DE, "de", "Angebote sind bis Juni möglich.", False, "de: June is not stated"),
    (SOURCE_DE, "de", "Der Betrieb beginnt wieder am Dienstag.", False, "de: Tuesday's event"),
    (SOURCE_DE, "de", "Die letzte Überfahrt ist am Freitag.", True, "de: same event"),
    (SOURCE_SLASHED_EN, "en", "The service resumes on 12 March 2026.", True, "en: in words"),
    (SOURCE_SLASHED_EN, "en", "The service resumes on 3 December 2026.", True, "en: month first"),
    (SOURCE_SLASHED_EN, "en", "The service resumes in March 2025.", False, "en: another year"),
    (SOURCE_SLASHED_EN, "en", "The service resumes in April 2026.", False, "en: another month"),
    (SOURCE_SHORT_YEAR, "en", "The ferry returns in March 2026.", True, "en: 12/03/26"),
    (SOURCE_SHORT_YEAR, "en", "The ferry returns in March 2025.", False, "en: 26 is not 2025"),
    (SOURCE_SHORT_YEAR, "de", "Die Fähre kommt im März 2026 zurück.", True, "de: 12/03/26"),
]


@pytest.mark.parametrize("case", OTHER_LANGUAGE_CASES, ids=lambda case: case[4])
def test_dates_in_french_german_and_slashed(case: tuple[str, str, str, bool, str]) -> None:
    source, language, draft, passes, why = case
    for declared in (language, None):  # declared by the feed, or detected
        v = dates_grounded(source, URL, draft, language=declared)
        assert v.passed is passes, (why, declared, v.reason, v.evidence)


def test_a_year_after_a_blank_line_is_not_the_month_s() -> None:
    """The next paragraph's first word is not the year of a date ending the one before
    (hypothesis found an extractive draft joined that way)."""
    source = "2026 will be a busy year. The ferry stops on 9 January.\n\nRepairs follow."
    draft = "The ferry stops on 9 January\n\n2026 will be a busy year."
    kinds = [(d.kind, d.value) for d in find_dates(draft)]
    assert ("month_year", "1-2026") not in kinds and ("day_month", "9-1") in kinds
    assert dates_grounded(source, URL, draft).passed
    assert ("month_year", "1-2026") in [
        (d.kind, d.value) for d in find_dates("on 9 January,\n2026")
    ]  # a line break alone (a hard-wrapped line) still joins them
