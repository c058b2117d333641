"""Issue 25 point 5: publish and retract from the desk, in a real headless Chromium.

"Publish now" first shows what it will publish and asks for a confirmation; an
approval still inside its Undo window is named and left for later. Retract
from the desk needs a reason (editors only); the retracted item is in the
Retracted view and has left "Source changed"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine

from publish.service import retract
from store.db import open_store, session_scope
from store.models import AuditEvent, SourceCheck
from tests.browser import (
    SHORT_ANSWER_MS,
    chromium,
    dropping_page,
    idle,
    press,
    press_unheard,
    said,
    serve,
    signed_in_page,
)
from tests.desk_kit import approved_long_ago, decide_as, item_status, open_view, published_by
from tests.review_seed import seed_editor, seed_queue

pytestmark = pytest.mark.browser

TARGETS = '[[publish.targets]]\nkind = "jsonl"\npath = "out/items.jsonl"\n'


def _desk(engine: Engine) -> dict[str, int]:
    ids = seed_queue(engine, ("bridge", "school", "market"))
    seed_editor(engine, "alice")
    seed_editor(engine, "bob")
    return ids


def _form_ready(page, summary: str) -> None:  # type: ignore[no-untyped-def]
    """Wait until the page run that draws the form under `summary` has finished,
    then open it. The summary shows only once that run has begun, so `idle` cannot
    pass on the run before it. Its submit button is then pressed with `press`
    (tests/browser.py), which proves the click reached the server and waits out the
    run that answers it (clean-clone CI: a Retract that never got its answer)."""
    from playwright.sync_api import expect

    toggle = page.locator("summary").filter(has_text=summary)
    expect(toggle).to_be_visible()
    idle(page)
    toggle.click()


def _bridge_published(server) -> int:  # type: ignore[no-untyped-def]
    """Bob approved the bridge story long ago and Alice published it (the desk's own
    Publish now: the browser's way is test_publish_now_confirms_...); its id."""
    bridge = server.ids["bridge"]
    decide_as(server, "bob", bridge, "approve")
    approved_long_ago(server.db_url, bridge)
    published_by(server, "alice", bridge)
    return bridge


def test_publish_now_confirms_and_leaves_an_approval_in_its_undo_window(
    tmp_path: Path, sqlite_url: str
) -> None:
    from playwright.sync_api import expect

    with (
        serve(tmp_path, sqlite_url, _desk, undo_seconds=300, extra=TARGETS) as server,
        chromium() as browser,
    ):
        ids = server.ids
        decide_as(server, "bob", ids["bridge"], "approve")
        approved_long_ago(server.db_url, ids["bridge"])
        decide_as(server, "bob", ids["school"], "approve")  # just now: inside its window
        page = signed_in_page(browser, server, width=1280, height=720)
        open_view(page, "Approved")
        page.get_by_role("button", name=re.compile(r"^Publish now")).click()
        confirm = page.locator(".cd-confirm").first
        expect(confirm).to_be_in_viewport()
        expect(confirm).to_contain_text(f"#{ids['bridge']}")
        expect(confirm).to_contain_text(f"#{ids['school']}")
        expect(confirm).to_contain_text("Undo window")
        assert item_status(server, ids["bridge"]) == "approved"  # nothing sent yet
        page.get_by_role("button", name="Confirm: publish 1").click()
        expect(said(page, "Published 1")).to_be_visible()
        assert item_status(server, ids["bridge"]) == "published"
        assert item_status(server, ids["school"]) == "approved"


def test_retract_from_the_desk(tmp_path: Path, sqlite_url: str) -> None:
    from playwright.sync_api import expect

    with (
        serve(tmp_path, sqlite_url, _desk, undo_seconds=300, extra=TARGETS) as server,
        chromium() as browser,
    ):
        bridge = _bridge_published(server)
        page = signed_in_page(browser, server, width=1280, height=720)
        engine = open_store(server.db_url)
        try:
            with session_scope(engine) as session:
                session.add(SourceCheck(item_id=bridge, state="open", failing=[]))
        finally:
            engine.dispose()
        open_view(page, "Source changed")
        expect(page.locator("[data-testid=stMain]")).to_contain_text(f"#{bridge}")
        open_view(page, "Published")
        _form_ready(page, "Retract a published item")
        form = page.locator("[data-testid=stForm]").filter(has_text="Retract")
        press(page, form.get_by_role("button", name="Retract"))
        expect(said(page, "Not retracted")).to_contain_text("reason")
        assert item_status(server, bridge) == "published"
        idle(page)  # the run that says so redrew the form: let it finish first
        form.get_by_label("Reason (required)").fill("The council withdrew the notice")
        press(page, form.get_by_role("button", name="Retract"))
        expect(said(page, f"Retracted #{bridge}")).to_be_visible()
        assert item_status(server, bridge) == "retracted"
        open_view(page, "Retracted")
        expect(page.locator("[data-testid=stMain]")).to_contain_text(f"{bridge}")
        open_view(page, "Source changed")
        expect(said(page, "No published summary is waiting")).to_be_visible()


def test_a_retraction_another_editor_made_first_is_named(tmp_path: Path, sqlite_url: str) -> None:
    """A race between the page's read and its write: Alice's retract form shows the
    item; Bob retracts it from his terminal first. Alice's Retract is refused naming
    Bob (the version is checked in the retraction's own transaction), and the item is
    retracted once, by Bob. On SQLite only (issue 23: 20 s a backend): the same race in
    the service, a move between the desk's read and its write, is
    tests/test_desk_retract.py's on both backends."""
    from playwright.sync_api import expect

    with (
        serve(tmp_path, sqlite_url, _desk, undo_seconds=300, extra=TARGETS) as server,
        chromium() as browser,
    ):
        bridge = _bridge_published(server)
        page = signed_in_page(browser, server, width=1280, height=720)
        open_view(page, "Published")
        _form_ready(page, "Retract a published item")
        engine = open_store(server.db_url)
        try:
            retract(engine, bridge, editor="bob", reason="Bob saw the correction first")
        finally:
            engine.dispose()
        form = page.locator("[data-testid=stForm]").filter(has_text="Retract")
        form.get_by_label("Reason (required)").fill("The council withdrew the notice")
        press(page, form.get_by_role("button", name="Retract"))
        expect(said(page, "already retracted")).to_contain_text("bob")
        assert item_status(server, bridge) == "retracted"
        engine = open_store(server.db_url)
        try:
            with session_scope(engine) as session:
                moves = session.scalars(
                    select(AuditEvent).where(
                        AuditEvent.item_id == bridge, AuditEvent.to_status == "retracted"
                    )
                ).all()
                assert [(m.actor, m.reason) for m in moves] == [
                    ("editor:bob", "Bob saw the correction first")
                ]
        finally:
            engine.dispose()


def test_a_retract_the_server_never_hears_of_is_said_and_a_second_press_answers(
    tmp_path: Path, sqlite_url: str
) -> None:
    """The clean-clone CI's lost Retract, as an editor would meet it: the click's run
    request is dropped on its way (the websocket route), so no page run answers it.
    The page says so within its answer window, naming the button, instead of
    nothing; pressed again, the form answers (a reason is required)."""
    from playwright.sync_api import expect

    with (
        serve(tmp_path, sqlite_url, _desk, undo_seconds=300, extra=TARGETS) as server,
        chromium() as browser,
    ):
        bridge = _bridge_published(server)
        page, drop = dropping_page(browser, server, answer_ms=SHORT_ANSWER_MS)
        open_view(page, "Published")
        _form_ready(page, "Retract a published item")
        form = page.locator("[data-testid=stForm]").filter(has_text="Retract")
        press_unheard(page, form.get_by_role("button", name="Retract"), drop)  # dropped
        unanswered = page.locator("#cd-key-unanswered")
        expect(unanswered).to_contain_text("Not done yet: your press on \u201cRetract\u201d")
        expect(unanswered).to_contain_text("no answer")
        assert len(drop.dropped) == 1 and "FormSubmitter:retract" in drop.dropped[0]
        assert item_status(server, bridge) == "published"
        press(page, form.get_by_role("button", name="Retract"))  # this one arrives
        expect(said(page, "Not retracted")).to_contain_text("reason")
        expect(unanswered).to_have_count(0)
        assert item_status(server, bridge) == "published"
