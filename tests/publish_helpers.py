"""Shared pieces for the publish, watch and replay tests: a config with the three
targets, drafts made by running the real pipeline (`copydesk run`, extractive
summariser, the sample feed), approvals through the status machine, and a loopback
webhook receiver that answers from a script and keeps every request it saw.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import secrets
import shutil
import sqlite3
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, select
from sqlalchemy import exc as sa_exc
from sqlalchemy import text as sql
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.pool import NullPool
from typer.testing import CliRunner

from copydesk.cli import app
from copydesk.config import ENV_OVERRIDES, load_settings
from store import status as st
from store.audit_chain import database_of
from store.db import open_store, session_scope
from store.editors import add_editor
from store.models import Item

SAMPLE_FEED = Path(__file__).resolve().parents[1] / "copydesk" / "sample" / "feed.xml"
SECRET = "whsec-test-3f9a1c"
SECRET_ENV = "COPYDESK_WEBHOOK_SECRET"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    status: int = 0

    @property
    def status_ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.body)


@dataclass
class Webhook:
    """Answers each POST with the next status of `script` (then `then`), and keeps it.
    `on_request` runs before the answer (e.g. to kill the sender)."""

    script: list[int] = field(default_factory=list)
    then: int = 200
    received: list[Received] = field(default_factory=list)
    on_request: Callable[[Received], None] | None = None
    url: str = ""
    # path -> (status, Location): a redirect answered at that path, before the script
    routes: dict[str, tuple[int, str]] = field(default_factory=dict)

    def answer(self) -> int:
        return self.script.pop(0) if self.script else self.then

    def keys(self) -> list[str]:
        return [r.headers["idempotency-key"] for r in self.received]


@contextmanager
def webhook_server(hook: Webhook) -> Iterator[Webhook]:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            got = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            location = None
            with lock:
                hook.received.append(got)
                if self.path in hook.routes:
                    code, location = hook.routes[self.path]
                else:
                    code = hook.answer()
                got.status = code
            if hook.on_request:
                hook.on_request(got)
            try:
                self.send_response(code)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
            except OSError:
                pass  # the sender is gone (killed by the test)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    hook.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/copydesk"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hook
    finally:
        server.shutdown()
        server.server_close()


def write_config(
    folder: Path,
    db_url: str,
    *,
    webhook_url: str | None = None,
    attempts: int = 3,
    targets: tuple[str, ...] = ("atom", "jsonl", "webhook"),
    extra: str = "",
    undo_seconds: float = 0,
    timeout_seconds: float = 5,
    init: bool = True,
) -> Path:
    """config.toml: the sample feed, the extractive summariser, and the targets.
    `undo_seconds`: the queue's Undo window, which publishing waits out (0 here: the
    tests approve and publish at once; one test checks the wait). `attempts` and
    `timeout_seconds` are the webhook's. With `init`, the database is made as an
    operator makes it: `copydesk init` (no other command creates one)."""
    blocks = {
        "atom": '[[publish.targets]]\nkind = "atom"\npath = "out/feed.xml"\nmax_entries = 50\n',
        "jsonl": '[[publish.targets]]\nkind = "jsonl"\npath = "out/items.jsonl"\n',
        "webhook": (
            f'[[publish.targets]]\nkind = "webhook"\nurl = "{webhook_url}"\n'
            f"attempts = {attempts}\nbackoff_seconds = 0.01\ntimeout_seconds = {timeout_seconds}\n"
        ),
    }
    text = (
        f'[database]\nurl = "{db_url}"\n[summarise]\nbackend = "extractive"\n'
        f'[gates]\nmin_source_words = 40\n[[feeds]]\nurl = "{SAMPLE_FEED}"\nname = "sample"\n'
        + f"[review]\nundo_seconds = {undo_seconds}\n"
        + "".join(blocks[t] for t in targets if t != "webhook" or webhook_url)
        + extra
    )
    path = folder / "config.toml"
    path.write_text(text, encoding="utf-8")
    if init:
        done = cli(path, "init")
        assert done.exit_code == 0, done.output
    return path


def cli(config: Path, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    env = {SECRET_ENV: SECRET} | (env or {})
    return CliRunner().invoke(app, ["--config", str(config), *args], env=env)


def run_pipeline(config: Path) -> None:
    """`copydesk run` with `config`: the drafts of the sample feed. On a database
    that init made and nothing wrote to (or a SQLite file that does not exist yet),
    with nothing in the environment that could point the run elsewhere, the run is
    made once per test process, backend and config (its text, database aside) and
    every later test gets a copy of what it left: the database (SQLite: the file;
    PostgreSQL: `CREATE DATABASE ... TEMPLATE` of the first run's database, kept for
    that) and the files beside the config (the audit anchor). The copy is what the
    run would leave there again; only the times in it are those of the first run."""
    db_url = str(load_settings(config).database.url)
    on_sqlite = db_url.startswith("sqlite:///")
    shape = config.read_text(encoding="utf-8").replace(db_url, "{database}")
    reusable = (
        "{database}" in shape  # else named in some other way: run it
        and not any(name in os.environ for name in ENV_OVERRIDES)
        and (_sqlite_reusable(db_url, config) if on_sqlite else _pg_untouched(db_url))
    )
    if not reusable:
        _run(config)
        return
    key = (on_sqlite, shape)
    if key not in _DRAFTED:
        home = Path(tempfile.mkdtemp(prefix="copydesk-drafted-"))
        atexit.register(shutil.rmtree, home, True)
        made = _sqlite_drafts(home, db_url) if on_sqlite else _pg_drafts(db_url)
        (home / config.name).write_text(shape.replace("{database}", made), encoding="utf-8")
        assert cli(home / config.name, "init").exit_code == 0  # only init creates one
        _run(home / config.name)
        _DRAFTED[key] = home, made
    home, made = _DRAFTED[key]
    if on_sqlite:
        target = Path(db_url.removeprefix("sqlite:///"))
        copy_desk_database(Path(made.removeprefix("sqlite:///")), target)
    else:
        _copy_pg_database(made, db_url)
    database_file = Path(made.removeprefix("sqlite:///")).name if on_sqlite else None
    # The audit anchor names its database: in the copy, this test's.
    owners = (database_of(make_url(made)).encode(), database_of(make_url(db_url)).encode())
    for left in home.iterdir():
        if left.is_file() and left.name != config.name:
            if database_file is None or not left.name.startswith(database_file):  # -wal, -shm
                (config.parent / left.name).write_bytes(left.read_bytes().replace(*owners))


# (on SQLite, config text with its database as "{database}") -> the folder the first run
# left, and that run's database URL
_DRAFTED: dict[tuple[bool, str], tuple[Path, str]] = {}


def _sqlite_reusable(db_url: str, config: Path) -> bool:
    target = Path(db_url.removeprefix("sqlite:///"))
    return target.parent == config.parent and (not target.exists() or _untouched(target))


def _sqlite_drafts(home: Path, db_url: str) -> str:
    return f"sqlite:///{home / Path(db_url.removeprefix('sqlite:///')).name}"


def _pg_untouched(db_url: str) -> bool:
    """A PostgreSQL database init made that has no feed and no item yet, signed in as
    a role that may make databases (the tests' owner; not the runtime or review role)."""
    engine = create_engine(db_url, poolclass=NullPool)
    may_create = "SELECT rolcreatedb FROM pg_roles WHERE rolname = current_user"
    try:
        with engine.connect() as conn:
            return conn.execute(sql(UNTOUCHED)).scalar_one() == 0 and bool(
                conn.execute(sql(may_create)).scalar_one()
            )
    except sa_exc.DBAPIError:  # no tables: not made by init
        return False
    finally:
        engine.dispose()


def _pg_drafts(db_url: str) -> str:
    """A new, empty database on `db_url`'s server for the first run; dropped when the
    test process ends. (The tests' prefix: conftest's TEST_DB_PREFIX.)"""
    name = f"copydesk_t_{secrets.token_hex(6)}"
    with _pg_server(db_url).connect() as conn:
        conn.execute(
            sql(
                f"CREATE DATABASE \"{name}\" TEMPLATE template0 ENCODING 'UTF8' "
                "LC_COLLATE 'C' LC_CTYPE 'C'"
            )
        )
    atexit.register(_drop_pg_database, db_url, name)
    return make_url(db_url).set(database=name).render_as_string(hide_password=False)


def _copy_pg_database(made: str, db_url: str, tries: int = 5) -> None:
    """`db_url`'s database made again as a copy of `made`'s, with its own installation
    id (as `copy_desk_database`). A copy cannot start while anyone is connected to
    the template: its sessions are ended first, and the copy tried again a few times
    (an autovacuum worker may be in it)."""
    template, target = make_url(made).database, make_url(db_url).database

    def copy() -> None:
        with _pg_server(db_url).connect() as conn:
            conn.execute(sql(f'DROP DATABASE IF EXISTS "{target}" WITH (FORCE)'))
            conn.execute(
                sql(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = :name AND pid <> pg_backend_pid() "
                    # Our own sessions only: an autovacuum worker runs as a superuser,
                    # and ending it is refused (InsufficientPrivilege, not retried);
                    # CREATE DATABASE then waits it out through the retries below.
                    "AND backend_type = 'client backend' AND usename = current_user"
                ),
                {"name": template},
            )
            conn.execute(sql(f'CREATE DATABASE "{target}" TEMPLATE "{template}"'))

    retried(copy, tries=tries, errors=(sa_exc.OperationalError,))
    engine = create_engine(db_url, poolclass=NullPool)
    try:
        with engine.begin() as conn:
            conn.execute(
                sql("UPDATE installation SET installation_id = :id"), {"id": uuid.uuid4().hex}
            )
    finally:
        engine.dispose()


def retried(
    action: Callable[[], Any], *, tries: int, errors: tuple[type[BaseException], ...]
) -> Any:
    """`action()`, tried again after a growing pause (0.2 s, 0.4 s, ...) while it
    raises one of `errors`, at most `tries` times in all."""
    for attempt in range(tries):
        try:
            return action()
        except errors:
            if attempt == tries - 1:
                raise
            time.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")


def _pg_server(db_url: str) -> Engine:
    """An autocommit engine on `db_url`'s server (CREATE/DROP DATABASE cannot run in a
    transaction), signed in to the database the test server's URL names."""
    server = os.environ.get("COPYDESK_TEST_PG_URL", "")
    maintenance = (make_url(server).database if server else None) or "postgres"
    url = make_url(db_url).set(database=maintenance)
    return create_engine(url, isolation_level="AUTOCOMMIT", poolclass=NullPool)


def _drop_pg_database(db_url: str, name: str) -> None:
    try:
        with _pg_server(db_url).connect() as conn:
            conn.execute(sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    except sa_exc.DBAPIError:
        pass  # the server is gone at the end of the session: nothing left to drop


UNTOUCHED = "SELECT (SELECT count(*) FROM feeds) + (SELECT count(*) FROM items)"


def _untouched(db_file: Path) -> bool:
    """A database `copydesk init` made (write_config) that nothing has written to
    since: no feed and no item, so a copy of the drafted one may replace it."""
    with closing(sqlite3.connect(db_file)) as db:
        rows = db.execute(UNTOUCHED)
        return rows.fetchone()[0] == 0


def copy_desk_database(source: Path, target: Path) -> None:
    """`copy_sqlite`, and the copy is another newsroom: its own installation id, as
    migration 0012 makes one (published ids and webhook keys carry it)."""
    copy_sqlite(source, target)
    with closing(sqlite3.connect(target)) as db, db:
        db.execute("UPDATE installation SET installation_id = ?", (uuid.uuid4().hex,))


def _run(config: Path) -> None:
    result = cli(config, "run")
    assert result.exit_code == 0, result.output


def copy_sqlite(source: Path, target: Path) -> None:
    """A consistent copy of a whole SQLite database (its write-ahead log included),
    replacing what `target` held."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


@contextmanager
def desk_with_drafts(
    folder: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, str, Engine]]:
    """Drafts from the real pipeline in `db_url`, an editor (ann) and a viewer (vera),
    `folder` the working directory and the webhook's secret in the environment:
    (folder, db_url, engine), the engine disposed afterwards."""
    run_pipeline(write_config(folder, db_url, targets=()))
    engine = open_store(db_url)
    with session_scope(engine) as session:
        add_editor_once(session, "ann")
        add_editor_once(session, "vera", role="viewer")
    monkeypatch.chdir(folder)
    monkeypatch.setenv(SECRET_ENV, SECRET)
    try:
        yield folder, db_url, engine
    finally:
        engine.dispose()


def review_settings(
    folder: Path,
    db_url: str,
    hook: Webhook,
    monkeypatch: pytest.MonkeyPatch,
    *,
    timeout_seconds: float = 5,
) -> Any:
    """config.toml with the JSON Lines file and the hook (one try per publish), named
    by COPYDESK_CONFIG; its review app's settings."""
    config = write_config(
        folder,
        db_url,
        webhook_url=hook.url,
        targets=("jsonl", "webhook"),
        attempts=1,
        timeout_seconds=timeout_seconds,
    )
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    return load_settings().for_review()


def approved_earlier(engine: Engine, count: int) -> list[int]:
    """`approve` `count` drafts, decided five minutes ago (out of any Undo window)."""
    ids = approve(engine, count)
    with session_scope(engine) as session:
        for item_id in ids:
            item = session.get(Item, item_id)
            item.decided_at = item.decided_at - timedelta(minutes=5)
            session.add(item)
    return ids


def approve(engine: Engine, count: int, editor: str = "ann") -> list[int]:
    """Approve the `count` oldest drafts, as an editor in the queue would."""
    with session_scope(engine) as session:
        add_editor_once(session, editor)
        drafts = session.scalars(
            select(Item).where(Item.status == st.DRAFT).order_by(Item.id).limit(count)
        ).all()
        assert len(drafts) == count, f"only {len(drafts)} drafts"
        for item in drafts:
            st.move(session, item, st.APPROVED, actor=f"editor:{editor}", reason="approved")
        return [item.id for item in drafts]


def add_editor_once(session, name: str, role: str = "editor") -> None:  # type: ignore[no-untyped-def]
    from store.editors import get_editor

    if get_editor(session, name) is None:
        add_editor(session, name, "correct horse battery", role=role)


def jsonl_lines(folder: Path) -> list[dict[str, Any]]:
    path = folder / "out" / "items.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


LOOPBACK = '[ingest]\nallow_private = ["127.0.0.0/8"]\nrespect_robots = false\n'


class Page:
    """An article page: `template` filled with `fields` (change them to change it)."""

    def __init__(self, template: str, **fields: str):
        self.template = template
        self.fields = fields
        self.requests: list[tuple[str | None, int]] = []  # (If-None-Match, status)

    def body(self) -> bytes:
        return self.template.format(**self.fields).encode()

    def etag(self) -> str:
        return '"v-' + hashlib.sha256(self.body()).hexdigest()[:16] + '"'


@contextmanager
def page_server(page: Page) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            asked = self.headers.get("If-None-Match")
            if asked == page.etag():
                page.requests.append((asked, 304))
                self.send_response(304)
                self.end_headers()
                return
            body = page.body()
            page.requests.append((asked, 200))
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("ETag", page.etag())
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/news/kessock-quay"
    finally:
        server.shutdown()
        server.server_close()
