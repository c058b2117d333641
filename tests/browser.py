"""What the browser tests share (a helper module, not a test file).

- `serve(tmp_path, db_url, seed, ...)`: the review app over a database filled by a
  seed callable (the real pipeline, via tests/review_seed.py), configured by a
  config.toml of the test's own; `queue_of(...)` makes the usual seed. One Streamlit
  server per test process serves every test in turn (starting one took about 8 s):
  it runs exactly the command line `copydesk review` runs (`streamlit_command`), with
  COPYDESK_CONFIG naming a symbolic link that `serve` points at the test's config.toml.
  The app reads its settings on every page run (copydesk/review_app.py), so each run
  sees the test's database and settings; relative paths in the config are anchored next
  to the test's file, as ever.
  A seed that names its outcome (`queue_of`'s seeds, module-level seed functions) runs
  once per test process, into a SQLite file that every later test asking for it gets a
  copy of (`_from_template`); other seeds, and PostgreSQL, run the seed each time.
- `chromium()`: Debian's headless Chromium, one per test process (launched on first
  use), lent to one test at a time: the browser contexts a test opened are closed when
  it is done. `new_page(browser, server, ...)` a page in a context of its own (viewport,
  time zone, generous waits, loopback only); `signed_in_page(...)` the same, signed in
  by its session cookie (`session_cookie`: no sign-in form, issue 23) with the queue
  on screen; `open_signed_in` does that for a page a test made itself.
  `run_apart(coroutine)`: what `asyncio.run` would do, in a thread, since sync
  Playwright holds this thread's event loop.
- `submit_sign_in` / `sign_in`: the sign-in form, without and with waiting for the queue
  (`queue_ready`: its run ended and its Approve button painted).
- `press(page, button)`: every form submit (and any button whose page run a test
  waits on) goes through it: from an idle page, a click proven sent to the server
  (clicked again only when the page sent nothing), then the page run it started,
  waited out to its end.
- Page helpers: `shows`, `said`, `on_screen`, `drawn`, `idle`, `focus_page`,
  `choose` (an option of a select box, however loaded the machine), `inert`;
  `statuses(server)` reads the items' statuses back.
- `websocket_rerun` / `read_until_run_ends`: Streamlit's websocket protocol spoken by
  hand, as a stranger who never opened the page would.

Needs Debian's chromium at /usr/bin/chromium: a test is skipped when it is
missing, unless COPYDESK_REQUIRE_BROWSER=1 (CI), then it fails. Screenshots go
to tests/artifacts/ (git-ignored).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
import weakref
from collections.abc import Callable, Coroutine, Hashable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui import streamlit_adapter as adapter
from store.db import open_store, session_scope
from store.models import Item
from tests.publish_helpers import SECRET, SECRET_ENV, copy_sqlite
from tests.review_seed import ARTICLES, PASSWORD, seed_editor, seed_queue, write_config

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

# Nothing but loopback: Chromium sends every request to a proxy, except those its
# implicit bypass rules send directly (localhost, 127.0.0.1/8, [::1], link-local:
# https://chromium.googlesource.com/chromium/src/+/HEAD/net/docs/proxy.md). The proxy
# is a port this process holds bound and never listens on, so a connection to it is
# refused at once. (Not Playwright's page.route: a Python round trip per request, and
# routing turns the browser's HTTP cache off.) tests/test_loopback_only_browser.py.
_NO_PROXY = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
_NO_PROXY.bind(("127.0.0.1", 0))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    f"--proxy-server=http://127.0.0.1:{_NO_PROXY.getsockname()[1]}",
]
STARTUP_LIMIT = 120  # seconds to wait for the server to answer before giving up
# The keyboard script's wait for the page run that answers a press (10 s shipped),
# shortened for tests about a press no run answers (`new_page(answer_ms=)`, its own
# clock): an idle machine answers a press well within it, and what those tests
# assert holds however long the machine takes (a late answer takes the "no answer"
# line away again: review_ui/views/shortcuts.py).
SHORT_ANSWER_MS = 3000
# How long a wait for the page may last: only a failing test waits it out. A page run
# on a loaded 2-core machine can take long: 30 s ran out at load 25.
WAIT_MS = 90_000

# The queue most tests start from: three plain drafts, the hostile one, and
# wrong_number, which a gate discards.
QUEUE_KEYS = ("bridge", "school", "market", "hostile", "wrong_number")

Seed = Callable[[Engine], dict[str, int]]
T = TypeVar("T")


@dataclass
class Server:
    base: str
    db_url: str
    ids: dict[str, int]
    config: Path  # the test's config.toml, which the server reads on every page run


# --------------------------------------------------------------------------- the server


def require_browser() -> None:
    if CHROMIUM.exists():
        return
    if os.environ.get("COPYDESK_REQUIRE_BROWSER") == "1":
        pytest.fail(f"COPYDESK_REQUIRE_BROWSER=1 but {CHROMIUM} is missing", pytrace=False)
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")


def require_review_command() -> None:
    import typer

    from copydesk.cli import app

    if "review" not in typer.main.get_command(app).commands:  # type: ignore[attr-defined]
        pytest.fail(
            "copydesk.cli does not register copydesk.cli.review "
            "(add it to the modules whose register(app) cli.py calls)",
            pytrace=False,
        )


def queue_of(*keys: str, editors: Sequence[str] = ("alice",)) -> Seed:
    """A seed: these review_seed ARTICLES through the real pipeline, oldest first in
    this order, then the editors (password PASSWORD)."""

    def seed(engine: Engine) -> dict[str, int]:
        ids = seed_queue(engine, keys)
        for name in editors:
            seed_editor(engine, name)
        return ids

    seed.template_key = ("queue_of", keys, tuple(editors))  # type: ignore[attr-defined]
    return seed


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the review server (and any child): it leads a process group of its own."""
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
            pytest.fail(f"the review server exited with {process.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    pytest.fail(f"the review server did not answer within {STARTUP_LIMIT}s:\n{log.read_text()}")


@dataclass
class _SharedServer:
    base: str
    config_link: Path  # what COPYDESK_CONFIG names: a link to the current test's config
    log: Path
    process: subprocess.Popen[bytes]
    home: Path  # its temporary home (copydesk-review-*): removed when the server stops


_shared: _SharedServer | None = None
HOLD_ENV = "COPYDESK_REVIEW_TEST_HOLD"  # review_ui/views/holds.py `hold_for_tests`


def _shared_server() -> _SharedServer:
    """The review server of this test process, started on first use, stopped at exit.
    Its environment has no COPYDESK_DATABASE_URL: the database comes from the config."""
    global _shared
    if _shared is not None and _shared.process.poll() is None:
        return _shared
    if _shared is not None:  # it has stopped (killed from outside): its home goes too
        _stop_server(_shared)
        _shared = None
    from copydesk.cli.review import streamlit_command

    home = Path(tempfile.mkdtemp(prefix="copydesk-review-"))
    config_link = home / "config.toml"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("COPYDESK_")}
    env.update(COPYDESK_CONFIG=str(config_link), HOME=str(home))
    # `page_runs_held`: while a FIFO exists in this folder, page runs wait on it.
    (home / "hold").mkdir(exist_ok=True)
    env[HOLD_ENV] = str(home / "hold")
    # The loopback webhook's secret (tests/publish_helpers.py), for a test whose config
    # names a webhook target: a secret comes from the environment, never config.toml.
    env[SECRET_ENV] = SECRET
    log = home / "review.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            streamlit_command("127.0.0.1", port),
            cwd=home,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    server = _SharedServer(f"http://127.0.0.1:{port}", config_link, log, process, home)
    atexit.register(_stop_server, server)
    _stop_on_sigterm()
    try:
        _wait_until_up(server.base, process, log)
    except BaseException:
        _stop_server(server)
        raise
    _shared = server
    return _shared


