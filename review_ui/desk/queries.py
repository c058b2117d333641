"""Read-side queries for the review app: the queue, the lists, one item, stats.

Every list is paged in SQL (LIMIT/OFFSET over an indexed order, or a keyset on
`items.id` for next/previous), so a queue of 100,000 drafts costs the same to
show as one of ten: nothing here loads all items. Untrusted text comes back as
plain strings; drawing it safely is the views' job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import Date, and_, cast, exists, false, func, or_, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import aliased
from sqlmodel import Session

from guards.checks import RAN
from review_ui.desk.highlight import VerdictInfo
from review_ui.desk.times import local_text
from store import presence
from store import verdicts as stored_verdicts
from store.checks import did_not_run, unchecked_clause
from store.discard_kinds import OTHER as OTHER_KIND
from store.history import item_history
from store.models import AuditEvent, Feed, GateVerdict, Item, ModelCall
from store.search import search_clause
from store.status import APPROVED, DISCARDED, DRAFT, EDIT_REASONS, PUBLISHED, REJECTED

PAGE_SIZE = 25
MODEL_GATE_LABELS = {"claims_supported": "claims check", "faithfulness": "faithfulness judge"}


def utc(value: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; everything is stored as UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def age(value: datetime | None, now: datetime | None = None) -> str:
    """'5 min', '3 h', '2 d': how long ago, for a reader in a hurry."""
    stamp = utc(value)
    if stamp is None:
        return "-"
    seconds = max(0, int(((now or datetime.now(UTC)) - stamp).total_seconds()))
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"


def stamp(value: datetime | None) -> str:
    """The time in the editor's zone, with its name (review_ui/desk/times.py)."""
    return local_text(value)


# --------------------------------------------------------------------------- the queue


# The queue's orders: by when copydesk took the story in (`items.id`), or by the
# story's own time (published_at from the feed or page, ingestion time when it
# gave none), oldest first either way; ties fall back to `items.id`.
ORDERS = {"ingested": "oldest ingested first", "story": "oldest story first"}


@dataclass(frozen=True)
class QueueFilter:
    feed_id: int | None = None
    flagged_only: bool = False
    # Only drafts whose model checks did not run (not run, or failed).
    unchecked_only: bool = False
    search: str = ""
    # Gates now `off` in config.toml: their stored verdicts flag nothing any more.
    gates_off: frozenset[str] = frozenset()
    blocked_only: bool = False  # a hard gate fails on the current (edited) text
    order: str = "ingested"  # a key of ORDERS
    # The editor looking: drafts another editor has open (an unexpired soft claim,
    # store/presence.py) are skipped, unless `show_held`.
    editor: str | None = None
    show_held: bool = False
    assigned_to: str | None = None  # "Assigned to me": the editor's name

    @property
    def narrowed(self) -> bool:
        """The editor chose a filter (the gates that are off are not a choice)."""
        return (
            self.feed_id is not None
            or self.flagged_only
            or self.blocked_only
            or self.unchecked_only
            or bool(self.search.strip())
            or self.assigned_to is not None
        )

    @property
    def skips_held(self) -> bool:
        return self.editor is not None and not self.show_held


@dataclass(frozen=True)
class QueueRow:
    id: int
    headline: str
    feed: str
    seen_at: datetime | None
    flagged: bool
    published_at: datetime | None = None
    assigned_to: str | None = None
    blocked_by: tuple[str, ...] = ()  # hard gates failing on the current text
    flagged_by: tuple[str, ...] = ()  # flag-mode gates that fired on it
    page_cut_at: int | None = None  # its page was cut by max_page_bytes after so many bytes

    @property
    def badge(self) -> str:
        """'blocked: numbers_grounded', 'flagged: names_grounded, dates_grounded',
        'source cut at 15,000,000 bytes', ''."""
        parts = []
        if self.blocked_by:
            parts.append("blocked: " + ", ".join(self.blocked_by))
        if self.flagged_by:
            parts.append("flagged: " + ", ".join(self.flagged_by))
        if self.page_cut_at is not None:
            parts.append(f"source cut at {self.page_cut_at:,} bytes")
        return " · ".join(parts)


