"""Alembic environment: the engine is handed in by `store.db.migrate`.

Several commands may open the same fresh database at once (a cron run starting
while the review queue starts, or workers on several machines against
PostgreSQL). The migration therefore runs as one transaction that first takes a
database-wide lock: the second command waits for the first, then finds the
schema already at head and does nothing.
"""

import time

from alembic import context
from sqlalchemy import Connection, text
from sqlalchemy.exc import OperationalError
from sqlmodel import SQLModel

import store.models  # noqa: F401 - registers the tables on SQLModel.metadata

config = context.config
target_metadata = SQLModel.metadata

# How long a second SQLite migrator waits for the first, in all: one busy_timeout
# (30 s, store/db.py) is not enough for a first migration on a loaded machine.
SQLITE_WAIT_SECONDS = 600

# Any fixed 64-bit number; it names copydesk's migration lock on a PostgreSQL server.
PG_MIGRATION_LOCK = 0x636F70796465736B  # "copydesk" in ASCII


def _lock_for_migration(connection: Connection) -> None:
    """Serialise migrations and make them all-or-nothing.

    PostgreSQL: a transaction-scoped advisory lock, released at commit.
    SQLite: Python's sqlite3 runs DDL outside any transaction unless told
    otherwise, so a crash mid-migration would leave half a schema and two
    migrators would both try to create the tables. BEGIN IMMEDIATE takes the
    write lock up front; a second migrator waits for it (busy_timeout, asked again
    until SQLITE_WAIT_SECONDS have passed: a failed BEGIN leaves no transaction).
    """
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PG_MIGRATION_LOCK})
    elif connection.dialect.name == "sqlite":
        give_up = time.monotonic() + SQLITE_WAIT_SECONDS
        while True:
            try:
                connection.exec_driver_sql("BEGIN IMMEDIATE")
                return
            except OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > give_up:
                    raise


def run_migrations_online() -> None:
    engine = config.attributes.get("engine")
    if engine is None:
        from store.db import make_engine

        engine = make_engine(config.get_main_option("sqlalchemy.url"))
    with engine.begin() as connection:
        _lock_for_migration(connection)
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        context.run_migrations()


run_migrations_online()