def _stop_server(server: _SharedServer) -> None:
    """End a review server and remove its temporary home (its config link, hold
    folder and log): nothing of it is left in the temporary folder."""
    _stop(server.process)
    shutil.rmtree(server.home, ignore_errors=True)


def _stop_on_sigterm() -> None:
    """On SIGTERM (a CI runner's stop, `kill`) Python ends at once without running
    atexit, and the review server kept its port and its home. The first review
    server of a test process sets a handler that stops it first, then ends the
    process by the same signal as before. Only over the default handler (pytest or a
    plug-in may have its own), and only from the main thread (Python's rule)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def terminated(signum: int, _frame: object) -> None:
        stop_review_server()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, terminated)


def stop_review_server() -> None:
    """Stop this process's review server, if it runs, and remove its home
    (tests/conftest.py at the session's end: a pytest-xdist worker may leave without
    running atexit, and its server stayed)."""
    global _shared
    if _shared is not None:
        _stop_server(_shared)
        _shared = None


def _point_at(link: Path, target: Path) -> None:
    """Make `link` a symbolic link to `target`, replacing it in one step: a page run
    reads either the last test's config or this one's, never a missing file."""
    fresh = link.with_name(f".{link.name}.{os.getpid()}.new")
    fresh.unlink(missing_ok=True)
    fresh.symlink_to(target.resolve())
    os.replace(fresh, link)


def _run_seed(db_url: str, seed: Seed) -> dict[str, int]:
    engine = open_store(db_url)
    try:
        return seed(engine)
    finally:
        engine.dispose()


# Seeded desks, made once per test process and copied for every test that asks for
# the same seed again: template key -> (the seeded SQLite file, its ids).
_seeded: dict[Hashable, tuple[Path, dict[str, int]]] = {}
_seeded_home: Path | None = None


def _template_key(seed: Seed) -> Hashable | None:
    """What names a seed's outcome: its `template_key` (`queue_of` sets one), or for a
    plain module-level function its module and name. Any other seed (a closure over a
    test's own values, say) is run afresh for each test."""
    key = getattr(seed, "template_key", None)
    if key is not None:
        return key
    name = getattr(seed, "__qualname__", "<locals>")
    if getattr(seed, "__closure__", None) is None and "<locals>" not in name:
        return (seed.__module__, name)
    return None


def _from_template(db_url: str, seed: Seed) -> dict[str, int] | None:
    """Fill the SQLite database at `db_url` with a copy of `seed`'s desk (seeding it
    first, once per process, with the real pipeline: about 2 s a desk) and return its
    ids; None (nothing done) for PostgreSQL or a seed without a template key."""
    global _seeded_home
    key = _template_key(seed)
    if key is None or not db_url.startswith("sqlite:///"):
        return None
    if key not in _seeded:
        if _seeded_home is None:
            _seeded_home = Path(tempfile.mkdtemp(prefix="copydesk-seeds-"))
            atexit.register(shutil.rmtree, _seeded_home, True)
        template = _seeded_home / f"desk{len(_seeded)}.db"
        _seeded[key] = (template, _run_seed(f"sqlite:///{template}", seed))
    template, ids = _seeded[key]
    copy_sqlite(template, Path(db_url.removeprefix("sqlite:///")))
    return dict(ids)


@contextmanager
def serve(
    tmp_path: Path,
    db_url: str,
    seed: Seed,
    *,
    dwell_seconds: float | None = 0,
    modes: dict[str, str] | None = None,
    **config: Any,
) -> Iterator[Server]:
    """The review app over `db_url`, filled first by `seed` (its ids become
    `Server.ids`), configured by tmp_path/config.toml. `dwell_seconds` is 0 unless a
    test is about it; None leaves the shipped default (1 s). `modes` and any other
    keyword (auth=, min_source_words=, claim_seconds=, claim_idle_seconds=) go to
    review_seed.write_config."""
    require_browser()
    require_review_command()
    ids = _from_template(db_url, seed)
    if ids is None:
        ids = _run_seed(db_url, seed)
    config_file = write_config(
        tmp_path / "config.toml", db_url, modes=modes, dwell_seconds=dwell_seconds, **config
    )
    server = _shared_server()
    _point_at(server.config_link, config_file)
    yield Server(server.base, db_url, ids, config_file)


@contextmanager
def page_runs_held(at: str = "end") -> Iterator[Callable[[], None]]:
    """Inside: every page run waits at point `at` ("start", "middle": the draft and
    its buttons drawn, not the rest; "end"; review_ui/views/holds.py) until the test
    calls the `release` handed out, which waits for a run to be held there, lets it
    go on, and holds no run after it. A run is held open by the test, never slowed
    by a sleep: what a test does meanwhile happens during that run."""
    fifo = _shared_server().config_link.parent / "hold" / f"{at}.fifo"
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo, 0o600)

    def release() -> None:
        deadline = time.monotonic() + STARTUP_LIMIT
        while True:  # a run opened the FIFO to read: it is being held
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"no page run was held within {STARTUP_LIMIT}s")
                time.sleep(0.05)
        fifo.unlink(missing_ok=True)  # the next run is not held
        os.close(fd)  # the held run reads its end and goes on

    try:
        yield release
    finally:
        fifo.unlink(missing_ok=True)


