"""The review queue in a real headless Chromium: `copydesk review` on a free port
against a seeded SQLite file; sign in, approve one draft, reject another, then
check the database. A hostile article must stay inert text in the page.

Needs Debian's chromium at /usr/bin/chromium: skipped when it is missing,
unless COPYDESK_REQUIRE_BROWSER=1 (CI), then it fails. Screenshots of the
item view go to tests/artifacts/ (git-ignored).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlmodel import Session

from store.db import open_store
from store.models import AuditEvent, Item
from tests.browser import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    QUEUE_KEYS,
    WAIT_MS,
    Server,
    chromium,
    drawn,
    idle,
    inert,
    new_page,
    on_screen,
    press,
    queue_of,
    read_until_run_ends,
    run_apart,
    said,
    serve,
    shows,
    signed_in_page,
    statuses,
    websocket_rerun,
)
from tests.desk_kit import read
from tests.review_seed import ARTICLES, IMG, JS_LINK, MD_IMAGE, PASSWORD, SCRIPT

pytestmark = pytest.mark.browser


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str) -> Iterator[Server]:
    """The app with no dwell time (this test is not about it)."""
    with serve(tmp_path, sqlite_url, queue_of(*QUEUE_KEYS), dwell_seconds=0) as running:
        yield running


@pytest.fixture
def dwell_server(tmp_path: Path, db_url: str) -> Iterator[Server]:
    """The app with a dwell of DWELL seconds (the shipped default is 1 s), on the
    backend a test names (`indirect=["db_url"]`)."""
    with serve(tmp_path, db_url, queue_of(*QUEUE_KEYS), dwell_seconds=DWELL) as running:
        yield running


# Seconds. The second of two quick presses must come within the dwell of the next
# draft appearing: with the default 1 s, a loaded test machine (a press sent late,
# 700 ms planned) could let it count, and the test would fail for speed alone.
DWELL = 5


def test_sign_in_approve_reject_in_a_real_browser(server: Server) -> None:
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(exist_ok=True)
    requests: list[str] = []
    dialogs: list[str] = []
    ids = server.ids
    with chromium() as browser:
        # Nothing but loopback may be reached (tests/browser.py CHROMIUM_ARGS).
        page = new_page(browser, server)
        page.on("request", lambda r: requests.append(r.url))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(server.base)

        # Sign-in first, nothing else.
        page.get_by_role("textbox", name="Name").fill("alice")
        page.get_by_role("textbox", name="Password").fill(PASSWORD)
        assert ARTICLES["bridge"].headline not in page.inner_text("body")
        press(page, page.get_by_role("button", name="Sign in"))
        expect(page.get_by_text("Review queue")).to_be_visible()

        # The oldest draft opens, with its evidence marked; keep a picture of it.
        shows(page, "bridge")
        expect(page.locator("mark.cd-grounded").first).to_be_visible()
        expect(page.get_by_role("button", name=re.compile(r"^Approve"))).to_be_enabled()
        drawn(page)
        page.screenshot(path=str(ARTIFACTS / "review_item_view.png"), full_page=True)

        # Approve it: the next draft opens.
        page.get_by_role("button", name=re.compile(r"^Approve")).click()
        expect(said(page, f"Approved #{ids['bridge']}")).to_be_visible()
        shows(page, "school")
        # The sidebar's View radio still shows the queue selected (issue 12).
        expect(page.get_by_role("radio", name="Queue", exact=True)).to_be_checked()

        # Reject the next one with a reason typed in the box and Enter. The reason
        # contains "a", the approve shortcut: typing must not approve. Wait for the
        # page run first: one more run follows the address to the new draft, and
        # text typed into the box while it redraws can be lost (the known weakness
        # in the closing note of issue 12; this failed about once in six runs).
        idle(page)
        reason = page.get_by_label("Reason for rejecting")
        reason.fill("Duplicate of an earlier story")
        reason.press("Enter")
        expect(said(page, f"Rejected #{ids['school']}")).to_be_visible()
        shows(page, "market")

        # The hostile article: shown literally, nothing live, nothing fetched.
        page.get_by_role("button", name=re.compile(r"Next")).click()
        expect(page.locator(".cd-headline").first).to_contain_text("Calder Reach site")
        for payload in (SCRIPT, IMG, MD_IMAGE, JS_LINK):
            # Retried until the rerun has drawn the whole item, not just the headline.
            expect(page.locator(".cd-text").filter(has_text=payload).first).to_be_visible()
        assert inert(page) == {"scripts": 0, "bad_images": 0, "onerror": 0, "js_links": 0}
        expect(page.get_by_role("button", name=re.compile(r"^Approve"))).to_be_enabled()
        page.screenshot(path=str(ARTIFACTS / "review_hostile_item.png"), full_page=True)

        # The discarded view: why each item was discarded, before its title.
        page.get_by_text("Discarded", exact=True).click()
        expect(page.locator(".cd-count").first).to_have_text("1 item")
        expect(page.get_by_label("Discarded from").first).to_be_visible()
        expect(page.locator("table.cd-list")).to_contain_text("numbers_grounded")
        idle(page)
        page.screenshot(path=str(ARTIFACTS / "review_discarded.png"), full_page=True)

    assert not dialogs
    assert not [url for url in requests if "tracker.example.net" in url]
    assert not [url for url in requests if url.startswith("javascript:")]

    engine = open_store(server.db_url)
    try:
        with Session(engine) as session:
            bridge = session.get(Item, ids["bridge"])
            school = session.get(Item, ids["school"])
            market = session.get(Item, ids["market"])
            moves = session.execute(
                select(AuditEvent.item_id, AuditEvent.actor)
                .add_columns(AuditEvent.to_status, AuditEvent.reason)
                .where(AuditEvent.actor.like("editor:%"))  # type: ignore[attr-defined]
                .order_by(AuditEvent.id)
            ).all()
    finally:
        engine.dispose()
    assert bridge is not None and school is not None and market is not None
    assert (bridge.status, bridge.decided_by) == ("approved", "alice")
    assert (school.status, school.decided_by) == ("rejected", "alice")
    assert market.status == "draft"
    assert [tuple(m) for m in moves] == [
        (ids["bridge"], "editor:alice", "approved", "approved"),
        (ids["school"], "editor:alice", "rejected", "Duplicate of an earlier story"),
    ]
    assert (ARTIFACTS / "review_item_view.png").stat().st_size > 10_000
    assert (ARTIFACTS / "review_discarded.png").stat().st_size > 10_000


def test_parallel_sign_ins_from_many_browsers_are_each_counted(server: Server) -> None:
    """Five browser contexts submit wrong passwords at the same moment. Each attempt
    is counted before its password is checked, so exactly FREE_FAILURES + 1 of
    them are checked and counted (the last of those sets the lock) and the rest
    are refused by the lock; afterwards even the right password is refused.

    On SQLite only (issue 23: a page a context, 30 s a backend with ten): what differs between the
    backends is the count's own race in the database, which
    tests/test_editors.py test_parallel_attempts_count_one_each_and_the_limit_holds
    runs on both, twenty threads at once; this test is the app's path to it."""
    import asyncio

    from playwright.async_api import async_playwright
    from playwright.async_api import expect as async_expect

    from store.editors import FREE_FAILURES, REFUSED
    from store.models import Editor

    # Enough that the lock must refuse some: FREE_FAILURES + 1 are counted, the
    # rest arrive together with them and are refused (issue 23: five pages, not ten).
    contexts = FREE_FAILURES + 3

    async def ready_to_sign_in(browser):  # type: ignore[no-untyped-def]
        page = await (await browser.new_context()).new_page()
        page.set_default_timeout(WAIT_MS * 2)
        await page.goto(server.base)
        await page.get_by_role("textbox", name="Name").fill("alice")
        await page.get_by_role("textbox", name="Password").fill("wrong-guess-1234")
        return page

    async def burst() -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                # The ten forms are made ready side by side (issue 23: one after another
                # they took most of the test's 30 s); the race is the clicks below, all
                # sent at once when every form is filled in.
                pages = await asyncio.gather(*(ready_to_sign_in(browser) for _ in range(contexts)))
                await asyncio.gather(
                    *(page.get_by_role("button", name="Sign in").click() for page in pages)
                )
                for page in pages:
                    refusal = page.get_by_text(re.compile("^" + re.escape(REFUSED[:-1])))
                    await async_expect(refusal).to_be_visible(timeout=WAIT_MS * 2)

                late = await (await browser.new_context()).new_page()
                late.set_default_timeout(WAIT_MS)
                await late.goto(server.base)
                await late.get_by_role("textbox", name="Name").fill("alice")
                await late.get_by_role("textbox", name="Password").fill(PASSWORD)
                await late.get_by_role("button", name="Sign in").click()
                locked = late.get_by_text(re.compile(r"try again in (\d+ min ?)?(\d+ s)?\.$"))
                await async_expect(locked).to_be_visible(timeout=WAIT_MS)
                assert "Review queue" not in await late.inner_text("body")
            finally:
                await browser.close()

    run_apart(burst())
    engine = open_store(server.db_url)
    try:
        with Session(engine) as session:
            alice = session.scalars(select(Editor).where(Editor.name == "alice")).one()
        assert alice.failed_logins == FREE_FAILURES + 1
        assert alice.locked_until is not None
    finally:
        engine.dispose()


