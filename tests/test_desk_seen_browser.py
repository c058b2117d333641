"""Issue 25 point 1: "seen" means visible, in a real headless Chromium.

A decision counts only for a draft whose text and checks summary have been in
the viewport for the dwell time (the keyboard script watches them with an
IntersectionObserver; the server's own dwell check stays). However many
decisions have been made, their messages do not push the draft down: after 10
decisions the draft, its checks summary and the buttons are still on a
1280x720 (and a 1024x768) screen without scrolling."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.browser import (
    ARTIFACTS,
    WAIT_MS,
    chromium,
    focus_page,
    idle,
    said,
    serve,
    shows,
    signed_in_page,
)
from tests.desk_kit import item_status, on_screen_now, read
from tests.review_seed import ARTICLES, seed_copies, seed_editor, seed_queue

pytestmark = pytest.mark.browser


def _twelve(engine) -> dict[str, int]:  # type: ignore[no-untyped-def]
    ids = seed_queue(engine, ("bridge",))
    for n, item_id in enumerate(seed_copies(engine, "school", 11)):
        ids[f"copy{n}"] = item_id
    seed_editor(engine, "alice")
    return ids


def _in_view(page, locator, height: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    box = locator.bounding_box()
    assert box is not None
    assert box["y"] >= 0 and box["y"] + min(box["height"], 40) <= height, box
    return box


def _fits_the_screen(page, decided: list[int], width: int, height: int) -> None:  # type: ignore[no-untyped-def]
    """At this screen size: the draft, its checks summary and its buttons are on
    screen without scrolling, and so is the last decision's confirmation."""
    from playwright.sync_api import expect

    page.set_viewport_size({"width": width, "height": height})
    idle(page)
    expect(page.locator(".cd-draft-body").first).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / f"desk_after_10_{width}x{height}.png"))
    expect(said(page, f"#{decided[-1]}").first).to_be_visible()
    _in_view(page, page.locator(".cd-draft-body").first, height)
    _in_view(page, page.locator(".cd-checks-summary").first, height)
    _in_view(page, page.get_by_role("button", name=re.compile(r"^Approve")), height)
    _in_view(page, page.get_by_label("Reason for rejecting"), height)


def test_after_ten_decisions_the_draft_keeps_the_top_of_the_screen(
    tmp_path: Path, sqlite_url: str
) -> None:
    from playwright.sync_api import expect

    # A short dwell (issue 23: the shipped 1 s was 10 of this test's 27 s): what is
    # proven here is where the draft stays after ten decisions, not how long the dwell
    # is; each decision still waits for the page to say the draft was seen (`read`),
    # so none is refused, however slow the machine.
    with (
        serve(tmp_path, sqlite_url, _twelve, dwell_seconds=0.2) as server,
        chromium() as browser,
    ):
        page = signed_in_page(browser, server, width=1280, height=720)
        shows(page, "bridge")
        decided = []
        for n in range(10):
            item_id, version = on_screen_now(page)
            read(page, item_id)
            focus_page(page)
            if n % 3 == 2:  # some rejections too: their messages pile up as well
                page.keyboard.press("r")
                page.keyboard.type("Not for us")
                page.keyboard.press("Enter")
            else:
                page.keyboard.press("a")
            expect(page.locator(f'span[class~="cd-draft-{item_id}-{version}"]')).to_have_count(0)
            decided.append(item_id)
        item_id, _ = on_screen_now(page)
        # The run that drew it has ended: until then the last draft's buttons may
        # still be on the page (seen at load 9: two reason boxes).
        idle(page)
        ARTIFACTS.mkdir(exist_ok=True)
        # Both screens on the same ten decisions (issue 23: the ten were made once for
        # each, 15 s a time): the layout is the page's state drawn at a screen's size.
        _fits_the_screen(page, decided, 1280, 720)
        _fits_the_screen(page, decided, 1024, 768)
    assert all(item_status(server, i) in ("approved", "rejected") for i in decided)
    assert item_status(server, item_id) == "draft"