def running(page: Any) -> None:
    """Assert that a page run is in progress now (the page says so)."""
    state = page.locator(adapter.APP).get_attribute(adapter.SCRIPT_STATE)
    assert state != adapter.NOT_RUNNING, "the page run had already ended"


def server_log() -> str:
    """What the review server has written to its log so far."""
    return _shared_server().log.read_text(encoding="utf-8", errors="replace")


def statuses(server: Server) -> dict[str, str]:
    """The status of every seeded item, by its key, read from the database."""
    engine = open_store(server.db_url)
    try:
        with Session(engine) as session:
            return {key: session.get(Item, i).status for key, i in server.ids.items()}  # type: ignore[union-attr]
    finally:
        engine.dispose()


# --------------------------------------------------------------------------- the browser


_browser: tuple[Any, Any] | None = None  # (Playwright, Browser) of this test process


def _shared_browser() -> Any:
    """The headless Chromium of this test process, launched on first use (about 1.3 s
    idle, far more on a loaded machine) and again only if it went away."""
    global _browser
    if _browser is not None and _browser[1].is_connected():
        return _browser[1]
    stop_chromium()
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    except BaseException:
        playwright.stop()
        raise
    _browser = (playwright, browser)
    return browser


def stop_chromium() -> None:
    """Close this process's Chromium and stop Playwright's driver, if running. While
    sync Playwright runs, its event loop counts as running in this thread, so
    `asyncio.run` refuses: tests/conftest.py calls this before any test that is not a
    browser test, and `run_apart` runs a browser test's own coroutines in a thread."""
    global _browser
    if _browser is None:
        return
    playwright, browser = _browser
    _browser = None
    try:
        browser.close()
    except Exception:  # noqa: BLE001, S110 - a browser that already went away
        pass
    playwright.stop()


