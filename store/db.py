"""Engines, sessions and bringing the schema up to date.

Every command calls `open_store()`, which runs the Alembic migrations to head on
first use: a fresh SQLite file or an empty PostgreSQL database needs no set-up.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlmodel import Session, create_engine

MIGRATIONS = Path(__file__).parent / "migrations"


class StoreError(RuntimeError):
    """The database cannot be reached or brought up to date."""


def make_engine(url: str) -> Engine:
    """An engine tuned for the backend: SQLite waits for locks instead of failing
    at once and uses WAL so the review queue can read while a run writes."""
    try:
        parsed = make_url(url)
    except Exception as exc:  # noqa: BLE001 - SQLAlchemy raises several kinds
        raise StoreError(f"database URL {url!r} cannot be read: {exc}") from None
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if database and database != ":memory:":
            folder = Path(database).expanduser().parent
            if not folder.is_dir():
                # A typo in the path must not quietly start a new, empty newsroom.
                raise StoreError(f"database folder {folder} does not exist")
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):  # type: ignore[no-untyped-def]
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            if database and database != ":memory:":
                cur.execute("PRAGMA journal_mode=WAL")
                # In WAL mode NORMAL never corrupts the database; a power cut may
                # lose the transactions of the last moment, never half of one.
                cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        return engine
    if parsed.drivername in ("postgres", "postgresql", "postgresql+psycopg2"):
        parsed = parsed.set(drivername="postgresql+psycopg")  # the driver we install
    try:
        return create_engine(parsed, pool_pre_ping=True)
    except Exception as exc:  # noqa: BLE001 - unknown dialect, missing driver...
        safe = parsed.render_as_string(hide_password=True)
        raise StoreError(f"database URL {safe} cannot be used: {exc}") from None


def alembic_config(engine: Engine) -> Config:
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
        with _MIGRATE_LOCK:
            command.upgrade(alembic_config(engine), revision)
    except Exception as exc:  # noqa: BLE001 - reported as one line to the user
        raise StoreError(
            f"database {safe_url(engine)} could not be brought up to date: {exc}"
        ) from exc


def safe_url(engine: Engine) -> str:
    """The URL with any password masked: safe for logs and messages."""
    return engine.url.render_as_string(hide_password=True)


def open_store(url: str) -> Engine:
    engine = make_engine(url)
    migrate(engine)
    return engine


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
