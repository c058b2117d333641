"""A model call's settings, stored once for all the calls made with them (migration 0038).

Every call about every article of a run is made with the same purpose, backend,
model, API version, temperature and prompt (version and hash): in every ledger row
they were about 120 bytes, a fifth of the row (issue 19 §4). Since 0038 they are a
`call_settings` row, found by its `key` (their canonical JSON text), and a ledger
row holds its id. `ModelCall` reads them back as if they were its own columns
(`call.model`, and `ModelCall.purpose == "checks"` in a query: store/models.py);
`settings_id` is how store/ledger.py writes them, and the only writer.

Settings rows are only ever inserted (`INSERT ... ON CONFLICT DO NOTHING`, then read
by key: two writers making the first call with new settings at once both get the
one row); the runtime role may not change or delete them (store/db.py
`RUNTIME_TABLE_RIGHTS`).

So a row's id, once its transaction has committed, stands for good: an engine made by
store/db.py (`remember_committed`) keeps the ids it has seen committed, and a call
with the same settings reads call_settings no more (issue 24, session 12: it was a
SELECT before every request and another as the call completed, four an article). An
id seen in a transaction still open waits in its connection's `info` until that
transaction commits; a rollback, of the transaction or of a savepoint in it,
forgets it (the row may be gone with it).
"""

from __future__ import annotations

import json
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import bindparam, event, select
from sqlalchemy.engine import Connection, Engine

from store.models import CallSetting, CallSettings, ModelCall
from store.upsert import insert_or_skip

NAMES = tuple(CallSettings.model_fields)  # purpose, backend, model, ... prompt_hash


def key(settings: dict[str, Any]) -> str:
    """The one text of a call's settings: their values as a JSON list, in NAMES' order."""
    return json.dumps([settings.get(name) for name in NAMES], ensure_ascii=False)


def pop(values: dict[str, Any]) -> dict[str, Any]:
    """The settings of a call's column values, taken out of them (a setting not
    given has its default: "summary" for the purpose)."""
    fields = CallSettings.model_fields
    return {name: values.pop(name, fields[name].default) for name in NAMES}


_TABLE = CallSetting.__table__
_FIND = select(_TABLE.c.id).where(_TABLE.c.key == bindparam("key"))  # type: ignore[attr-defined]


# {settings key: row id} seen committed, by engine (those `remember_committed` watches).
_COMMITTED: WeakKeyDictionary[Engine, dict[str, int]] = WeakKeyDictionary()
_SEEN = "call_settings_seen"  # in a connection's `info`: {key: id} seen in its transaction
_COMMITTING = "call_settings_committing"  # ...and those of a transaction being committed


def settings_id(connection: Connection, settings: dict[str, Any]) -> int:
    """The id of the row holding `settings`, written first when there is none yet."""
    text = key(settings)
    committed = _COMMITTED.get(connection.engine)
    if committed is not None and text in committed:
        return committed[text]
    found = connection.execute(_FIND, {"key": text}).scalar()
    if found is None:
        statement = insert_or_skip(connection.dialect.name, CallSetting, "key")
        connection.execute(statement, {**settings, "key": text})
        found = connection.execute(_FIND, {"key": text}).scalar_one()
    if committed is not None:
        connection.info.setdefault(_SEEN, {})[text] = found
    return found


def remember_committed(engine: Engine) -> None:
    """Keep the settings ids `engine`'s connections see, once their transaction has
    committed. The "commit" event comes before the database's COMMIT, so the ids wait
    there until the connection goes back to the pool (its "checkin": after COMMIT has
    returned), and any error, rollback or savepoint rollback forgets them (Connection
    events "commit", "rollback", "rollback_savepoint", "handle_error":
    https://docs.sqlalchemy.org/en/20/core/events.html#sqlalchemy.events.ConnectionEvents;
    pool event "checkin": https://docs.sqlalchemy.org/en/20/core/events.html#sqlalchemy.events.PoolEvents).
    Told another thread at "commit", an id named a row not yet committed, and that
    thread's row naming it was refused (issue 24, session 12)."""
    _COMMITTED[engine] = {}

    @event.listens_for(engine, "commit")
    def _committing(connection: Connection) -> None:
        seen = connection.info.pop(_SEEN, None)
        if seen:
            connection.info.setdefault(_COMMITTING, {}).update(seen)

    @event.listens_for(engine.pool, "checkin")
    def _committed(dbapi_connection: Any, record: Any) -> None:
        committing = record.info.pop(_COMMITTING, None) if record is not None else None
        if committing:
            _COMMITTED[engine].update(committing)

    @event.listens_for(engine, "rollback")
    @event.listens_for(engine, "rollback_savepoint")
    def _rolled_back(connection: Connection, *savepoint: Any) -> None:
        connection.info.pop(_SEEN, None)
        connection.info.pop(_COMMITTING, None)

    @event.listens_for(engine, "handle_error")
    def _failed(context: Any) -> None:
        if context.connection is not None:
            _rolled_back(context.connection)


def committed_ids(engine: Engine) -> dict[str, int]:
    """{settings key: row id} that `engine` trusts without a SELECT."""
    return dict(_COMMITTED.get(engine, {}))


def model_call(connection: Connection, **fields: Any) -> ModelCall:
    """A ledger row of `fields` (a call's and its row's) as they are: its settings by
    the id of their row, its request not split (store/ledger.py `add` splits it)."""
    settings = pop(fields)
    return ModelCall(**fields, settings_id=settings_id(connection, settings))
