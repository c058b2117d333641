"""Engines, sessions and bringing the schema up to date.

Every command calls `open_store()`, which runs the Alembic migrations to head on
first use when it may: a fresh SQLite file or an empty PostgreSQL database owned
by the application's role needs no set-up.

On PostgreSQL in production the schema belongs to an owner role and the
application runs as a runtime role without ownership (`migrate_as_owner`, run by
`copydesk migrate`): the runtime role cannot drop or disable the audit log's
triggers. A runtime role that finds the schema behind does not try DDL it has no
right to run; `open_store` says to run the migration instead.
"""

from __future__ import annotations

import ast
import functools
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import event, inspect, select, text, true
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine, make_url
from sqlmodel import Session, create_engine

from store import committed
from store.models import RuntimeRole
from store.packing import SQL_UNPACK, sql_unpack
from store.search import SQL_TERMS, terms_match

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"


# SQLite waits this long for another connection's lock (PRAGMA busy_timeout, ms)...
SQLITE_BUSY_MS = 30_000
# ...and a connection that still finds the file locked while it asks for WAL asks
# again until this many seconds have passed (see _switch_to_wal).
SQLITE_OPEN_WAIT_SECONDS = 600
# The page size a new SQLite file is made with (bytes; SQLite's default is 4096).
SQLITE_PAGE_SIZE = 4096

# The connections an engine keeps open once it has needed them at once, and the most
# it opens: SQLAlchemy's default cap (5 kept + 10 overflow), all of them kept. A run
# has its model threads, page readers and writer in sessions at once; with the
# default, every connection beyond 5 was closed as it came back ("When those
# additional connections are returned to the pool, they are disconnected and
# discarded", and the pool "begins with no connections":
# https://docs.sqlalchemy.org/en/20/core/pooling.html, QueuePool), so each busy
# moment opened them again: about 240 PostgreSQL logins a 320-article run at
# concurrency 16 (issue 24, session 11).
POOL = {"pool_size": 15, "max_overflow": 0}


class StoreError(RuntimeError):
    """The database cannot be reached or brought up to date."""


def _pause_before_asking_again() -> None:
    time.sleep(0.05)


def _switch_to_wal(cur) -> None:  # type: ignore[no-untyped-def] - a DB-API cursor
    """PRAGMA journal_mode=WAL, asked again while the file is locked.

    Switching a file still in rollback mode (a fresh file that other processes
    open at the same moment: a cron run, the review server) needs its write lock.
    SQLite answers "database is locked" at once, without waiting busy_timeout,
    where waiting could deadlock two connections that both read first
    (https://www.sqlite.org/c3ref/busy_handler.html), and after busy_timeout while
    another process holds the lock longer (its first migration on a loaded
    machine). Either way the switch is asked again, as the migration's own
    BEGIN IMMEDIATE is (store/migrations/env.py); any other error is raised.
    """
    give_up = time.monotonic() + SQLITE_OPEN_WAIT_SECONDS
    while True:
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > give_up:
                raise
        _pause_before_asking_again()