def _is_edit(event: Any = AuditEvent) -> Any:
    """SQL: an editor's edit (a re-check also keeps a draft a draft: its reason
    tells them apart)."""
    return and_(
        event.from_status == DRAFT, event.to_status == DRAFT, event.reason.in_(EDIT_REASONS)
    )


def _current(verdict: Any) -> Any:
    """SQL: `verdict` applies to the item's current text (see `current_verdicts`):
    the newest of its gate, and either about the source or recorded no earlier
    than the last edit (an edit's verdicts carry the edit event's time)."""
    newer = aliased(GateVerdict)
    edit = aliased(AuditEvent)
    later_edit = exists().where(
        edit.item_id == verdict.item_id, _is_edit(edit), edit.at > verdict.created_at
    )
    return and_(
        ~exists().where(
            newer.item_id == verdict.item_id, newer.gate == verdict.gate, newer.id > verdict.id
        ),
        or_(verdict.stage == "source", ~later_edit),
    )


def _failing(v: Any, mode: str, gates_off: frozenset[str]) -> list[Any]:
    """SQL: `v` is a current verdict of the item that failed in `mode`. A model
    check that did not run stores a failing verdict whose evidence says why: never
    a pass, but not a flag either (the item panel shows its own banner, and the
    "checks did not run" filter finds it); under `[checks] require` (stored as
    `discard`) it blocks approval, as the item view says."""
    clauses = [v.item_id == Item.id, v.mode == mode, v.passed == false(), _current(v)]
    if mode == "flag":
        clauses.append(~did_not_run(v))
    if gates_off:
        clauses.append(v.gate.not_in(sorted(gates_off)))
    return clauses


def flagged_clause(gates_off: frozenset[str] = frozenset()) -> Any:
    """SQL: the item's current verdicts include a failed gate in `flag` mode that
    ran, whichever gate it is (numbers, quotes, names, dates, the claims check,
    the faithfulness judge): a model check that did not run flags nothing."""
    v = aliased(GateVerdict)
    in_sets = stored_verdicts.failing_now(Item.id, "flagging", gates_off)
    return or_(exists().where(*_failing(v, "flag", gates_off)), in_sets)


def blocked_clause(gates_off: frozenset[str] = frozenset()) -> Any:
    """SQL: a hard gate fails on the item's current text (after an edit: a draft
    the pipeline made passed them all), so it cannot be approved."""
    v = aliased(GateVerdict)
    in_sets = stored_verdicts.failing_now(Item.id, "blocking", gates_off)
    return or_(exists().where(*_failing(v, "discard", gates_off)), in_sets)


def _search_clause(text: str) -> Any:
    """SQL: the full-text search of store/search.py (headline, draft, title,
    source text, URLs, item number), by the database's own index."""
    return search_clause(text)


def queue_where(filt: QueueFilter) -> list[Any]:
    clauses: list[Any] = [Item.status == DRAFT]
    if filt.feed_id is not None:
        clauses.append(Item.feed_id == filt.feed_id)
    if filt.flagged_only:
        clauses.append(flagged_clause(filt.gates_off))
    if filt.blocked_only:
        clauses.append(blocked_clause(filt.gates_off))
    if filt.unchecked_only:
        clauses.append(unchecked_clause(gates_off=filt.gates_off))
    if filt.assigned_to is not None:
        clauses.append(Item.assigned_to == filt.assigned_to)
    found = _search_clause(filt.search)
    if found is not None:
        clauses.append(found)
    if filt.skips_held:
        clauses.append(~presence.held_by_others(Item.id, filt.editor or ""))
    return clauses


# A search's count stops here: a word found in most of 100,000 drafts would
# otherwise be counted one by one (hundreds of ms); "more than 1,000" says enough.
SEARCH_COUNT_CAP = 1000


def _count(session: Session, where: list[Any], search: str) -> int:
    """How many items `where` finds; for a search, at most SEARCH_COUNT_CAP + 1."""
    if not search.strip():
        return session.scalar(select(func.count()).select_from(Item).where(*where)) or 0
    found = select(Item.id).where(*where).limit(SEARCH_COUNT_CAP + 1).subquery()
    return session.scalar(select(func.count()).select_from(found)) or 0


def count_text(total: int, search: str) -> str:
    """'1,234' or, past the cap of a search, 'more than 1,000'."""
    if search.strip() and total > SEARCH_COUNT_CAP:
        return f"more than {SEARCH_COUNT_CAP:,}"
    return f"{total:,}"


