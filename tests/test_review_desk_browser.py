"""The queue as a shared desk in a real headless Chromium (issue 12): two editors
in two browser contexts do not get each other's draft and see each other's
presence; the list follows the open item across pages and a row picked with the
mouse; the draft, its checks
summary and the decision buttons fit a 1280x720 screen and nothing is cut off at
1024 px; `?item=` links survive the sign-in form and a reload, with a typed
reason kept. Needs /usr/bin/chromium (see tests/browser.py)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from store.db import open_store
from store.models import AuditEvent, DeskPresence
from tests.browser import (
    ARTIFACTS,
    Seed,
    Server,
    chromium,
    focus_page,
    idle,
    new_page,
    open_signed_in,
    said,
    serve,
    shows,
    sign_in,
    signed_in_page,
    statuses,
)
from tests.desk_kit import read
from tests.review_seed import ARTICLES, seed_copies, seed_editor, seed_queue

pytestmark = pytest.mark.browser


def _desk(copies: int = 0) -> Seed:
    """The seed: four drafts (and `copies` more of the school story), alice and bob."""

    def seed(engine: Engine) -> dict[str, int]:
        ids = seed_queue(engine, ("bridge", "school", "market", "hostile"))
        for n, item_id in enumerate(seed_copies(engine, "school", copies) if copies else []):
            ids[f"copy{n}"] = item_id
        for name in ("alice", "bob"):
            seed_editor(engine, name)
        return ids

    seed.template_key = ("review_desk", copies)  # type: ignore[attr-defined]
    return seed


def _claims(server: Server) -> dict[str, int]:
    engine = open_store(server.db_url)
    try:
        with Session(engine) as session:
            return {r.editor: r.item_id for r in session.scalars(select(DeskPresence))}
    finally:
        engine.dispose()


def test_two_editors_in_two_browsers_do_not_collide(tmp_path: Path, sqlite_url: str) -> None:
    """On SQLite only (issue 23: 14 s a backend): the same two editors' claims, the
    held-drafts button and the presence line are
    tests/test_review_desk.py::test_second_editor_does_not_get_the_first_editors_draft
    in AppTest, on both backends; this is the same in two real browsers."""
    from playwright.sync_api import expect

    with serve(tmp_path, sqlite_url, _desk()) as server, chromium() as browser:
        ids = server.ids
        opened = time.monotonic()  # before alice opens her draft
        alice = signed_in_page(browser, server, "alice")
        shows(alice, "bridge")
        bob = signed_in_page(browser, server, "bob")  # a context of its own: another person
        shows(bob, "school")  # not alice's draft
        expect(
            bob.get_by_role("button", name="1 more open by other editors: show them")
        ).to_be_visible()
        assert _claims(server) == {"alice": ids["bridge"], "bob": ids["school"]}
        # Bob opens alice's draft on purpose (a link to it): he sees she has it.
        bob = new_page(browser, server, width=1280, height=720)  # a fresh visit
        open_signed_in(bob, server, "bob", at=f"/?item={ids['bridge']}")
        shows(bob, "bridge")
        # How long she has had it is what the clock says (the wording, by a test clock, is
        # tests/test_review_desk.py's): on a loaded machine a minute may have gone by.
        presence = bob.get_by_text(re.compile(r"^alice has had this open for "))
        expect(presence).to_be_visible()
        words = presence.inner_text().strip()
        told = re.fullmatch(r"alice has had this open for (less than a minute|(\d+) min)", words)
        assert told is not None, words
        assert int(told[2] or 0) <= (time.monotonic() - opened) / 60


def _boxes(page: Any, selectors: dict[str, Any]) -> dict[str, dict[str, float]]:
    found = {}
    for name, locator in selectors.items():
        box = locator.bounding_box()
        assert box is not None, f"{name} is not drawn"
        found[name] = box
    return found


def _fits(box: dict[str, float], width: int, height: int) -> bool:
    return (
        box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= width
        and box["y"] + box["height"] <= height
    )


@pytest.mark.parametrize(("width", "height"), [(1280, 720), (1024, 720)])
def test_draft_checks_and_buttons_fit_the_screen(
    tmp_path: Path, sqlite_url: str, width: int, height: int
) -> None:
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(exist_ok=True)
    with serve(tmp_path, sqlite_url, _desk()) as server, chromium() as browser:
        page = signed_in_page(browser, server, "alice", width=width, height=height)
        shows(page, "bridge")
        expect(page.locator(".cd-checks-summary").first).to_be_visible()
        page.screenshot(path=str(ARTIFACTS / f"review_desk_{width}x{height}.png"))
        parts = {
            "headline": page.locator(".cd-headline").first,
            "draft": page.locator(".cd-text")
            .filter(has_text=ARTICLES["bridge"].summary[-30:])
            .first,
            "checks summary": page.locator(".cd-checks-summary").first,
            "approve": page.get_by_role("button", name=re.compile(r"^Approve")),
            "reject": page.get_by_role("button", name="Reject", exact=True),
            "reason": page.get_by_label("Reason for rejecting"),
        }
        boxes = _boxes(page, parts)
        # At 1280x720 all of it is on screen without scrolling; at 1024 px nothing
        # is cut off sideways (the draft may start lower down).
        tall = height if width >= 1280 else 100_000
        outside = {name: box for name, box in boxes.items() if not _fits(box, width, tall)}
        assert outside == {}, f"not on a {width}x{height} screen without scrolling: {outside}"
        # Nothing cut off sideways: the page does not scroll horizontally, and no
        # button label is shortened with an ellipsis.
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        cut = page.evaluate(
            """() => [...document.querySelectorAll('[data-testid=stMain] button')]
                .flatMap(b => [...b.querySelectorAll('p, div, span')])
                .filter(e => e.scrollWidth > e.clientWidth + 1)
                .map(e => e.textContent)"""
        )
        assert cut == []


def test_the_list_follows_the_open_item(tmp_path: Path, sqlite_url: str) -> None:
    from playwright.sync_api import expect

    with serve(tmp_path, sqlite_url, _desk(24)) as server, chromium() as browser:
        ids = server.ids  # 4 + 24 = 28 drafts: two pages of 25
        page = new_page(browser, server)
        last = ids["copy23"]
        open_signed_in(page, server, "alice", at=f"/?item={ids['copy21']}")
        page.get_by_text("List of pending drafts").click()
        listing = page.locator(".cd-list-page").first
        expect(listing).to_contain_text("page 2 of 2")
        expect(page.locator(".cd-strip").first).to_contain_text(f"item #{ids['copy21']}")
        # J twice: the last draft, still the page it is on, its row marked.
        for _ in range(2):
            page.locator(".cd-headline").first.click()
            page.keyboard.press("j")
        expect(page.locator(".cd-strip").first).to_contain_text(f"item #{last}")
        expect(listing).to_contain_text("page 2 of 2")
        # K back to page 1's last row: the list turns to page 1.
        for _ in range(4):
            page.locator(".cd-headline").first.click()
            page.keyboard.press("k")
            page.wait_for_timeout(300)
        expect(page.locator(".cd-strip").first).to_contain_text(f"item #{ids['copy19']}")
        expect(page.locator(".cd-list-page").first).to_contain_text("page 1 of 2")


def test_a_link_survives_sign_in_and_a_reload_keeps_the_item_and_the_reason(
    tmp_path: Path, sqlite_url: str
) -> None:
    from playwright.sync_api import expect

    with serve(tmp_path, sqlite_url, _desk()) as server, chromium() as browser:
        ids = server.ids
        page = new_page(browser, server)
        page.goto(f"{server.base}/?item={ids['market']}")
        expect(page.get_by_role("button", name="Sign in")).to_be_visible()
        assert ARTICLES["market"].headline not in page.inner_text("body")
        sign_in(page, "alice")
        shows(page, "market")
        assert f"item={ids['market']}" in page.url
        # The editor types a reason, then the page is reloaded: still signed in (the
        # session token), and the item and the reason are still there.
        page.get_by_label("Reason for rejecting").fill("Same story as the Dunmere notice")
        page.wait_for_timeout(500)
        page.reload()
        shows(page, "market")
        expect(page.get_by_label("Reason for rejecting")).to_have_value(
            "Same story as the Dunmere notice"
        )
        # The address follows the editor as soon as the next draft is on screen, with
        # no other run of the page, and a reload comes back to that draft.
        page.get_by_role("button", name=re.compile(r"^Next")).click()
        shows(page, "hostile")
        expect(page).to_have_url(re.compile(rf"item={ids['hostile']}\b"))
        idle(page)
        page.wait_for_timeout(1_000)  # the server's own write, a run later, agrees
        expect(page).to_have_url(re.compile(rf"item={ids['hostile']}\b"))
        page.reload()
        shows(page, "hostile")


def test_a_row_picked_with_the_mouse_opens_is_marked_and_a_approves_exactly_it(
    tmp_path: Path, sqlite_url: str
) -> None:
    from playwright.sync_api import expect

    with serve(tmp_path, sqlite_url, _desk(), dwell_seconds=1) as server, chromium() as browser:
        ids = server.ids
        page = signed_in_page(browser, server)
        shows(page, "bridge")
        page.get_by_text("List of pending drafts").click()
        grid = page.locator("[data-testid=stDataFrame]").first
        marked = grid.locator("tr[aria-selected=true]")  # the grid's own accessible rows
        expect(marked).to_contain_text(ARTICLES["bridge"].headline)
        expect(page.locator("[data-testid=stSkeleton]")).to_have_count(0)
        # The row selector of the third row (oldest ingested first: the market story),
        # clicked on an idle page. On a loaded machine a click while a run redraws the
        # grid was lost (the page went on showing the bridge story): the grid marks a
        # row the moment it is clicked, so a row still unmarked long after the click is
        # clicked again (a marked one never is: a second click would unmark it).
        market = marked.filter(has_text=ARTICLES["market"].headline)
        for _ in range(3):
            idle(page)
            if market.count():
                break
            box = grid.bounding_box()
            assert box is not None
            page.mouse.click(box["x"] + 12, box["y"] + 35 * 3 + 17)
            try:
                expect(market).to_have_count(1, timeout=15_000)
                break
            except AssertionError:
                continue
        shows(page, "market")
        expect(page.locator(".cd-strip").first).to_contain_text(f"item #{ids['market']}")
        expect(page).to_have_url(re.compile(rf"item={ids['market']}\b"))
        page.get_by_text("List of pending drafts").click()
        expect(marked).to_have_count(1)
        expect(marked).to_contain_text(ARTICLES["market"].headline)
        # Folded again: at 1280x720 the unfolded list pushes the draft out of view,
        # and a draft out of view is never "read" (issue 25 point 1).
        page.get_by_text("List of pending drafts").click()
        expect(grid).not_to_be_visible()
        # A, once the picked draft has been read: that draft, and no other.
        read(page, ids["market"])
        focus_page(page)
        page.keyboard.press("a")
        expect(said(page, f"Approved #{ids['market']}")).to_be_visible()
        shows(page, "hostile")
    decided = statuses(server)
    assert {k: v for k, v in decided.items() if v != "draft"} == {"market": "approved"}
    engine = open_store(server.db_url)
    try:
        with Session(engine) as session:
            approvals = session.exec(
                select(AuditEvent.item_id, AuditEvent.actor).where(
                    AuditEvent.to_status == "approved"
                )
            ).all()
    finally:
        engine.dispose()
    assert [tuple(a) for a in approvals] == [(ids["market"], "editor:alice")]