atexit.register(stop_chromium)


@contextmanager
def chromium() -> Iterator[Any]:
    """The process's headless Chromium (sync Playwright) for one test. A test opens
    pages in browser contexts of its own (`new_page`: another person, as far as the
    app knows); they are all closed when the test is done, so the next test starts
    from a browser with none."""
    require_browser()
    browser = _shared_browser()
    try:
        yield browser
    except Exception:
        _keep_what_the_pages_show(browser)
        raise
    finally:
        for context in list(browser.contexts):
            try:
                context.close()
            except Exception:  # noqa: BLE001, S110 - a context its test already closed
                pass


def _keep_what_the_pages_show(browser: Any) -> None:
    """A browser test that failed leaves a screenshot and the HTML of every page it
    had open in ARTIFACTS/failed/, named by the test, and how many run requests the
    page sent and page runs the server finished for it: a failure seen only on a
    loaded CI machine can then be read afterwards."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "test").split(" ")[0]
    name = re.sub(r"[^\w.-]+", "_", test)[-120:]
    folder = ARTIFACTS / "failed"
    folder.mkdir(parents=True, exist_ok=True)
    for n, context in enumerate(browser.contexts):
        for m, page in enumerate(context.pages):
            stem = f"{name}-{n}-{m}"
            try:
                runs = _runs.get(page)
                if runs is not None:  # was a click lost in the page, or on the server?
                    sent = page.evaluate("() => window.__cdRerunsSent")
                    (folder / f"{stem}.runs.txt").write_text(
                        f"run requests the page sent: {sent}\n"
                        f"page runs the server finished for it: {runs.ended}\n"
                    )
                (folder / f"{stem}.html").write_text(page.content(), encoding="utf-8")
                page.screenshot(path=str(folder / f"{stem}.png"), full_page=True, timeout=10_000)
            except Exception:  # noqa: BLE001, S110 - a page that went away leaves nothing
                pass


def run_apart(coroutine: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coroutine)` in a thread of its own: in this thread the shared
    Chromium's sync Playwright holds the event loop (see `stop_chromium`)."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="run-apart") as pool:
        return pool.submit(asyncio.run, coroutine).result()


def new_page(
    browser: Any,
    server: Server,
    *,
    width: int = 1280,  # issue 25's screen: a test that needs more says why
    height: int = 720,
    timezone: str = "UTC",
    answer_ms: int | None = None,
) -> Any:
    """A page in a browser context of its own (another person, as far as the app
    knows) that can reach nothing but loopback (CHROMIUM_ARGS). Nothing is opened yet.
    `answer_ms` shortens the keyboard script's wait for the page run that answers a
    press (10 s; review_ui/views/shortcuts.py ANSWER_MS): the test's own clock."""
    from playwright.sync_api import expect

    viewport = {"width": width, "height": height}
    page = browser.new_context(viewport=viewport, timezone_id=timezone).new_page()
    page.set_default_timeout(WAIT_MS)
    # expect()'s own default is 5 s; this setting is global to Playwright.
    expect.set_options(timeout=WAIT_MS)
    _watch_the_socket(page)
    if answer_ms is not None:
        page.add_init_script(f"window.__copydeskAnswerMs = {int(answer_ms)};")
    return page


