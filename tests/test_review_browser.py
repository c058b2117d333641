"""The review queue in a real headless Chromium: `copydesk review` on a free port
against a seeded SQLite file; sign in, approve one draft, reject another, then
check the database. A hostile article must stay inert text in the page.

Needs Debian's chromium at /usr/bin/chromium: skipped when it is missing,
unless COPYDESK_REQUIRE_BROWSER=1 (CI), then it fails. Screenshots of the
item view go to tests/artifacts/ (git-ignored).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlmodel import Session

from store.db import open_store
from store.models import AuditEvent, Item
from tests.review_seed import (
    ARTICLES,
    IMG,
    JS_LINK,
    MD_IMAGE,
    PASSWORD,
    SCRIPT,
    seed_editor,
    seed_queue,
    write_config,
)

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# `copydesk review`, exactly as the console script runs it.
COPYDESK = [sys.executable, "-c", "from copydesk.cli import app; app()"]
STARTUP_LIMIT = 120  # seconds to wait for the server to answer before giving up
WAIT_MS = 30_000


def _require_browser() -> None:
    if CHROMIUM.exists():
        return
    if os.environ.get("COPYDESK_REQUIRE_BROWSER") == "1":
        pytest.fail(f"COPYDESK_REQUIRE_BROWSER=1 but {CHROMIUM} is missing", pytrace=False)
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End `copydesk review` and its streamlit child: they share a process group."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)
    except ProcessLookupError:
        pass


def _wait_until_up(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_LIMIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"copydesk review exited with {process.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    pytest.fail(f"copydesk review did not answer within {STARTUP_LIMIT}s:\n{log.read_text()}")


def _require_review_command() -> None:
    import typer

    from copydesk.cli import app

    if "review" not in typer.main.get_command(app).commands:  # type: ignore[attr-defined]
        pytest.fail(
            "copydesk.cli does not register copydesk.commands_review "
            "(add it to the modules whose register(app) cli.py calls)",
            pytrace=False,
        )


@dataclass
class Server:
    base: str
    db_url: str
    ids: dict[str, int]


@contextmanager
def _serve(tmp_path: Path, sqlite_url: str, dwell_seconds: float | None) -> Iterator[Server]:
    _require_browser()
    _require_review_command()
    engine = open_store(sqlite_url)
    ids = seed_queue(engine, ("bridge", "school", "market", "hostile", "wrong_number"))
    seed_editor(engine, "alice")
    engine.dispose()
    config = write_config(tmp_path / "config.toml", sqlite_url, dwell_seconds=dwell_seconds)
    port = _free_port()
    env = dict(os.environ)
    env.update(COPYDESK_DATABASE_URL=sqlite_url, COPYDESK_CONFIG=str(config), HOME=str(tmp_path))
    log = tmp_path / "review.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*COPYDESK, "review", "--port", str(port)],
            cwd=tmp_path,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_until_up(base, process, log)
            yield Server(base, sqlite_url, ids)
        finally:
            _stop(process)


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str) -> Iterator[Server]:
    """The app with no dwell time (this test is not about it)."""
    with _serve(tmp_path, sqlite_url, 0) as running:
        yield running


@pytest.fixture
def dwell_server(tmp_path: Path, sqlite_url: str) -> Iterator[Server]:
    """The app as shipped: `[review] dwell_seconds` left at its default (1 s)."""
    with _serve(tmp_path, sqlite_url, None) as running:
        yield running


def _inert(page) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Count what would be live if the hostile text had been parsed as HTML or markdown."""
    return page.evaluate(
        """() => ({
            scripts: [...document.scripts].filter(s => s.text.includes('alert(1)')).length,
            bad_images: [...document.images].filter(
                i => i.getAttribute('src') === 'x' || i.src.includes('tracker.example.net')).length,
            onerror: document.querySelectorAll('[onerror]').length,
            js_links: [...document.querySelectorAll('a[href]')].filter(
                a => a.getAttribute('href').trim().toLowerCase().startsWith('javascript:')).length,
        })"""
    )


