"""The status machine: the only code that changes an item's status.

Every move is a compare-and-set on the item's (status, version) and writes its
audit event in the same transaction, so a move either happens with its record or
not at all, and two deciders racing on one item cannot both win.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby
from typing import Any

from sqlalchemy import bindparam, update
from sqlalchemy import insert as sa_insert
from sqlalchemy import select as sa_select
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session

from store import approvals, audit_chain, deliveries, duplicates, locks
from store.changes import ItemChanges
from store.discard_kinds import OTHER, check_kind
from store.models import AuditEvent, Item, utcnow

NEW = "new"
DRAFT = "draft"
DISCARDED = "discarded"
ERROR = "error"
APPROVED = "approved"
REJECTED = "rejected"
PUBLISHED = "published"
RETRACTED = "retracted"

STATUSES = (NEW, DRAFT, DISCARDED, ERROR, APPROVED, REJECTED, PUBLISHED, RETRACTED)
# No move leaves these (`published` only moves on to `retracted`).
FINAL = frozenset({DISCARDED, RETRACTED})

# ARCHITECTURE.md: the only moves there are.
MOVES: dict[str, frozenset[str]] = {
    NEW: frozenset({DISCARDED, DRAFT, ERROR}),
    ERROR: frozenset({NEW, DISCARDED}),
    DRAFT: frozenset({APPROVED, REJECTED, DISCARDED}),
    # published by the publish step; taken back; retracted when live on some targets
    # while another refused it (publish.service.retract)
    APPROVED: frozenset({PUBLISHED, DRAFT, RETRACTED}),
    REJECTED: frozenset({DRAFT}),  # reopened (or undone) by an editor
    # retracted, or reopened as a correction (republished under the same id)
    PUBLISHED: frozenset({RETRACTED, DRAFT}),
    DISCARDED: frozenset(),
    RETRACTED: frozenset(),
}

# An editor's decision on a draft: the item records who decided and when.
DECISIONS = frozenset({(DRAFT, APPROVED), (DRAFT, REJECTED)})
# An editor takes a decision back (take back, reopen, undo): the item is undecided again.
REOPENS = frozenset({(APPROVED, DRAFT), (REJECTED, DRAFT), (PUBLISHED, DRAFT)})
# A published item reopened as a correction draft: the reason is the correction note
# the republished item carries (store/deliveries.py `correction`).
CORRECTION = (PUBLISHED, DRAFT)
# Moves that only a signed-in editor may make, and the ones that need a reason.
EDITOR_MOVES = DECISIONS | REOPENS | frozenset({(PUBLISHED, RETRACTED), (APPROVED, RETRACTED)})
REASON_REQUIRED = frozenset({DISCARDED, REJECTED, ERROR, RETRACTED})
REASON_REQUIRED_MOVES = frozenset({(APPROVED, DRAFT), CORRECTION})
# The two events that keep a draft a draft (their reasons tell them apart): an
# editor's edit, and a later run's re-check of the model checks.
# An edit that puts the pipeline's own draft back is "reverted".
EDITED = "edited"
REVERTED = "reverted"
EDIT_REASONS = (EDITED, REVERTED)
RECHECKED = "rechecked"


class IllegalMove(ValueError):
    """The move is not in ARCHITECTURE.md's status machine, or lacks what it needs."""


class Conflict(Exception):
    """Someone else moved the item first: the caller's view was stale.

    A plain exception class rather than a frozen dataclass: `contextlib` sets
    `__traceback__` on exceptions leaving a `with session_scope(...)` block, which
    a frozen dataclass refuses (the caller would see FrozenInstanceError).
    """

    def __init__(self, item_id: int, status: str, actor: str | None, at: datetime | None):
        super().__init__(item_id, status, actor, at)
        self.item_id = item_id
        self.status = status
        self.actor = actor
        self.at = at

    def __str__(self) -> str:
        who = self.actor or "someone"
        when = self.at.isoformat(timespec="seconds") if self.at else "earlier"
        return f"item {self.item_id} was already {self.status} by {who} at {when}"


def can_move(from_status: str, to_status: str) -> bool:
    return to_status in MOVES.get(from_status, frozenset())


def is_editor(actor: str) -> bool:
    """`editor:<name>` with a name: an empty `editor:` would record a decision by nobody."""
    return actor.startswith("editor:") and bool(actor.removeprefix("editor:").strip())