def queue_count(session: Session, filt: QueueFilter) -> int:
    return _count(session, queue_where(filt), filt.search)


def held_count(session: Session, filt: QueueFilter) -> int:
    """Drafts matching the filter that the queue skips because another editor has
    them open (0 when the editor asked to see them)."""
    if not filt.skips_held:
        return 0
    shown = replace(filt, show_held=True)
    statement = select(func.count()).select_from(Item)
    return (
        session.scalar(
            statement.where(
                *queue_where(shown), presence.held_by_others(Item.id, filt.editor or "")
            )
        )
        or 0
    )


def _story_time() -> Any:
    # Written exactly as in the index of migration 0010_story_order, which the
    # databases use only for the same expression.
    return func.coalesce(Item.published_at, Item.seen_at)


def _ordered(statement: Any, filt: QueueFilter, *, descending: bool = False) -> Any:
    if filt.order == "story":
        key = _story_time()
        return statement.order_by(
            key.desc() if descending else key, Item.id.desc() if descending else Item.id
        )
    return statement.order_by(Item.id.desc() if descending else Item.id)


def _after(session: Session, filt: QueueFilter, item_id: int, *, before: bool = False) -> Any:
    """SQL: the draft comes after (or before) `item_id` in the queue's order: a
    keyset on (story time, id) or on id alone."""
    if filt.order != "story":
        return Item.id < item_id if before else Item.id > item_id
    key = _story_time()
    at = session.scalar(select(key).where(Item.id == item_id))
    if at is None:  # the item is gone: compare by id alone
        return Item.id < item_id if before else Item.id > item_id
    # "key <= at AND (...)", not "key < at OR (key = at AND ...)": the plain
    # bound is a range of the story-order index (migration 0010_story_order)
    # on both databases; the OR form, and a row value (a, b) < (x, y) on SQLite,
    # made them walk every draft from the start of the queue.
    if before:
        return and_(key <= at, or_(key < at, Item.id < item_id))
    return and_(key >= at, or_(key > at, Item.id > item_id))


def queue_page(
    session: Session, filt: QueueFilter, *, page: int = 1, size: int = PAGE_SIZE
) -> list[QueueRow]:
    """One page of pending drafts, oldest first in the filter's order."""
    statement = (
        select(
            Item.id,
            Item.headline,
            Item.title,
            Feed.name,
            Item.seen_at,
            Item.published_at,
            Item.assigned_to,
            Item.page_cut_at,
        )
        .outerjoin(Feed, Feed.id == Item.feed_id)
        .where(*queue_where(filt))
    )
    statement = _ordered(statement, filt).limit(size).offset(max(0, page - 1) * size)
    rows = session.execute(statement).all()
    failing = failing_gates(session, [r[0] for r in rows], filt.gates_off)
    return [
        QueueRow(
            id=r[0],
            headline=r[1] or r[2] or "(no headline)",
            feed=r[3] or "-",
            seen_at=r[4],
            flagged=bool(failing.get(r[0], ((), ()))[1]),
            published_at=r[5],
            blocked_by=failing.get(r[0], ((), ()))[0],
            flagged_by=failing.get(r[0], ((), ()))[1],
            assigned_to=r[6],
            page_cut_at=r[7],
        )
        for r in rows
    ]


def failing_gates(
    session: Session, item_ids: Sequence[int], gates_off: frozenset[str] = frozenset()
) -> dict[int, tuple[tuple[str, ...], tuple[str, ...]]]:
    """{item id: (hard gates failing, flag gates fired)} on each item's current text."""
    if not item_ids:
        return {}
    found: dict[int, tuple[list[str], list[str]]] = {}
    for mode, slot in (("discard", 0), ("flag", 1)):
        v = aliased(GateVerdict)
        where = [c for c in _failing(v, mode, gates_off) if c is not None]
        statement = (
            select(Item.id, v.gate)
            .join(v, v.item_id == Item.id)
            .where(Item.id.in_(item_ids), *where)  # type: ignore[union-attr]
            .order_by(v.id)
        )
        for item_id, gate in session.execute(statement):
            gates = found.setdefault(item_id, ([], []))[slot]
            if gate not in gates:
                gates.append(gate)
    # An item's verdicts are rows or sets (store/verdicts.py): its newest set's state.
    for item_id, newest in stored_verdicts.newest_sets(session, item_ids).items():
        blocking, flagging = found.setdefault(item_id, ([], []))
        blocking.extend(stored_verdicts.names(newest.blocking, gates_off))
        flagging.extend(stored_verdicts.names(newest.flagging, gates_off))
    return {i: (tuple(b), tuple(f)) for i, (b, f) in found.items()}


