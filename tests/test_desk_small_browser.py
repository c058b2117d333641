"""Issue 25 point 7, in a real headless Chromium: a shared `?item=` link never
carries another editor's unsent reason (while a reload keeps one's own); one
pending count everywhere; the Discarded list leads with the gate that discarded
the item; the queue page has headings a screen reader can navigate."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser import (
    QUEUE_KEYS,
    chromium,
    focus_page,
    idle,
    new_page,
    open_signed_in,
    queue_of,
    serve,
    shows,
    signed_in_page,
)
from tests.desk_kit import decide_as, item_status, open_view
from tests.review_seed import ARTICLES

pytestmark = pytest.mark.browser


def test_a_shared_link_never_carries_an_unsent_reason(tmp_path: Path, sqlite_url: str) -> None:
    from playwright.sync_api import expect

    seed = queue_of("bridge", "school", editors=("alice", "bob"))
    with serve(tmp_path, sqlite_url, seed) as server, chromium() as browser:
        alice = signed_in_page(browser, server, width=1280, height=720)
        shows(alice, "bridge")
        alice.get_by_label("Reason for rejecting").fill("Alice's private doubt")
        alice.locator(".cd-headline").first.click()  # the box hands its value over
        expect(alice).to_have_url(re.compile(rf"item={server.ids['bridge']}\b"))
        link = alice.url
        assert "private" not in link
        bob = new_page(browser, server, width=1280, height=720)
        open_signed_in(bob, server, "bob", at=link.removeprefix(server.base))
        shows(bob, "bridge")
        expect(bob.get_by_label("Reason for rejecting")).to_have_value("")
        # Alice's own reload keeps her reason.
        alice.reload()  # a reload keeps her signed in (her session token)
        shows(alice, "bridge")
        expect(alice.get_by_label("Reason for rejecting")).to_have_value("Alice's private doubt")


def test_a_link_copied_off_the_queue_names_no_draft(tmp_path: Path, sqlite_url: str) -> None:
    """Alice moves to the school draft, then leaves the queue for Published: from
    then on the address names no draft (the keyboard script used to write the last
    draft back into it on every view), so a link copied there opens Bob's queue at
    its own first draft, not at the one Alice last had on screen."""
    from playwright.sync_api import expect

    seed = queue_of("bridge", "school", editors=("alice", "bob"))
    with serve(tmp_path, sqlite_url, seed) as server, chromium() as browser:
        alice = signed_in_page(browser, server, width=1280, height=720)
        shows(alice, "bridge")
        focus_page(alice)
        alice.keyboard.press("j")
        shows(alice, "school")
        expect(alice).to_have_url(re.compile(rf"[?&]item={server.ids['school']}\b"))
        for view in ("Published", "Approved"):  # and it stays so, run after run
            open_view(alice, view)
            expect(alice.get_by_role("heading", name=view, level=1)).to_be_visible()
            idle(alice)
            expect(alice).not_to_have_url(re.compile(r"[?&]item="))
        link = alice.url
        bob = new_page(browser, server, width=1280, height=720)
        open_signed_in(bob, server, "bob", at=link.removeprefix(server.base))
        shows(bob, "bridge")
        expect(bob).to_have_url(re.compile(rf"[?&]item={server.ids['bridge']}\b"))


def test_a_or_y_off_the_queue_says_there_is_no_draft_here(tmp_path: Path, sqlite_url: str) -> None:
    """A and Y approve only the draft open in the queue. Pressed on another view
    (Published, Approved: no draft is on screen there), they approve nothing and
    say so plainly, where the editor is looking; they used to say that "the draft
    on screen is still being drawn", as if it were about to be approved."""
    from playwright.sync_api import expect

    seed = queue_of("bridge", "school", editors=("alice", "bob"))
    with serve(tmp_path, sqlite_url, seed) as server, chromium() as browser:
        bridge = server.ids["bridge"]
        decide_as(server, "bob", server.ids["school"], "approve")
        page = signed_in_page(browser, server, width=1280, height=720)
        shows(page, "bridge")
        refusal = page.locator("#cd-key-refusal")
        for view in ("Published", "Approved"):
            open_view(page, view)
            title = page.get_by_role("heading", name=view, level=1)
            expect(title).to_be_visible()
            idle(page)
            title.click()  # the cursor out of the sidebar's choice of view
            for key in ("a", "y"):
                page.keyboard.press(key)
                expect(refusal).to_have_text(
                    "Not approved: there is no draft on this page. A and Y approve the "
                    "draft open in the Review queue."
                )
                expect(refusal).to_be_in_viewport()
                page.keyboard.press("Escape")  # any key clears the line
                expect(refusal).to_have_count(0)
        assert item_status(server, bridge) == "draft"
        assert item_status(server, server.ids["school"]) == "approved"


def test_one_pending_count_and_headings(tmp_path: Path, sqlite_url: str) -> None:
    from playwright.sync_api import expect

    seed = queue_of(*QUEUE_KEYS, editors=("alice", "bob"))
    with serve(tmp_path, sqlite_url, seed) as server, chromium() as browser:
        bob = signed_in_page(browser, server, "bob", width=1280, height=720)
        shows(bob, "bridge")  # bob holds the bridge draft
        alice = signed_in_page(browser, server, "alice", width=1280, height=720)
        shows(alice, "school")
        count = alice.locator(".cd-count").first
        expect(count).to_contain_text("3 pending drafts")
        expect(alice.locator(".cd-pending").first).to_have_text(re.compile(r"^3 pending\b"))
        # Headings: the page, and the draft's headline under it.
        expect(alice.get_by_role("heading", name="Review queue", level=1)).to_be_visible()
        expect(
            alice.get_by_role("heading", name=ARTICLES["school"].headline, level=2)
        ).to_be_visible()


def test_the_discarded_list_leads_with_the_gate(tmp_path: Path, sqlite_url: str) -> None:
    from playwright.sync_api import expect

    seed = queue_of("bridge", "wrong_number")
    with serve(tmp_path, sqlite_url, seed) as server, chromium() as browser:
        page = signed_in_page(browser, server, width=1280, height=720)
        page.locator("[data-testid=stSidebar]").get_by_text("Discarded", exact=True).click()
        expect(page.get_by_role("heading", name="Discarded", level=1)).to_be_visible()
        headers = page.locator("table.cd-list th")
        expect(headers.first).to_have_text("gate")
        expect(page.locator("table.cd-list tbody tr td").first).to_have_text("numbers_grounded")
