"""Near-duplicate groups and bulk actions in a real headless Chromium (issue 12).

The drafts are stories of tests/dup_material.py run through the real pipeline:
one event told by two outlets plus an update (a group of three), and other
stories of the same towns. Another editor's decision lands in the database
between what the first editor saw and what they confirm: that item is named
and skipped, the rest proceed, each through the status machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui.desk.decisions import Reviewer, approve, reject
from store.db import open_store, session_scope
from store.models import AuditEvent, Item
from tests.browser import Server, choose, chromium, idle, press, said, serve, signed_in_page
from tests.dup_material import ARTICLES as STORIES
from tests.dup_material import story
from tests.review_seed import seed_article, seed_editor

pytestmark = pytest.mark.browser

# The group first (the oldest draft opens first), then three unrelated stories.
KEYS = ("warehouse-a", "warehouse-b", "warehouse-u", "strike-a", "ferry-a", "signing-a")
BOB = Reviewer("bob", "editor")


def _desk(engine: Engine) -> dict[str, int]:
    ids = {key: seed_article(engine, story(key)) for key in KEYS}
    seed_editor(engine, "alice")
    seed_editor(engine, "bob")
    return ids


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str) -> Iterator[Server]:
    """Another editor decides between the confirmation and the confirm (a race
    between read and write). On SQLite only (issue 23: 22 s a backend): that a bulk
    action skips and names what changed since it was drawn is tests/test_bulk.py's,
    on both backends; this is the page's side of it."""
    with serve(tmp_path, sqlite_url, _desk) as running:
        yield running


def _state(server: Server, item_id: int) -> tuple[str, str | None, str | None]:
    engine = open_store(server.db_url)
    try:
        with Session(engine) as session:
            item = session.get(Item, item_id)
            event = session.scalars(
                select(AuditEvent)
                .where(AuditEvent.item_id == item_id)
                .order_by(AuditEvent.id.desc())
            ).first()
            assert item is not None and event is not None
            return item.status, event.actor, event.reason
    finally:
        engine.dispose()


def _decide_as_bob(server: Server, item_id: int, how: str) -> None:
    engine = open_store(server.db_url)
    try:
        with session_scope(engine) as session:
            version = session.get(Item, item_id).version  # type: ignore[union-attr]
            if how == "approve":
                approve(session, BOB, item_id, version)
            else:
                reject(session, BOB, item_id, version, "not for us")
    finally:
        engine.dispose()


# Both tests run at the 1280x720. The drafts were once picked in a
# multiselect at the bottom edge of the screen, whose option menu closed again
# before an option could be clicked (loaded group run, 1 in 4); they are now
# ticked, one box each, under the actions (review_ui/views/bulk_panel.py).
def test_reject_near_duplicates_in_one_action(server: Server) -> None:
    from playwright.sync_api import expect

    ids = server.ids
    kept, other, update = ids["warehouse-a"], ids["warehouse-b"], ids["warehouse-u"]
    with chromium() as browser:
        page = signed_in_page(browser, server, width=1280, height=720)
        # The oldest draft is the first of the group: its two near duplicates are named.
        expect(page.locator(".cd-headline").first).to_have_text(STORIES["warehouse-a"][0])
        expect(said(page, "2 similar drafts")).to_be_visible()
        page.get_by_role("button", name="Reject these…").click()
        # The whole list first, where the editor is looking; nothing rejected yet.
        expect(page.locator(".cd-confirm")).to_contain_text(f"as duplicates of #{kept}")
        expect(page.locator(".cd-confirm")).to_be_in_viewport()
        expect(page.locator(".cd-confirm")).to_contain_text(f"#{other} ")
        expect(page.locator(".cd-confirm")).to_contain_text(f"#{update} ")
        # Meanwhile bob rejects the update himself: it is skipped, by name.
        _decide_as_bob(server, update, "reject")
        page.get_by_role("button", name="Confirm: reject 2").click()
        expect(said(page, f"Rejected as duplicates of #{kept} 1: #{other}")).to_be_visible()
        expect(said(page, f"Skipped #{update}")).to_contain_text("already rejected by bob")
        # The kept draft stays open and in the queue, with no group left.
        expect(page.locator(".cd-headline").first).to_have_text(STORIES["warehouse-a"][0])
        expect(page.get_by_role("button", name="Reject these…")).to_have_count(0)
    status, actor, reason = _state(server, other)
    assert (status, actor) == ("rejected", "editor:alice")
    assert reason is not None and reason.startswith(f"duplicate of #{kept} Fire destroys")
    assert _state(server, update) == ("rejected", "editor:bob", "not for us")
    assert _state(server, kept)[0] == "draft"
    assert _state(server, ids["strike-a"])[0] == "draft"


