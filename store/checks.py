"""Items whose model checks did not run, read from the stored verdicts.

A model check that could not run stores a failing verdict whose evidence says
so (`guards.checks.not_run`; read in Python by `guards.checks.check_state`).
Here is its SQL twin and the look-ups built on it: the listing behind
`copydesk unchecked`, the queue's "checks did not run" filter, and the drafts a
later run re-checks. An item's model checks are its newest verdict of each
check gate (stage `check`): a re-check stores new ones, the old stay as history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, exists, false, func, or_, select, true
from sqlalchemy.orm import aliased
from sqlmodel import Session

from guards.checks import FAILED, NOT_RUN, NOT_RUN_STATES
from store import verdicts
from store.history import utc
from store.models import AuditEvent, Feed, GateVerdict, Item, VerdictSet
from store.status import DRAFT, EDIT_REASONS, RECHECKED

CHECK_STAGE = "check"


def did_not_run(v: Any = GateVerdict, states: Sequence[str] = NOT_RUN_STATES) -> Any:
    """SQL: the verdict is a model check that did not run (in one of `states`).
    JSON path on both SQLite (json_extract) and PostgreSQL (->>); evidence that
    is a list or NULL has no "state" and reads as NULL."""
    state = func.coalesce(v.evidence["state"].as_string(), "")
    return and_(v.passed == false(), state.in_(list(states)))


def is_transient(v: Any = GateVerdict) -> Any:
    """SQL: the check failed for a passing reason (an outage, a timeout, an
    overload): `evidence.transient` is true."""
    return func.coalesce(v.evidence["transient"].as_boolean(), false()) == true()


def newest_check(v: Any = GateVerdict) -> Any:
    """SQL: `v` is its item's newest verdict of its check gate."""
    newer = aliased(GateVerdict)
    return and_(
        v.stage == CHECK_STAGE,
        ~exists().where(
            newer.item_id == v.item_id,
            newer.gate == v.gate,
            newer.stage == CHECK_STAGE,
            newer.id > v.id,
        ),
    )


def unchecked_clause(
    states: Sequence[str] = NOT_RUN_STATES, gates_off: frozenset[str] = frozenset()
) -> Any:
    """SQL on `Item`: one of the item's current model checks (of a gate not now
    `off`) did not run."""
    v = aliased(GateVerdict)
    clauses = [v.item_id == Item.id, newest_check(v), did_not_run(v, states)]
    if gates_off:
        clauses.append(v.gate.not_in(sorted(gates_off)))
    in_sets = verdicts.newest_check_did_not_run(Item.id, states=states, gates_off=gates_off)
    return or_(exists().where(*clauses), in_sets)


def recheck_count(session: Session, item_id: int) -> int:
    """How many times a later run re-checked the item (its `rechecked` events)."""
    statement = select(func.count()).where(
        AuditEvent.item_id == item_id, AuditEvent.reason == RECHECKED
    )
    return int(session.scalar(statement) or 0)


def _rechecks(item: Any = Item) -> Any:
    """SQL: the number of the item's `rechecked` events."""
    return (
        select(func.count())
        .where(AuditEvent.item_id == item.id, AuditEvent.reason == RECHECKED)
        .scalar_subquery()
    )


def _edited(item: Any = Item) -> Any:
    event = aliased(AuditEvent)
    return exists().where(
        event.item_id == item.id,
        event.from_status == DRAFT,
        event.to_status == DRAFT,
        event.reason.in_(EDIT_REASONS),
    )


def recheck_due(
    session: Session,
    max_attempts: int,
    *,
    run_id: int | None = None,
    limit: int = 100,
    failed_too: bool = False,
) -> list[tuple[int, int]]:
    """(item id, version) of the drafts a later run re-checks, oldest first: a draft
    an editor has not edited (the checks judged the pipeline's text), one of whose
    current model checks failed for a passing reason (`is_transient`) in a run other
    than `run_id` (a run does not ask again what it has just asked), re-checked
    fewer than `max_attempts` times. With `failed_too` (`copydesk recheck --failed`,
    once a configuration is fixed), every draft whose current check failed, for
    whatever reason, however often it was re-checked."""
    if max_attempts <= 0 and not failed_too:
        return []
    statement = (
        select(Item.id, Item.version)
        .where(*_due(max_attempts, run_id, failed_too))
        .order_by(Item.id)
        .limit(limit)
    )
    return [(row[0], row[1]) for row in session.execute(statement)]


