"""A viewer who presses A is told that viewers cannot decide (issue 26), in a real
headless Chromium: before, the page said the draft's buttons were "still being
drawn" and to press A again, which no press would ever change."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from tests.browser import (
    QUEUE_KEYS,
    Server,
    chromium,
    focus_page,
    said,
    serve,
    shows,
    signed_in_page,
    statuses,
)
from tests.review_seed import seed_editor, seed_queue

pytestmark = pytest.mark.browser


def _desk_with_a_viewer(engine: Engine) -> dict[str, int]:
    ids = seed_queue(engine, QUEUE_KEYS)
    seed_editor(engine, "vera", role="viewer")
    return ids


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str) -> Iterator[Server]:
    with serve(tmp_path, sqlite_url, _desk_with_a_viewer, dwell_seconds=0) as running:
        yield running


def test_a_viewer_pressing_a_is_told_viewers_cannot_decide(server: Server) -> None:
    from playwright.sync_api import expect

    before = statuses(server)
    with chromium() as browser:
        page = signed_in_page(browser, server, "vera")
        shows(page, "bridge")
        focus_page(page)
        page.keyboard.press("a")
        expect(
            said(
                page,
                f"Not approved: #{server.ids['bridge']}: you are signed in as a viewer, "
                "and viewers cannot decide.",
            )
        ).to_be_visible()
        expect(page.get_by_text("still being drawn")).to_have_count(0)
    assert statuses(server) == before