def make_engine(url: str) -> Engine:
    """An engine tuned for the backend: SQLite waits for locks instead of failing
    at once and uses WAL so the review queue can read while a run writes."""
    try:
        parsed = make_url(url)
    except Exception as exc:  # noqa: BLE001 - SQLAlchemy raises several kinds
        raise StoreError(f"database URL {url!r} cannot be read: {exc}") from None
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if database and parsed.query.get("uri") == "true" and database.startswith("file:"):
            database = database.removeprefix("file:")  # sqlite:///file:PATH?mode=ro&uri=true
        if database and database != ":memory:":
            folder = Path(database).expanduser().parent
            if not folder.is_dir():
                # A typo in the path must not quietly start a new, empty newsroom.
                raise StoreError(f"database folder {folder} does not exist")
        # A file's engine has a QueuePool; an in-memory database's pool takes no sizes.
        in_memory = database in (None, "", ":memory:") or parsed.query.get("mode") == "memory"
        engine = create_engine(
            url,
            connect_args={"timeout": SQLITE_BUSY_MS / 1000, "check_same_thread": False},
            **({} if in_memory else POOL),
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):  # type: ignore[no-untyped-def]
            # The search index's triggers read a packed source text through it
            # (store/packing.py SQL_UNPACK, migration 0026).
            dbapi_conn.create_function(SQL_UNPACK, 1, sql_unpack, deterministic=True)
            # Search's check of what the index without positions cannot answer
            # (store/search.py SQL_TERMS, migration 0028).
            dbapi_conn.create_function(SQL_TERMS, -1, terms_match, deterministic=True)
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
            # INSERT OR REPLACE deletes the row it replaces; with recursive triggers
            # that delete fires DELETE triggers (the audit log's among them). The
            # migrations also refuse such an insert by trigger, for connections
            # that do not set this (the sqlite3 shell).
            cur.execute("PRAGMA recursive_triggers=ON")
            if database and database != ":memory:":
                # A new file only (an existing one keeps its size; WAL fixes it once
                # made). 4 KB since the source text is packed (0026): an item's row
                # is about 1 KB, and a table or index with few rows still takes a
                # whole page (bench/bench_ledger.py, 320 articles: 5.11x the text
                # with 4 KB pages, 5.42x with 8 KB, 6.38x with 2 KB; 8 KB was better
                # while a row held the text unpacked, 2.6 KB;
                # https://www.sqlite.org/pragma.html#pragma_page_size).
                cur.execute(f"PRAGMA page_size={SQLITE_PAGE_SIZE}")
                _switch_to_wal(cur)
                # In WAL mode NORMAL never corrupts the database; a power cut may
                # lose the transactions of the last moment, never half of one.
                cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        return engine
    if parsed.drivername in ("postgres", "postgresql", "postgresql+psycopg2"):
        parsed = parsed.set(drivername="postgresql+psycopg")  # the driver we install
    try:
        # No server-side prepared statements: psycopg prepares a query after its
        # fifth run on a connection, and PostgreSQL may then keep one generic plan
        # for every search term. Measured: "the draft before #100000" for a
        # one-hit phrase took 0.05 ms planned for its term and 581 ms on the
        # generic plan (a walk of all 100,000 drafts). Planning costs ~0.1 ms.
        engine = create_engine(parsed, connect_args={"prepare_threshold": None}, **POOL)
    except Exception as exc:  # noqa: BLE001 - unknown dialect, missing driver...
        safe = parsed.render_as_string(hide_password=True)
        raise StoreError(f"database URL {safe} cannot be used: {exc}") from None
    _ping_after_idle(engine)
    return engine


# A pooled PostgreSQL connection is pinged before it is handed out only when it sat
# in the pool longer than this (seconds). SQLAlchemy's `pool_pre_ping` pinged every
# checkout: a `SELECT 1` round trip for each of a run's short transactions (two an
# article on the model path, each model call's ledger row; 80-100 us of CPU a
# checkout alone, more among 16 threads: issue 24, session 16). A connection handed
# back this recently was working a moment ago; one that sat longer (a quiet review
# server's, a run's between bursts) is pinged as before, so a server restart or an
# idle-session timeout still costs no failed request. Under a run's load the pool
# (first in, first out) hands each connection out again within about half a second.
PING_AFTER_IDLE_SECONDS = 2.0
_RETURNED = "copydesk_returned_at"  # a connection record's `info` key: when checked in


def _idle_clock() -> float:
    return time.monotonic()