def check_move(from_status: str, to_status: str, actor: str, reason: str | None) -> None:
    """Raise IllegalMove unless the move is allowed for this actor with this reason."""
    if not can_move(from_status, to_status):
        raise IllegalMove(f"illegal move {from_status} -> {to_status}")
    if (from_status, to_status) in EDITOR_MOVES and not is_editor(actor):
        raise IllegalMove(f"{from_status} -> {to_status} needs a signed-in editor, not {actor}")
    needs_reason = to_status in REASON_REQUIRED or (from_status, to_status) in REASON_REQUIRED_MOVES
    if needs_reason and not (reason and reason.strip()):
        raise IllegalMove(f"{from_status} -> {to_status} needs a reason")


def create(
    session: Session,
    item: Item,
    *,
    actor: str,
    reason: str,
    details: dict[str, Any] | None = None,
) -> audit_chain.PlainEvent:
    """Insert a new item (status `new`) with the audit event that says where it came from."""
    if item.status != NEW:
        raise IllegalMove(f"an item is born new, not {item.status}")
    session.add(item)
    session.flush()
    return audit_chain.append(session, _birth(item.id, actor, reason, details))


def _birth(
    item_id: int | None, actor: str, reason: str, details: dict[str, Any] | None
) -> audit_chain.PlainEvent:
    """The audit event of an item's birth (status `new`), for `append_many`."""
    return audit_chain.PlainEvent(item_id, actor, NEW, reason=reason, details=details)


def create_many(
    session: Session,
    born: list[tuple[Item | Mapping[str, Any], str, dict[str, Any] | None]],
    *,
    actor: str,
) -> Sequence[audit_chain.Event]:
    """`create` for several items at once: (item, reason, details) each, every item
    `new` with its own audit event, in the order given. An item is an `Item` or its
    column values (`item_row`: what the run's intake gives, no ORM object an entry).
    The items' rows in one statement and their events in one more (issue 24: a
    feed's entries cost a savepoint, a flush and an append each), with their ids
    read back by their unique `dedup_key` (set on an `Item`, not added to the
    session). An IntegrityError (an item another worker created meanwhile) leaves
    the caller's transaction to roll back: nothing of the batch is kept."""
    if not born:
        return []
    rows = []
    for item, _, _ in born:
        row = item_row(item)
        if row["status"] != NEW:
            raise IllegalMove(f"an item is born new, not {row['status']}")
        rows.append(row)
    session.flush()
    connection = session.connection()
    connection.execute(_INSERT_ITEMS, rows)
    keys = [row["dedup_key"] for row in rows]
    ids: dict[str, int] = {}
    for start in range(0, len(keys), _IN_CHUNK):
        chunk = keys[start : start + _IN_CHUNK]
        ids.update((key, i) for key, i in connection.execute(_ITEM_IDS, {"keys": chunk}))
    events = []
    for (item, reason, details), key in zip(born, keys, strict=True):
        if isinstance(item, Item):
            set_committed_value(item, "id", ids[key])
        events.append(_birth(ids[key], actor, reason, details))
    return audit_chain.append_many(session, events)


_ITEMS = Item.__table__
_ITEM_COLUMNS = [c for c in _ITEMS.columns if c.name != "id"]  # type: ignore[attr-defined]


def _item_defaults() -> tuple[dict[str, Any], dict[str, Any]]:
    """What an `Item` holds in each column when not given it: the constant defaults
    (read from one Item, once), and the columns made per item (their factories:
    the times)."""
    made = {
        name: field.default_factory
        for name, field in Item.model_fields.items()
        if field.default_factory is not None
    }
    blank = Item(dedup_key="")
    constant = {c.name: getattr(blank, c.name) for c in _ITEM_COLUMNS if c.name not in made}
    return constant, made


_ITEM_CONSTANT, _ITEM_MADE = _item_defaults()


def item_row(item: Item | Mapping[str, Any]) -> dict[str, Any]:
    """An item's row for the INSERT, every column but the id: an `Item`'s values, or
    the values given with the model's defaults for the rest, as `Item(**values)`
    would hold them (issue 24, session 13: SQLModel's constructor cost about 0.1 ms
    of CPU an entry, for an object only read back column by column)."""
    if isinstance(item, Item):
        return {c.name: getattr(item, c.name) for c in _ITEM_COLUMNS}
    row = _ITEM_CONSTANT | {name: factory() for name, factory in _ITEM_MADE.items()}
    unknown = set(item) - row.keys()
    if unknown:
        raise TypeError(f"not a column of items: {', '.join(sorted(unknown))}")
    row.update(item)
    return row


