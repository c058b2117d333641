"""The model-call ledger's storage: what repeats across calls is kept once, by hash.

Every request about an article sends the same tool list and system prompt, the
same fixed instruction for its purpose, and the article's block twice (summary,
then check). Kept whole in every row, a 300-word article cost about 16x its own
text in ledger rows (issue 19). So a row's `request_json` keeps the request with
each repeated part replaced by `{"$part": "sha256:<hex>"}`, and the part itself is
stored once in `ledger_parts` under that hash:

- the `tools` list, the `system` prompt;
- every text content block of at least `MIN_PART_CHARS` characters (the
  article's block, the purpose's instruction; the check's draft block when long).

The hash is the SHA-256 of the part's canonical JSON text, which is what
`ledger_parts.content` holds, so every part proves its own content. Since migration
0034 a row names a part by the first SHORT_HEX hex digits of its hash (64 bits; the
full key, 32 bytes of hex that do not compress, was most of a packed request): a
part is found by that prefix, and two parts sharing one would both be named missing
(at 64 bits, about one chance in 10^6 with ten million parts), never one guessed. `requests`
puts the exact request back together for `copydesk audit` (a part that is
missing is named, never guessed). Rows written before migration 0015 keep their
full request and read unchanged (they name no part).

Rows are written before their request is sent (`begin`, state "in_flight", with
an upper cost estimate) and completed with the outcome in the writer's
transaction (`add`: one UPDATE by the row's id, built once, never a read of the
row first: issue 24); a row whose run died with it in flight becomes "unknown"
(`settle_unknown`, at a run's start), counted by `copydesk stats`
(`unknown_outcomes`): every paid call is in the ledger (issue 26).

Rows' requests and responses and the parts are stored packed (zlib over their
JSON text, store/packing.py, migration 0019; against a preset dictionary since
0022): read whole, never queried inside. A reply is packed against its own
request's parts since 0029 (it quotes the article and the draft it was sent):
`replies` reads it back with them, as `requests` puts the request back together.

A part that quotes its item's text (the article's block, the draft's) is packed
against that text, which `items` already holds (store/packing.py `AgainstItem`): an
article's block, about 0.3x of its text packed by itself, is a few dozen bytes. A
part that gains little from it (tools, system, instructions: shared by every item)
is packed by itself and needs no item to be read. Reading one back checks its
SHA-256: a part whose item text is not the one it was packed against is named
missing, never shown wrong.

Parts are only ever inserted (`INSERT ... ON CONFLICT DO NOTHING`, in hash order
so two writers never wait on each other in opposite orders); the runtime role may
not change or delete them (store/db.py `RUNTIME_TABLE_RIGHTS`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
import zlib
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import and_, bindparam, func, insert, or_, select, update
from sqlalchemy.engine import Connection
from sqlmodel import Session

from store import call_settings, claims, committed
from store.db import connection_of
from store.models import CallRecord, Item, LedgerPart, ModelCall, Run, utcnow
from store.packing import AgainstItem, AgainstParts, pack_against, pack_text
from store.upsert import insert_or_skip

IN_FLIGHT, UNKNOWN, DONE = "in_flight", "unknown", "done"  # model_calls.state
PART_KEY = "$part"
SHORT_HEX = 16
MIN_PART_CHARS = 128  # shorter text stays in the row: a reference is about 80 characters
# A part is packed against its item's text only when that saves at least this many
# bytes: the article's and the draft's blocks do; the parts every item shares do not,
# and stay readable without any item.
MIN_ITEM_SAVING = 64


def canonical(value: Any) -> str:
    """The one JSON text of a value that its hash is taken over (keys in the order
    they were sent: reassembled, the request reads as it went out)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


DIGEST_PREFIX = "sha256:"


def digest(content: str) -> str:
    return DIGEST_PREFIX + hashlib.sha256(content.encode("utf-8")).hexdigest()


def short(key: str) -> str:
    """A part's name in a row: "sha256:" and the first SHORT_HEX hex digits of its key."""
    return key[: len(DIGEST_PREFIX) + SHORT_HEX]