def _ping_after_idle(engine: Engine) -> None:
    """SQLAlchemy's pessimistic disconnect handling, for connections idle longer than
    PING_AFTER_IDLE_SECONDS only: a `checkout` listener that raises `DisconnectionError`
    has the connection replaced and the checkout tried again, and `InvalidatePoolError`
    (a disconnect, as `pool_pre_ping` treats one) replaces every connection as old
    (https://docs.sqlalchemy.org/en/20/core/events.html#sqlalchemy.events.PoolEvents.checkout,
    https://docs.sqlalchemy.org/en/20/core/pooling.html#disconnect-handling-pessimistic).
    A connection new from the server is not pinged (nor was it by `pool_pre_ping`)."""
    dialect = engine.dialect

    @event.listens_for(engine, "checkin")
    def _returned(_dbapi_connection: Any, record: Any) -> None:
        record.info[_RETURNED] = _idle_clock()

    @event.listens_for(engine, "checkout")
    def _handed_out(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        returned = record.info.pop(_RETURNED, None)
        if returned is None or _idle_clock() - returned <= PING_AFTER_IDLE_SECONDS:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as exc:
            if dialect.is_disconnect(exc, dbapi_connection, None):
                raise sa_exc.InvalidatePoolError(str(exc).splitlines()[0]) from exc
            raise


def keyset_batches(
    conn: Any, *columns: Any, where: Any = true(), size: int = 500
) -> Iterator[list[Any]]:
    """Rows of `columns` in the first one's order, `size` at a time, each batch found
    by the last key of the one before (no OFFSET): a migration rewriting a table."""
    key = columns[0]
    query = select(*columns).where(where).order_by(key).limit(size)
    rows = conn.execute(query).all()
    while rows:
        yield rows
        rows = conn.execute(query.where(key > rows[-1][0])).all()


def alembic_config(engine: Engine) -> Config:
    from alembic.config import Config  # only a migration needs Alembic (issue 24)

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["engine"] = engine
    return cfg


# Alembic keeps its migration context in module globals, so two threads of one
# process (Streamlit serves each browser session on its own thread) must not run it
# at once. Between processes the database lock taken in migrations/env.py applies.
_MIGRATE_LOCK = threading.Lock()


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision` (idempotent)."""
    try:
        with _MIGRATE_LOCK, warnings.catch_warnings():
            # A batch migration reflects `items` through a foreign key and skips its
            # expression index (migration 0010's, which no batch rebuilds): said to
            # an operator, that is a stack path and a warning about nothing (issue 22).
            warnings.filterwarnings(
                "ignore",
                message="Skipped unsupported reflection of expression-based index",
                category=sa_exc.SAWarning,
            )
            from alembic import command

            command.upgrade(alembic_config(engine), revision)
    except Exception as exc:  # noqa: BLE001 - reported as one line to the user
        raise StoreError(
            f"database {safe_url(engine)} could not be brought up to date: {exc}"
        ) from exc


def read_only_url(url: str) -> str:
    """The same database, opened so that nothing can be written through it (an
    auditor's view, `copydesk --read-only`): SQLite's read-only URI mode
    (https://www.sqlite.org/uri.html, mode=ro); PostgreSQL's
    default_transaction_read_only, set for the session through libpq's `options`
    (https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNECT-OPTIONS)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if not database or database == ":memory:" or database.startswith("file:"):
            return url
        path = Path(database).expanduser().resolve()
        return f"sqlite:///file:{path}?mode=ro&uri=true"
    options = "-c default_transaction_read_only=on"
    return parsed.update_query_dict({"options": options}).render_as_string(hide_password=False)


def describe_error(exc: BaseException) -> str:
    """`Type: message` for a record (runs.error) or a line: for a database error, the
    driver's own first line only, never the SQL statement or its parameters (they
    carry article text, and could carry anything a row held)."""
    if isinstance(exc, sa_exc.StatementError) and exc.orig is not None:
        exc = exc.orig
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def safe_url(engine: Engine) -> str:
    """The URL with any password masked: safe for logs and messages."""
    return engine.url.render_as_string(hide_password=True)


# Where a relative SQLite path points (copydesk/config.py anchors it): said in every
# message about a database file that is not there.
RELATIVE_SQLITE_RULE = (
    "a relative SQLite path in config.toml is relative to the folder of config.toml; "
    "in COPYDESK_DATABASE_URL, to the current folder"
)
CREATE_HINT = "create it with `copydesk init` (or `copydesk migrate`)"


def open_store(url: str, *, create: bool = True) -> Engine:
    """An engine on an up-to-date schema.

    `create=False` (every command but `init` and `migrate`): a database that does not
    exist, or has no copydesk schema, is an error naming it, not a new empty
    newsroom (a mistyped path), and on PostgreSQL no table is made by a role that
    has not granted the runtime role its rights. A schema behind the code's is
    brought up to date when this role may (see `may_migrate`); on PostgreSQL the
    roles `copydesk migrate` gave rights to get them on the new tables too."""
    engine = make_engine(url)
    # A model call's settings looked up once, a request's parts stored once (issue 24).
    committed.remember_committed(engine)
    try:
        if not create:
            _refuse_missing_file(engine)
        revision = schema_revision(engine)
        if revision is None and not create and not may_migrate(engine):
            raise StoreError(  # PostgreSQL's runtime role: only the owner makes the tables
                f"database {where(engine)} has no copydesk tables, and this role may not "
                "create them: run `copydesk migrate` with COPYDESK_MIGRATE_DATABASE_URL set "
                "to the owner's URL"
            )
        if revision is None and not create:
            raise StoreError(
                f"database {where(engine)} has no copydesk tables (a mistyped path?): {CREATE_HINT}"
            )
        behind = revision != head_revision(engine)
        if behind and not may_migrate(engine):
            raise StoreError(
                f"database {safe_url(engine)} needs its schema brought up to date, and this "
                "role does not own it: run `copydesk migrate` with "
                "COPYDESK_MIGRATE_DATABASE_URL set to the owner's URL"
            )
        if behind:
            migrate(engine)
            if revision is not None and engine.dialect.name == "postgresql":
                for role in runtime_roles(engine):
                    grant_runtime_rights(engine, role)
    except StoreError:
        engine.dispose()
        raise
    return engine


def open_read_only(url: str) -> Engine:
    """An auditor's engine (`copydesk --read-only`): a write fails in the database
    itself, and the schema is never migrated. A missing file is named by its path,
    not by the read-only URI it was opened with."""
    engine = make_engine(read_only_url(url))
    try:
        _refuse_missing_file(engine)
        revision = schema_revision(engine)
        if revision != head_revision(engine):
            raise StoreError(
                f"database {where(engine)} is at schema {revision or 'none'}, not "
                f"{head_revision(engine)}, and --read-only never migrates: run `copydesk migrate`"
            )
    except StoreError:
        engine.dispose()
        raise
    return engine


def sqlite_path(engine: Engine) -> Path | None:
    """The SQLite database file, absolute; None for PostgreSQL or an in-memory one."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    if engine.url.query.get("uri") == "true":
        if not database.startswith("file:"):
            return None
        database = database.removeprefix("file:")
    return Path(database).expanduser().resolve()


def where(engine: Engine) -> str:
    """The database for a message: a SQLite file's absolute path, else the URL
    without its password."""
    path = sqlite_path(engine)
    return str(path) if path is not None else safe_url(engine)


def _refuse_missing_file(engine: Engine) -> None:
    path = sqlite_path(engine)
    if path is not None and not path.exists():
        raise StoreError(
            f"database file {path} does not exist ({RELATIVE_SQLITE_RULE}): check the "
            f"path, or {CREATE_HINT}"
        )


def check_writable(engine: Engine) -> None:
    """Raise StoreError unless this connection may write: for a long-running server
    (the review queue records every sign-in and decision) that must not start on a
    read-only database and fail at the first click. SQLite: take the write lock
    and let it go. PostgreSQL: a standby or read-only transaction default."""
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "sqlite":
                # A read-only file (mode=ro, a read-only mount) takes the lock but
                # refuses the first write: write a value back unchanged, then undo.
                conn.exec_driver_sql("BEGIN IMMEDIATE")
                version = conn.exec_driver_sql("PRAGMA user_version").scalar()
                conn.exec_driver_sql(f"PRAGMA user_version = {int(version or 0)}")
                conn.exec_driver_sql("ROLLBACK")
                return
            read_only = conn.execute(text("SHOW transaction_read_only")).scalar()
    except Exception as exc:  # noqa: BLE001 - reported as one line to the user
        fix = ""
        if engine.dialect.name == "sqlite":
            fix = (
                ": give the user copydesk runs as write permission on the file and its "
                "folder (SQLite writes its journal beside it), or open it with --read-only "
                "to read only"
            )
        raise StoreError(
            f"database {where(engine)} cannot be written ({explain(exc)}){fix}"
        ) from None
    if read_only == "on":
        raise StoreError(
            f"database {where(engine)} cannot be written: it is read-only (a standby, or "
            "default_transaction_read_only is on for this role)"
        )


def head_revision(engine: Engine) -> str | None:
    return _head_revision()


@functools.cache
def _head_revision() -> str | None:
    """The code's head revision, read from the migration files' `revision` and
    `down_revision` assignments without importing Alembic (issue 24: Alembic and the
    migrations' imports are about 0.1 s of CPU a process, and a database at head
    needs none of it); Alembic's own answer when the files are not that simple."""
    found = _revisions(MIGRATIONS / "versions")
    if found is not None:
        revisions, parents = found
        heads = revisions - parents
        if len(heads) == 1:
            return heads.pop()
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return ScriptDirectory.from_config(config).get_current_head()


def _revisions(folder: Path) -> tuple[set[str], set[str]] | None:
    """Every migration's revision, and every revision some migration names as its
    `down_revision`; None when a file does not assign them as plain literals."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in sorted(folder.glob("*.py")):
        values: dict[str, object] = {}
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            target = node.target if isinstance(node, ast.AnnAssign) else None
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
            if isinstance(target, ast.Name) and target.id in ("revision", "down_revision"):
                try:
                    values[target.id] = ast.literal_eval(node.value)  # type: ignore[arg-type]
                except ValueError:
                    return None
        revision, down = values.get("revision"), values.get("down_revision")
        if not isinstance(revision, str):
            return None
        revisions.add(revision)
        downs = down if isinstance(down, tuple) else (down,)
        parents.update(d for d in downs if isinstance(d, str))
    return revisions, parents


def schema_revision(engine: Engine) -> str | None:
    """The revision the database is at; None for a database with no schema yet. Read
    as Alembic keeps it (one row in `alembic_version`), without importing Alembic;
    more than one row (branches) is left to Alembic."""
    try:
        with engine.connect() as conn:
            if not inspect(conn).has_table("alembic_version"):
                return None
            rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
            if len(rows) <= 1:
                return rows[0] if rows else None
            from alembic.runtime.migration import MigrationContext

            return MigrationContext.configure(conn).get_current_revision()
    except Exception as exc:  # noqa: BLE001 - unreachable server, unreadable file...
        raise StoreError(f"database {where(engine)} cannot be opened: {explain(exc)}") from None


def explain(exc: BaseException) -> str:
    """The first line of a database error, with the fix when it is one copydesk knows:
    PostgreSQL's "permission denied" for a role that was never granted its rights."""
    first = (str(getattr(exc, "orig", None) or exc).splitlines() or [""])[0]
    if "permission denied" in first.lower():
        first += f" ({GRANT_HINT})"
    return first


GRANT_HINT = (
    "this role has not been given its rights: run `copydesk migrate` with "
    "COPYDESK_MIGRATE_DATABASE_URL set to the owner's URL and COPYDESK_DATABASE_URL to this one"
)


def may_migrate(engine: Engine) -> bool:
    """Whether this connection's role may change the schema. SQLite: the file's
    permissions decide (a read-only file fails in `migrate` with its own message).
    PostgreSQL: the role owns the schema's tables, or, on an empty database, may
    create tables."""
    if engine.dialect.name != "postgresql":
        return True
    with engine.connect() as conn:
        return bool(
            conn.execute(
                text(
                    "SELECT CASE WHEN to_regclass('alembic_version') IS NULL "
                    "THEN has_schema_privilege(current_schema(), 'CREATE') "
                    "ELSE pg_has_role((SELECT tableowner FROM pg_tables "
                    "WHERE schemaname = current_schema() AND tablename = 'alembic_version'), "
                    "'USAGE') END"
                )
            ).scalar()
        )


# What the runtime role may do, table by table (everything else: SELECT, INSERT,
# UPDATE, DELETE). The audit log and the notes are read and appended to, never changed; the
# schema's version is only read.
RUNTIME_TABLE_RIGHTS = {
    "audit_events": "SELECT, INSERT",
    "notes": "SELECT, INSERT",
    "ledger_parts": "SELECT, INSERT",  # content-addressed: a part never changes
    "call_settings": "SELECT, INSERT",  # found by their content: a row never changes
    "alembic_version": "SELECT",
    "runtime_roles": "SELECT",
    "installation": "SELECT",
}
WORKER, REVIEW = "worker", "review"  # runtime_roles.kind (migration 0013)


def migrate_as_owner(
    owner_url: str, runtime_url: str | None = None, review_role: str | None = None
) -> str | None:
    """Migrate with the owner's URL, then give the runtime role (the user of
    `runtime_url`, when it is another role) exactly the rights it needs.
    Returns the runtime role's name when rights were granted.

    With `review_role` (the review server's role, PostgreSQL), the runtime role is
    registered as the workers' role: the database refuses its decisions and its
    changes to approved text (migration 0013), and `review_role` gets the same
    table rights and may decide. Without it, a runtime role not registered yet
    may decide (one role for workers and review server, as before)."""
    engine = make_engine(owner_url)
    try:
        migrate(engine)
        runtime = make_url(runtime_url).username if runtime_url else None
        if engine.dialect.name != "postgresql":
            if review_role:
                raise StoreError("--review-role needs PostgreSQL: SQLite has no roles")
            return None
        kinds = {runtime: REVIEW if not review_role else WORKER} if runtime else {}
        if review_role:
            if review_role in (runtime, engine.url.username):
                raise StoreError(
                    f"the review role {review_role!r} must be another role than the "
                    "workers' and the owner's"
                )
            kinds[review_role] = REVIEW
        kinds.pop(engine.url.username, None)  # the owner needs no rights, decides anyway
        for role, kind in kinds.items():
            try:
                grant_runtime_rights(engine, role)
                register_role(engine, role, kind, replace=bool(review_role))
            except Exception as exc:  # noqa: BLE001 - reported as one line to the user
                first = str(exc).splitlines()[0]
                raise StoreError(f"rights for role {role!r} could not be granted: {first}") from exc
        return runtime if runtime in kinds else None
    finally:
        engine.dispose()


def runtime_roles(engine: Engine) -> list[str]:
    """The roles `copydesk migrate` gave rights to (SELECT on alembic_version, which
    they do not own): a schema upgraded by another path must grant them the new
    tables too. PostgreSQL only: pg_class.relacl read with aclexplode ("System
    Information Functions and Operators",
    https://www.postgresql.org/docs/current/functions-info.html)."""
    with engine.connect() as conn:
        return list(
            conn.execute(
                text(
                    "SELECT DISTINCT r.rolname FROM pg_class c, aclexplode(c.relacl) a "
                    "JOIN pg_roles r ON r.oid = a.grantee "
                    "WHERE c.oid = to_regclass('alembic_version') AND a.grantee <> c.relowner "
                    "ORDER BY r.rolname"
                )
            ).scalars()
        )


def register_role(engine: Engine, role: str, kind: str, *, replace: bool) -> None:
    """Record what `role` is (runtime_roles); an existing entry is kept unless
    `replace`."""
    from sqlalchemy.dialects.postgresql import insert as pg_insert  # PostgreSQL only

    insert = pg_insert(RuntimeRole.__table__).values(role_name=role, kind=kind)
    if replace:
        insert = insert.on_conflict_do_update(
            index_elements=["role_name"], set_={"kind": insert.excluded.kind}
        )
    else:
        insert = insert.on_conflict_do_nothing(index_elements=["role_name"])
    with engine.begin() as conn:
        conn.execute(insert)


def role_kinds(engine: Engine) -> dict[str, str]:
    """Every registered runtime role and its kind ("worker" or "review")."""
    with engine.connect() as conn:
        table = RuntimeRole.__table__
        return dict(conn.execute(select(table.c.role_name, table.c.kind)).all())


def grant_runtime_rights(engine: Engine, role: str) -> None:
    """Idempotent: revokes what the runtime role should not have, grants the rest."""
    with engine.begin() as conn:
        quote = conn.dialect.identifier_preparer.quote
        who = quote(role)
        schema = quote(conn.execute(text("SELECT current_schema()")).scalar_one())
        conn.execute(text(f"GRANT USAGE ON SCHEMA {schema} TO {who}"))
        tables = conn.execute(
            text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        ).scalars()
        for table in tables:
            rights = RUNTIME_TABLE_RIGHTS.get(table, "SELECT, INSERT, UPDATE, DELETE")
            conn.execute(text(f"REVOKE ALL ON TABLE {quote(table)} FROM {who}"))
            conn.execute(text(f"GRANT {rights} ON TABLE {quote(table)} TO {who}"))
        conn.execute(text(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {who}"))


def connection_of(db: Session | Connection) -> Connection:
    """The Connection a store function works through: a Session's (its transaction
    begun if need be), or the Connection it was given (issue 24: a worker's short
    transaction of Core statements needs no ORM session)."""
    return db if isinstance(db, Connection) else db.connection()


@contextmanager
def one_statement(engine: Engine) -> Iterator[Connection]:
    """A transaction for a write that is one statement (or several, each whole alone):
    on PostgreSQL the connection is in autocommit, where a statement is its own
    transaction, all or nothing, without the BEGIN and COMMIT that cost a round trip
    each (issue 24, session 16: a model call's fenced ledger row). SQLAlchemy sets the
    connection's isolation back when it returns to the pool
    (https://docs.sqlalchemy.org/en/20/core/connections.html#setting-transaction-isolation-levels-including-dbapi-autocommit);
    psycopg's commit sends nothing when no transaction is open
    (https://www.psycopg.org/psycopg3/docs/basic/transactions.html#autocommit-transactions).
    On SQLite, an ordinary transaction (a statement costs no round trip)."""
    with engine.connect() as connection:
        if connection.dialect.name == "postgresql":
            connection.execution_options(isolation_level="AUTOCOMMIT")
        with connection.begin():
            yield connection


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """One transaction: committed on success, rolled back on any exception."""
    with Session(engine, expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
