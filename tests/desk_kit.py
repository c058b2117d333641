"""What the desk's browser tests of issue 25 share (a helper module, not a test file).

- `on_screen_now(page)`: (id, version) of the draft the page shows, once its run is drawn.
- `headline_is(page, text)`: the draft with this headline is on screen.
- `read(page, item_id)`: wait until the keyboard script says the draft has been
  in view for the dwell time (`body[data-cd-seen]`): a test waits on the page's
  state, never on a clock.
- `decide_as(server, name, item_id, how)`: another editor's decision, straight in
  the database (approve, or reject with a reason).
- `approved_long_ago(db_url, item_id)`: the approval was made an hour ago (its Undo
  window long past).
- `published_by(server, name, item_id)`: the desk's own Publish now, as `name`, with
  the server's settings, for a test whose subject comes after publishing (issue 23:
  three page runs fewer than the Approved view's buttons).
- `open_view(page, name)`: pick a view (Approved, Published, ...) in the sidebar.
- `item_status`, `last_reason`: read an item back.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from copydesk.config import load_settings
from review_ui.desk.decisions import Reviewer, approve, reject
from review_ui.desk.publishing import publish_now
from store.db import open_store, session_scope
from store.models import AuditEvent, Item, utcnow
from tests.browser import Server


def on_screen_now(page: Any) -> tuple[int, int]:
    """The draft on screen: its marker is the only one on the page."""
    from playwright.sync_api import expect

    marker = page.locator("span.cd-draft")
    expect(marker).to_have_count(1)
    found = re.search(r"cd-draft-(\d+)-(\d+)", marker.get_attribute("class") or "")
    assert found is not None
    return int(found[1]), int(found[2])


def headline_is(page: Any, headline: str) -> None:
    """Wait until the draft on screen has this headline and its run is drawn."""
    from playwright.sync_api import expect

    expect(page.locator(".cd-headline").first).to_have_text(headline)
    on_screen_now(page)


def read(page: Any, item_id: int) -> None:
    """Wait until the draft `item_id` has been in view for the dwell time."""
    from playwright.sync_api import expect

    expect(page.locator("body")).to_have_attribute("data-cd-seen", re.compile(rf"^{item_id}_\d+$"))


def decide_as(server: Server, name: str, item_id: int, how: str = "approve") -> None:
    engine = open_store(server.db_url)
    try:
        with session_scope(engine) as session:
            version = session.get(Item, item_id).version  # type: ignore[union-attr]
            reviewer = Reviewer(name, "editor")
            if how == "approve":
                approve(session, reviewer, item_id, version)
            else:
                reject(session, reviewer, item_id, version, "not for us")
    finally:
        engine.dispose()


def approved_long_ago(db_url: str, item_id: int) -> None:
    """The approval was made an hour ago: its Undo window is long past."""
    engine = open_store(db_url)
    try:
        with session_scope(engine) as session:
            item = session.get(Item, item_id)
            assert item is not None
            item.decided_at = utcnow() - timedelta(hours=1)
            session.add(item)
    finally:
        engine.dispose()


def published_by(server: Server, name: str, item_id: int) -> None:
    """Publish the approved item `item_id` as editor `name`: what "Publish now" and
    its confirmation do (review_ui/desk/publishing.py), with the server's config."""
    settings = load_settings(server.config, env={}).for_review()
    engine = open_store(server.db_url)
    try:
        report = publish_now(engine, settings, Reviewer(name, "editor"), [item_id])
    finally:
        engine.dispose()
    assert report.published == [item_id], report


def open_view(page: Any, name: str) -> None:
    """Pick the view `name` in the sidebar."""
    page.locator("[data-testid=stSidebar]").get_by_text(name, exact=True).click()


def item_status(server: Server, item_id: int) -> str:
    engine = open_store(server.db_url)
    try:
        with Session(engine) as session:
            item = session.get(Item, item_id)
            assert item is not None
            return item.status
    finally:
        engine.dispose()


def last_reason(server: Server, item_id: int) -> str | None:
    engine = open_store(server.db_url)
    try:
        with Session(engine) as session:
            return session.scalars(
                select(AuditEvent.reason)
                .where(AuditEvent.item_id == item_id)
                .order_by(AuditEvent.id.desc())  # type: ignore[union-attr]
            ).first()
    finally:
        engine.dispose()