def split(request: Any) -> tuple[Any, dict[str, str]]:
    """(the request with its repeated parts replaced by references, {hash: content})."""
    if not isinstance(request, dict):
        return request, {}
    parts: dict[str, str] = {}

    def keep(value: Any) -> dict[str, str]:
        content = canonical(value)
        key = digest(content)
        parts[key] = content
        return {PART_KEY: short(key)}

    out = dict(request)
    if isinstance(out.get("tools"), list) and out["tools"]:
        out["tools"] = keep(out["tools"])
    if (
        isinstance(out.get("system"), str | list)
        and len(canonical(out["system"])) >= MIN_PART_CHARS
    ):
        out["system"] = keep(out["system"])
    if isinstance(out.get("messages"), list):
        out["messages"] = [_split_message(m, keep) for m in out["messages"]]
    return out, parts


def _split_message(message: Any, keep: Any) -> Any:
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return message
    blocks = []
    for block in message["content"]:
        text = block.get("text") if isinstance(block, dict) else None
        if isinstance(text, str) and len(text) >= MIN_PART_CHARS:
            block = dict(block, text=keep(text))
        blocks.append(block)
    return dict(message, content=blocks)


def add(
    session: Session, calls: Iterable[CallRecord], *, item_id: int | None, run_id: int | None
) -> list[ModelCall]:
    """Stage the ledger rows of `calls` in `session`, their repeated parts stored once.
    A call whose row was written before its request (`begin`) completes that row:
    one UPDATE by its id (issue 24: it used to load the whole row, request and
    response unpacked, and merge the new one into it); its parts were stored with
    that row, in `begin`'s transaction, and its request is the same, so they are not
    stored again (issue 24, session 11: an INSERT into ledger_parts and a SELECT of
    the item's text a batch, which changed nothing). The completions are one UPDATE
    sent once for all of them (issue 24, session 12: an executemany, which psycopg
    sends in one round trip, its pipeline mode:
    https://www.psycopg.org/psycopg3/docs/advanced/pipeline.html); its row count is
    the sum over them (`supports_sane_multi_rowcount` on both dialects:
    https://docs.sqlalchemy.org/en/20/core/connections.html#sqlalchemy.engine.CursorResult.rowcount),
    so a row gone is noticed and its call added. Returns the rows added."""
    return add_many(session, [(item_id, calls)], run_id=run_id)


def add_many(
    session: Session,
    calls_by_item: Iterable[tuple[int | None, Iterable[CallRecord]]],
    *,
    run_id: int | None,
) -> list[ModelCall]:
    """`add` for several items' calls, (item id, its calls) each: the completions of
    all of them are one UPDATE (issue 24, session 13: the run's writer sent one an
    item of its batch). Each item's parts are packed against its own text."""
    connection = session.connection()
    entries = []  # (item id, row id or None, column values, parts), in the calls' order
    for item_id, calls in calls_by_item:
        for call in calls:
            found: dict[str, str] = {}
            made = _began(connection.engine, call)
            values = _values(connection, call, item_id, run_id, found, made)
            entries.append((item_id, call._row_id, values, found))
    begun = {row_id: values for _, row_id, values, _ in entries if row_id is not None}
    there: set[int] = set()
    if begun:
        done = connection.execute(
            _COMPLETE, [{**values, "row_id": row_id} for row_id, values in begun.items()]
        )
        there = set(begun)
        if done.rowcount != len(begun):  # a row gone (never begun in this database)
            there = set(connection.execute(_BEGUN, {"ids": list(begun)}).scalars())
    rows, parts_by_item = [], {}
    for item_id, row_id, values, found in entries:
        parts = parts_by_item.setdefault(item_id, {})
        if row_id not in there:
            parts |= found
            rows.append(ModelCall(**values))
    for item_id, parts in parts_by_item.items():
        store_parts(session, parts, item_id)
    session.add_all(rows)
    return rows


