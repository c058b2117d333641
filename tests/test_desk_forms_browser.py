"""Issue 25 point 4: every action form is bound to its item and version, in a real
headless Chromium. A take-back refused for a missing reason keeps the item the
editor chose; the second try takes back exactly that one, never the newest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlmodel import Session

from store.db import open_store
from store.models import Item
from tests.browser import choose, chromium, idle, press, queue_of, said, serve, signed_in_page
from tests.desk_kit import decide_as, item_status

pytestmark = pytest.mark.browser


def _take_back(page, item_id: int, reason: str) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    box = page.locator("details").filter(has_text="Take an approval back")
    expect(box).to_have_count(1)
    idle(page)  # the run that draws the form has ended (its submit goes through `press`)
    if box.get_attribute("open") is None:
        box.locator("summary").click()
    form = page.locator("[data-testid=stForm]").filter(has_text="Take back to draft")
    picker = form.locator("[data-testid=stSelectbox]").get_by_role("combobox")
    if not (picker.input_value() or "").startswith(f"#{item_id} "):
        choose(page, picker, f"#{item_id} ", exact=False)
    expect(picker).to_have_value(re.compile(rf"^#{item_id} "))
    form.get_by_label("Reason (required)").fill(reason)
    press(page, form.get_by_role("button", name="Take back to draft"))


def test_a_refused_take_back_keeps_the_chosen_item(tmp_path: Path, sqlite_url: str) -> None:
    from playwright.sync_api import expect

    seed = queue_of("bridge", "school", "market", editors=("alice", "bob"))
    with serve(tmp_path, sqlite_url, seed) as server, chromium() as browser:
        ids = server.ids
        for key in ("bridge", "school", "market"):  # the market is the newest approval
            decide_as(server, "bob", ids[key], "approve")
        page = signed_in_page(browser, server, width=1280, height=720)
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
        press(page, form.get_by_role("button", name="Take back to draft"))
        expect(said(page, f"#{ids['bridge']}").first).to_contain_text("draft again")
    assert item_status(server, ids["bridge"]) == "draft"
    assert item_status(server, ids["market"]) == "approved"
    assert item_status(server, ids["school"]) == "approved"


def _bob_takes_back_and_approves(server, item_id: int) -> None:  # type: ignore[no-untyped-def]
    """Another editor, elsewhere: the story back to draft, then approved again (the
    same item, approved, at a newer version)."""
    from review_ui.desk.decisions import Reviewer
    from review_ui.desk.publishing import take_back

    engine = open_store(server.db_url)
    try:
        with Session(engine) as session:
            version = session.get(Item, item_id).version  # type: ignore[union-attr]
        take_back(engine, Reviewer("bob", "editor"), item_id, version, "Wrong council named")
    finally:
        engine.dispose()
    decide_as(server, "bob", item_id, "approve")


def test_a_take_back_is_bound_to_the_version_the_editor_saw(tmp_path: Path, db_url: str) -> None:
    """Alice picks the bridge story in the take-back form; before she presses it,
    Bob takes that story back and approves it again. Her take-back is refused,
    naming Bob, and Bob's newer approval stands (SQLite and PostgreSQL, 1280x720)."""
    from playwright.sync_api import expect

    seed = queue_of("bridge", "school", editors=("alice", "bob"))
    with serve(tmp_path, db_url, seed) as server, chromium() as browser:
        ids = server.ids
        for key in ("bridge", "school"):
            decide_as(server, "bob", ids[key], "approve")
        page = signed_in_page(browser, server, width=1280, height=720)
        page.locator("[data-testid=stSidebar]").get_by_text("Approved", exact=True).click()
        expect(page.get_by_role("button", name="Publish now")).to_be_visible()
        _take_back(page, ids["bridge"], "")  # opens the form on the bridge story
        expect(said(page, "Not taken back")).to_be_visible()
        idle(page)
        form = page.locator("[data-testid=stForm]").filter(has_text="Take back to draft")
        form.get_by_label("Reason (required)").fill("The council corrected the dates")
        _bob_takes_back_and_approves(server, ids["bridge"])
        press(page, form.get_by_role("button", name="Take back to draft"))
        refusal = said(page, f"Not saved: #{ids['bridge']}")
        expect(refusal).to_contain_text("already approved by bob")
    assert item_status(server, ids["bridge"]) == "approved"
    assert item_status(server, ids["school"]) == "approved"
    engine = open_store(server.db_url)
    try:
        with Session(engine) as session:
            assert session.get(Item, ids["bridge"]).decided_by == "bob"  # type: ignore[union-attr]
    finally:
        engine.dispose()
