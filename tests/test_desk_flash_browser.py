"""Issue 25: an editor never loses the answer to a press, in a real headless Chromium.

A message (review_ui/views/widgets.py `flash`) is the answer to a press. A page run
that drew it can be cut short by the next press (Streamlit's fast reruns stop it at
its next element and start a new run at once); the message must then be drawn
again by the run that replaces it, not lost. The run is held open by the test
(tests/browser.py `page_runs_held`, the "flash" point: its messages drawn, not the
rest), never slowed by a sleep."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser import chromium, idle, page_runs_held, queue_of, serve, signed_in_page
from tests.desk_kit import approved_long_ago, decide_as, item_status, open_view

pytestmark = pytest.mark.browser

_seed = queue_of("bridge", "school", editors=("alice", "bob"))


def test_an_answer_survives_the_run_a_second_press_cut_short(
    tmp_path: Path, sqlite_url: str
) -> None:
    """Alice takes an approved story back to draft, and presses again while
    the run that says so is still drawing the page. That run is cut short; the run
    the second press started says why the second press did nothing, and still says
    that the first one took the story back, where she is looking."""
    from playwright.sync_api import expect

    with serve(tmp_path, sqlite_url, _seed, undo_seconds=300) as server, chromium() as browser:
        bridge, school = server.ids["bridge"], server.ids["school"]
        for item_id in (bridge, school):
            decide_as(server, "bob", item_id, "approve")
            approved_long_ago(server.db_url, item_id)
        page = signed_in_page(browser, server, width=1280, height=720)
        open_view(page, "Approved")
        box = page.locator("details").filter(has_text="Take an approval back")
        expect(box).to_have_count(1)
        idle(page)
        box.locator("summary").click()
        form = page.locator("[data-testid=stForm]").filter(has_text="Take back to draft")
        picker = form.locator("[data-testid=stSelectbox]").get_by_role("combobox")
        expect(picker).to_have_value(re.compile(r"^#\d+ "))
        chosen = re.match(r"#(\d+) ", picker.input_value())
        assert chosen is not None
        taken = int(chosen[1])  # the form's own first choice
        kept = ({bridge, school} - {taken}).pop()
        form.get_by_label("Reason (required)").fill("The county named the wrong street")
        button = form.get_by_role("button", name="Take back to draft")
        main = page.locator("[data-testid=stMain]")
        first = main.locator(".cd-text").filter(has_text=f"Item #{taken} is a draft again")
        second = main.locator(".cd-text").filter(has_text=re.compile(r"^Not (taken back|saved)"))
        with page_runs_held("flash") as release:
            button.click()
            expect(first).to_be_visible()  # drawn by the run now held after its messages
            assert item_status(server, taken) == "draft"
            button.click()  # the form is still on screen: this press cuts that run short
            expect(second).to_be_visible()  # the run it started has drawn its answer
            release()
        idle(page)
        expect(second).to_be_visible()
        expect(first).to_be_visible()
        expect(first).to_be_in_viewport()
        assert item_status(server, taken) == "draft"
        assert item_status(server, kept) == "approved"
