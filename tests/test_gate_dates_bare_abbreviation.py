"""A draft's bare English abbreviated month ("in Sept.", "by Oct.") is a month (issue 20),
where it cannot be anything else: capitalised, with its full stop, after a preposition
that takes a month ("in", "since", "by", "until", "from", "early"...), and not followed by
a day or a year (then it is a calendar date, read as before). "Jan." is a first name
too ("a letter from Jan."): it is a month after a word that takes a time, not a
person ("in Jan.", German "im Jan."; session 9), and after "from", "by", "before" or
"after" unless a capitalised word follows ("from Jan. onwards", "by Jan."; not "from
Jan. Olde"; session 10). After those words it may still be the first name: a source
that names a Jan grounds it as well as one that has January. The month is compared by
value, so "in Sept." is grounded by "September", "Sept. 14" or 2026-09-14 in the source,
and refused when the source has another month. Every place, person and event is invented.
"""

from __future__ import annotations

import pytest

from guards.dates import dates_grounded, find_dates

URL = "https://news.example.org/ferry"

SOURCE = (
    "The Harwick ferry company said on Tuesday that the Millbeck crossing will close in "
    "September for dredging and that new fares apply from October. The harbour master, "
    "Ilse Dorran, said the pontoon would be rebuilt by December."
)
SHORT = (
    "The Harwick ferry company said the Millbeck crossing closes on Sept. 14 for dredging; "
    "fares change on 2026-10-01."
)


@pytest.mark.parametrize(
    ("draft", "month"),
    [
        ("The crossing closes in Sept. for dredging.", "9"),
        ("The crossing closes in Sep. for dredging.", "9"),
        ("New fares apply from Oct. onwards.", "10"),
        ("The pontoon is rebuilt by Dec.", "12"),
        ("Work began early Feb. at the quay.", "2"),
        ("Dredging continues until Nov. at the latest.", "11"),
        ("The quay has been shut since Mar. for repairs.", "3"),
        ("The fleet is refitted in mid-Aug. each year.", "8"),
    ],
)
def test_a_bare_abbreviated_month_is_read(draft: str, month: str) -> None:
    months = [(d.kind, d.value) for d in find_dates(draft) if d.kind == "month"]
    assert months == [("month", month)]


@pytest.mark.parametrize(
    "draft",
    [
        "The award went to a letter from Jan. Olde wrote it.",  # Jan.: a first name
        "A speech by Jan. The crowd cheered.",
        "The ferry was in sept. weeks of repair.",  # not capitalised: not this month
        "Closes in Sept 2026 for dredging.",  # no full stop: a calendar date or nothing
    ],
)
def test_not_a_bare_month(draft: str) -> None:
    assert [d for d in find_dates(draft) if d.kind == "month"] == []


@pytest.mark.parametrize(
    ("source", "draft", "passes"),
    [
        (SOURCE, "The Millbeck crossing closes in Sept. for dredging.", True),
        (SOURCE, "New fares apply from Oct., the company said.", True),
        (SOURCE, "The pontoon is rebuilt by Dec., Ms Dorran said.", True),
        (SOURCE, "The Millbeck crossing closes in Nov. for dredging.", False),
        (SOURCE, "New fares apply from Feb., the company said.", False),
        (SHORT, "The Millbeck crossing closes in Sept. for dredging.", True),
        (SHORT, "New fares apply from Oct.", True),
        (SHORT, "New fares apply from Dec.", False),
    ],
)
def test_a_bare_abbreviated_month_is_held_to_the_source(
    source: str, draft: str, passes: bool
) -> None:
    verdict = dates_grounded(source, URL, draft)
    assert verdict.passed is passes, verdict.reason
    assert [e["kind"] for e in verdict.evidence] == ["month"]


# "Jan." is a month after a preposition that takes only a time ("in", "since", "until",
# "during", "early", "mid", "late", "end of"...; German "im", "seit", "bis", "ab", "Anfang",
# "Mitte", "Ende"): no person is "in Jan." or "im Jan.". After "from", "by", "before" or
# "after" it is a month too unless a capitalised word follows (a surname, or a new
# sentence after a name: see `test_not_a_bare_month`).
@pytest.mark.parametrize(
    ("draft", "language"),
    [
        ("The crossing closes in Jan. for dredging.", None),
        ("The quay has been shut since Jan. for repairs.", None),
        ("Dredging continues until mid-Jan. at the latest.", None),
        ("Die Fähre fährt im Jan. nicht, sagte der Hafenmeister.", "de"),
        ("Die Brücke ist seit Jan. gesperrt, teilte der Kreistag mit.", "de"),
        ("Die Arbeiten dauern bis Mitte Jan. an, sagte die Bauleiterin.", "de"),
        ("New fares apply from Jan., the company said.", None),
        ("New fares apply from Jan. onwards.", None),
        ("The pontoon is rebuilt by Jan.", None),
        ("The quay is rebuilt before Jan. at the latest.", None),
    ],
)
def test_a_bare_jan_after_a_time_preposition_is_january(draft: str, language: str | None) -> None:
    months = [(d.kind, d.value) for d in find_dates(draft, language=language) if d.kind == "month"]
    assert months == [("month", "1")]


SOURCE_JAN = (
    "The Harwick ferry company said on Tuesday that the Millbeck crossing will close in "
    "January for dredging. Der Kreistag von Kelbrunn teilte mit, die Fähre fahre im Januar "
    "nicht."
)


@pytest.mark.parametrize(
    ("source", "draft", "language", "passes"),
    [
        (SOURCE_JAN, "The Millbeck crossing closes in Jan. for dredging.", None, True),
        (SOURCE, "The Millbeck crossing closes in Jan. for dredging.", None, False),
        (SOURCE_JAN, "Die Fähre fährt im Jan. nicht, teilte der Kreistag mit.", "de", True),
        (SOURCE, "Die Fähre fährt im Jan. nicht, teilte der Kreistag mit.", "de", False),
        (SOURCE_JAN, "The Millbeck crossing closes from Jan. for dredging.", None, True),
        (SOURCE, "The Millbeck crossing closes from Jan. for dredging.", None, False),
        (SOURCE_JAN, "The pontoon is rebuilt by Jan.", None, True),
        (SOURCE, "The pontoon is rebuilt by Jan.", None, False),
        # "by Jan." may be the first name: a source naming a Jan grounds it too
        (SOURCE + " Jan Orrick, a pilot, read a poem.", "A poem was read by Jan.", None, True),
        (SOURCE + " Jan Orrick, a pilot, read a poem.", "A poem was read in Jan.", None, False),
    ],
)
def test_a_bare_jan_is_held_to_the_source(
    source: str, draft: str, language: str | None, passes: bool
) -> None:
    verdict = dates_grounded(source, URL, draft, language=language)
    assert verdict.passed is passes, verdict.reason
    assert [e["kind"] for e in verdict.evidence] == ["month"]