def keys_clock_ahead(page: Any, ms: int = 60_000) -> None:
    """Move the keyboard script's clock for waiting keys on by `ms` (a minute: far
    past its WAIT_MS, review_ui/views/shortcuts.py `keysNow`), so that a key that
    cannot apply is reported at once instead of after seconds of real waiting. A
    key pressed before this call waited on the old clock, and is now past its wait."""
    page.evaluate(
        f"() => {{ window.__copydeskKeysAhead = (Number(window.__copydeskKeysAhead) || 0)"
        f" + {int(ms)}; }}"
    )


def submit_sign_in(page: Any, name: str = "alice", password: str = PASSWORD) -> None:
    """Fill the sign-in form on screen and press Sign in; wait for nothing but the
    page run it started (a refused sign-in is what some tests are about)."""
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("textbox", name="Password").fill(password)
    press(page, page.get_by_role("button", name="Sign in"))


def sign_in(page: Any, name: str = "alice") -> None:
    """Sign in with the right password from the form on screen; wait for the queue."""
    submit_sign_in(page, name)
    queue_ready(page)


# The first queue page after signing in paints a button up to two seconds after the
# frame it sits in (review_ui/views/shortcuts.py `painting`), and A pressed before the
# Approve button is there is refused ("its buttons are still being drawn; press A
# again": seen at load 24-32, with the sign-in form and with the cookie alike).
_APPROVE_PAINTED = """() => [...document.querySelectorAll('[class*="st-key-approve_"]')]
    .every((frame) => frame.querySelector("button") !== null)"""


# The keyboard script marks the window once it has installed itself
# (review_ui/views/shortcuts.py): its key handling and its watch over every button
# press exist from then on, on every view.
_KEYS_INSTALLED = "() => window.__copydeskKeys === true"


def queue_ready(page: Any) -> None:
    """Wait for the queue, the page run that draws it to end, the Approve button of a
    draft on screen to be painted and the keyboard script to be installed: a test's
    first key, or a press on another view it goes to at once, finds the page ready.
    (The script runs when its element is drawn; on a loaded machine a test that left
    the queue as soon as its button was painted could unmount it first: the lost
    Retract's "no answer" line then never came, busy clean-clone CI of 4c49dc5.)"""
    from playwright.sync_api import expect

    expect(page.locator(".cd-count").first).to_contain_text("Review queue")
    idle(page)
    page.wait_for_function(_APPROVE_PAINTED)
    page.wait_for_function(_KEYS_INSTALLED)


def session_cookie(server: Server, name: str = "alice") -> dict[str, Any]:
    """The cookie a password sign-in as `name` leaves in the browser: a session opened
    in the database and its token signed with the server's secret, as the sign-in
    form's callback does once the password is right (review_ui/views/auth.py
    `_try_password`; the app's next page run finds the editor by it, `_from_cookie`).
    For a test that is not about signing in: the form costs a page load, a page run
    and an argon2 check per test (issue 23)."""
    from copydesk.config import load_settings
    from review_ui.desk import session_tokens
    from review_ui.views.auth import COOKIE
    from store import sessions

    review = load_settings(server.config, env={}).review  # the secret file beside it
    secret = session_tokens.load_secret(None, Path(review.session_secret_file))
    engine = open_store(server.db_url)
    try:
        with session_scope(engine) as session:
            key = sessions.open_session(session, name, timedelta(hours=review.session_hours))
    finally:
        engine.dispose()
    token = session_tokens.sign(secret, key, int(time.time()))
    # Playwright's BrowserContext.add_cookies takes name, value and url (or domain and
    # path): https://playwright.dev/python/docs/api/class-browsercontext#browser-context-add-cookies
    return {"name": COOKIE, "value": token, "url": server.base, "sameSite": "Strict"}