def test_malformed_websocket_messages_show_no_trace_to_a_stranger(server: Server) -> None:
    """A client that never signed in speaks Streamlit's websocket protocol directly:
    garbage bytes, then reruns with crafted widget ids and values of the wrong type.
    Whatever error that causes, nothing it receives carries a stack trace, a
    source line or an exception message (client.showErrorDetails = none)."""

    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.asyncio.client import connect  # the [test] extra lists it

    crafted = [
        websocket_rerun([]),
        websocket_rerun(
            [{"id": "$$ID-00000000000000000000000000000000-login_name", "int_value": 7}]
        ),
        websocket_rerun([{"id": "$$ID-ffff-login_submit", "json_value": '{"__proto__": 1}'}]),
        websocket_rerun(
            [{"id": "login_password", "double_array_value": None}][:0] + [{"id": "../../x"}]
        ),
        websocket_rerun(
            [
                {
                    "id": "$$ID-" + "9" * 4000 + "-None",
                    "string_value": "\udcff".encode("utf-8", "surrogatepass").decode(
                        "utf-8", "replace"
                    ),
                }
            ]
        ),
        b"\x00\xff\xfe not a protobuf at all",  # last: the server drops the connection
    ]

    def widget_ids(raw: list[bytes]) -> list[str]:
        """The ids of the sign-in form's widgets, as the server sent them."""
        ids = []
        for data in raw:
            message = ForwardMsg.FromString(data)
            if message.WhichOneof("type") != "delta":
                continue
            element = message.delta.new_element
            kind = element.WhichOneof("type")
            if kind and hasattr(getattr(element, kind), "id"):
                ids.append(getattr(element, kind).id)
        return [i for i in ids if i]

    async def talk() -> list[bytes]:
        ws_url = server.base.replace("http://", "ws://") + "/_stcore/stream"
        received: list[bytes] = []
        async with connect(ws_url, subprotocols=["streamlit"], max_size=None) as connection:
            await connection.send(websocket_rerun([]))
            await read_until_run_ends(connection, received, 20)
            ids = widget_ids(received)
            assert ids, [ForwardMsg.FromString(r).WhichOneof("type") for r in received]
            # The real widget ids with values of the wrong type, then made-up ids.
            wrong = [
                {"int_value": 7},
                {"double_array_value": None} if False else {"string_array_value": None},
                {"json_value": '{"__proto__": 1}'},
                {"trigger_value": True},
            ]
            attacks = [
                websocket_rerun([{"id": i, **w} for i in ids])
                for w in wrong
                if None not in w.values()
            ]
            attacks += crafted
            for payload in attacks:
                try:
                    await connection.send(payload)
                except Exception:  # noqa: BLE001 - the server hung up: read what it sent
                    break
                await read_until_run_ends(connection, received, 2)
        return received

    received = run_apart(talk())
    assert received, "the server sent nothing back"
    exceptions = []
    for raw in received:
        message = ForwardMsg.FromString(raw)
        if message.WhichOneof("type") == "delta" and message.delta.new_element.HasField(
            "exception"
        ):
            exceptions.append(message.delta.new_element.exception)
    for exception in exceptions:
        assert list(exception.stack_trace) == []
        assert "Traceback" not in exception.message and ".py" not in exception.message
    everything = b"".join(received)
    assert b"Traceback" not in everything
    assert b'File "' not in everything
    assert b"site-packages" not in everything


