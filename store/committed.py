"""Rows that stand for good once committed: what an engine has seen of them.

Some rows are only ever inserted, never changed or deleted (the runtime role may not:
store/db.py `RUNTIME_TABLE_RIGHTS`), and found by their content: a model call's
settings (store/call_settings.py, by their key, for their id) and a request's parts
(store/ledger.py, by their hash). Once the transaction that saw such a row has
committed, the row is there for good, and an engine made by store/db.py
(`remember_committed`) keeps it, by kind, so that a writer neither looks it up nor
writes it again (issue 24, sessions 12 and 13).

A row seen in a transaction still open waits in its connection's `info` until that
transaction has committed: the "commit" event comes before the database's COMMIT, so
it waits there until the connection goes back to the pool (its "checkin", after COMMIT
has returned), and any error, rollback or savepoint rollback forgets it (the row may be
gone with it). Told another thread at "commit", a settings id named a row not yet
committed, and that thread's row naming it was refused (issue 24, session 12).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

# {kind: {key: value}} seen committed, by engine (those `remember_committed` watches).
_COMMITTED: WeakKeyDictionary[Engine, dict[str, dict[str, Any]]] = WeakKeyDictionary()
_SEEN = "committed_seen"  # in a connection's `info`: {kind: {key: value}} seen in its transaction
_COMMITTING = "committed_committing"  # ...and those of a transaction being committed


def known(engine: Engine, kind: str) -> Mapping[str, Any] | None:
    """{key: value} of `kind` that `engine` has seen committed; None when the engine
    does not remember (not made by `open_store`): then every row is looked up."""
    remembered = _COMMITTED.get(engine)
    return None if remembered is None else remembered.setdefault(kind, {})


def seen(connection: Connection, kind: str, rows: Mapping[str, Any]) -> None:
    """Rows of `kind` that are there in `connection`'s transaction (found, or inserted
    by it): trusted by the engine once that transaction has committed."""
    if connection.engine in _COMMITTED:
        connection.info.setdefault(_SEEN, {}).setdefault(kind, {}).update(rows)


def remember_committed(engine: Engine) -> None:
    """Keep the rows `engine`'s connections see (`seen`), once their transaction has
    committed (Connection events "commit", "rollback", "rollback_savepoint",
    "handle_error":
    https://docs.sqlalchemy.org/en/20/core/events.html#sqlalchemy.events.ConnectionEvents;
    pool event "checkin": https://docs.sqlalchemy.org/en/20/core/events.html#sqlalchemy.events.PoolEvents)."""
    _COMMITTED[engine] = {}

    @event.listens_for(engine, "commit")
    def _committing(connection: Connection) -> None:
        found = connection.info.pop(_SEEN, None)
        if found:
            committing = connection.info.setdefault(_COMMITTING, {})
            for kind, rows in found.items():
                committing.setdefault(kind, {}).update(rows)

    @event.listens_for(engine.pool, "checkin")
    def _committed(dbapi_connection: Any, record: Any) -> None:
        committing = record.info.pop(_COMMITTING, None) if record is not None else None
        if committing:
            remembered = _COMMITTED[engine]
            for kind, rows in committing.items():
                remembered.setdefault(kind, {}).update(rows)

    @event.listens_for(engine, "rollback")
    @event.listens_for(engine, "rollback_savepoint")
    def _rolled_back(connection: Connection, *savepoint: Any) -> None:
        connection.info.pop(_SEEN, None)
        connection.info.pop(_COMMITTING, None)

    @event.listens_for(engine, "handle_error")
    def _failed(context: Any) -> None:
        if context.connection is not None:
            _rolled_back(context.connection)