def _values(
    connection: Connection,
    call: CallRecord,
    item_id: int | None,
    run_id: int | None,
    parts: dict[str, str],
    made: Split | None = None,
) -> dict[str, Any]:
    """A call's row as column values: its settings by the id of their row
    (store/call_settings.py), its request split (its parts added to `parts`)."""
    values = split_values(call, item_id, run_id, parts, made)
    values["settings_id"] = call_settings.settings_id(connection, call_settings.pop(values))
    return values


# A request split: (its skeleton, {hash: content} of its parts, the parts it names).
Split = tuple[Any, dict[str, str], list[str]]


def split_named(request: Any) -> Split:
    """`split`, and the parts the skeleton names, in order (a reply is packed against them)."""
    skeleton, found = split(request)
    return skeleton, found, part_keys(skeleton)


def split_values(
    call: CallRecord,
    item_id: int | None,
    run_id: int | None,
    parts: dict[str, str],
    made: Split | None = None,
) -> dict[str, Any]:
    """A call's fields as a row holds them, but its settings (still in place): its
    request split (its parts added to `parts`), its reply packed against them. `made`:
    the request's split made already (`split_named`)."""
    # Its fields as they are (store/models.py CallRecord: `vars` is exactly them), a
    # new dict; not `model_dump`, which copied the request and the reply, nested, for
    # each row (issue 24, session 15). They are only read here and by the packing.
    values = dict(vars(call))
    values.update(item_id=item_id, run_id=run_id)
    values["request_json"], found, named = made or split_named(call.request_json)
    parts |= found
    if named and values.get("response_json") is not None:
        by_name = {short(key): content for key, content in found.items()}
        values["response_json"] = pack_against(
            values["response_json"], [by_name[name] for name in named]
        )
    return values


class Unread:
    """The item's text was not read by the caller: `store_parts` reads it."""


UNREAD = Unread()


_CALLS = ModelCall.__table__
# Every column but the id and the row's time (its begin's), from the parameters.
_COMPLETE = update(_CALLS).where(_CALLS.c.id == bindparam("row_id"))  # type: ignore[attr-defined]
_BEGUN = select(_CALLS.c.id).where(_CALLS.c.id.in_(bindparam("ids", expanding=True)))  # type: ignore[attr-defined]


def begin(
    session: Session | Connection,
    call: CallRecord,
    *,
    item_id: int | None,
    run_id: int | None,
    source: str | None | Unread = UNREAD,
    fence: dict[str, Any] | None = None,
) -> int | None:
    """The row of a call about to be sent, written (state "in_flight") before the
    request goes out, so a crash cannot hide a call that may be billed. Returns its
    id, which the completed record carries (`CallRecord._row_id`). A Core INSERT
    (issue 24: no ORM object for a row this session never reads). `source`: the
    item's text as stored, when the caller read it in this transaction. With `fence`
    (`store.claims.fence`), the row is written only while the worker's claim on the
    item holds, in the INSERT itself (`INSERT ... SELECT ... WHERE`: issue 24, session
    12), and None is returned when it does not: nothing written. On PostgreSQL the
    fenced row's new parts are written by the same statement (`_fenced_with_parts`)."""
    parts: dict[str, str] = {}
    connection = connection_of(session)
    made = split_named(call.request_json)
    values = _values(connection, call, item_id, run_id, parts, made)
    values |= {"state": IN_FLIGHT, "created_at": utcnow()}
    if fence is None:
        row_id = connection.execute(insert(_CALLS), values).inserted_primary_key[0]
    elif connection.dialect.name == "postgresql" and (
        rows := _part_rows(connection, parts, item_id, source)
    ):
        # The call's new parts go in the same statement, only while the claim holds
        # too: a round trip less a call (issue 24, session 16).
        statement = _fenced_with_parts(tuple(values), len(rows))
        row_id = connection.execute(statement, values | fence | _part_params(rows)).scalar()
        if row_id is None:
            return None
        _stored(connection, rows)
        parts = {}
    else:
        row_id = connection.execute(_fenced(tuple(values)), values | fence).scalar()
        if row_id is None:
            return None
    assert row_id is not None
    _keep_split(connection.engine, row_id, call.request_json, made)
    store_parts(session, parts, item_id, source)
    return row_id


