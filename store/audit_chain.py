"""The audit log as a hash chain: rewriting history shows.

Each audit event carries `prev_hash` (the hash of the event before it, in id
order) and `hash`, the SHA-256 of its own content together with `prev_hash`.
Changing, removing or reordering any event breaks the link at that event and at
every one after it, so `verify()` (and `copydesk audit --verify`) names the first
event that does not match. The triggers of the migrations stop the application
from rewriting events at all; the chain is what shows when someone with more
rights than the application (the table's owner, a restored backup, a hand-edited
SQLite file) did it anyway.

Appending is serialised, so two transactions cannot both link to the same
previous event (fork the chain): on PostgreSQL with a transaction-scoped
advisory lock taken before the chain head is read, held until commit; on SQLite
the writer already holds the database's write lock (every status move writes
its item row before its event). A unique index on `prev_hash` makes a fork
impossible even if that rule were broken: the second insert would fail.
On SQLite both hashes are stored as their 32 bytes (store/packing.py `Digest`,
migration 0031) and read back as the hex this module computes and compares.

What the chain alone cannot show: events cut from its end (the shorter chain
still holds). An anchor kept outside the database closes that: `head()` gives the
last event's id and hash (`copydesk audit --head`, or the file each run writes
to `[runs] audit_anchor`), and `verify(expect=anchor)` fails when the log no
longer holds that event with that hash. The chain only grows, so any anchor taken
earlier stays valid: a log cut back before it, or rewritten from it onwards, fails.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, insert, orm, select, text
from sqlalchemy import event as sa_event
from sqlalchemy.engine import URL, Engine
from sqlmodel import Session

from store import files
from store.models import AuditEvent, utcnow

GENESIS = "0" * 64  # the "previous hash" of the first event
# Any fixed 64-bit number, distinct from the migration lock in migrations/env.py.
PG_CHAIN_LOCK = 0x636470792D617564  # "cdpy-aud"


@dataclass(slots=True)
class PlainEvent:
    """An audit event as the batch writers make it (the run's births and moves,
    `store/status.py` `create_many` and `move_many`): `AuditEvent`'s columns, no ORM
    object, for `append_many`'s Core INSERT (issue 24, session 14: SQLModel's
    constructor and attribute sets cost about 41 µs of CPU an event, this about 1,
    and a run makes two an article). Chained and stored exactly as an `AuditEvent`
    is; read back from the database, it is one."""

    item_id: int | None
    actor: str
    to_status: str
    from_status: str | None = None
    reason: str | None = None
    details: Any = None
    at: datetime = field(default_factory=utcnow)
    id: int | None = None
    prev_hash: str | None = None  # set by `append_many`, never by hand
    hash: str | None = None


Event = AuditEvent | PlainEvent


def _timestamp(value: datetime) -> str:
    """One spelling for one instant, whichever database handed the value back."""
    aware = value if value.tzinfo else value.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def event_hash(
    *,
    prev_hash: str,
    item_id: int | None,
    at: datetime,
    actor: str,
    from_status: str | None,
    to_status: str,
    reason: str | None,
    details: Any,
) -> str:
    """SHA-256 over the event's content and the previous hash, as canonical JSON.

    `details` goes through a JSON round trip first: the JSON column stores it that
    way (tuples become lists, integer keys become strings), so the hash must be
    over what a later reader will see. Migration 0003 holds a frozen copy of this
    function for the events it chains: change neither.
    """
    content = {
        "prev_hash": prev_hash,
        "item_id": item_id,
        "at": _timestamp(at),
        "actor": actor,
        "from_status": from_status,
        "to_status": to_status,
        "reason": reason,
        "details": json.loads(json.dumps(details)),
    }
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def hash_of(event: Event, prev_hash: str) -> str:
    return event_hash(
        prev_hash=prev_hash,
        item_id=event.item_id,
        at=event.at,
        actor=event.actor,
        from_status=event.from_status,
        to_status=event.to_status,
        reason=event.reason,
        details=event.details,
    )


def append(session: Session, event: AuditEvent) -> AuditEvent:
    """Link `event` to the chain's head and insert it. The caller commits.

    The lock (PostgreSQL) is held until the transaction ends, so the next writer
    reads this event as the head only once it is committed."""
    append_many(session, [event])
    return event


def append_many(session: Session, events: Sequence[Event]) -> Sequence[Event]:
    """`append` for several events (`AuditEvent` or `PlainEvent`), in their order:
    each linked to the one before, all inserted by one statement (issue 24: a feed's
    new items, an event each). The caller commits."""
    if not events:
        return events
    session.flush()  # our earlier writes first: on SQLite they hold the write lock
    connection = session.connection()
    transaction = session.get_transaction()
    known = session.info.get(_HEAD)
    if known is not None and known[0] is transaction:
        # This transaction appended last and still holds the chain (the lock, or
        # SQLite's write lock): the head is the event it wrote (issue 24: one lock
        # and one query per transaction, not per event). Any rollback forgets it.
        head: str | None = known[1]
    else:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PG_CHAIN_LOCK})
        head = session.scalars(
            select(AuditEvent.hash).order_by(AuditEvent.id.desc()).limit(1)  # type: ignore[arg-type]
        ).first()
    rows = []
    for event in events:
        event.prev_hash = head or GENESIS
        event.hash = head = hash_of(event, event.prev_hash)
        rows.append({c.name: getattr(event, c.name) for c in _COLUMNS})
    # A Core INSERT on the session's connection, not the ORM's flush of new objects
    # (issue 24: half the append's CPU); each event gets its id all the same.
    if len(rows) == 1:
        events[0].id = connection.execute(_INSERT, rows[0]).inserted_primary_key[0]
    else:
        _insert_in_order(connection, events, rows)
    last = events[-1]
    session.info[_HEAD] = (transaction, last.hash)
    # The anchor advances to this event once the transaction commits (below).
    session.info[_APPENDED] = (connection.engine.url, Anchor(last.id or 0, last.hash))
    return events


def _insert_in_order(connection: Any, events: Sequence[Event], rows: list[dict]) -> None:
    """Several events in one statement, their ids ascending in chain order (the order
    `verify` walks). PostgreSQL: one INSERT ... RETURNING whose ids SQLAlchemy makes
    in the rows' order and hands back in it (`sort_by_parameter_order`,
    https://docs.sqlalchemy.org/en/20/core/connections.html#correlating-returning-rows-to-parameter-sets).
    SQLite, where that form falls back to one INSERT a row: the driver's
    `executemany`, which runs the INSERT once for each row, in order
    (https://docs.python.org/3/library/sqlite3.html#sqlite3.Cursor.executemany),
    under the write lock; then the ids, read back by the events' hashes."""
    if connection.dialect.name == "postgresql":
        ids = connection.execute(_INSERT_RETURNING, rows).scalars().all()
    else:
        connection.execute(_INSERT, rows)
        found: dict[str, int] = {}
        hashes = [e.hash for e in events]
        for start in range(0, len(hashes), _IN_CHUNK):
            chunk = hashes[start : start + _IN_CHUNK]
            found.update((h, i) for h, i in connection.execute(_IDS_BY_HASH, {"hashes": chunk}))
        ids = [found[h] for h in hashes]
    if ids != sorted(ids):  # never: then `verify` would read the chain out of order
        raise RuntimeError("audit events were given ids out of their chain order")
    for event, event_id in zip(events, ids, strict=True):
        event.id = event_id


_EVENTS = AuditEvent.__table__
_COLUMNS = [c for c in _EVENTS.columns if c.name != "id"]
_INSERT = insert(_EVENTS)
_INSERT_RETURNING = insert(_EVENTS).returning(_EVENTS.c.id, sort_by_parameter_order=True)
_IDS_BY_HASH = select(_EVENTS.c.hash, _EVENTS.c.id).where(
    _EVENTS.c.hash.in_(bindparam("hashes", expanding=True))
)
_IN_CHUNK = 500

# Anchor files kept up to date, by database URL (`keep_anchor`): the file, and the
# database it belongs to.
_ANCHORS: dict[str, tuple[Path, str]] = {}
_APPENDED = "copydesk.audit_appended"
_SAVED = "copydesk.audit_appended_before_savepoint"
_HEAD = "copydesk.audit_head"  # (transaction, hash of the event it appended last)
log = logging.getLogger("copydesk.audit")


def keep_anchor(engine: Engine, path: Path | None) -> None:
    """From now on, every transaction of this process that appends to the log of
    `engine`'s database advances the anchor file at `path` when it commits
    (decisions, publications and runs alike); None stops it."""
    key = str(engine.url)
    if path is None:
        _ANCHORS.pop(key, None)
    else:
        _ANCHORS[key] = (path, database_of(engine.url))


def database_of(url: URL) -> str:
    """Which database a URL names, as an anchor file records its owner: the SQLite
    file's absolute path, or the server, port and database name. Never the user:
    the owner's, the workers' and the review role's URLs name one database, with
    one anchor (docs/deploy.md)."""
    if url.get_backend_name() == "sqlite":
        database = (url.database or "").removeprefix("file:")
        return f"sqlite:{Path(database).expanduser().resolve()}"
    server = f"{url.host or 'local'}:{url.port or 'default'}"
    return f"{url.get_backend_name()}://{server}/{url.database}"


@sa_event.listens_for(orm.Session, "after_commit")
def _advance_after_commit(session: orm.Session) -> None:
    """After the commit (no SQL may run here): the event the transaction appended
    last is the chain's head at that moment (appends are serialised until commit).
    A savepoint's release fires this event too, inside the transaction: the anchor
    waits for the real commit (issue 24: a feed's items, one savepoint each, moved
    it once per item, and to events a rollback could still take back)."""
    if session.in_nested_transaction():
        return
    session.info.pop(_HEAD, None)
    appended = session.info.pop(_APPENDED, None)
    if appended is None:
        return
    url, anchor = appended
    kept = _ANCHORS.get(str(url))
    if kept is None:
        return
    path, database = kept
    try:
        advance_anchor(path, anchor, database)
    except (OSError, ValueError) as exc:
        # The commit stands; the anchor left behind makes `audit --verify` fail.
        log.error("audit anchor %s not advanced to %s: %s", path, anchor, exc)


@sa_event.listens_for(orm.Session, "after_transaction_create")
def _remember_before_savepoint(session: orm.Session, transaction: orm.SessionTransaction) -> None:
    """What was appended before a savepoint, for its rollback to go back to."""
    if transaction.nested:
        session.info.setdefault(_SAVED, {})[transaction] = session.info.get(_APPENDED)


@sa_event.listens_for(orm.Session, "after_transaction_end")
def _forget_savepoint(session: orm.Session, transaction: orm.SessionTransaction) -> None:
    if transaction.nested:
        session.info.get(_SAVED, {}).pop(transaction, None)


@sa_event.listens_for(orm.Session, "after_rollback")
def _forget_after_rollback(session: orm.Session) -> None:
    session.info.pop(_HEAD, None)  # a savepoint's rollback may have taken the head back
    nested = session.get_nested_transaction() if session.in_nested_transaction() else None
    if nested is None:
        session.info.pop(_APPENDED, None)
        return
    before = session.info.get(_SAVED, {}).get(nested)  # the savepoint's appends are undone
    if before is None:
        session.info.pop(_APPENDED, None)
    else:
        session.info[_APPENDED] = before


def advance_anchor(path: Path, anchor: Anchor, database: str | None = None) -> None:
    """Move the anchor file forward to `anchor`, never back: two processes
    committing one after the other may finish in the other order. A lock file
    beside it serialises the read and the write on this host. A file that holds
    something else than an anchor, or the anchor of another database than
    `database` (`database_of`), is left as it is (ValueError): the anchor belongs
    to its database (issue 22), and `audit --verify` reports a file left behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        current = read_anchor(path)
        owner = anchor_owner(path)
        if database and owner and owner != database:
            raise ValueError(f"it is the anchor of another database ({owner})")
        if current is None or current.event_id < anchor.event_id:
            write_anchor(path, anchor, database or owner)


@dataclass(frozen=True)
class Anchor:
    """A point of the chain, kept outside the database: event id and its hash."""

    event_id: int
    hash: str

    def __str__(self) -> str:
        return f"{self.event_id}:{self.hash}"

    @classmethod
    def parse(cls, text: str) -> Anchor:
        """`ID:HASH` as `copydesk audit --head` prints it; ValueError otherwise."""
        match = re.fullmatch(r"\s*(\d+):([0-9a-f]{64})\s*", text)
        if match is None:
            raise ValueError(f"{text.strip()[:80]!r} is not an anchor: expected ID:HASH (64 hex)")
        return cls(int(match[1]), match[2])


def head(engine: Engine) -> Anchor:
    """The chain's last event as an anchor (0 and GENESIS when the log is empty)."""
    with Session(engine) as session:
        return head_in(session)


def head_in(session: Session) -> Anchor:
    """`head` as this session's transaction sees it (a publication carries it)."""
    row = session.execute(
        select(AuditEvent.id, AuditEvent.hash)
        .order_by(AuditEvent.id.desc())  # type: ignore[union-attr]
        .limit(1)
    ).first()
    return Anchor(row[0], row[1]) if row else Anchor(0, GENESIS)


def verify_heads(engine: Engine, heads: list[Anchor]) -> list[str]:
    """Heads published earlier (each publication carries one): the log must still
    hold each one's event with its hash. One line per head that it does not."""
    wanted = {h.event_id for h in heads if h.event_id}
    found: dict[int, str] = {}
    ids = sorted(wanted)
    with Session(engine) as session:
        for start in range(0, len(ids), 1000):
            found.update(
                session.execute(
                    select(AuditEvent.id, AuditEvent.hash).where(
                        AuditEvent.id.in_(ids[start : start + 1000])  # type: ignore[union-attr]
                    )
                ).all()
            )
    problems = []
    for anchor in sorted(set(heads), key=lambda a: a.event_id):
        if not anchor.event_id:
            continue
        if anchor.event_id not in found:
            problems.append(f"published head {anchor}: event {anchor.event_id} is not in the log")
        elif found[anchor.event_id] != anchor.hash:
            problems.append(
                f"published head {anchor}: event {anchor.event_id} has another hash in the log "
                "(rewritten after it was published)"
            )
    return problems


_OWNER = "database "  # the anchor file's second line: whose anchor it is


def write_anchor(path: Path, anchor: Anchor, database: str | None = None) -> None:
    """Replace the anchor file in one step, durably: written to a temporary file,
    fsynced, renamed over the old one, and the folder fsynced (a reader never sees
    half of it; a power cut leaves the old anchor or the new one). Its first line
    is `ID:HASH`; the second, when known, names the database it belongs to."""
    owner = f"{_OWNER}{database}\n" if database else ""
    files.write_atomically(path, f"{anchor}\n{owner}".encode())


def read_anchor(path: Path) -> Anchor | None:
    """The anchor in the file (its first line), None when there is no file yet;
    ValueError when it holds something else."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    lines = text.strip().splitlines()
    return Anchor.parse(lines[0] if lines else text)


def anchor_owner(path: Path) -> str | None:
    """The database the anchor file belongs to (`database_of`); None when there is
    no file, or it does not say (written by hand, `audit --head > FILE`, or before
    anchors named their database): the first database to advance it owns it."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return None
    owned = [line.removeprefix(_OWNER).strip() for line in lines[1:] if line.startswith(_OWNER)]
    return owned[0] if owned else None


@dataclass(frozen=True)
class ChainReport:
    """The outcome of `verify`. `bad_event` is the id of the first event that does
    not match, with `problem` saying how; None when the whole chain holds."""

    events: int
    head: str
    bad_event: int | None = None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.bad_event is None


def _events(engine: Engine, batch: int = 2000) -> Iterator[AuditEvent]:
    """Every event in id order, a batch at a time (memory stays flat on a long log)."""
    last = 0
    with Session(engine) as session:
        while True:
            rows = list(
                session.scalars(
                    select(AuditEvent)
                    .where(AuditEvent.id > last)  # type: ignore[operator]
                    .order_by(AuditEvent.id)  # type: ignore[arg-type]
                    .limit(batch)
                )
            )
            if not rows:
                return
            yield from rows
            last = rows[-1].id or last
            session.expunge_all()


def verify(engine: Engine, expect: Anchor | None = None, *, current: bool = False) -> ChainReport:
    """Recompute the chain from the first event; stop at the first that does not
    match. With `expect`, the log must also hold that event with that hash; with
    `current` too, it must be the log's last event (the anchor file that every
    committed append advances: an older one was replaced by an older copy, or
    events were written by something else than copydesk)."""
    expected_prev = GENESIS
    count = 0
    last_id = 0
    for event in _events(engine):
        count += 1
        if expect is not None and last_id < expect.event_id < (event.id or 0):
            problem = f"the anchor's event {expect.event_id} is missing (it was removed)"
            return ChainReport(count, expected_prev, expect.event_id, problem)
        last_id = event.id or last_id
        if event.prev_hash != expected_prev:
            problem = (
                "its previous-event hash does not match the event before it "
                "(an event before it was removed, inserted or changed)"
            )
            return ChainReport(count, expected_prev, event.id, problem)
        if event.hash != hash_of(event, expected_prev):
            problem = "its content does not match its hash (the event was changed)"
            return ChainReport(count, expected_prev, event.id, problem)
        if expect is not None and event.id == expect.event_id and event.hash != expect.hash:
            problem = "its hash differs from the anchor's (the log was rewritten from here on)"
            return ChainReport(count, expected_prev, event.id, problem)
        expected_prev = event.hash
    if expect is not None and last_id < expect.event_id:
        problem = (
            f"the log ends at event {last_id}, before the anchor's event "
            f"{expect.event_id} (events were cut from its end)"
        )
        return ChainReport(count, expected_prev, expect.event_id, problem)
    if expect is not None and current and last_id > expect.event_id:
        problem = (
            f"the anchor names event {expect.event_id} but the log goes on to event {last_id}: "
            "the anchor is older than the log (replaced by an older copy, or events were "
            "written without copydesk advancing it)"
        )
        return ChainReport(count, expected_prev, expect.event_id, problem)
    return ChainReport(count, expected_prev)