def _open_bulk(page) -> None:  # type: ignore[no-untyped-def]
    """Open the bulk actions box unless it is open already (it keeps its state
    across reruns; a click while a rerun redraws it could close it again, so
    look, click, and look again)."""
    from playwright.sync_api import expect

    box = page.locator("details").filter(has_text="Bulk actions on this page")
    ticks = box.locator("[data-testid=stCheckbox]")
    for _ in range(5):
        expect(box).to_have_count(1)
        if box.get_attribute("open") is None:
            box.locator("summary").click()
        try:
            expect(ticks.first).to_be_visible(timeout=5_000)
            return
        except AssertionError:
            continue
    expect(ticks.first).to_be_visible()


def _pick(page, item_id: int) -> None:  # type: ignore[no-untyped-def]
    """Tick a draft's box, from an idle page, and see the page run it asked for
    count it on the Reject button (the box keeps its tick across that run)."""
    from playwright.sync_api import expect

    tick = page.get_by_role("checkbox", name=f"#{item_id}", exact=True)
    reject = page.get_by_role("button", name=re.compile(r"^Reject \d+ selected"))
    idle(page)
    before = int(re.findall(r"\d+", reject.inner_text())[0])
    # The box itself is drawn over by its label, which takes the click; `press`
    # proves the tick reached the server (a click lost while the box just opened
    # is made again, one that arrived never is: it would untick the box).
    press(page, page.locator("[data-testid=stCheckbox] label").filter(has=tick))
    expect(tick).to_be_checked()
    expect(reject).to_have_text(f"Reject {before + 1} selected…")
    idle(page)


def test_bulk_reject_with_confirmation_and_assign(server: Server) -> None:
    from playwright.sync_api import expect

    ids = server.ids
    strike, ferry, signing = ids["strike-a"], ids["ferry-a"], ids["signing-a"]
    with chromium() as browser:
        page = signed_in_page(browser, server, width=1280, height=720)
        _open_bulk(page)
        _pick(page, strike)
        _pick(page, ferry)
        reason = page.get_by_label("Rejection reason for the ticked drafts")
        reason.fill("Out of our area")
        page.get_by_role("button", name="Reject 2 selected…").click()
        # A confirmation naming the count and the items; nothing is rejected yet.
        asked = said(page, 'Reject 2 drafts with the reason "Out of our area"?')
        expect(asked).to_be_visible()
        expect(asked).to_be_in_viewport()  # where the editor is looking
        expect(said(page, f"#{strike} Porters")).to_be_visible()
        assert _state(server, strike)[0] == "draft"
        # Bob approves one of them before alice confirms: it is skipped, by name.
        _decide_as_bob(server, ferry, "approve")
        page.get_by_role("button", name="Confirm: reject 2").click()
        expect(said(page, f"Rejected 1: #{strike}")).to_be_visible()
        expect(said(page, f"Skipped #{ferry}")).to_contain_text("already approved by bob")

        # Assign a draft to alice herself, then filter "Assigned to me".
        _open_bulk(page)
        _pick(page, signing)
        assignee = (
            page.locator("[data-testid=stSelectbox]")
            .filter(has_text="Assign to")
            .get_by_role("combobox")
        )
        choose(page, assignee, "alice")
        page.get_by_role("button", name="Assign 1 selected").click()
        expect(said(page, f"Assigned to alice 1: #{signing}")).to_be_visible()
        page.get_by_text("Assigned to me").click()
        expect(page.locator(".cd-count")).to_contain_text("1 pending draft (filtered)")
        expect(page.locator(".cd-headline").first).to_have_text(STORIES["signing-a"][0])
    status, actor, reason = _state(server, strike)
    assert (status, actor, reason) == ("rejected", "editor:alice", "Out of our area")
    assert _state(server, ferry) == ("approved", "editor:bob", "approved")
    engine = open_store(server.db_url)
    try:
        with Session(engine) as session:
            item = session.get(Item, signing)
            assert item is not None and (item.status, item.assigned_to) == ("draft", "alice")
    finally:
        engine.dispose()
    assert _state(server, signing) == ("draft", "editor:alice", "assigned to alice")