# The splits of the calls this process began, by engine and row id, until the call's
# completion takes its own (`_began`): the completed record carries the same request,
# and splitting it again (its parts' canonical JSON and SHA-256) cost the run's writer
# about 0.2 ms of CPU a call (issue 24, session 13). Kept with the request they split,
# and used only for an equal one; at most BEGUN_KEPT (a call never completed is let
# go oldest first).
_SPLITS: WeakKeyDictionary[Any, dict[int, tuple[Any, Split]]] = WeakKeyDictionary()
_SPLITS_LOCK = threading.Lock()
BEGUN_KEPT = 512


def _keep_split(engine: Any, row_id: int, request: Any, made: Split) -> None:
    with _SPLITS_LOCK:
        kept = _SPLITS.setdefault(engine, {})
        kept[row_id] = (request, made)
        if len(kept) > BEGUN_KEPT:
            del kept[next(iter(kept))]


def _began(engine: Any, call: CallRecord) -> Split | None:
    """The split made when this process began `call`'s row, if its request is the same."""
    if call._row_id is None:
        return None
    with _SPLITS_LOCK:
        request, made = _SPLITS.get(engine, {}).pop(call._row_id, (None, None))
    return made if made is not None and request == call.request_json else None


@functools.cache
def _fenced(columns: tuple[str, ...]) -> Any:
    """INSERT of a call's row with `columns` only while the claim holds (built once)."""
    chosen = [bindparam(name, type_=_CALLS.c[name].type) for name in columns]  # type: ignore[attr-defined]
    held = select(*chosen).where(claims.HELD)
    return insert(_CALLS).from_select(list(columns), held).returning(_CALLS.c.id)  # type: ignore[attr-defined]


@functools.cache
def _fenced_with_parts(columns: tuple[str, ...], count: int) -> Any:
    """PostgreSQL: `_fenced`, with `count` new parts inserted by the same statement
    (`part_hash_N`, `part_content_N`: `_part_params`), also only while the claim holds:
    a data-modifying WITH, run with the INSERT of the call in one snapshot; neither
    reads the other's table
    (https://www.postgresql.org/docs/15/queries-with.html#QUERIES-WITH-MODIFYING).
    Built once a shape."""
    from sqlalchemy import union_all

    from store.upsert import dialect_insert

    rows = [
        select(
            bindparam(f"part_hash_{n}", type_=_PARTS.c.hash.type),  # type: ignore[attr-defined]
            bindparam(f"part_content_{n}", type_=_PARTS.c.content.type),  # type: ignore[attr-defined]
        ).where(claims.HELD)
        for n in range(count)
    ]
    chosen = rows[0] if count == 1 else union_all(*rows)
    new_parts = (
        dialect_insert("postgresql")(_PARTS)
        .from_select(["hash", "content"], chosen)
        .on_conflict_do_nothing(index_elements=["hash"])
        .cte("new_parts")
    )
    return _fenced(columns).add_cte(new_parts)