def _shows(page, key: str) -> None:  # type: ignore[no-untyped-def]
    """Wait until the page shows this article's draft (the whole rerun, not a
    half-drawn page whose headline changed first)."""
    from playwright.sync_api import expect

    article = ARTICLES[key]
    expect(page.locator(".cd-headline").first).to_have_text(article.headline)
    expect(page.locator(".cd-text").filter(has_text=article.summary[-30:]).first).to_be_visible()


def _said(page, text: str):  # type: ignore[no-untyped-def]
    """A message box on the page (not a button label) containing `text`."""
    return page.locator(".cd-text").filter(has_text=text).first


def _drawn(page) -> None:  # type: ignore[no-untyped-def]
    """Wait until every table's grid is drawn (Streamlit shows a grey skeleton
    while its code loads), so the screenshot shows what an editor sees."""
    from playwright.sync_api import expect

    expect(page.locator("[data-testid=stDataFrame] canvas").first).to_be_attached()
    expect(page.locator("[data-testid=stSkeleton]")).to_have_count(0)


def test_sign_in_approve_reject_in_a_real_browser(server: Server) -> None:
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    requests: list[str] = []
    dialogs: list[str] = []
    ids = server.ids
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 1200})
            page.set_default_timeout(WAIT_MS)
            page.on("request", lambda r: requests.append(r.url))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            # Nothing but the loopback server may be reached.
            page.route(
                "**/*",
                lambda route: (
                    route.continue_()
                    if route.request.url.startswith(server.base)
                    else route.abort()
                ),
            )
            page.goto(server.base)

            # Sign-in first, nothing else.
            page.get_by_role("textbox", name="Name").fill("alice")
            page.get_by_role("textbox", name="Password").fill(PASSWORD)
            assert ARTICLES["bridge"].headline not in page.inner_text("body")
            page.get_by_role("button", name="Sign in").click()
            expect(page.get_by_text("Review queue")).to_be_visible()

            # The oldest draft opens, with its evidence marked; keep a picture of it.
            _shows(page, "bridge")
            expect(page.locator("mark.cd-grounded").first).to_be_visible()
            expect(page.get_by_role("button", name=re.compile(r"^Approve"))).to_be_enabled()
            _drawn(page)
            page.screenshot(path=str(ARTIFACTS / "review_item_view.png"), full_page=True)

            # Approve it: the next draft opens.
            page.get_by_role("button", name=re.compile(r"^Approve")).click()
            expect(_said(page, f"Approved #{ids['bridge']}")).to_be_visible()
            _shows(page, "school")
            # The sidebar's View radio still shows the queue selected (issue 12).
            expect(page.get_by_role("radio", name="Queue", exact=True)).to_be_checked()

            # Reject the next one with a reason typed in the box and Enter. The reason
            # contains "a", the approve shortcut: typing must not approve.
            reason = page.get_by_label("Reason for rejecting")
            reason.fill("Duplicate of an earlier story")
            reason.press("Enter")
            expect(_said(page, f"Rejected #{ids['school']}")).to_be_visible()
            _shows(page, "market")

            # The hostile article: shown literally, nothing live, nothing fetched.
            page.get_by_role("button", name=re.compile(r"Next")).click()
            expect(page.locator(".cd-headline").first).to_contain_text("Calder Reach site")
            for payload in (SCRIPT, IMG, MD_IMAGE, JS_LINK):
                # Retried until the rerun has drawn the whole item, not just the headline.
                expect(page.locator(".cd-text").filter(has_text=payload).first).to_be_visible()
            assert _inert(page) == {"scripts": 0, "bad_images": 0, "onerror": 0, "js_links": 0}
            expect(page.get_by_role("button", name=re.compile(r"^Approve"))).to_be_enabled()
            page.screenshot(path=str(ARTIFACTS / "review_hostile_item.png"), full_page=True)

            # The discarded view: why each item was discarded, before its title.
            page.get_by_text("Discarded", exact=True).click()
            expect(page.locator(".cd-count").first).to_have_text("1 item")
            expect(page.get_by_label("Discarded from").first).to_be_visible()
            _drawn(page)
            page.screenshot(path=str(ARTIFACTS / "review_discarded.png"), full_page=True)
        finally:
            browser.close()

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
    """Ten browser contexts submit wrong passwords at the same moment. Each attempt
    is counted before its password is checked, so exactly FREE_FAILURES + 1 of
    them are checked and counted (the last of those sets the lock) and the rest
    are refused by the lock; afterwards even the right password is refused."""
    import asyncio

    from playwright.async_api import async_playwright
    from playwright.async_api import expect as async_expect

    from store.editors import FREE_FAILURES, REFUSED
    from store.models import Editor

    contexts = 10

    async def burst() -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                pages = []
                for _ in range(contexts):
                    context = await browser.new_context()
                    page = await context.new_page()
                    page.set_default_timeout(WAIT_MS * 2)
                    await page.goto(server.base)
                    await page.get_by_role("textbox", name="Name").fill("alice")
                    await page.get_by_role("textbox", name="Password").fill("wrong-guess-1234")
                    pages.append(page)
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

    asyncio.run(burst())
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
    import asyncio

    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.asyncio.client import connect  # the [test] extra lists it

    def rerun(states: list[dict[str, object]]) -> bytes:
        message = BackMsg()
        message.rerun_script.query_string = ""
        for state in states:
            widget = message.rerun_script.widget_states.widgets.add()
            for field_name, value in state.items():
                setattr(widget, field_name, value)
        return message.SerializeToString()

    crafted = [
        rerun([]),
        rerun([{"id": "$$ID-00000000000000000000000000000000-login_name", "int_value": 7}]),
        rerun([{"id": "$$ID-ffff-login_submit", "json_value": '{"__proto__": 1}'}]),
        rerun([{"id": "login_password", "double_array_value": None}][:0] + [{"id": "../../x"}]),
        rerun(
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

    async def read(connection, received: list[bytes], quiet: float) -> None:  # type: ignore[no-untyped-def]
        while True:
            try:
                message = await asyncio.wait_for(connection.recv(), timeout=quiet)
            except (TimeoutError, Exception):  # noqa: BLE001 - quiet or closed: done
                return
            if isinstance(message, bytes):
                received.append(message)

    async def talk() -> list[bytes]:
        ws_url = server.base.replace("http://", "ws://") + "/_stcore/stream"
        received: list[bytes] = []
        async with connect(ws_url, subprotocols=["streamlit"], max_size=None) as connection:
            await connection.send(rerun([]))
            await read(connection, received, 20)
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
                rerun([{"id": i, **w} for i in ids]) for w in wrong if None not in w.values()
            ]
            attacks += crafted
            for payload in attacks:
                try:
                    await connection.send(payload)
                except Exception:  # noqa: BLE001 - the server hung up: read what it sent
                    break
                await read(connection, received, 2)
        return received

    received = asyncio.run(talk())
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


def _signed_in_page(browser, server: Server):  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1200})
    page.set_default_timeout(WAIT_MS)
    page.route(
        "**/*",
        lambda route: (
            route.continue_() if route.request.url.startswith(server.base) else route.abort()
        ),
    )
    # On a loaded machine a rerun can take longer than expect's 5 s default.
    expect.set_options(timeout=WAIT_MS)
    page.goto(server.base)
    page.get_by_role("textbox", name="Name").fill("alice")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("Review queue")).to_be_visible()
    return page


