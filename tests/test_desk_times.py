"""Issue 25 point 7: one time-zone rule for the whole desk (review_ui/desk/times.py):
the editor's zone (the browser's), with its name, and UTC beside it for the hover."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from review_ui.desk import times
from review_ui.desk.decisions import conflict_message
from review_ui.desk.queries import stamp
from store.status import Conflict

AT = datetime(2026, 3, 14, 9, 30, tzinfo=UTC)


@pytest.fixture
def browser_says() -> object:
    """Stand in for the browser: the zone name the views would read from the page."""
    said: dict[str, str | None] = {"zone": None}
    times.use_zone_of(lambda: said["zone"])
    yield said
    times.use_zone_of(lambda: None)


def test_a_time_reads_in_the_editors_zone_with_utc_beside_it() -> None:
    shown = times.moment(AT, times.zone_named("Asia/Kolkata"))
    assert shown is not None
    assert shown.local == "2026-03-14 15:00 IST"
    assert shown.utc == "2026-03-14 09:30:00 UTC"
    assert shown.iso == "2026-03-14T09:30:00+00:00"


def test_stored_naive_times_are_utc_and_other_offsets_are_converted() -> None:
    oslo = times.zone_named("Europe/Oslo")
    naive = times.moment(AT.replace(tzinfo=None), oslo)  # SQLite hands these back
    plus_two = times.moment(AT.astimezone(timezone(timedelta(hours=2))), oslo)
    text = times.moment("2026-03-14T09:30:00", oslo)
    assert naive == plus_two == text
    assert naive is not None and naive.local == "2026-03-14 10:30 CET"


@pytest.mark.parametrize("name", [None, "", "   ", "Mars/Olympus_Mons", "../../etc/passwd", 42])
def test_a_zone_the_browser_does_not_name_or_python_does_not_know_reads_utc(name: object) -> None:
    assert times.zone_named(name) == times.UTC_ZONE


def test_no_time_is_a_dash_not_none() -> None:
    assert times.local_text(None) == "-"
    assert times.moment("not a time") is None


def test_every_desk_stamp_follows_the_browser_zone(browser_says: dict[str, str | None]) -> None:
    """`stamp` (lists, notes, Publish now's notes) and the desk's messages written in
    a callback (a lost race names who won and when) follow the same rule."""
    assert stamp(AT) == "2026-03-14 09:30 UTC"  # no page: UTC
    browser_says["zone"] = "America/Sao_Paulo"
    assert stamp(AT) == "2026-03-14 06:30 -03"
    message = conflict_message(Conflict(7, "approved", "editor:bob", AT))
    assert "bob at 2026-03-14 06:30 -03" in message
    browser_says["zone"] = "Asia/Kolkata"
    assert stamp(AT) == "2026-03-14 15:00 IST"


def test_a_broken_zone_lookup_reads_utc(browser_says: dict[str, str | None]) -> None:
    def broken() -> str:
        raise RuntimeError("no page")

    times.use_zone_of(broken)
    assert stamp(AT) == "2026-03-14 09:30 UTC"