def _part_params(rows: list[dict[str, Any]]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for n, row in enumerate(rows):
        params[f"part_hash_{n}"], params[f"part_content_{n}"] = row["hash"], row["content"]
    return params


UNKNOWN_REASON = "outcome unknown: the run ended while this call was in flight"


def _gone(stale_after: timedelta) -> Any:
    """A row in flight whose run is gone: ended, or silent for longer than a lease
    (its heartbeat stopped: killed, machine lost)."""
    calls, runs = ModelCall.__table__, Run.__table__
    dead = select(runs.c.id).where(
        or_(
            runs.c.ended_at.is_not(None),
            func.coalesce(runs.c.heartbeat_at, runs.c.started_at) < utcnow() - stale_after,
        )
    )
    return and_(calls.c.state == IN_FLIGHT, or_(calls.c.run_id.is_(None), calls.c.run_id.in_(dead)))


def settle_unknown(session: Session, stale_after: timedelta) -> tuple[int, float | None]:
    """Rows still in flight whose run is gone become "unknown": the request may have
    been sent and billed, its reply is lost. Returns how many and their upper cost
    estimate (a run's start says so)."""
    calls = ModelCall.__table__
    connection = session.connection()
    ids, estimate = [], 0.0
    for row_id, cost in connection.execute(
        select(calls.c.id, calls.c.cost_estimate_usd).where(_gone(stale_after))
    ):
        ids.append(row_id)
        estimate += cost or 0.0
    if ids:
        connection.execute(
            update(calls)
            .where(calls.c.id.in_(ids), calls.c.state == IN_FLIGHT)
            .values(state=UNKNOWN, ok=False, error=UNKNOWN_REASON)
        )
    return len(ids), (estimate if ids else None)


def unknown_outcomes(session: Session, stale_after: timedelta) -> tuple[int, float | None]:
    """Calls whose outcome is unknown (or still in flight for a run that is gone):
    how many, and the sum of their upper cost estimates (None when none is known)."""
    calls = ModelCall.__table__
    count, estimate = (
        session.connection()
        .execute(
            select(func.count(calls.c.id), func.sum(calls.c.cost_estimate_usd)).where(
                or_(calls.c.state == UNKNOWN, _gone(stale_after))
            )
        )
        .one()
    )
    return int(count or 0), estimate


def describe_unknown(calls: int, estimate: float | None) -> str:
    """The calls whose outcome is unknown, in one line (`copydesk stats`, a run's start)."""
    cost = f"; up to ${estimate:.4f}" if estimate is not None else "; cost unknown"
    return (
        f"outcome unknown for {calls} model call(s): a run ended with them in flight, so "
        f"they may have been billed{cost}"
    )


def store_parts(
    session: Session | Connection,
    parts: dict[str, str],
    item_id: int | None = None,
    source: str | None | Unread = UNREAD,
) -> None:
    """The parts not stored yet, in hash order, in one statement (built once a
    dialect: issue 24); those that quote the item's text packed against it. `source`
    is that text as stored, when the caller has read it in this transaction (a
    model call's claim check does: `store.claims.check_hold`). A part the engine has
    seen committed is there for good (the runtime role only inserts parts): it is
    neither packed nor sent again (store/committed.py; issue 24, session 13: each
    call's tools and prompts were packed twice and sent, to be skipped)."""
    if not parts:
        return
    connection = connection_of(session)
    rows = _part_rows(connection, parts, item_id, source)
    if rows:
        connection.execute(insert_or_skip(connection.dialect.name, LedgerPart, "hash"), rows)
        _stored(connection, rows)


def _part_rows(
    connection: Connection, parts: dict[str, str], item_id: int | None, source: str | None | Unread
) -> list[dict[str, Any]]:
    """The rows of the parts not stored yet, in hash order (`store_parts`)."""
    stored = committed.known(connection.engine, PARTS) or {}
    fresh = {key: part for key, part in parts.items() if key not in stored}
    if not fresh:
        return []
    if isinstance(source, Unread):
        source = None if item_id is None else connection.execute(_SOURCE, {"id": item_id}).scalar()
    return [
        {"hash": key, "content": pack_part(fresh[key], item_id, source)} for key in sorted(fresh)
    ]


def _stored(connection: Connection, rows: list[dict[str, Any]]) -> None:
    # Inserted, or there already (ON CONFLICT DO NOTHING waits for a writer of the same
    # row still open): there once this transaction commits.
    committed.seen(connection, PARTS, dict.fromkeys((row["hash"] for row in rows), True))


PARTS = "ledger_parts"  # store/committed.py: {part hash: True}
_PARTS = LedgerPart.__table__


_ITEMS = Item.__table__
_SOURCE = select(_ITEMS.c.source_text).where(_ITEMS.c.id == bindparam("id"))  # type: ignore[attr-defined]


def pack_part(part: str, item_id: int | None, source: str | None) -> str | AgainstItem:
    """A part as stored: against its item's text when that saves MIN_ITEM_SAVING bytes."""
    if item_id is None or not source:
        return part
    against = AgainstItem.pack(part, item_id, source)
    if len(against.stored()) + MIN_ITEM_SAVING <= len(pack_text(part)):
        return against
    return part


def requests(session: Session, calls: Sequence[ModelCall]) -> list[Any]:
    """Each call's request exactly as it was sent: its parts put back in place."""
    texts = part_texts(session, calls)
    found = {key: json.loads(content) for key, content in texts.items()}
    return [_assemble(call.request_json, found) for call in calls]


def replies(session: Session, calls: Sequence[ModelCall]) -> list[Any]:
    """Each call's reply exactly as it was received: one packed against its request's
    parts (store/packing.py AGAINST_PARTS) unpacked with them; a part missing is
    named, never guessed."""
    texts = part_texts(session, calls)
    out = []
    for call in calls:
        reply = call.response_json
        if isinstance(reply, AgainstParts):
            named = part_keys(call.request_json)
            missing = [key for key in named if key not in texts]
            reply = (
                {PART_KEY: missing, "missing": True}
                if missing
                else reply.unpack([texts[key] for key in named])
            )
        out.append(reply)
    return out


def part_texts(session: Session, calls: Sequence[ModelCall]) -> dict[str, str]:
    """{name: the part's JSON text} of every part the calls' requests name (a full
    key, written before 0034, or its SHORT_HEX prefix); one whose name two stored
    parts share is left out (named missing)."""
    wanted = sorted({key for call in calls for key in part_keys(call.request_json)})
    if not wanted:
        return {}
    column = LedgerPart.hash
    ranges = [column.between(name.ljust(_FULL, "0"), name.ljust(_FULL, "f")) for name in wanted]  # type: ignore[attr-defined]
    rows = session.execute(select(LedgerPart.hash, LedgerPart.content).where(or_(*ranges))).all()
    texts = _against_items(session, dict(rows))
    out = {}
    for name in wanted:
        found = [text for key, text in texts.items() if key.startswith(name)]
        if len(found) == 1:
            out[name] = found[0]
    return out


_FULL = len(DIGEST_PREFIX) + 64  # a full key's length


def _against_items(session: Session, stored: dict[str, Any]) -> dict[str, str]:
    """`stored` with each part packed against its item's text unpacked with it. One
    that cannot be (its item's text is not the one it was packed against) is left
    out, so the audit names it missing; never a guessed text."""
    against = {key: part for key, part in stored.items() if isinstance(part, AgainstItem)}
    if not against:
        return stored
    ids = sorted({part.item_id for part in against.values()})
    sources = dict(session.execute(select(Item.id, Item.source_text).where(Item.id.in_(ids))).all())  # type: ignore[union-attr]
    out = {key: part for key, part in stored.items() if key not in against}
    for key, part in against.items():
        source = sources.get(part.item_id)
        try:
            content = None if source is None else part.unpack(source)
        except (zlib.error, UnicodeDecodeError):
            content = None
        if content is not None and digest(content) == key:
            out[key] = content
    return out


def _is_reference(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get(PART_KEY), str)


def part_keys(value: Any) -> list[str]:
    """The parts a stored (split) request names, each once, in the order it names
    them (a reply packed against them uses this order)."""
    into: dict[str, None] = {}
    _references(value, into)
    return list(into)


def _references(value: Any, into: dict[str, None]) -> None:
    if _is_reference(value):
        into.setdefault(value[PART_KEY])
    elif isinstance(value, dict):
        for inner in value.values():
            _references(inner, into)
    elif isinstance(value, list):
        for inner in value:
            _references(inner, into)


def _assemble(value: Any, found: dict[str, Any]) -> Any:
    if _is_reference(value):
        key = value[PART_KEY]
        return found[key] if key in found else {PART_KEY: key, "missing": True}
    if isinstance(value, dict):
        return {k: _assemble(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [_assemble(v, found) for v in value]
    return value
