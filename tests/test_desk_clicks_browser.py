"""Issue 25: a decision pressed on the desk is never lost in silence, in a real
headless Chromium at 1280x720. It lands on the item it was pressed on, or the page
says, naming the item, why it did not.

- A press made during a page run: the run is held open by the test at its start
  (the previous run's buttons still showing) or in its middle (the next draft and
  its buttons drawn, the rest not), with a FIFO the app waits on
  (tests/browser.py `page_runs_held`, review_ui/views/holds.py), never slowed by a
  sleep.
- A press the server never hears of: the test's websocket route drops the click's
  message on its way (Playwright `Page.route_web_socket`), as a loaded machine once
  did; the page must say so, and the key pressed again must decide.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from review_ui import streamlit_adapter as adapter
from tests.browser import (
    SHORT_ANSWER_MS,
    chromium,
    dropping_page,
    focus_page,
    idle,
    page_runs_held,
    queue_of,
    running,
    serve,
    shows,
    signed_in_page,
)
from tests.desk_kit import item_status, read

pytestmark = pytest.mark.browser


def _outcome(page: Any, item_id: int) -> Any:
    """What the page says about the press on `item_id`: its decision or its refusal
    (the keyboard script's, or the server's in the message strip or the sidebar)."""
    return page.locator(".cd-text").filter(
        has_text=re.compile(rf"(^|\W)(Approved|Not approved[^:]*:) #{item_id}\b")
    )


@pytest.mark.parametrize(
    ("at", "how"),
    [("start", "click"), ("start", "key"), ("middle", "click"), ("middle", "key")],
)
def test_a_press_made_during_a_page_run_lands_or_is_refused_aloud(
    tmp_path: Path, sqlite_url: str, at: str, how: str
) -> None:
    from playwright.sync_api import expect

    with (
        serve(tmp_path, sqlite_url, queue_of("bridge", "school", "market")) as server,
        chromium() as browser,
    ):
        bridge, school = server.ids["bridge"], server.ids["school"]
        page = signed_in_page(browser, server, width=1280, height=720)
        shows(page, "bridge")
        read(page, bridge)
        focus_page(page)
        with page_runs_held(at) as release:
            page.keyboard.press("j")  # the run that draws the school draft is held
            if at == "middle":  # the school draft's buttons are drawn; its marker is not
                expect(page.locator(f'[class*="st-key-approve_{school}_"] button')).to_be_visible()
            else:  # the bridge draft's buttons, from the run before, are still showing
                expect(page.locator(adapter.APP)).not_to_have_attribute(
                    adapter.SCRIPT_STATE, adapter.NOT_RUNNING
                )
                expect(page.locator(f'[class*="st-key-approve_{bridge}_"] button')).to_be_visible()
            running(page)
            if how == "key":
                page.keyboard.press("a")
            else:
                page.get_by_role("button", name="Approve", exact=True).click()
            running(page)  # the press was made during the held run
            release()
        idle(page)
        # The press was on the draft whose button or marker was on screen: it was
        # approved, or the page says why not, naming it; no other item was decided.
        pressed = school if (at, how) == ("middle", "click") else bridge
        expect(_outcome(page, pressed).first).to_be_visible()
        said = " ".join(_outcome(page, pressed).all_inner_texts())
        status = item_status(server, pressed)
        assert status == "approved" or "Not approved" in said, (status, said)
        others = {k: item_status(server, i) for k, i in server.ids.items() if i != pressed}
        assert set(others.values()) == {"draft"}, others


def test_an_approval_the_server_never_hears_of_is_said_and_a_second_press_decides(
    tmp_path: Path, sqlite_url: str
) -> None:
    from playwright.sync_api import expect

    with (
        serve(tmp_path, sqlite_url, queue_of("bridge", "school")) as server,
        chromium() as browser,
    ):
        bridge = server.ids["bridge"]
        page, drop = dropping_page(browser, server, answer_ms=SHORT_ANSWER_MS)
        shows(page, "bridge")
        read(page, bridge)
        focus_page(page)
        drop.armed = True
        page.keyboard.press("a")  # its click never reaches the server
        unanswered = page.locator("#cd-key-unanswered")
        expect(unanswered).to_contain_text(f"Not approved yet: #{bridge}")
        expect(unanswered).to_contain_text("no answer")
        assert len(drop.dropped) == 1 and f"approve_{bridge}_" in drop.dropped[0]
        assert item_status(server, bridge) == "draft"
        page.keyboard.press("a")  # pressed again: this one reaches the server
        expect(_outcome(page, bridge).first).to_contain_text(f"Approved #{bridge}")
        expect(unanswered).to_have_count(0)
        shows(page, "school")
    assert item_status(server, bridge) == "approved"


# The keyboard script's wait for the answer, shortened by the test (tests/browser.py).
ANSWER_MS = SHORT_ANSWER_MS


def _past_the_window(page: Any, since: float) -> None:
    """Wait until the answer window of a press made at page time `since` has passed,
    and a tick of the keyboard script (50 ms) has run after it."""
    page.wait_for_function(
        "([since, ms]) => performance.now() - since > ms + 300", arg=[since, ANSWER_MS]
    )


def _click_help_during_a_held_run(page: Any, drop: Any = None) -> float:
    """Press J (its run is held at its start, the old page still showing), then click
    "Shortcuts (?)" while that run is in progress, its run request dropped on the way
    when `drop` is given; returns the page time of the click."""
    from playwright.sync_api import expect

    with page_runs_held("start") as release:
        page.keyboard.press("j")
        expect(page.locator(adapter.APP)).not_to_have_attribute(
            adapter.SCRIPT_STATE, adapter.NOT_RUNNING
        )
        if drop is not None:
            drop.armed = True
        pressed = float(page.evaluate("() => performance.now()"))
        page.get_by_role("button", name="Shortcuts (?)").click()
        running(page)  # the click was made during the held run
        release()
    return pressed


def test_a_press_answered_by_the_run_it_started_during_another_gets_no_false_line(
    tmp_path: Path, sqlite_url: str
) -> None:
    """Issue 25's one known defect: a press made while a page run is in progress is
    acted on by the run it starts, which the page's run state cannot tell from the
    one before (it stays "running"); the page must not say afterwards that the
    press got no answer."""
    from playwright.sync_api import expect

    with (
        serve(tmp_path, sqlite_url, queue_of("bridge", "school", "market")) as server,
        chromium() as browser,
    ):
        page = signed_in_page(browser, server, width=1280, height=720, answer_ms=ANSWER_MS)
        shows(page, "bridge")
        focus_page(page)
        pressed = _click_help_during_a_held_run(page)
        expect(page.locator(adapter.DIALOG)).to_contain_text("Keyboard shortcuts")  # acted on
        _past_the_window(page, pressed)
        expect(page.locator("#cd-key-unanswered")).to_have_count(0)


def test_a_press_lost_during_a_page_run_is_said_though_that_run_ends(
    tmp_path: Path, sqlite_url: str
) -> None:
    """The other side: the same press whose run request is dropped on its way (the
    websocket route) is said on screen, although the run it was made during ends
    after it (a page that took any later run as the answer hid such a press)."""
    from playwright.sync_api import expect

    with (
        serve(tmp_path, sqlite_url, queue_of("bridge", "school", "market")) as server,
        chromium() as browser,
    ):
        page, drop = dropping_page(browser, server, answer_ms=ANSWER_MS)
        shows(page, "bridge")
        focus_page(page)
        _click_help_during_a_held_run(page, drop)  # the click never reaches the server
        shows(page, "school")  # the held run ended: J was answered, the click was not
        unanswered = page.locator("#cd-key-unanswered")
        expect(unanswered).to_contain_text("Shortcuts (?)")
        expect(unanswered).to_contain_text("no answer")
        assert len(drop.dropped) == 1 and "keys_help" in drop.dropped[0]
        expect(page.locator(adapter.DIALOG)).to_have_count(0)