def _statuses(server: Server) -> dict[str, str]:
    engine = open_store(server.db_url)
    try:
        with Session(engine) as session:
            return {key: session.get(Item, i).status for key, i in server.ids.items()}  # type: ignore[union-attr]
    finally:
        engine.dispose()


def _on_screen(page, item_id: int) -> None:  # type: ignore[no-untyped-def]
    """Wait until the page run that draws this draft has finished drawing it: its
    marker (review_ui/shortcuts.py draft_marker) is the only one on the page."""
    from playwright.sync_api import expect

    expect(page.locator(f'span.cd-draft[class*="cd-draft-{item_id}-"]')).to_have_count(1)
    expect(page.locator("span.cd-draft")).to_have_count(1)


def _slow_down(page, how: str) -> None:  # type: ignore[no-untyped-def]
    """Make the browser as slow as a loaded editor's machine: every task six times
    slower (Chromium's own CPU throttling), or the page's main thread busy for
    1.5 s right after the first press, so the second key press waits in the queue
    behind the next draft's drawing."""
    if how == "throttled":
        page.context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": 6})
    elif how == "busy":
        page.evaluate(
            """() => { setTimeout(() => {
                const until = performance.now() + 1500;
                while (performance.now() < until) {}
            }, 0); }"""
        )