def flagged_ids(
    session: Session, item_ids: Sequence[int], gates_off: frozenset[str] = frozenset()
) -> set[int]:
    if not item_ids:
        return set()
    statement = select(Item.id).where(Item.id.in_(item_ids), flagged_clause(gates_off))  # type: ignore[union-attr]
    return set(session.scalars(statement))


def queue_neighbours(
    session: Session, filt: QueueFilter, item_id: int
) -> tuple[int | None, int | None]:
    """The drafts just before and after `item_id` in queue order (a keyset)."""
    where = queue_where(filt)
    before = session.scalar(
        _ordered(
            select(Item.id).where(*where, _after(session, filt, item_id, before=True)),
            filt,
            descending=True,
        ).limit(1)
    )
    after = session.scalar(
        _ordered(select(Item.id).where(*where, _after(session, filt, item_id)), filt).limit(1)
    )
    return before, after


def queue_position(session: Session, filt: QueueFilter, item_id: int) -> int:
    """1-based place of `item_id` in the queue (counts the drafts before it)."""
    before = session.scalar(
        select(func.count())
        .select_from(Item)
        .where(*queue_where(filt), _after(session, filt, item_id, before=True))
    )
    return (before or 0) + 1


def page_of(session: Session, filt: QueueFilter, item_id: int, size: int = PAGE_SIZE) -> int:
    """The list page `item_id` is on (1-based)."""
    return (queue_position(session, filt, item_id) - 1) // size + 1


def next_in_queue(session: Session, filt: QueueFilter, after_id: int | None = None) -> int | None:
    """The draft to open next: the first after `after_id`, else the oldest one."""
    where = queue_where(filt)
    if after_id is not None:
        found = session.scalar(
            _ordered(select(Item.id).where(*where, _after(session, filt, after_id)), filt).limit(1)
        )
        if found is not None:
            return found
    return session.scalar(_ordered(select(Item.id).where(*where), filt).limit(1))


def feed_choices(session: Session) -> list[tuple[int, str]]:
    return [(i, n) for i, n in session.execute(select(Feed.id, Feed.name).order_by(Feed.name))]


# --------------------------------------------------------------------------- one item


@dataclass
class ItemView:
    """One item as the editor sees it, with the verdicts that currently apply."""

    item: Item
    feed: str | None
    source_verdicts: list[GateVerdict]
    draft_verdicts: list[GateVerdict]  # on the current text: the last edit's, else the pipeline's
    edited: bool  # an editor changed the text after the pipeline drafted it
    last_event: AuditEvent | None
    reason: str | None = None  # the reason of the move into the current status
    # The pipeline's verdicts on its own draft, once an edit replaced that text.
    earlier_verdicts: list[GateVerdict] = field(default_factory=list)
    gates_off: frozenset[str] = frozenset()  # gates now `off` in config.toml

    @property
    def verdicts(self) -> list[GateVerdict]:
        return self.source_verdicts + self.draft_verdicts

    def counts(self, verdict: GateVerdict) -> bool:
        """A verdict of a gate that is now `off` is shown but neither blocks nor flags."""
        return verdict.gate not in self.gates_off

    @property
    def hard_failures(self) -> list[GateVerdict]:
        return [v for v in self.verdicts if is_hard_failure(v) and self.counts(v)]

    @property
    def flags(self) -> list[GateVerdict]:
        return [
            v
            for v in self.verdicts
            if not v.passed and v.mode == "flag" and self.counts(v) and v.check_state == RAN
        ]

    def model_verdict(self, gate: str) -> GateVerdict | None:
        return next((v for v in self.draft_verdicts if v.gate == gate), None)

    def earlier_verdict(self, gate: str) -> GateVerdict | None:
        return next((v for v in self.earlier_verdicts if v.gate == gate), None)


