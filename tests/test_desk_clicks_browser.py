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
    chromium,
    dropping_page,
    focus_page,
    idle,
    new_page,
    page_runs_held,
    queue_of,
    running,
    serve,
    shows,
    sign_in,
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
        page = new_page(browser, server, width=1280, height=720)
        page.goto(server.base)
        sign_in(page)
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
        page, drop = dropping_page(browser, server)
        shows(page, "bridge")
        read(page, bridge)
        focus_page(page)
        drop.armed = True
        page.keyboard.press("a")  # its click never reaches the server
        unanswered = page.locator("#cd-key-unanswered")
        expect(unanswered).to_contain_text(f"Not approved yet: #{bridge}")
        expect(unanswered).to_contain_text("no answer")
        assert drop.dropped == 1
        assert item_status(server, bridge) == "draft"
        page.keyboard.press("a")  # pressed again: this one reaches the server
        expect(_outcome(page, bridge).first).to_contain_text(f"Approved #{bridge}")
        expect(unanswered).to_have_count(0)
        shows(page, "school")
    assert item_status(server, bridge) == "approved"