def signed_in_page(
    browser: Any,
    server: Server,
    name: str = "alice",
    *,
    width: int = 1280,  # issue 25's screen: a test that needs more says why
    height: int = 720,
    timezone: str = "UTC",
    answer_ms: int | None = None,
) -> Any:
    """`new_page` opened at the server already signed in as `name` (its session
    cookie, `session_cookie`), the queue on screen. The sign-in form itself is
    covered by the tests that use `sign_in` and `submit_sign_in`."""
    page = new_page(
        browser, server, width=width, height=height, timezone=timezone, answer_ms=answer_ms
    )
    open_signed_in(page, server, name)
    return page


def open_signed_in(page: Any, server: Server, name: str = "alice", *, at: str = "/") -> None:
    """Open `page` (not yet opened) at the server's address `at` (a link, say
    "/?item=7") signed in as `name` by its session cookie, and wait for the queue."""
    page.context.add_cookies([session_cookie(server, name)])
    page.goto(server.base + at)
    queue_ready(page)


# --------------------------------------------------------------------------- page helpers


def shows(page: Any, key: str) -> None:
    """Wait until the page shows this article's draft (the whole rerun, not a
    half-drawn page whose headline changed first)."""
    from playwright.sync_api import expect

    article = ARTICLES[key]
    expect(page.locator(".cd-headline").first).to_have_text(article.headline)
    expect(page.locator(".cd-text").filter(has_text=article.summary[-30:]).first).to_be_visible()


def choose(page: Any, box: Any, name: str, *, exact: bool = True) -> None:
    """Open the select box `box` and click its option `name` (the first, when `exact`
    is False and several start so). On a loaded machine a click on the box does not
    always open it (a page run landing just after the click closes the menu again, and
    a click on a focused box once never opened it, idle clean-clone CI), so the box is
    opened from an idle page until the option shows, by a click and by the keyboard's
    way (ArrowDown on the focused box) in turn."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
    from playwright.sync_api import expect

    option = page.get_by_role("option", name=name, exact=exact).first
    tries = 6
    for attempt in range(tries):
        idle(page)
        if attempt % 2 == 0:
            box.click()
        else:
            box.focus()
            page.keyboard.press("ArrowDown")
        if attempt == tries - 1:
            break  # the last opening is waited for as long as any wait (WAIT_MS)
        try:
            expect(option).to_be_visible(timeout=5_000)
            break
        except AssertionError:  # not open (yet): close it and open it again
            page.keyboard.press("Escape")
    try:
        option.click(timeout=15_000)
    except PlaywrightTimeoutError:
        # A page run that draws the open list again (a background publish's progress
        # line, every second) can detach the option between Playwright's checks and its
        # click, on every retry while the machine is loaded (busy clean-clone CI of
        # ff426f1: 90 s of "element was detached from the DOM, retrying"). A click event
        # dispatched in the page finds and clicks the option in one step of its script,
        # so no redraw comes between; the list's options take it as a click.
        option.dispatch_event("click")


def said(page: Any, text: str) -> Any:
    """A message box on the page (not a button label) containing `text`."""
    return page.locator(".cd-text").filter(has_text=text).first


def on_screen(page: Any, item_id: int) -> None:
    """Wait until the page run that draws this draft has finished drawing it: its
    marker (review_ui/views/shortcuts.py draft_marker) is the only one on the page."""
    from playwright.sync_api import expect

    expect(page.locator(f'span.cd-draft[class*="cd-draft-{item_id}-"]')).to_have_count(1)
    expect(page.locator("span.cd-draft")).to_have_count(1)


def drawn(page: Any) -> None:
    """Wait until every table's grid is drawn (Streamlit shows a grey skeleton
    while its code loads), so the screenshot shows what an editor sees."""
    from playwright.sync_api import expect

    expect(page.locator("[data-testid=stDataFrame] canvas").first).to_be_attached()
    expect(page.locator("[data-testid=stSkeleton]")).to_have_count(0)


def idle(page: Any) -> None:
    """Wait until the page is drawn (no run in progress: a loaded machine is slow)."""
    from playwright.sync_api import expect

    expect(page.locator(adapter.APP)).to_have_attribute(
        adapter.SCRIPT_STATE, adapter.NOT_RUNNING, timeout=WAIT_MS
    )


def focus_page(page: Any) -> None:
    """Take the cursor out of any box, as an editor clicking the page does."""
    idle(page)
    page.locator(".cd-headline").first.click()


def inert(page: Any) -> dict[str, int]:
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


# --------------------------------------------------------------------------- the websocket


def websocket_rerun(states: list[dict[str, object]]) -> bytes:
    """A Streamlit BackMsg asking for a rerun with these widget states (field: value)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    message = BackMsg()
    message.rerun_script.query_string = ""
    for state in states:
        widget = message.rerun_script.widget_states.widgets.add()
        for field_name, value in state.items():
            setattr(widget, field_name, value)
    return message.SerializeToString()


