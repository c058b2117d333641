"""Writers that must not cross, across processes and machines, on both backends.

`hold(session, name)` serialises the rest of the session's transaction with every
other transaction holding the same name, until it commits or rolls back.

- PostgreSQL: a transaction-level advisory lock on a 64-bit key derived from the
  name (`pg_advisory_xact_lock`); released by the database at commit, rollback or
  when the connection dies.
- SQLite has one writer at a time: the transaction starts as `BEGIN IMMEDIATE`,
  which takes the database's write lock before the first read, so whatever it
  reads stays true until it commits (a plain `BEGIN` would read first and find
  the lock taken only at its first write). Every name is the same lock there.
  When the connection already holds a write transaction (a write ran earlier in
  the session), it already holds that lock.

Call it first in a transaction, before the reads whose result the writes depend on.
"""

from __future__ import annotations

import hashlib

from sqlalchemy import text
from sqlmodel import Session


def hold(session: Session, name: str) -> None:
    if write_transaction(session):
        return
    session.connection().execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key(name)})


def hold_all(session: Session, names: list[str]) -> None:
    """`hold` for every name, taken in the order given (callers sort them, so two
    transactions never wait crosswise): one round trip on PostgreSQL, not one a
    name (issue 24: the writer takes a batch's story locks together)."""
    if len(names) <= 1:
        for name in names:
            hold(session, name)
        return
    if write_transaction(session):
        return
    # The locks are taken row by row in the array's order: PostgreSQL "will
    # effectively evaluate output expressions after sorting", unless ORDER BY names
    # them (https://www.postgresql.org/docs/current/sql-select.html, "SELECT List").
    session.connection().execute(
        text(
            "SELECT pg_advisory_xact_lock(t.k) FROM unnest(CAST(:keys AS bigint[]))"
            " WITH ORDINALITY AS t(k, n) ORDER BY t.n"
        ),
        {"keys": [key(name) for name in names]},
    )


def write_transaction(session: Session) -> bool:
    """SQLite: make the session's transaction a write transaction now (True).
    PostgreSQL: nothing (False); its row locks (`FOR UPDATE`) serialise by row."""
    conn = session.connection()
    if conn.dialect.name != "sqlite":
        return False
    raw = conn.connection.dbapi_connection
    if not getattr(raw, "in_transaction", False):
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    return True


def key(name: str) -> int:
    """A signed 64-bit key for the name (PostgreSQL's advisory locks take a bigint)."""
    digest = hashlib.sha256(f"copydesk:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