@pytest.mark.parametrize(
    ("gap_ms", "slow"), [(150, ""), (700, ""), (150, "busy"), (150, "throttled")]
)
def test_two_quick_a_presses_approve_only_the_draft_that_was_on_screen(
    dwell_server: Server, gap_ms: int, slow: str
) -> None:
    """Issue 12: A pressed twice quickly approved two drafts, the second never
    seen. Now a decision applies only to a draft on screen for `dwell_seconds`
    (1 s by default), measured in the browser from the moment the key was
    pressed, and every outcome is a message naming its item. A slow browser (one
    that handles the second press only after drawing the next draft) used to
    approve the unseen draft: the server measured from when the click arrived."""
    from playwright.sync_api import expect, sync_playwright

    ids = dwell_server.ids
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = _signed_in_page(browser, dwell_server)
            _shows(page, "bridge")
            _on_screen(page, ids["bridge"])
            if slow == "throttled":
                _slow_down(page, slow)
            page.wait_for_timeout(1300)  # the editor reads the first draft
            page.locator(".cd-headline").first.click()  # focus the page, not a text box
            page.keyboard.press("a")
            if slow == "busy":
                _slow_down(page, slow)
            page.wait_for_timeout(gap_ms)
            page.keyboard.press("a")
            # The approval of the draft that was seen stays on screen, naming its item.
            expect(_said(page, f"Approved #{ids['bridge']}")).to_be_visible()
            _shows(page, "school")
            _on_screen(page, ids["school"])
            page.wait_for_timeout(2500)  # any late decision has landed by now
            expect(_said(page, f"Approved #{ids['bridge']}")).to_be_visible()
        finally:
            browser.close()
    statuses = _statuses(dwell_server)
    assert statuses["bridge"] == "approved"
    assert [k for k, s in statuses.items() if s == "approved"] == ["bridge"]


def test_a_pressed_too_soon_is_refused_naming_the_item(dwell_server: Server) -> None:
    """A pressed on a draft that appeared a moment ago is refused in the browser,
    with a message naming the item; pressed again once it has been read, it approves."""
    from playwright.sync_api import expect, sync_playwright

    ids = dwell_server.ids
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = _signed_in_page(browser, dwell_server)
            _shows(page, "bridge")
            _on_screen(page, ids["bridge"])
            page.locator(".cd-headline").first.click()
            page.keyboard.press("a")
            expect(_said(page, f"Not approved: #{ids['bridge']}")).to_be_visible()
            assert _statuses(dwell_server)["bridge"] == "draft"
            page.wait_for_timeout(1300)
            page.keyboard.press("a")
            expect(_said(page, f"Approved #{ids['bridge']}")).to_be_visible()
        finally:
            browser.close()
    assert _statuses(dwell_server)["bridge"] == "approved"
