"""Issue 25 point 4: every action form is bound to its item and version, in a real
headless Chromium. A take-back refused for a missing reason keeps the item the
editor chose; the second try takes back exactly that one, never the newest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser import chromium, idle, queue_of, said, serve, signed_in_page
from tests.desk_kit import decide_as, item_status

pytestmark = pytest.mark.browser


def _take_back(page, item_id: int, reason: str) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    box = page.locator("details").filter(has_text="Take an approval back")
    expect(box).to_have_count(1)
    # A form submitted while the run that drew it is still going can be lost on a
    # loaded machine (tests/test_desk_publish_browser.py `_form_ready`).
    idle(page)
    if box.get_attribute("open") is None:
        box.locator("summary").click()
    form = page.locator("[data-testid=stForm]").filter(has_text="Take back to draft")
    picker = form.locator("[data-testid=stSelectbox]").get_by_role("combobox")
    if not (picker.input_value() or "").startswith(f"#{item_id} "):
        picker.click()
        page.get_by_role("option", name=f"#{item_id} ", exact=False).first.click()
    expect(picker).to_have_value(re.compile(rf"^#{item_id} "))
    form.get_by_label("Reason (required)").fill(reason)
    form.get_by_role("button", name="Take back to draft").click()


def test_a_refused_take_back_keeps_the_chosen_item(tmp_path: Path, sqlite_url: str) -> None:
    from playwright.sync_api import expect

    seed = queue_of("bridge", "school", "market", editors=("alice", "bob"))
    with serve(tmp_path, sqlite_url, seed) as server, chromium() as browser:
        ids = server.ids
        for key in ("bridge", "school", "market"):  # the market is the newest approval
            decide_as(server, "bob", ids[key], "approve")
        page = signed_in_page(browser, server, height=1000)
        page.locator("[data-testid=stSidebar]").get_by_text("Approved", exact=True).click()
        expect(page.get_by_role("button", name="Publish now")).to_be_visible()
        # No reason: refused, and the form still names the bridge story.
        _take_back(page, ids["bridge"], "")
        expect(said(page, "Not taken back")).to_be_visible()
        form = page.locator("[data-testid=stForm]").filter(has_text="Take back to draft")
        picker = form.locator("[data-testid=stSelectbox]").get_by_role("combobox")
        expect(picker).to_have_value(re.compile(rf"^#{ids['bridge']} "))
        idle(page)
        # With a reason, without touching the item: the bridge story, and only it.
        form.get_by_label("Reason (required)").fill("The council corrected the dates")
        form.get_by_role("button", name="Take back to draft").click()
        expect(said(page, f"#{ids['bridge']}").first).to_contain_text("draft again")
    assert item_status(server, ids["bridge"]) == "draft"
    assert item_status(server, ids["market"]) == "approved"
    assert item_status(server, ids["school"]) == "approved"