def is_hard_failure(verdict: GateVerdict) -> bool:
    return not verdict.passed and verdict.mode == "discard"


def verdict_info(v: GateVerdict) -> VerdictInfo:
    return VerdictInfo(v.gate, v.passed, v.mode, v.reason, v.evidence)


def newest_per_gate(verdicts: Sequence[GateVerdict]) -> list[GateVerdict]:
    """The newest verdict of each gate, in the order the gates first ran."""
    newest: dict[str, GateVerdict] = {}
    for v in sorted(verdicts, key=lambda v: v.id or 0):
        newest[v.gate] = v  # a dict keeps a key's first position when its value changes
    return list(newest.values())


@dataclass(frozen=True)
class Verdicts:
    source: list[GateVerdict]  # the source does not change: the newest of each gate
    draft: list[GateVerdict]  # on the current text only
    earlier: list[GateVerdict]  # the pipeline's, on a text an edit has since replaced
    edited: bool


def last_edit_at(session: Session, item_id: int) -> datetime | None:
    statement = select(func.max(AuditEvent.at)).where(AuditEvent.item_id == item_id, _is_edit())
    return utc(session.scalar(statement))


def current_verdicts(session: Session, item_id: int) -> Verdicts:
    """The verdicts that apply to the item's text as it is now.

    Before any edit, the pipeline's (stage `draft`). After an edit, only that
    edit's (stage `edit`, stamped with the edit event's time): the pipeline's
    model checks (claims, faithfulness) judged a text that no longer exists, so
    they neither pass nor fail the new one, and an earlier edit's verdicts are
    as stale. A gate the edit did not run (off by then) has no current verdict."""
    rows = stored_verdicts.of_item(session, item_id)
    source = newest_per_gate([v for v in rows if v.stage == "source"])
    # The model checks (stage `check`) judged the pipeline's draft too.
    pipeline = newest_per_gate([v for v in rows if v.stage in ("draft", "check")])
    edited_at = last_edit_at(session, item_id)
    if edited_at is None:
        return Verdicts(source, pipeline, [], edited=False)
    latest_edit = [
        v for v in rows if v.stage == "edit" and (utc(v.created_at) or edited_at) >= edited_at
    ]
    return Verdicts(source, newest_per_gate(latest_edit), pipeline, edited=True)


def last_event(session: Session, item_id: int, to_status: str | None = None) -> AuditEvent | None:
    statement = select(AuditEvent).where(AuditEvent.item_id == item_id)
    if to_status is not None:
        statement = statement.where(AuditEvent.to_status == to_status)
    return session.scalars(statement.order_by(AuditEvent.id.desc()).limit(1)).first()


def item_view(
    session: Session, item_id: int, gates_off: frozenset[str] = frozenset()
) -> ItemView | None:
    item = session.get(Item, item_id, populate_existing=True)
    if item is None:
        return None
    feed = session.get(Feed, item.feed_id) if item.feed_id is not None else None
    verdicts = current_verdicts(session, item_id)
    event = last_event(session, item_id)
    into = last_event(session, item_id, item.status)
    return ItemView(
        item=item,
        feed=feed.name if feed else None,
        source_verdicts=verdicts.source,
        draft_verdicts=verdicts.draft,
        edited=verdicts.edited,
        last_event=event,
        reason=into.reason if into else None,
        earlier_verdicts=verdicts.earlier,
        gates_off=gates_off,
    )


def first_edit(session: Session, item_id: int) -> AuditEvent | None:
    """The first edit's event: its `details.before` is the pipeline's own draft."""
    statement = (
        select(AuditEvent).where(AuditEvent.item_id == item_id, _is_edit()).order_by(AuditEvent.id)
    )
    return session.scalars(statement.limit(1)).first()


# --------------------------------------------------------------------------- other lists


@dataclass(frozen=True)
class DiscardFilter:
    gate: str | None = None
    feed_id: int | None = None
    since: date | None = None
    until: date | None = None  # inclusive
    search: str = ""  # store/search.py


@dataclass
class DiscardRow:
    id: int
    title: str
    feed: str
    discarded_at: datetime | None
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (gate, mode, reason)
    reason: str | None = None  # the audit event's reason (when no gate failed)


