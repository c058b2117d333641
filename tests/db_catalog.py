"""Names read from the database's own catalog, on SQLite and PostgreSQL alike:
the triggers, and a table's indexes. SQLAlchemy's inspector reflects neither a
trigger nor, on SQLite, an expression index, so the migration tests ask the
catalog (sqlite_master; pg_trigger and pg_indexes)."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.engine import Engine


def catalog_names(engine: Engine, *, sqlite: str, postgresql: str, **params: str) -> set[str]:
    """The first column of the query for the engine's dialect, as a set."""
    query = sqlite if engine.dialect.name == "sqlite" else postgresql
    with engine.connect() as conn:
        return set(conn.execute(text(query), params).scalars())


def trigger_names(engine: Engine) -> set[str]:
    """Every trigger a migration made (PostgreSQL's internal ones left out)."""
    return catalog_names(
        engine,
        sqlite="SELECT name FROM sqlite_master WHERE type = 'trigger'",
        postgresql="SELECT tgname FROM pg_trigger WHERE NOT tgisinternal",
    )


def index_names(engine: Engine, table: str) -> set[str]:
    """Every index on the table, expression indexes included."""
    return catalog_names(
        engine,
        sqlite="SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = :table",
        postgresql="SELECT indexname FROM pg_indexes WHERE tablename = :table",
        table=table,
    )
