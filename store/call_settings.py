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
store/db.py keeps the ids it has seen committed (store/committed.py), and a call
with the same settings reads call_settings no more (issue 24, session 12: it was a
SELECT before every request and another as the call completed, four an article). An
id seen in a transaction still open is trusted only once that transaction has
committed; a rollback, of the transaction or of a savepoint in it, forgets it (the
row may be gone with it).
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Connection, Engine

from store.committed import known, seen
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


KIND = "call_settings"  # store/committed.py: {settings key: row id}


def settings_id(connection: Connection, settings: dict[str, Any]) -> int:
    """The id of the row holding `settings`, written first when there is none yet."""
    text = key(settings)
    committed = known(connection.engine, KIND)
    if committed is not None and text in committed:
        return committed[text]
    found = connection.execute(_FIND, {"key": text}).scalar()
    if found is None:
        statement = insert_or_skip(connection.dialect.name, CallSetting, "key")
        connection.execute(statement, {**settings, "key": text})
        found = connection.execute(_FIND, {"key": text}).scalar_one()
    seen(connection, KIND, {text: found})
    return found


def committed_ids(engine: Engine) -> dict[str, int]:
    """{settings key: row id} that `engine` trusts without a SELECT."""
    return dict(known(engine, KIND) or {})


def model_call(connection: Connection, **fields: Any) -> ModelCall:
    """A ledger row of `fields` (a call's and its row's) as they are: its settings by
    the id of their row, its request not split (store/ledger.py `add` splits it)."""
    settings = pop(fields)
    return ModelCall(**fields, settings_id=settings_id(connection, settings))