def _day_start(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _bind_time(value: datetime, session: Session) -> datetime:
    """SQLite compares the stored UTC wall-clock text: bind naive UTC there."""
    if session.get_bind().dialect.name == "sqlite":
        return value.astimezone(UTC).replace(tzinfo=None)
    return value


def discard_where(session: Session, filt: DiscardFilter) -> list[Any]:
    clauses: list[Any] = [Item.status == DISCARDED]
    if filt.feed_id is not None:
        clauses.append(Item.feed_id == filt.feed_id)
    if filt.gate:
        clauses.append(stored_verdicts.item_failed(filt.gate, Item.id))
    # A discard is final, so the item's last update is the discard itself.
    if filt.since:
        clauses.append(Item.updated_at >= _bind_time(_day_start(filt.since), session))
    if filt.until:
        end = _day_start(filt.until) + timedelta(days=1)
        clauses.append(Item.updated_at < _bind_time(end, session))
    found = _search_clause(filt.search)
    if found is not None:
        clauses.append(found)
    return clauses


def discard_count(session: Session, filt: DiscardFilter) -> int:
    return _count(session, discard_where(session, filt), filt.search)


def discard_page(
    session: Session, filt: DiscardFilter, *, page: int = 1, size: int = PAGE_SIZE
) -> list[DiscardRow]:
    """Discarded items, newest first, with every failed gate and its reason."""
    statement = (
        select(Item.id, Item.title, Item.headline, Feed.name, Item.updated_at)
        .outerjoin(Feed, Feed.id == Item.feed_id)
        .where(*discard_where(session, filt))
        .order_by(Item.id.desc())
        .limit(size)
        .offset(max(0, page - 1) * size)
    )
    rows = [
        DiscardRow(id=r[0], title=r[1] or r[2] or "(no title)", feed=r[3] or "-", discarded_at=r[4])
        for r in session.execute(statement)
    ]
    by_id = {r.id: r for r in rows}
    if by_id:
        failed = stored_verdicts.of_items(session, list(by_id), failed_only=True)
        for item_id, listed in failed.items():
            by_id[item_id].failed.extend((v.gate, v.mode, v.reason) for v in listed)
        for row in rows:
            event = last_event(session, row.id, DISCARDED)
            row.reason = event.reason if event else None
    return rows


def failed_gate_names(session: Session) -> list[str]:
    """Gates that have failed at least once: the choices of the discards filter."""
    return stored_verdicts.failed_gate_names(session)


@dataclass
class DecidedRow:
    id: int
    headline: str
    feed: str
    decided_by: str | None
    decided_at: datetime | None
    reason: str | None = None


DECIDED_STATUSES = (APPROVED, REJECTED, PUBLISHED)


def decided_where(status: str, search: str = "") -> list[Any]:
    found = _search_clause(search)
    return [Item.status == status] + ([found] if found is not None else [])


def decided_count(session: Session, status: str, search: str = "") -> int:
    return _count(session, decided_where(status, search), search)


def decided_page(
    session: Session, status: str, *, page: int = 1, size: int = PAGE_SIZE, search: str = ""
) -> list[DecidedRow]:
    """Approved, rejected or published items, newest first, with the editor and,
    for rejections, the reason they gave."""
    statement = (
        select(Item.id, Item.headline, Item.title, Feed.name, Item.decided_by, Item.decided_at)
        .outerjoin(Feed, Feed.id == Item.feed_id)
        .where(*decided_where(status, search))
        .order_by(Item.id.desc())
        .limit(size)
        .offset(max(0, page - 1) * size)
    )
    rows = [
        DecidedRow(
            id=r[0],
            headline=r[1] or r[2] or "(no headline)",
            feed=r[3] or "-",
            decided_by=r[4],
            decided_at=r[5],
        )
        for r in session.execute(statement)
    ]
    for row in rows:
        event = last_event(session, row.id, status)
        row.reason = event.reason if event else None
    return rows


def decided_choices(session: Session, status: str) -> dict[int, tuple[int, str]]:
    """The first page of `status` items as an item form offers them:
    id -> (version shown, "#id headline")."""
    return {
        r.id: (session.get(Item, r.id).version, f"#{r.id} {r.headline}")  # type: ignore[union-attr]
        for r in decided_page(session, status, page=1)
    }


# --------------------------------------------------------------------------- audit trail


def audit_trail(engine: Engine, item_id: int) -> dict[str, Any] | None:
    """The history `copydesk audit` prints, as a JSON-like document: both read
    `store.history`, so the page and the command agree."""
    history = item_history(engine, item_id)
    return history.to_dict() if history is not None else None


# --------------------------------------------------------------------------- stats


def _day(session: Session, column: Any) -> Any:
    """SQL: the UTC calendar day of a timestamp. SQLite stores UTC text, which
    date() reads; PostgreSQL converts the timestamptz to UTC first."""
    if session.get_bind().dialect.name == "sqlite":
        return func.date(column)
    return cast(func.timezone("UTC", column), Date)


def status_counts(session: Session) -> dict[str, int]:
    statement = select(Item.status, func.count()).group_by(Item.status)
    return {status: n for status, n in session.execute(statement)}


def discards_per_day(session: Session, since: datetime) -> list[tuple[str, str, int]]:
    """(day, kind, discarded items) for every move to `discarded` since `since`,
    by the kind the status machine stored on the item (`items.discard_kind`: the
    first failed gate, or refused / robots / fetch / duplicate / model / internal /
    other). Grouped by the database, so a year of discards is never loaded."""
    # A subquery, so GROUP BY names columns (PostgreSQL compares expressions).
    events = (
        select(
            _day(session, AuditEvent.at).label("day"),
            func.coalesce(Item.discard_kind, OTHER_KIND).label("kind"),
            AuditEvent.item_id.label("item_id"),
        )
        .join(Item, Item.id == AuditEvent.item_id)
        .where(AuditEvent.to_status == DISCARDED, AuditEvent.at >= _bind_time(since, session))
        .subquery()
    )
    statement = (
        select(events.c.day, events.c.kind, func.count(func.distinct(events.c.item_id)))
        .group_by(events.c.day, events.c.kind)
        .order_by(events.c.day, events.c.kind)
    )
    return [(str(d), k, n) for d, k, n in session.execute(statement)]


def items_per_feed(session: Session) -> list[tuple[str, str, int]]:
    """(feed, status, items) for items that got a draft (draft or decided)."""
    statement = (
        select(func.coalesce(Feed.name, "(submitted)"), Item.status, func.count())
        .outerjoin(Feed, Feed.id == Item.feed_id)
        .where(Item.status.in_([DRAFT, APPROVED, REJECTED, PUBLISHED]))  # type: ignore[attr-defined]
        .group_by(Feed.name, Item.status)
    )
    return [(f, s, n) for f, s, n in session.execute(statement)]


def decisions_per_editor(session: Session) -> list[tuple[str, int, int]]:
    """(editor, approved, rejected); published items were approved first."""
    statement = (
        select(Item.decided_by, Item.status, func.count())
        .where(
            Item.decided_by.is_not(None),  # type: ignore[union-attr]
            Item.status.in_([APPROVED, PUBLISHED, REJECTED]),  # type: ignore[attr-defined]
        )
        .group_by(Item.decided_by, Item.status)
    )
    counts: dict[str, list[int]] = {}
    for editor, status, n in session.execute(statement):
        slot = counts.setdefault(editor, [0, 0])
        slot[0 if status in (APPROVED, PUBLISHED) else 1] += n
    return [(editor, a, r) for editor, (a, r) in sorted(counts.items())]


def model_usage_per_day(
    session: Session, since: datetime
) -> list[tuple[str, int, int, float, int]]:
    """(day, input tokens, output tokens, cost in USD, calls) from the model ledger."""
    day = _day(session, ModelCall.created_at)
    statement = (
        select(
            day,
            func.coalesce(func.sum(ModelCall.input_tokens), 0),
            func.coalesce(func.sum(ModelCall.output_tokens), 0),
            func.coalesce(func.sum(ModelCall.cost_usd), 0.0),
            func.count(),
        )
        .where(ModelCall.created_at >= _bind_time(since, session))
        .group_by(day)
        .order_by(day)
    )
    return [
        (str(d), int(i), int(o), float(c), int(n)) for d, i, o, c, n in session.execute(statement)
    ]


def since_days(days: int, now: datetime | None = None) -> datetime:
    start = (now or datetime.now(UTC)) - timedelta(days=days)
    return datetime(start.year, start.month, start.day, tzinfo=UTC)
