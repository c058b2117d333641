"""Issue 25 point 7, in a real headless Chromium: every time on the desk reads in
the editor's zone (the browser's: review_ui/desk/times.py says why), with its name,
and the same moment in UTC on hover (a `title`); two editors in two zones see the
same note each in their own. No text of a note becomes HTML."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from store.db import session_scope
from store.notes import add_note
from tests.browser import chromium, inert, serve, shows, signed_in_page
from tests.review_seed import seed_editor, seed_queue

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
        expect(page.get_by_text(HOSTILE)).to_be_visible()
        assert inert(page) == {"scripts": 0, "bad_images": 0, "onerror": 0, "js_links": 0}
