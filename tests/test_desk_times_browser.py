"""Issue 25 point 7, in a real headless Chromium: every time on the desk reads in
the editor's zone (the browser's: review_ui/desk/times.py says why), with its name,
and the same moment in UTC on hover (a `title`); two editors in two zones see the
same note each in their own. No text of a note becomes HTML."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy.engine import Engine

from store.db import session_scope
from store.models import Item
from store.notes import add_note
from tests.browser import choose, chromium, idle, inert, serve, shows, signed_in_page
from tests.review_seed import ARTICLES, seed_editor, seed_queue

pytestmark = pytest.mark.browser

AT = datetime(2026, 3, 14, 9, 30, tzinfo=UTC)
HOSTILE = '<img src=x onerror="alert(1)"> the <b>council</b> said'


def _desk(engine: Engine) -> dict[str, int]:
    ids = seed_queue(engine, ("bridge",))
    for name in ("alice", "bob"):
        seed_editor(engine, name)
    with session_scope(engine) as session:
        note = add_note(session, ids["bridge"], "bob", HOSTILE)
        note.created_at = AT
        session.add(note)
    return ids


@pytest.mark.parametrize(
    ("zone", "local"),
    [("Asia/Kolkata", "2026-03-14 15:00 IST"), ("America/Sao_Paulo", "2026-03-14 06:30 -03")],
)
def test_times_read_in_the_browsers_zone_with_utc_on_hover(
    tmp_path: Path, sqlite_url: str, zone: str, local: str
) -> None:
    from playwright.sync_api import expect

    with serve(tmp_path, sqlite_url, _desk) as server, chromium() as browser:
        page = signed_in_page(browser, server, width=1280, height=720, timezone=zone)
        shows(page, "bridge")
        note_time = page.locator("time.cd-time").first
        expect(note_time).to_have_text(local)
        expect(note_time).to_have_attribute("title", "2026-03-14 09:30:00 UTC")
        expect(note_time).to_have_attribute("datetime", "2026-03-14T09:30:00+00:00")
        # The draft's own line: its "seen" time in the same zone, UTC in its hover.
        meta = page.locator(".cd-meta").first
        zone_name = local.rsplit(" ", 1)[1]
        expect(meta).to_contain_text(re.compile(rf"seen \d{{4}}-\d\d-\d\d \d\d:\d\d {zone_name}"))
        expect(meta).to_have_attribute("title", re.compile(r"\(seen \d{4}-.* UTC\)$"))
        # The note's text is text.
        expect(page.get_by_text(HOSTILE).first).to_be_visible()  # in the note and the trail
        assert inert(page) == {"scripts": 0, "bad_images": 0, "onerror": 0, "js_links": 0}


# Each list's time, a different minute each, all on 14 March 2026 (UTC).
LISTED = {
    "Approved": ("bridge", datetime(2026, 3, 14, 8, 5, tzinfo=UTC)),
    "Rejected": ("school", datetime(2026, 3, 14, 8, 10, tzinfo=UTC)),
    "Retracted": ("market", datetime(2026, 3, 14, 8, 15, tzinfo=UTC)),
    "Discarded": ("wrong_number", datetime(2026, 3, 14, 8, 20, tzinfo=UTC)),
}


def _lists(engine: Engine) -> dict[str, int]:
    """One item in each list (the wrong number is discarded by its gate), each
    decided (or discarded) at its own known moment."""
    from review_ui.desk.decisions import Reviewer, approve, reject
    from store.status import move

    ids = seed_queue(engine, ("bridge", "school", "market", "wrong_number"))
    seed_editor(engine, "alice")
    ann = Reviewer("alice", "editor")
    with session_scope(engine) as session:
        approve(session, ann, ids["bridge"], session.get(Item, ids["bridge"]).version)  # type: ignore[union-attr]
        reject(
            session, ann, ids["school"], session.get(Item, ids["school"]).version, "Not <b>ours</b>"
        )  # type: ignore[union-attr]
        approve(session, ann, ids["market"], session.get(Item, ids["market"]).version)  # type: ignore[union-attr]
    with session_scope(engine) as session:
        market = session.get(Item, ids["market"])
        move(session, market, "published", actor="publisher")  # type: ignore[arg-type]
        move(session, market, "retracted", actor="editor:alice", reason="Wrong date")  # type: ignore[arg-type]
    with session_scope(engine) as session:
        for key, at in LISTED.values():
            item = session.get(Item, ids[key])
            assert item is not None
            item.decided_at = at
            item.updated_at = at
            session.add(item)
    return ids


def test_the_lists_times_read_in_the_editors_zone_with_utc_on_hovering_the_cell(
    tmp_path: Path, sqlite_url: str
) -> None:
    """Issue 25 point 7: the Approved, Rejected, Retracted and Discarded lists are
    escaped HTML tables, so each time cell has its own hover: the editor's zone in
    the cell, the UTC moment in its title (a grid cell can have none). A row is
    opened by the item picker beside the table, bound to the item id."""
    from playwright.sync_api import expect

    with serve(tmp_path, sqlite_url, _lists) as server, chromium() as browser:
        page = signed_in_page(browser, server, width=1280, height=720, timezone="Asia/Kolkata")
        main = page.locator("[data-testid=stMain]")
        for view, (key, at) in LISTED.items():
            page.locator("[data-testid=stSidebar]").get_by_text(view, exact=True).click()
            expect(page.get_by_role("heading", name=view, level=1)).to_be_visible()
            idle(page)  # the last view's table is gone once the run has ended
            number = page.locator("td", has_text=re.compile(rf"^{server.ids[key]}$"))
            row = main.locator("table.cd-list tbody tr").filter(has=number)
            cell = row.locator("td time.cd-time").first
            local = at.astimezone(ZoneInfo("Asia/Kolkata")).strftime("%Y-%m-%d %H:%M IST")
            expect(cell).to_have_text(local)
            cell.hover()
            expect(cell).to_have_attribute("title", at.strftime("%Y-%m-%d %H:%M:%S UTC"))
            header = main.locator("table.cd-list th").filter(
                has_text=re.compile("^(decided|discarded)$")
            )
            expect(header).to_have_attribute(
                "title", re.compile(r"^In Asia/(Kolkata|Calcutta), .*UTC")
            )
            assert inert(page) == {"scripts": 0, "bad_images": 0, "onerror": 0, "js_links": 0}
        # The Rejected list's reason is text, not HTML; picking the item opens it.
        page.locator("[data-testid=stSidebar]").get_by_text("Rejected", exact=True).click()
        expect(page.get_by_role("heading", name="Rejected", level=1)).to_be_visible()
        idle(page)
        expect(main.locator("table.cd-list")).to_contain_text("Not <b>ours</b>")
        choose(page, page.get_by_label("Open item"), f"#{server.ids['school']}")
        expect(main.locator("table.cd-trail").first).to_be_visible()  # its status moves
        expect(main.locator(".cd-headline").first).to_have_text(ARTICLES["school"].headline)