def _failed_check(run_id: int | None = None, *, transient_only: bool = False) -> Any:
    """SQL on `Item`: one of the item's current model checks failed (for a passing
    reason only, with `transient_only`), in a run other than `run_id` if given."""
    v = aliased(GateVerdict)
    in_rows = exists().where(
        v.item_id == Item.id,
        newest_check(v),
        did_not_run(v, (FAILED,)),
        is_transient(v) if transient_only else true(),
        or_(v.run_id.is_(None), v.run_id != run_id) if run_id is not None else true(),
    )
    # Until migration 0040 moves every row into sets, an item's checks are in one or
    # the other, never both (each writer writes one kind): either may say so.
    in_sets = verdicts.newest_check_did_not_run(
        Item.id, states=(FAILED,), transient_only=transient_only, other_than_run=run_id
    )
    return or_(in_rows, in_sets)


def _due(max_attempts: int, run_id: int | None, failed_too: bool) -> list[Any]:
    """The clauses on `Item` of `recheck_due`."""
    return [
        Item.status == DRAFT,
        _failed_check(run_id, transient_only=not failed_too),
        ~_edited(),
        true() if failed_too else _rechecks() < max_attempts,
    ]


def checks_waiting(session: Session, max_attempts: int) -> dict[str, Any]:
    """The drafts whose current model checks failed (an outage keeps the draft, its
    checks wait): how many, since when (the oldest first failure of a check that has
    not run since, ISO UTC), how many a later run re-checks by itself
    (`recheck_due`), and how many only `copydesk recheck --failed` re-checks (a
    configuration failure, or `max_attempts` re-checks spent)."""
    waiting = [Item.status == DRAFT, _failed_check()]
    count = session.scalar(select(func.count()).select_from(Item).where(*waiting)) or 0
    if not count:
        return {"count": 0, "since": None, "rechecked_by_next_run": 0, "need_recheck_failed": 0}
    # A failed check's streak began at its oldest failed verdict with no verdict of
    # the same gate after it that ran.
    v, later = aliased(GateVerdict), aliased(GateVerdict)
    ran_after = exists().where(
        later.item_id == v.item_id,
        later.gate == v.gate,
        later.stage == CHECK_STAGE,
        later.id > v.id,
        ~did_not_run(later),
    )
    in_rows = session.scalar(
        select(func.min(v.created_at))
        .join(Item, Item.id == v.item_id)
        .where(*waiting, v.stage == CHECK_STAGE, did_not_run(v, (FAILED,)), ~ran_after)
    )
    # An item whose verdicts are sets: its newest set's `checks_since` (store/verdicts.py).
    newest = aliased(VerdictSet)
    in_sets = session.scalar(
        select(func.min(newest.checks_since))
        .join(Item, Item.id == newest.item_id)
        .where(*waiting, verdicts.is_newest(newest))
    )
    since = min((t for t in (in_rows, in_sets) if t is not None), key=utc, default=None)

    def due(failed_too: bool) -> int:
        if max_attempts <= 0 and not failed_too:
            return 0
        clauses = _due(max_attempts, None, failed_too)
        return session.scalar(select(func.count()).select_from(Item).where(*clauses)) or 0

    automatic = due(False)
    return {
        "count": count,
        "since": since.isoformat() if since else None,
        "rechecked_by_next_run": automatic,
        "need_recheck_failed": due(True) - automatic,
    }