_INSERT_ITEMS = sa_insert(_ITEMS)
_ITEM_IDS = sa_select(_ITEMS.c.dedup_key, _ITEMS.c.id).where(  # type: ignore[attr-defined]
    _ITEMS.c.dedup_key.in_(bindparam("keys", expanding=True))  # type: ignore[attr-defined]
)
_IN_CHUNK = 500


def move(
    session: Session,
    item: Item,
    to_status: str,
    *,
    actor: str,
    reason: str | None = None,
    details: dict[str, Any] | None = None,
    expected_version: int | None = None,
    changes: ItemChanges | Mapping[str, Any] | None = None,
    discard_kind: str | None = None,
) -> audit_chain.PlainEvent:
    """Move `item` to `to_status`, applying `changes` to its columns, and record it.

    A move to `discarded` stores `discard_kind` (store/discard_kinds.py; "other"
    when not given); an unknown kind, or a kind on another move, is refused.

    `changes` is an `ItemChanges` (a mapping is checked against it first: an
    unknown column is a ValueError before anything is written).
    `expected_version` is the version the caller saw (an editor's screen); it
    defaults to the item's loaded version. Raises IllegalMove or Conflict and
    changes nothing in either case. The caller commits.
    """
    columns = ItemChanges.of(changes).values()
    check_version(session, item, expected_version)
    from_status = item.status
    check_move(from_status, to_status, actor, reason)
    if to_status == DISCARDED:
        columns["discard_kind"] = check_kind(discard_kind or OTHER)
    elif discard_kind is not None:
        raise IllegalMove(f"a discard kind belongs to a move to discarded, not to {to_status}")
    version = item.version if expected_version is None else expected_version
    now = utcnow()
    values: dict[str, Any] = dict(columns)
    values.update(status=to_status, version=version + 1, updated_at=now)
    if (from_status, to_status) in DECISIONS:
        values.update(decided_by=actor.removeprefix("editor:"), decided_at=now)
    if (from_status, to_status) == (DRAFT, APPROVED):
        # The exact text approved, and its version (store/approvals.py): the
        # compare-and-set below proves the row still holds this version's text.
        text = {"headline": item.headline, "summary": item.summary} | columns
        details = (details or {}) | approvals.approval_details(
            text["headline"], text["summary"], version + 1
        )
    elif (from_status, to_status) in REOPENS:
        values.update(decided_by=None, decided_at=None)
    if (from_status, to_status) == (APPROVED, DRAFT):
        _take_back_before_publication(session, item)
    if (from_status, to_status) == CORRECTION:
        revision = deliveries.archive_publication(session, item.id)  # type: ignore[arg-type]
        details = (details or {}) | {deliveries.CORRECTION_KEY: revision}
    signed = (from_status, to_status) == (NEW, DRAFT)
    if signed:  # its near-duplicate signature, once, written by the same UPDATE
        text = {"title": item.title, "source_text": item.source_text} | columns
        values["dup_signature"] = duplicates.signed(text["title"], text["source_text"])
    deferred = session.info.get(_DEFERRED)
    if deferred is not None:  # inside `move_many`: set with the others
        deferred.sets.append((item, from_status, version, values))
    else:
        _compare_and_set(session, item, from_status, version, values)
    if signed:  # a draft is made once, from new: there are no bands to replace
        signature = (item.id, values["dup_signature"])
        if deferred is not None:  # inside `move_many`: written with the others
            deferred.bands.append(signature)
        else:
            duplicates.write_new_bands(session.connection(), [signature])  # type: ignore[list-item]
    event = audit_chain.PlainEvent(
        item.id, actor, to_status, from_status=from_status, reason=reason, details=details, at=now
    )
    if deferred is not None:  # inside `move_many`: appended with the others
        deferred.events.append(event)
        return event
    return audit_chain.append(session, event)


_DEFERRED = "copydesk.status.deferred"  # `move_many`'s writes not made yet (`_Deferred`)


@dataclass
class _Deferred:
    """What `move_many`'s moves leave for it to write together: their
    compare-and-sets, (item, status, version, values) each; the new drafts'
    signatures, (item id, signature), for their band rows; their audit events."""

    sets: list[tuple[Item, str, int, dict[str, Any]]] = field(default_factory=list)
    bands: list[tuple[int, bytes | None]] = field(default_factory=list)
    events: list[audit_chain.PlainEvent] = field(default_factory=list)