def _scroll_away(page, draft) -> None:  # type: ignore[no-untyped-def]
    """Turn the mouse wheel over the page until `draft` is out of the viewport. The
    page is idle first (a wheel turned while a run still drew the page below the
    draft found nothing to scroll: seen on a loaded machine, the draft stayed in
    view), and a turn that still scrolled nothing is made again, up to WAIT_MS."""
    from playwright.sync_api import expect

    idle(page)
    box = page.locator("[data-testid=stMain]").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    give_up = time.monotonic() + WAIT_MS / 1000
    while True:
        page.mouse.wheel(0, 1500)
        try:
            expect(draft).not_to_be_in_viewport(timeout=2_000)
            return
        except AssertionError:
            if time.monotonic() > give_up:
                raise


def test_a_draft_out_of_view_is_not_approved(tmp_path: Path, sqlite_url: str) -> None:
    """The draft was read, then scrolled out of view: A is refused, saying why; back
    in view for the dwell time, A approves it."""
    from playwright.sync_api import expect

    with serve(tmp_path, sqlite_url, _twelve, dwell_seconds=1) as server, chromium() as browser:
        page = signed_in_page(browser, server, width=1280, height=720)
        shows(page, "bridge")
        bridge = server.ids["bridge"]
        read(page, bridge)
        draft = page.locator(".cd-draft-body").first
        # Scroll the draft away, as an editor reading the checks further down would.
        _scroll_away(page, draft)
        expect(page.locator("body")).not_to_have_attribute("data-cd-seen", re.compile("."))
        page.keyboard.press("a")
        expect(
            page.get_by_role("alert").filter(has_text=f"Not approved: #{bridge}")
        ).to_contain_text("not in view")
        assert item_status(server, bridge) == "draft"
        # Back in view for the dwell time: A approves it.
        draft.evaluate("el => el.scrollIntoView({block: 'center'})")
        read(page, bridge)
        page.keyboard.press("a")
        expect(said(page, f"Approved #{bridge}")).to_be_visible()
    assert item_status(server, bridge) == "approved"
    assert ARTICLES["bridge"].summary  # the draft the test reads is the seeded one


# In the page: bring the draft back into view and press A at each animation frame
# until the keyboard script has seen it come back (its refusal no longer says "not
# in view"); returns what the script said then. The presses are made in the page,
# a frame apart, never across a Playwright round trip: a loaded machine cannot
# stretch the time between the draft coming back and the press to the dwell (2 s).
_BACK_IN_VIEW_THEN_A = """async () => {
  document.querySelector(".cd-draft-body").scrollIntoView({block: "center"});
  const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
  for (let tries = 0; tries < 600; tries++) {
    await frame();
    document.body.dispatchEvent(new KeyboardEvent("keydown", {key: "a", bubbles: true}));
    const box = document.getElementById("cd-key-refusal");
    const said = box ? box.textContent : "";
    if (!said.includes("not in view")) return said;
  }
  return "still not in view after 600 frames";
}"""


def test_the_dwell_counts_from_coming_back_into_view_not_from_the_drawing(
    tmp_path: Path, sqlite_url: str
) -> None:
    """The draft had been in view for the dwell time, then was scrolled away and back:
    A pressed the moment it is back in view is refused, saying how briefly it has been
    in view (a dwell counted from when the draft was drawn let it through)."""
    with serve(tmp_path, sqlite_url, _twelve, dwell_seconds=2) as server, chromium() as browser:
        page = signed_in_page(browser, server, width=1280, height=720)
        shows(page, "bridge")
        bridge = server.ids["bridge"]
        read(page, bridge)  # drawn, and in view, for longer than the dwell
        _scroll_away(page, page.locator(".cd-draft-body").first)
        answer = page.evaluate(_BACK_IN_VIEW_THEN_A)
        assert answer.startswith(f"Not approved: #{bridge}: it had been in view for only"), answer
        idle(page)
        assert item_status(server, bridge) == "draft"