@dataclass
class Unchecked:
    """An item whose model checks did not run, with each check's state and why."""

    item_id: int
    status: str
    title: str | None
    url: str | None
    feed: str | None
    checked_at: datetime | None
    checks: list[dict[str, Any]] = field(default_factory=list)  # gate, state, why, transient
    rechecks: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "status": self.status,
            "title": self.title,
            "url": self.url,
            "feed": self.feed,
            "checked_at": self.checked_at.isoformat() if self.checked_at else None,
            "checks": self.checks,
            "rechecks": self.rechecks,
        }


def unchecked_items(
    session: Session,
    *,
    state: str | None = None,
    status: str | None = None,
    feed: str | None = None,
    since: datetime | None = None,
) -> list[Unchecked]:
    """Items whose newest model checks did not run (`state`: only "not run" or only
    "failed"), newest check first; optionally of one status, one feed (name or
    URL), or checked since a time."""
    states = (state,) if state else NOT_RUN_STATES
    v = aliased(GateVerdict)
    statement = (
        select(v, Item.status, Item.title, Item.source_url, Item.original_url, Feed.name)
        .join(Item, Item.id == v.item_id)
        .outerjoin(Feed, Feed.id == Item.feed_id)
        .where(newest_check(v), did_not_run(v, states))
        .order_by(v.created_at.desc(), v.id.desc())
    )
    of_item = []
    if status:
        of_item.append(Item.status == status)
    if feed:
        of_item.append(or_(Feed.name == feed, Feed.url == feed))
    statement = statement.where(*of_item)
    if since is not None:
        statement = statement.where(v.created_at >= since)
    found: dict[int, Unchecked] = {}
    for verdict, item_status, title, url, original, feed_name in session.execute(statement):
        row = found.get(verdict.item_id)
        if row is None:
            row = found[verdict.item_id] = Unchecked(
                verdict.item_id, item_status, title, url or original, feed_name, verdict.created_at
            )
        row.checks.append(_check(verdict))
    listed = list(found.values()) + _unchecked_in_sets(session, states, of_item, since)
    listed.sort(
        key=lambda row: utc(row.checked_at) or datetime.min.replace(tzinfo=UTC), reverse=True
    )
    for row in listed:
        row.checks.sort(key=lambda c: c["gate"])
        row.rechecks = recheck_count(session, row.item_id)
    return listed


def _check(verdict: GateVerdict) -> dict[str, Any]:
    """A check that did not run, as `copydesk unchecked` lists it."""
    evidence = verdict.evidence if isinstance(verdict.evidence, dict) else {}
    return {
        "gate": verdict.gate,
        "state": verdict.check_state,
        "why": evidence.get("why"),
        "transient": bool(evidence.get("transient")),
        "mode": verdict.mode,
    }


def _unchecked_in_sets(
    session: Session, states: Sequence[str], of_item: list[Any], since: datetime | None
) -> list[Unchecked]:
    """`unchecked_items` for the items whose verdicts are sets: their newest sets say
    a check did not run; their verdicts, unpacked, say which and why. `of_item`: the
    caller's clauses on the item and its feed."""
    statement = (
        select(Item.id, Item.status, Item.title, Item.source_url, Item.original_url, Feed.name)
        .outerjoin(Feed, Feed.id == Item.feed_id)
        .where(verdicts.newest_check_did_not_run(Item.id, states=states), *of_item)
    )
    items = session.execute(statement).all()
    stored = verdicts.of_items(session, [r[0] for r in items])
    listed = []
    for item_id, item_status, title, url, original, feed_name in items:
        checks = [
            v
            for v in verdicts.newest_checks(stored.get(item_id, []))
            if v.check_state in states and (since is None or utc(v.created_at) >= utc(since))
        ]
        if checks:
            at = max(v.created_at for v in checks)
            row = Unchecked(item_id, item_status, title, url or original, feed_name, at)
            row.checks = [_check(v) for v in checks]
            listed.append(row)
    return listed


__all__ = [
    "CHECK_STAGE",
    "FAILED",
    "NOT_RUN",
    "Unchecked",
    "checks_waiting",
    "did_not_run",
    "is_transient",
    "newest_check",
    "recheck_count",
    "recheck_due",
    "unchecked_clause",
    "unchecked_items",
]