async def read_until_run_ends(connection: Any, received: list[bytes], quiet: float) -> None:
    """Append every binary message to `received` until the page run they belong to has
    ended (Streamlit's `script_finished`, other than a finish early for a rerun), the
    server closes the connection, or none comes for `quiet` seconds (a message that
    starts no run). Waiting for the run's end, not for a quiet spell, is what makes
    this as quick as the server allows and right on a slow machine."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    while True:
        try:
            message = await asyncio.wait_for(connection.recv(), timeout=quiet)
        except Exception:  # noqa: BLE001 - quiet (TimeoutError) or closed: done
            return
        if not isinstance(message, bytes):
            continue
        received.append(message)
        parsed = ForwardMsg.FromString(message)
        if (
            parsed.WhichOneof("type") == "script_finished"
            and parsed.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN
        ):
            return


# --------------------------------------------------------------------------- pressing

STREAM = re.compile(r".*/_stcore/stream.*")  # Streamlit's websocket, for route_web_socket


def _rerun_tag() -> int:
    """The first byte of a Streamlit BackMsg that asks for a page run: the protobuf
    key of its `rerun_script` field (field number, wire type 2: a message)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    return (BackMsg.DESCRIPTOR.fields_by_name["rerun_script"].number << 3) | 2


# Counts, in the page, every page-run request it sends to the server (its
# websocket's BackMsg `rerun_script`), synchronously in the send: `press` reads the
# count right after its click, with no clock involved.
_COUNT_SENDS = """(() => {
  if (window.__cdRerunsSent !== undefined) return;
  window.__cdRerunsSent = 0;
  const count = (data) => {
    const bytes = data instanceof ArrayBuffer ? new Uint8Array(data)
      : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : null;
    if (bytes && bytes.length > 0 && bytes[0] === %d) window.__cdRerunsSent += 1;
  };
  const patch = (cls) => {
    if (!cls || !cls.prototype || cls.prototype.__cdCounted) return cls;
    const send = cls.prototype.send;
    cls.prototype.send = function (data) { count(data); return send.call(this, data); };
    cls.prototype.__cdCounted = true;
    return cls;
  };
  // Playwright's route_web_socket puts a WebSocket class of its own in place (by
  // assignment, before or after this script): that one is counted too.
  let current = patch(window.WebSocket);
  Object.defineProperty(window, "WebSocket", {
    configurable: true,
    get: () => current,
    set: (cls) => { current = patch(cls); },
  });
})();"""

# Resolves with whether the page sent a run request since `n` were counted, once
# every timer set so far has run: Streamlit's form submit sends in the click
# handler itself, a plain button's trigger from a zero-delay timer its widget
# manager sets in the handler (`scheduleFlush`), which runs before a timer set
# after it.
_SENT_SINCE = """(n) => new Promise((done) =>
  setTimeout(() => setTimeout(() => done(window.__cdRerunsSent > n), 0), 0))"""


@dataclass
class _Runs:
    ended: int = 0  # page runs the server said it finished (not cut short for a rerun)


_runs: weakref.WeakKeyDictionary[Any, _Runs] = weakref.WeakKeyDictionary()


