"""Issue 25 point 3: no one-click mass action, in a real headless Chromium.

"Reject the others as duplicates" shows the whole list and asks for a
confirmation where the editor is looking; a draft another editor edited or
left a note on is listed but not included unless the editor ticks it; the
rejection has Undo like a single decision. A draft is also compared with the
stories already approved (the same story was approved three times)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from review_ui.desk.decisions import Reviewer, edit
from store.db import session_scope
from store.models import Item
from store.notes import add_note
from tests.browser import (
    Server,
    chromium,
    new_page,
    open_signed_in,
    said,
    serve,
    signed_in_page,
)
from tests.desk_kit import decide_as, headline_is, item_status
from tests.dup_material import ARTICLES as STORIES
from tests.dup_material import story
from tests.review_seed import seed_article, seed_editor

pytestmark = pytest.mark.browser

KEYS = ("warehouse-a", "warehouse-b", "warehouse-u", "closure-a", "closure-b", "ferry-a")
BOB = Reviewer("bob", "editor")


def _desk(engine: Engine) -> dict[str, int]:
    ids = {key: seed_article(engine, story(key)) for key in KEYS}
    seed_editor(engine, "alice")
    seed_editor(engine, "bob")
    with session_scope(engine) as session:
        add_note(session, ids["warehouse-b"], "bob", "asked the fire service for a figure")
        item = session.get(Item, ids["warehouse-u"])
        assert item is not None
        edit(
            session,
            BOB,
            item.id,  # type: ignore[arg-type]
            item.version,
            "Warehouse fire: the update",
            item.summary or "",
            gate_modes={},
            min_source_words=40,
        )
    return ids


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str) -> Iterator[Server]:
    with serve(tmp_path, sqlite_url, _desk, undo_seconds=300) as running:
        yield running


def test_duplicates_are_listed_confirmed_and_undone(server: Server) -> None:
    from playwright.sync_api import expect

    ids = server.ids
    kept, noted, edited = ids["warehouse-a"], ids["warehouse-b"], ids["warehouse-u"]
    with chromium() as browser:
        page = signed_in_page(browser, server, width=1280, height=720)
        headline_is(page, STORIES["warehouse-a"][0])
        page.get_by_role("button", name="Reject these…").click()
        # Nothing is rejected yet: the whole list, on screen where the button was.
        confirm = page.locator(".cd-confirm").first
        expect(confirm).to_be_in_viewport()
        expect(confirm).to_contain_text(f"#{noted}")
        expect(confirm).to_contain_text(f"#{edited}")
        expect(confirm).to_contain_text("has a note by bob")
        expect(confirm).to_contain_text("edited by bob")
        assert item_status(server, noted) == item_status(server, edited) == "draft"
        # Neither is included unless the editor ticks it.
        expect(page.get_by_role("button", name=re.compile(r"^Confirm: reject"))).to_have_text(
            "Confirm: reject 0"
        )
        page.get_by_text(f"Include #{noted}").click()
        page.get_by_role("button", name="Confirm: reject 1").click()
        expect(page.locator(".cd-message")).to_contain_text(
            f"Rejected as duplicates of #{kept} 1: #{noted}"
        )
        assert item_status(server, noted) == "rejected"
        assert item_status(server, edited) == "draft"
        # Undo, like a single decision.
        page.get_by_role("button", name="Undo 1", exact=True).click()
        expect(said(page, "Undone")).to_be_visible()
    assert item_status(server, noted) == "draft"
    assert item_status(server, kept) == "draft"


def test_a_draft_is_compared_with_approved_stories(server: Server) -> None:
    from playwright.sync_api import expect

    ids = server.ids
    decide_as(server, "bob", ids["closure-a"], "approve")
    with chromium() as browser:
        page = new_page(browser, server, width=1280, height=720)
        open_signed_in(page, server, at=f"/?item={ids['closure-b']}")
        headline_is(page, STORIES["closure-b"][0])
        expect(said(page, f"#{ids['closure-a']}").first).to_contain_text("approved")
