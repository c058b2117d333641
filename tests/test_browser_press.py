"""tests/browser.py `press`, the one way the browser tests submit a form: a click the
page never acted on (the clean-clone CI's lost Retract) is clicked again, and a
click the page sent is followed to the end of the page run that answers it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import chromium, new_page, press, queue_of, serve
from tests.review_seed import PASSWORD

pytestmark = pytest.mark.browser

# Swallows the next `n` clicks on the Sign in button before the page sees them, as
# a click lost in the browser would be: no handler of the page runs.
_SWALLOW = """(n) => {
  window.__cdSwallowed = 0;
  const stop = (event) => {
    const button = event.target.closest && event.target.closest("button");
    if (!button || !button.textContent.includes("Sign in") || window.__cdSwallowed >= n) return;
    event.stopImmediatePropagation();
    event.preventDefault();
    if (event.type === "click") window.__cdSwallowed += 1;
  };
  for (const type of ["pointerdown", "mousedown", "pointerup", "mouseup", "click"]) {
    window.addEventListener(type, stop, true);
  }
}"""


def test_a_click_the_page_never_sent_is_pressed_again(tmp_path: Path, sqlite_url: str) -> None:
    from playwright.sync_api import expect

    with serve(tmp_path, sqlite_url, queue_of("bridge")) as server, chromium() as browser:
        page = new_page(browser, server, width=1280, height=720)
        page.goto(server.base)
        page.get_by_role("textbox", name="Name").fill("alice")
        page.get_by_role("textbox", name="Password").fill(PASSWORD)
        page.evaluate(_SWALLOW, 1)
        press(page, page.get_by_role("button", name="Sign in"))
        assert page.evaluate("() => window.__cdSwallowed") == 1  # the first click was lost
        # press returned after the page run its second click started had ended.
        expect(page.locator(".cd-count").first).to_contain_text("Review queue", timeout=1)