def _watch_the_socket(page: Any) -> None:
    """Before the page opens: count the run requests it sends (in the page) and the
    page runs the server finishes for it (here, from the frames it receives)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    runs = _runs[page] = _Runs()
    ended = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR}

    def received(payload: Any) -> None:
        if not isinstance(payload, bytes | bytearray):
            return
        message = ForwardMsg.FromString(bytes(payload))
        if message.WhichOneof("type") == "script_finished" and message.script_finished in ended:
            runs.ended += 1

    def on_socket(socket: Any) -> None:
        if "/_stcore/stream" in socket.url:
            socket.on("framereceived", received)

    page.add_init_script(_COUNT_SENDS % _rerun_tag())
    page.on("websocket", on_socket)


PRESS_TRIES = 3


def press(page: Any, button: Any) -> None:
    """Click `button` (a locator) so that the click cannot be lost, and wait for the
    page run it started to end. From an idle page (no run in progress) with the
    button enabled, click; the page's own count of run requests says whether the
    click was sent to the server. A click the page did not send is clicked again
    (the server never heard of it, so nothing can be done twice); one it sent is
    followed to the end of the page run that answers it. Every form submit in the
    browser tests goes through here (CI: a Retract whose answer never came)."""
    from playwright.sync_api import expect

    runs = _runs.get(page)
    if runs is None:
        pytest.fail("press: this page was not opened with tests/browser.py new_page")
    for _ in range(PRESS_TRIES):
        idle(page)
        expect(button).to_be_enabled()
        sent, ended = page.evaluate("() => window.__cdRerunsSent"), runs.ended
        button.click()
        if page.evaluate(_SENT_SINCE, sent):
            _wait_for_a_run_after(page, runs, ended)
            return
    pytest.fail(f"press: {PRESS_TRIES} clicks on {button} and the page sent nothing")


def _wait_for_a_run_after(page: Any, runs: _Runs, ended: int) -> None:
    """Wait until the server has finished a page run since `ended` were counted
    (the run that answers the request just sent), then until the page is idle."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while runs.ended <= ended:
        if time.monotonic() > deadline:
            pytest.fail(f"press: the click was sent; no page run ended in {WAIT_MS / 1000:g} s")
        page.wait_for_timeout(50)  # lets Playwright deliver the frames meanwhile
    idle(page)


class DropNextRun:
    """A websocket route that drops the browser's next rerun message that carries a
    press (a button or form submit: a trigger widget set) once armed, and passes
    everything else both ways: a click the server never hears of. A run request
    with no press in it (a page run the page asks for by itself) is never the one
    dropped: the test's click must be. `dropped` names the widgets of what it
    dropped. `page.route_web_socket(STREAM, drop.route)` before `goto`."""

    def __init__(self) -> None:
        self.armed = False
        self.dropped: list[str] = []  # per dropped message, the ids of its pressed widgets

    def route(self, ws: Any) -> None:
        server = ws.connect_to_server()

        def to_server(message: Any) -> None:
            pressed = _pressed(message) if self.armed and isinstance(message, bytes) else ""
            if pressed:
                self.armed = False
                self.dropped.append(pressed)
                return
            server.send(message)

        ws.on_message(to_server)


def _pressed(message: bytes) -> str:
    """The ids of the buttons pressed in this BackMsg if it asks for a page run
    (Streamlit sends a press as a widget state with `trigger_value` set), or ""."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    try:
        back = BackMsg.FromString(message)
    except Exception:  # noqa: BLE001 - not a BackMsg: pass it on
        return ""
    if back.WhichOneof("type") != "rerun_script":
        return ""
    states = back.rerun_script.widget_states.widgets
    pressed = [w.id for w in states if w.WhichOneof("value") == "trigger_value" and w.trigger_value]
    return " ".join(pressed)


def press_unheard(page: Any, button: Any, drop: DropNextRun) -> None:
    """Click `button` with `drop` armed so that its run request is the one dropped on
    the way: from an idle page with the button enabled, as `press` does. A click the
    page did not send (on a loaded machine a redraw can take the button away from
    under it: busy clean-clone CI, the page sent one request fewer and no "no answer"
    line came) is clicked again; the drop is still armed for it."""
    from playwright.sync_api import expect

    for _ in range(PRESS_TRIES):
        idle(page)
        expect(button).to_be_enabled()
        sent = page.evaluate("() => window.__cdRerunsSent")
        drop.armed = True
        button.click()
        if page.evaluate(_SENT_SINCE, sent):
            return
        drop.armed = False
    pytest.fail(f"press_unheard: {PRESS_TRIES} clicks on {button} and the page sent nothing")


def dropping_page(
    browser: Any, server: Server, name: str = "alice", *, answer_ms: int | None = None
) -> tuple[Any, DropNextRun]:
    """A 1280x720 page signed in as `name` whose websocket passes through a
    `DropNextRun` (armed by the test: its next click never reaches the server)."""
    page = new_page(browser, server, width=1280, height=720, answer_ms=answer_ms)
    drop = DropNextRun()
    page.route_web_socket(STREAM, drop.route)
    open_signed_in(page, server, name)
    return page, drop
