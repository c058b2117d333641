"""Issue 25 point 2: a flag that looks like a flag, in a real headless Chromium.

The bridge draft's last sentence says the ferry "will run"; the faithfulness
judge (tests/review_checks_material.py) found a modality error in it. The
sentence is marked in the draft itself (never green inside it), one plain line
next to the buttons says what is wrong, the checks summary names the checks in
words, and one A does not approve it: a second, deliberate key (Y) does. The
school draft's model checks never ran: they are "not run", not "failed (flag)".
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import (
    Server,
    chromium,
    focus_page,
    new_page,
    open_signed_in,
    said,
    serve,
    shows,
    signed_in_page,
)
from tests.desk_kit import item_status, read
from tests.review_checks_material import S2, checked_desk

pytestmark = pytest.mark.browser


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str) -> Iterator[Server]:
    with serve(tmp_path, sqlite_url, checked_desk, dwell_seconds=1) as running:
        yield running


def test_a_flagged_sentence_is_marked_explained_and_needs_a_second_key(server: Server) -> None:
    from playwright.sync_api import expect

    bridge = server.ids["bridge"]
    with chromium() as browser:
        page = signed_in_page(browser, server, width=1280, height=720)
        shows(page, "bridge")
        # The sentence is marked in the draft itself, and nothing in it is green.
        flagged = page.locator(".cd-draft-body .cd-flag-sentence")
        expect(flagged).to_have_count(1)
        expect(flagged).to_have_text(S2)
        expect(flagged.locator("mark.cd-grounded")).to_have_count(0)
        # One plain line next to the buttons says what is wrong, in words.
        why = page.locator(".cd-flag-why").first
        expect(why).to_be_in_viewport()
        expect(why).to_contain_text("the ferry is certain")
        expect(why).to_contain_text("the ferry is planned")
        approve = page.get_by_role("button", name=re.compile(r"^Approve"))
        why_box, button_box = why.bounding_box(), approve.bounding_box()
        assert why_box is not None and button_box is not None
        assert abs(why_box["y"] - button_box["y"]) < 160, (why_box, button_box)
        summary = page.locator(".cd-checks-summary").first
        expect(summary).to_contain_text("faithfulness judge")
        expect(summary).not_to_contain_text("claims_supported")
        # One A does not approve a flagged draft: it asks for Y.
        read(page, bridge)
        focus_page(page)
        page.keyboard.press("a")
        confirm = page.locator(".cd-flag-confirm").first
        expect(confirm).to_be_in_viewport()
        expect(confirm).to_contain_text("press Y")
        page.keyboard.press("a")  # a second A is not the deliberate key
        expect(confirm).to_be_visible()
        assert item_status(server, bridge) == "draft"
        page.keyboard.press("y")
        expect(said(page, f"Approved #{bridge}")).to_be_visible()
    assert item_status(server, bridge) == "approved"


def test_checks_that_never_ran_are_not_run_not_failed(server: Server) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        page = new_page(browser, server, width=1280, height=720)
        open_signed_in(page, server, at=f"/?item={server.ids['school']}")
        shows(page, "school")
        summary = page.locator(".cd-checks-summary").first
        expect(summary).to_contain_text("not run")
        expect(summary).not_to_contain_text("flagged")
        main = page.locator("[data-testid=stMain]")
        expect(main).to_contain_text("not run")
        expect(main).not_to_contain_text("failed (flag)")
        # And a draft whose checks never ran needs no second key: A approves it.
        read(page, server.ids["school"])
        focus_page(page)
        page.keyboard.press("a")
        expect(said(page, f"Approved #{server.ids['school']}")).to_be_visible()
