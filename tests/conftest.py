"""Shared fixtures: real databases for every test that needs one.

Fixtures (names are stable, other test files rely on them):

- `sqlite_url`     "sqlite:///<tmp_path>/copydesk.db": a fresh, not yet created SQLite file.
- `pg_url`         a fresh, empty PostgreSQL database for this test alone, created on the
                   server named by env `COPYDESK_TEST_PG_URL` and dropped (WITH FORCE)
                   afterwards. Without that variable the test is skipped, unless
                   `COPYDESK_REQUIRE_PG=1` (CI sets it): then it fails. Tests using it are
                   marked `postgres` automatically.
- `pg_runtime_url` `pg_url` signed in as the runtime role (see the fixture).
- `pg_review_url`  `pg_url` signed in as the review server's role (see the fixture).
- `db_url`         parametrized over ids "sqlite" and "postgres": one of the two above.
- `engine`         `store.db.open_store(db_url)`: a migrated engine on both backends,
                   disposed afterwards.
- `sqlite_engine`  `store.db.open_store(sqlite_url)`, for tests that only need SQLite.
- `module_engine`  like `engine` (same two params) but one database per test module:
                   only for tests that touch nothing but rows they create themselves.
- `seeded`         `seeded(url, key, seed)`: a migrated test database made a copy of
                   one `seed` filled once per test process (class `Seeded` below).
- `migrated`       asked for beside `sqlite_url`, `pg_url` or `db_url` (by a test or any
                   fixture it uses), it makes that database already at the newest schema
                   and empty, instead of not yet created / empty: what `open_store` would
                   make of it. `engine` and `sqlite_engine` ask for it.

Template databases: a database at the newest schema is made once per test process (one
per xdist worker) and copied for each test that asks for `migrated`: the SQLite file is
copied, PostgreSQL makes the database with `CREATE DATABASE ... TEMPLATE` (a block copy,
no migration run). PostgreSQL test databases are dropped by a background thread, so a
test does not wait for the drop (the session waits for all of them at its end).

An autouse fixture removes the ANTHROPIC_* and COPYDESK_* variables (LEAKY_ENV)
from the environment, so no test runs against a developer's key, config or database.
Another runs every test in a folder of its own with a copy of the checkout's
config.toml (`_working_directory_of_its_own`): nothing a command writes beside its
config (the audit anchor) lands in the checkout, and the session fails naming any file
a test left there anyway (`pytest_sessionfinish`).

Select or deselect the PostgreSQL half with `-m postgres` / `-m "not postgres"`.

The audit chain is verified (`store.audit_chain.verify`, what `copydesk audit --verify`
runs) on every database these fixtures made, when the test is done: every scenario
that writes audit events also proves it left an unbroken chain. A test that breaks
the chain on purpose says so with `@pytest.mark.audit_tampered`.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import time
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, chdir, contextmanager
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy import text
from sqlalchemy.engine import URL, Engine, make_url
from sqlmodel import create_engine

from store.db import open_store

# Property tests judge behaviour, not speed: a busy 2-core CI machine must not turn
# a slow example into a failure (speed is measured under bench/).
hypothesis.settings.register_profile("copydesk", deadline=None, print_blob=True)
hypothesis.settings.load_profile("copydesk")

# The runner's terminal size must not reach the commands under test: copydesk's consoles
# take COLUMNS at import (copydesk/cli/context.py), and pytest-xdist workers get
# COLUMNS=80, which wraps the tables the CLI tests read. Tests that want a width set it.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)

PG_ENV = "COPYDESK_TEST_PG_URL"
REQUIRE_PG_ENV = "COPYDESK_REQUIRE_PG"
LEAKY_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
    "COPYDESK_CONFIG",
    "COPYDESK_DATABASE_URL",
    "COPYDESK_MIGRATE_DATABASE_URL",
    "COPYDESK_BACKEND",
    "COPYDESK_MODEL",
)
TEST_DB_PREFIX = "copydesk_t_"


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A developer's real key, config or database must never leak into a test; nor
    may the audit anchors a command keeps without a config.toml (PostgreSQL: in the
    user's state folder) leak from one test into another."""
    for name in LEAKY_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))


ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session", autouse=True)
def _session_working_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The same for module and session fixtures, which are made before a test's own
    folder is: a folder per test process."""
    cwd = tmp_path_factory.mktemp("cwd")
    shutil.copyfile(ROOT / "config.toml", cwd / "config.toml")
    before = os.getcwd()
    os.chdir(cwd)
    yield
    os.chdir(before)


@pytest.fixture(autouse=True)
def _working_directory_of_its_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every test runs in a folder of its own holding a copy of the checkout's
    config.toml. A command run without --config (in-process or as a child) finds the
    same settings it would in the checkout, but what they place beside config.toml (the
    audit anchor and its lock, a SQLite file) lands in that folder: never in the
    checkout, never shared with another test. (Beside tmp_path, not in it: a test may
    count what its tmp_path holds.)"""
    cwd = tmp_path.with_name(f"{tmp_path.name}-cwd")
    cwd.mkdir()
    shutil.copyfile(ROOT / "config.toml", cwd / "config.toml")
    monkeypatch.chdir(cwd)