def move_many(
    session: Session, moves: list[tuple[Item, str, dict[str, Any]]]
) -> Sequence[audit_chain.Event]:
    """`move` for several items in one transaction, (item, to_status, `move`'s keyword
    arguments) each: every move checked (with a new draft's signature), then their
    compare-and-sets (one executemany for moves that set the same columns:
    `_compare_and_set_many`), then the new drafts' band rows in one statement, then
    their audit events, appended together in the order given (issue
    24: the chain's lock, which serialises writers across workers until the commit, is
    taken once and last, not at the first item, and held while every later item was
    signed and written). A Conflict or IllegalMove on any item leaves the caller's
    transaction to roll back, with no event appended. The caller commits."""
    if len({id(item) for item, _, _ in moves}) < len(moves):  # an item moved twice:
        return [move(session, item, to, **arguments) for item, to, arguments in moves]
    deferred = _Deferred()
    session.info[_DEFERRED] = deferred
    try:
        for item, to_status, arguments in moves:
            move(session, item, to_status, **arguments)
    finally:
        session.info.pop(_DEFERRED, None)
    _compare_and_set_many(session, deferred.sets)
    duplicates.write_new_bands(session.connection(), deferred.bands)  # one statement
    return audit_chain.append_many(session, deferred.events)


def record_edit(
    session: Session,
    item: Item,
    *,
    actor: str,
    headline: str | None,
    summary: str,
    expected_version: int,
    details: dict[str, Any] | None = None,
    reverted: bool = False,
) -> AuditEvent:
    """An editor's edit keeps a draft a draft; the audit keeps both texts. An edit
    that puts the pipeline's own draft back is logged as "reverted", not "edited"."""
    check_version(session, item, expected_version)
    if item.status != DRAFT:
        raise IllegalMove(f"only a draft can be edited, not a {item.status} item")
    if not is_editor(actor):
        raise IllegalMove("only a signed-in editor can edit a draft")
    before = {"headline": item.headline, "summary": item.summary}
    after = {"headline": headline, "summary": summary}
    now = utcnow()
    values = {**after, "version": expected_version + 1, "updated_at": now}
    _compare_and_set(session, item, DRAFT, expected_version, values)
    event = AuditEvent(
        item_id=item.id,
        at=now,
        actor=actor,
        from_status=DRAFT,
        to_status=DRAFT,
        reason=REVERTED if reverted else EDITED,
        # The texts go last: caller details cannot overwrite what the audit must keep.
        details=(details or {}) | {"before": before, "after": after},
    )
    return audit_chain.append(session, event)


def record_recheck(
    session: Session,
    item: Item,
    *,
    actor: str,
    expected_version: int,
    details: dict[str, Any] | None = None,
) -> AuditEvent:
    """A later run re-ran the model checks of a draft (their new verdicts are
    stored beside this event). The draft stays a draft, but its version is bumped:
    an editor who opened it before the re-check decided on verdicts that no longer
    stand, and is refused (`Conflict`) until they look again."""
    check_version(session, item, expected_version)
    if item.status != DRAFT:
        raise IllegalMove(f"only a draft is re-checked, not a {item.status} item")
    if is_editor(actor):
        raise IllegalMove("a re-check is the pipeline's, not an editor's")
    now = utcnow()
    values = {"version": expected_version + 1, "updated_at": now}
    _compare_and_set(session, item, DRAFT, expected_version, values)
    event = AuditEvent(
        item_id=item.id,
        at=now,
        actor=actor,
        from_status=DRAFT,
        to_status=DRAFT,
        reason=RECHECKED,
        details=details,
    )
    return audit_chain.append(session, event)


def _take_back_before_publication(session: Session, item: Item) -> None:
    """The item's row is locked first: a publisher prepares and claims a delivery
    only while holding the same lock, so the two cannot cross. PostgreSQL: the row
    lock. SQLite: the database's write lock, taken before the check reads anything
    (`BEGIN IMMEDIATE`; a plain transaction would read "nothing started", and a
    publisher could claim and deliver before its first write). Nothing is written
    before the check, so a refusal leaves nothing behind."""
    locks.write_transaction(session)
    session.execute(sa_select(Item.id).where(Item.id == item.id).with_for_update())
    started = deliveries.publication_started(session, item.id)
    if started:
        raise IllegalMove(
            f"item {item.id} is being published (to {', '.join(started)}): too late to take"
            " the approval back; retract it once published"
        )
    deliveries.forget_untried(session, item.id)


