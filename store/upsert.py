"""The INSERT that can say ON CONFLICT, for the database at hand.

SQLAlchemy's generic `insert` has no ON CONFLICT clause; each dialect's own
`insert` has (`on_conflict_do_nothing`, `on_conflict_do_update`:
https://docs.sqlalchemy.org/en/20/dialects/postgresql.html#insert-on-conflict-upsert
and https://docs.sqlalchemy.org/en/20/dialects/sqlite.html#upsert). The dialect's
module is imported only when its database is used (issue 24: PostgreSQL's dialect
was about 0.05 s of CPU for every process on SQLite, 0.15 ms an article of a
320-article run; tests/test_cli_imports.py).
"""

from __future__ import annotations

from typing import Any


def dialect_insert(dialect: str) -> Any:
    """The `insert` construct of the dialect named `dialect` ("postgresql", "sqlite")."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        return postgresql_insert
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert
    raise ValueError(f"no upsert for the {dialect} dialect")


_SKIPPING: dict[tuple[str, Any, str], Any] = {}  # built once a dialect, table and key


def insert_or_skip(dialect: str, table: Any, key: str) -> Any:
    """`INSERT INTO table ... ON CONFLICT (key) DO NOTHING` for `dialect`: a row whose
    key is there already is left as it is (content-addressed rows never change)."""
    statement = _SKIPPING.get((dialect, table, key))
    if statement is None:
        statement = dialect_insert(dialect)(table).on_conflict_do_nothing(index_elements=[key])
        _SKIPPING[(dialect, table, key)] = statement
    return statement