# What the checkout held when the session began (`pytest_sessionstart`), so that
# `pytest_sessionfinish` can name anything a test left in it.
_checkout_at_start: set[str] = set()
LEFT_ALONE = {".pytest_cache", ".hypothesis", ".ruff_cache", "__pycache__"}


def pytest_sessionstart(session: pytest.Session) -> None:
    _checkout_at_start.update(p.name for p in ROOT.iterdir())


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A test that writes into the checkout (an `audit.anchor` beside the shipped
    config.toml, say) fails the run, naming what it left."""
    browser = sys.modules.get("tests.browser")
    if browser is not None:  # its review server and Chromium, before the process ends
        browser.stop_review_server()
        browser.stop_chromium()
    left = sorted({p.name for p in ROOT.iterdir()} - _checkout_at_start - LEFT_ALONE)
    if left:
        session.config.stash[_LEFT_IN_CHECKOUT] = left
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_LEFT_IN_CHECKOUT = pytest.StashKey[list[str]]()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    left = config.stash.get(_LEFT_IN_CHECKOUT, None)
    if left:
        terminalreporter.write_line(
            f"FAILED: tests left files in the checkout {ROOT}: {', '.join(left)}", red=True
        )


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch):
    """No test reaches any network but loopback: other connects and lookups fail at once."""
    from tests.ingest_helpers import install_loopback_only, logging_restored

    # The CLI points the root logger at CliRunner's stderr, closed after each invoke.
    with logging_restored():
        yield install_loopback_only(monkeypatch)


@pytest.fixture(autouse=True)
def _no_chromium_outside_browser_tests(request: pytest.FixtureRequest) -> None:
    """The browser tests share one Chromium per process (tests/browser.py); while its
    sync Playwright runs, `asyncio.run` refuses in this thread. A test that is not a
    browser test finds it stopped (it starts again with the next browser test)."""
    if request.node.get_closest_marker("browser") is None:
        browser = sys.modules.get("tests.browser")
        if browser is not None:
            browser.stop_chromium()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that ask for `pg_url` directly get the `postgres` marker too."""
    for item in items:
        if "pg_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`make test` runs three pytest-xdist workers; each test module runs whole on one
    of them (as `--dist loadfile`). The first workers to ask (half, rounded up) take
    the browser modules while the others take the rest, the longest first by
    tests/module_durations.json: tests/scheduling.py says why. (xdist's own
    `--dist loadgroup` marks do not take with pytest 9, which no longer lets a plugin
    rename a test's node id.)"""
    from xdist.scheduler import LoadScopeScheduling

    from tests.scheduling import browser_workers, load_durations, next_unit

    durations = load_durations()
    browser_nodes: list[Any] = []

    class BrowserModulesOnTheFirstWorkers(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid.partition("::")[0]

        def _assign_work_unit(self, node: Any) -> None:
            if node not in browser_nodes and len(browser_nodes) < browser_workers(len(self.nodes)):
                browser_nodes.append(node)  # among the first workers to ask
            scope = next_unit(
                list(self.workqueue),
                browser_worker=node in browser_nodes,
                durations=durations,
            )
            self.workqueue.move_to_end(scope, last=False)  # xdist hands out the first
            super()._assign_work_unit(node)

    return BrowserModulesOnTheFirstWorkers(config, log)


# --- SQLite ---------------------------------------------------------------------------


def assert_audit_chain_holds(url: str) -> None:
    """Fail when the database at `url` has an audit chain that does not verify.

    A database that was never created, or whose schema is older than the chain (a
    migration test stopped part way), has nothing to verify."""
    from sqlalchemy import inspect

    from store.audit_chain import verify

    engine = create_engine(url)
    try:
        columns = {c["name"] for c in inspect(engine).get_columns("audit_events")}
        if "hash" not in columns:
            return
        report = verify(engine)
    except sa_exc.NoSuchTableError:
        return
    finally:
        engine.dispose()
    assert report.ok, f"audit chain broken at event {report.bad_event}: {report.problem}"


@contextmanager
def _chain_checked(request: pytest.FixtureRequest, url: str) -> Iterator[str]:
    yield url
    if request.node.get_closest_marker("audit_tampered") is None:
        if not url.startswith("sqlite:///") or Path(url.removeprefix("sqlite:///")).exists():
            assert_audit_chain_holds(url)


@pytest.fixture
def migrated() -> None:
    """A flag: the database fixtures of a test that asks for this come at head (above)."""


def _wants_migrated(request: pytest.FixtureRequest) -> bool:
    # fixturenames is the test's whole closure: a fixture of the test may ask for it.
    return "migrated" in request.fixturenames


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file at the newest schema, made once per process, copied per test."""
    path = tmp_path_factory.mktemp("template") / "copydesk.db"
    open_store(f"sqlite:///{path}").dispose()
    return path


@pytest.fixture
def sqlite_url(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    path = tmp_path / "copydesk.db"
    if _wants_migrated(request):
        shutil.copyfile(request.getfixturevalue("_sqlite_template"), path)
    with _chain_checked(request, f"sqlite:///{path}") as url:
        yield url


@pytest.fixture
def sqlite_engine(sqlite_url: str, migrated: None) -> Iterator[Engine]:
    engine = open_store(sqlite_url)
    yield engine
    engine.dispose()


# --- PostgreSQL -----------------------------------------------------------------------


def _pg_server_url() -> URL:
    """The server to create test databases on, or skip/fail when there is none."""
    raw = os.environ.get(PG_ENV, "").strip()
    if not raw:
        if os.environ.get(REQUIRE_PG_ENV) == "1":
            pytest.fail(
                f"{REQUIRE_PG_ENV}=1 but {PG_ENV} is not set: PostgreSQL tests cannot run. "
                "Set it to e.g. postgresql+psycopg://copydesk:copydesk@127.0.0.1:5432/copydesk_test",
                pytrace=False,
            )
        pytest.skip(f"{PG_ENV} is not set")
    url = make_url(raw)
    if url.get_backend_name() != "postgresql":
        pytest.fail(f"{PG_ENV} must be a postgresql:// URL", pytrace=False)
    return url.set(drivername="postgresql+psycopg")


class PgServer:
    """The server test databases are made on: one autocommit pool for CREATE/DROP
    DATABASE (they cannot run inside a transaction), shared by the whole session, and
    one thread that drops databases after their tests."""

    def __init__(self, admin: Engine, server: URL) -> None:
        self.admin, self.server = admin, server
        self._dropper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pg-drop")
        self._drops: list = []
        self.kept: list[str] = []  # seeded templates (`seeded`), dropped by `close`

    def url(self, name: str) -> str:
        return self.server.set(database=name).render_as_string(hide_password=False)

    def create(self, template: str | None = None, tries: int = 5, name: str | None = None) -> str:
        """A new database of its own: empty (template0 with UTF8/C gives the same
        encoding whatever the cluster's default locale is, and unlike template1 it can
        be copied while others are connected), or a copy of `template`. Copying fails
        while anyone (an autovacuum worker, say) is connected to the template: tried
        again a few times. Given a `name`, the database of that name is dropped first
        (even if still connected) and made again under it."""
        if name is not None:
            _drop_database(self.admin, name)
        name = name or TEST_DB_PREFIX + secrets.token_hex(6)
        if template is None:
            sql = (
                f'CREATE DATABASE "{name}" TEMPLATE template0 '
                "ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"
            )
        else:
            sql = f'CREATE DATABASE "{name}" TEMPLATE "{template}"'
        for attempt in range(tries):
            try:
                with self.admin.connect() as conn:
                    conn.execute(text(sql))
                return name
            except sa_exc.OperationalError:
                if attempt == tries - 1:
                    raise
                time.sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")

    def drop_later(self, name: str) -> None:
        self._drops.append(self._dropper.submit(_drop_database, self.admin, name))

    def close(self) -> None:
        for name in self.kept:
            self.drop_later(name)
        self._dropper.shutdown(wait=True)
        errors = [f.exception() for f in self._drops if f.exception() is not None]
        self.admin.dispose()
        if errors:
            raise errors[0]  # type: ignore[misc]


@pytest.fixture(scope="session")
def _pg_admin() -> Iterator[PgServer]:
    server = _pg_server_url()
    admin = create_engine(server, isolation_level="AUTOCOMMIT", pool_size=2)
    try:
        with admin.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # noqa: BLE001 - turned into a clear test failure
        admin.dispose()
        pytest.fail(
            f"cannot reach the PostgreSQL server in {PG_ENV} "
            f"({server.render_as_string(hide_password=True)}): {exc}",
            pytrace=False,
        )
    pg = PgServer(admin, server)
    yield pg
    pg.close()


@pytest.fixture(scope="session")
def _pg_template(_pg_admin: PgServer) -> Iterator[str]:
    """A database at the newest schema, made once per process; `migrated` copies it."""
    name = _pg_admin.create()
    open_store(_pg_admin.url(name)).dispose()
    yield name
    _pg_admin.drop_later(name)


@contextmanager
def _fresh_pg_database(pg: PgServer, template: str | None = None) -> Iterator[str]:
    """Create a database of its own, yield its URL, drop it (even if still connected)."""
    name = pg.create(template)
    try:
        yield pg.url(name)
    finally:
        pg.drop_later(name)


def _drop_database(admin: Engine, name: str, tries: int = 5) -> None:
    """DROP ... WITH (FORCE), tried again a few times: an autovacuum worker that is in the
    database at that moment can make it fail for a role without pg_signal_backend."""
    for attempt in range(tries):
        try:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            return
        except sa_exc.DBAPIError:
            if attempt == tries - 1:
                raise
            time.sleep(0.5 * (attempt + 1))


@pytest.fixture
def pg_url(_pg_admin: PgServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """A database per test: tests never see each other's rows, and several engineers
    can run the suite against one server at once."""
    template = request.getfixturevalue("_pg_template") if _wants_migrated(request) else None
    with _fresh_pg_database(_pg_admin, template) as fresh, _chain_checked(request, fresh) as url:
        yield url


RUNTIME_ROLE_ENV = "COPYDESK_TEST_PG_RUNTIME_ROLE"


@pytest.fixture
def pg_runtime_url(pg_url: str) -> str:
    """`pg_url` signed in as the runtime role (no ownership, no CREATEDB), given by
    env `COPYDESK_TEST_PG_RUNTIME_ROLE` as NAME:PASSWORD (default copydesk_app:copydesk_app,
    which .ci/run creates). The database is not migrated, and no rights are granted:
    the test runs `copydesk migrate` (or `store.db.migrate_as_owner`) with `pg_url`."""
    return _role_url(pg_url, RUNTIME_ROLE_ENV, "copydesk_app:copydesk_app")


REVIEW_ROLE_ENV = "COPYDESK_TEST_PG_REVIEW_ROLE"


@pytest.fixture
def pg_review_url(pg_url: str) -> str:
    """`pg_url` signed in as the review server's role, given by env
    `COPYDESK_TEST_PG_REVIEW_ROLE` as NAME:PASSWORD (default copydesk_review:copydesk_review,
    which .ci/run creates). Like `pg_runtime_url`: no rights until a test migrates
    (`copydesk migrate --review-role`, or `store.db.migrate_as_owner(..., review_role=)`)."""
    return _role_url(pg_url, REVIEW_ROLE_ENV, "copydesk_review:copydesk_review")


def _role_url(pg_url: str, env: str, default: str) -> str:
    name, _, password = os.environ.get(env, default).partition(":")
    url = make_url(pg_url).set(username=name, password=password)
    probe = create_engine(url)
    try:
        with probe.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # noqa: BLE001 - turned into a skip or a clear failure
        message = f"role {name!r} cannot sign in ({env}; .ci/run creates it)"
        if os.environ.get(REQUIRE_PG_ENV) == "1":
            pytest.fail(f"{message}: {exc}", pytrace=False)
        pytest.skip(message)
    finally:
        probe.dispose()
    return url.render_as_string(hide_password=False)


# --- Either backend -------------------------------------------------------------------

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest) -> str:
    if request.param == "sqlite":
        return request.getfixturevalue("sqlite_url")
    return request.getfixturevalue("pg_url")


@pytest.fixture
def engine(db_url: str, migrated: None) -> Iterator[Engine]:
    engine = open_store(db_url)
    yield engine
    engine.dispose()


@pytest.fixture(scope="module", params=BACKENDS)
def module_engine(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    """Like `engine`, but one database per test module and backend. Only for tests
    that touch nothing but rows they create themselves (e.g. one item each): it saves
    creating and migrating a database per test in long table-driven suites."""
    with ExitStack() as cleanup:
        if request.param == "sqlite":
            path = tmp_path_factory.mktemp("db") / "copydesk.db"
            shutil.copyfile(request.getfixturevalue("_sqlite_template"), path)
            url = f"sqlite:///{path}"
        else:
            pg, template = (
                request.getfixturevalue("_pg_admin"),
                request.getfixturevalue("_pg_template"),
            )
            url = cleanup.enter_context(_fresh_pg_database(pg, template))
        engine = open_store(url)
        cleanup.callback(engine.dispose)
        yield engine
        assert_audit_chain_holds(url)


# --- Seeded templates -----------------------------------------------------------------

# (backend, the seed's key) -> the seeded template (SQLite: the file; PostgreSQL: the
# database's name) and what its seed returned; per test process, as the templates above.
_SEEDED: dict[tuple[str, Hashable], tuple[str, Any]] = {}


class Seeded:
    """`seeded(url, key, seed)`: make the database at `url` (a test's `sqlite_url` or
    `pg_url`, asked for with `migrated`, nothing written to it yet, no connection open)
    a copy of the one `seed(engine)` filled, and return what the seed returned (the
    items' ids, say). The seed runs once per test process, backend and `key`, with an
    engine on a copy of the migrated template (disposed afterwards: PostgreSQL copies a
    database only while no one is in it), in a working directory of its own (what a
    pipeline run writes beside its config, the audit anchor, lands there: not in a
    test's folder). SQLite: the file is copied (the backup API, write-ahead log
    included); PostgreSQL: `CREATE DATABASE ... TEMPLATE` under the test database's name.

    What a copy does not make fresh: its rows carry the times of the first seed (the
    same test process, minutes earlier at most), and it keeps the template's
    installation id (as every copy of the migrated template does). Sequences, the audit
    chain and the editors' accounts are copied as they are; no claim, lease or
    sign-in session is made by a seed, so none can lapse in the copy."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self.request = request

    def __call__(self, url: str, key: Hashable, seed: Callable[[Engine], Any]) -> Any:
        backend = "sqlite" if url.startswith("sqlite:///") else "postgres"
        if (backend, key) not in _SEEDED:
            _SEEDED[backend, key] = self._make(backend, seed)
        template, made = _SEEDED[backend, key]
        if backend == "sqlite":
            from tests.publish_helpers import copy_sqlite

            copy_sqlite(Path(template), Path(url.removeprefix("sqlite:///")))
        else:
            pg: PgServer = self.request.getfixturevalue("_pg_admin")
            pg.create(template, name=make_url(url).database)
        return made

    def _make(self, backend: str, seed: Callable[[Engine], Any]) -> tuple[str, Any]:
        folder = self.request.getfixturevalue("tmp_path_factory").mktemp("seeded")
        if backend == "sqlite":
            template = str(folder / "copydesk.db")
            shutil.copyfile(self.request.getfixturevalue("_sqlite_template"), template)
            url = f"sqlite:///{template}"
        else:
            pg: PgServer = self.request.getfixturevalue("_pg_admin")
            template = pg.create(self.request.getfixturevalue("_pg_template"))
            pg.kept.append(template)
            url = pg.url(template)
        engine = open_store(url)
        try:
            with chdir(folder):
                made = seed(engine)
        finally:
            engine.dispose()
        return template, made


@pytest.fixture
def seeded(request: pytest.FixtureRequest) -> Seeded:
    return Seeded(request)


@pytest.fixture
def calls_of(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """`calls_of(owner, name)`: `owner.name` still runs, and the returned list's one
    number counts its calls (a cost counted, not timed; undone after the test)."""

    def install(owner: Any, name: str) -> list[int]:
        seen, real = [0], getattr(owner, name)

        def counting(*args: Any, **kwargs: Any) -> Any:
            seen[0] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, counting)
        return seen

    return install