def _slow_down(page, how: str) -> None:  # type: ignore[no-untyped-def]
    """Make the browser as slow as a loaded editor's machine: every task six times
    slower (Chromium's own CPU throttling), or the page's main thread busy for
    half a second longer than the dwell right after the first press, so the second
    key press waits in the queue behind the next draft's drawing."""
    if how == "throttled":
        page.context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": 6})
    elif how == "busy":
        page.evaluate(
            """(busy) => { setTimeout(() => {
                const until = performance.now() + busy;
                while (performance.now() < until) {}
            }, 0); }""",
            DWELL * 1000 + 500,
        )


# On SQLite only (issue 23: 13 s of browser a variant). What the backend decides here,
# a second decision on a draft already decided being refused as a conflict, is
# tests/test_store.py's test_second_decision_on_the_same_view_raises_conflict and
# test_stale_screen_gets_a_conflict_not_an_illegal_move, on both backends; how late a
# slow browser handles the second press does not depend on the backend.
@pytest.mark.parametrize(
    ("db_url", "gap_ms", "slow"),
    [
        ("sqlite", 150, ""),
        ("sqlite", 700, ""),
        ("sqlite", 150, "busy"),
        ("sqlite", 150, "throttled"),
    ],
    indirect=["db_url"],
)
def test_two_quick_a_presses_approve_only_the_draft_that_was_on_screen(
    dwell_server: Server, gap_ms: int, slow: str
) -> None:
    """Issue 12: A pressed twice quickly approved two drafts, the second never
    seen. Now a decision applies only to a draft on screen for `dwell_seconds`
    (DWELL here), measured in the browser from the moment the key was
    pressed, and every outcome is a message naming its item. A slow browser (one
    that handles the second press only after drawing the next draft) used to
    approve the unseen draft: the server measured from when the click arrived."""
    from playwright.sync_api import expect

    ids = dwell_server.ids
    with chromium() as browser:
        page = signed_in_page(browser, dwell_server, width=1280, height=720)
        shows(page, "bridge")
        on_screen(page, ids["bridge"])
        # Its buttons too: a loaded browser paints them last, and A with none on
        # screen is refused (tests/test_review_keys_browser.py).
        expect(page.get_by_role("button", name="Approve", exact=True)).to_be_visible()
        if slow == "throttled":
            _slow_down(page, slow)
        read(page, ids["bridge"])  # the editor reads the first draft
        page.locator(".cd-headline").first.click()  # focus the page, not a text box
        page.keyboard.press("a")
        if slow == "busy":
            _slow_down(page, slow)
        page.wait_for_timeout(gap_ms)
        page.keyboard.press("a")
        # The approval of the draft that was seen stays on screen, naming its item.
        expect(said(page, f"Approved #{ids['bridge']}")).to_be_visible()
        shows(page, "school")
        on_screen(page, ids["school"])
        # The second press is refused aloud (in the browser, or by the server if it got
        # there), whichever draft it met: once that is said, no decision can follow
        # from it (issue 23: a condition, not a 2.5 s pause meant to outlast one).
        expect(said(page, "Not approved")).to_be_visible()
        expect(said(page, f"Approved #{ids['bridge']}")).to_be_visible()
    decided = statuses(dwell_server)
    assert decided["bridge"] == "approved"
    assert [k for k, s in decided.items() if s == "approved"] == ["bridge"]


@pytest.fixture
def long_dwell_server(tmp_path: Path, sqlite_url: str) -> Iterator[Server]:
    """The longest dwell (30 s): finding the draft and pressing A took over 3 s on a
    loaded machine, and a press meant to be early must be early on any machine."""
    with serve(tmp_path, sqlite_url, queue_of(*QUEUE_KEYS), dwell_seconds=30) as running:
        yield running


def test_a_pressed_too_soon_is_refused_naming_the_item(long_dwell_server: Server) -> None:
    """A pressed on a draft that appeared a moment ago is refused in the browser, with
    a message naming the item, and nothing changes. (That the same press approves once
    the dwell has passed is shown with a clock the test moves, in test_review_app.py
    test_a_draft_on_screen_for_less_than_the_dwell_time_is_not_approved.)"""
    from playwright.sync_api import expect

    server = long_dwell_server
    ids = server.ids
    with chromium() as browser:
        page = signed_in_page(browser, server, width=1280, height=720)
        shows(page, "bridge")
        on_screen(page, ids["bridge"])
        page.locator(".cd-headline").first.click()
        page.keyboard.press("a")
        expect(said(page, f"Not approved: #{ids['bridge']}")).to_be_visible()
    assert statuses(server)["bridge"] == "draft"