def check_version(session: Session, item: Item, expected_version: int | None) -> None:
    """A caller whose screen showed an older version hears who moved the item since
    ("already approved by ann"), not a puzzling "illegal move approved -> rejected".
    Raises Conflict; None checks nothing. Call it inside the writing transaction,
    after locking the row, as `move` does."""
    if expected_version is None or expected_version == item.version:
        return
    conflict = _conflict(session, item.id)  # reloads `item` from the database
    if expected_version != item.version:
        raise conflict


# The compare-and-set UPDATE, built once (issue 24: building it per move cost more
# CPU than running it). With no `.values()`, its SET clause is the columns the
# execution's parameters name; the WHERE's parameters have names no column has
# (https://docs.sqlalchemy.org/en/20/core/dml.html, `Update.values`: "If ... not
# called, the SET clause is generated from the parameters passed at execution").
_ITEMS = Item.__table__
_CAS = update(_ITEMS).where(
    _ITEMS.c.id == bindparam("cas_id"),
    _ITEMS.c.status == bindparam("cas_status"),
    _ITEMS.c.version == bindparam("cas_version"),
)


def _compare_and_set(
    session: Session, item: Item, status: str, version: int, values: dict[str, Any]
) -> None:
    # A Core UPDATE on the session's connection: the ORM's bulk-update machinery
    # costs more than the statement itself, and the object is mirrored below.
    session.flush()
    where = {"cas_id": item.id, "cas_status": status, "cas_version": version}
    result = session.connection().execute(_CAS, values | where)
    if result.rowcount != 1:
        raise _conflict(session, item.id)
    for key, value in values.items():
        # The row is already written; mirror it on the object without a second UPDATE.
        set_committed_value(item, key, value)


def _compare_and_set_many(
    session: Session, sets: list[tuple[Item, str, int, dict[str, Any]]]
) -> None:
    """`_compare_and_set` for several items, (item, status, version, values) each:
    those in a row that set the same columns in one executemany (issue 24, session
    12: an UPDATE an item, one round trip each on PostgreSQL). Its row count is the
    sum over its rows on both dialects (`supports_sane_multi_rowcount`,
    https://docs.sqlalchemy.org/en/20/core/connections.html#sqlalchemy.engine.CursorResult.rowcount);
    short of one a row, the Conflict names the first item whose row does not hold the
    status and version its UPDATE set, and the caller's transaction rolls back."""
    session.flush()
    connection = session.connection()
    for _, run in groupby(sets, key=lambda s: tuple(s[3])):
        group = list(run)
        wheres = [
            values | {"cas_id": item.id, "cas_status": status, "cas_version": version}
            for item, status, version, values in group
        ]
        if connection.execute(_CAS, wheres).rowcount != len(group):
            raise _conflict(session, _first_not_set(connection, group))
        for item, _, _, values in group:
            for key, value in values.items():  # mirrored, as `_compare_and_set` does
                set_committed_value(item, key, value)


def _first_not_set(connection: Any, group: list[tuple[Item, str, int, dict[str, Any]]]) -> int:
    """The first item of `group` whose row does not hold what its UPDATE set."""
    ids = [item.id for item, _, _, _ in group]
    query = sa_select(_ITEMS.c.id, _ITEMS.c.status, _ITEMS.c.version).where(
        _ITEMS.c.id.in_(ids)  # type: ignore[attr-defined]
    )
    found = {row.id: (row.status, row.version) for row in connection.execute(query)}
    for item, _, _, values in group:
        if found.get(item.id) != (values["status"], values["version"]):
            return item.id  # type: ignore[return-value]
    return ids[0]  # type: ignore[return-value]


def _conflict(session: Session, item_id: int) -> Conflict:
    current = session.get(Item, item_id, populate_existing=True)
    last = session.scalars(
        sa_select(AuditEvent).where(AuditEvent.item_id == item_id).order_by(AuditEvent.id.desc())
    ).first()
    return Conflict(
        item_id=item_id,
        status=current.status if current else "gone",
        actor=last.actor if last else None,
        at=last.at if last else None,
    )
