"""Gate verdicts stored as one packed set per attempt (issue 19 §4, migration 0037).

A pipeline attempt writes nine or so verdicts on an item at once, and every reader
reads an item's verdicts whole (the desk, `copydesk audit`, the history, the
re-check). As rows of `gate_verdicts` they cost more than the article itself; as one
`verdict_sets` row per attempt they are one zlib stream of compact JSON, packed
against store/packing.py's preset dictionary (the gates' names, reasons and evidence
shapes recur there), beside the few small columns SQL filters on:

- `failed_gates`: the gates whose verdict failed in this set, comma-separated, in order;
- `stages`: the stages present ("source,draft,check");
  each gate and stage named by its store/coded.py code ("7" for claims_supported), as
  `gate_verdicts` stores them since 0035 (about 45 bytes a set: 3.06x to 2.95x the
  source text on bench/bench_ledger.py's 320-article run);
- the item's state after the set (`summary`, migration 0039), so that a filter over
  each gate's current verdict reads only the item's newest set: `checks_state`, the
  newest verdict of each model check as "gate:state" tokens (`check_token`);
  `blocking` and `flagging`, the gates failing on the current text in `discard` and
  (having run) in `flag`; `checks_since`, when the oldest failed-check streak began.

This module is the only reader and writer of `verdict_sets`. It takes the rows the
writers build today (`GateVerdict.row_of`) and gives back `GateVerdict` objects,
not attached to any session (never added: they are not `gate_verdicts` rows), in
the order they were written, so a reader switched here sees what it saw before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from typing import Any

from sqlalchemy import and_, delete, exists, false, func, insert, literal, or_, select
from sqlalchemy.orm import aliased
from sqlmodel import Session

from guards.checks import FAILED, NOT_RUN_STATES, RAN
from guards.checks import check_state as guard_check_state
from guards.registry import CHECK_GATES
from store.coded import GATES, STAGES, code_of, name_of
from store.models import GateVerdict, Item, VerdictSet, utcnow
from store.packing import pack_json, unpack_json

FIELDS = ("stage", "gate", "passed", "mode", "reason", "evidence")
ROW_FIELDS = ("item_id", "run_id", "created_at", *FIELDS)  # `GateVerdict.row_of`'s keys
CHECK_STAGE = "check"


def _attempt(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return (row["item_id"], row.get("run_id"), row.get("created_at"))


def set_row(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One attempt's verdict rows (same item, run and time) as a `verdict_sets` row,
    without the item's state after it (`summary`)."""
    first = rows[0]
    failed = [r["gate"] for r in rows if not r["passed"]]
    stages = list(dict.fromkeys(r["stage"] for r in rows))
    return {
        "item_id": first["item_id"],
        "run_id": first.get("run_id"),
        "failed_gates": _coded(failed),
        "stages": ",".join(code_of(STAGES, stage) for stage in stages),
        "verdicts": pack_json([[r[f] for f in FIELDS] for r in rows]),
        "created_at": first.get("created_at") or utcnow(),
    }


def check_token(verdict: GateVerdict) -> str:
    """A model check's verdict as "gate:state": "ran" (":problems" when it failed),
    "not run", or "failed" (":transient" after a failure for a passing reason: an
    outage)."""
    state = verdict.check_state
    evidence = verdict.evidence if isinstance(verdict.evidence, dict) else {}
    if state == RAN:
        suffix = "" if verdict.passed else ":problems"
    else:
        suffix = ":transient" if evidence.get("transient") else ""
    return f"{code_of(GATES, verdict.gate)}:{state}{suffix}"


def _newest_per_gate(found: Iterable[GateVerdict]) -> list[GateVerdict]:
    newest: dict[str, GateVerdict] = {}
    for v in found:
        newest[v.gate] = v  # a dict keeps a gate's first position when its value changes
    return list(newest.values())


def current(found: Sequence[GateVerdict]) -> list[GateVerdict]:
    """The verdicts (all an item's, oldest first) that apply to its text as it is now,
    by review_ui/desk/queries.py `current_verdicts`' rules: the newest of each source
    gate, and the newest of each gate of the last edit (an edit's verdicts share its
    time), or without an edit the pipeline's (stages `draft` and `check`)."""
    edits = [v for v in found if v.stage == "edit"]
    if edits:
        last = max(v.created_at for v in edits)
        text = [v for v in edits if v.created_at == last]
    else:
        text = [v for v in found if v.stage in ("draft", "check")]
    return _newest_per_gate(v for v in found if v.stage == "source") + _newest_per_gate(text)


def newest_checks(found: Iterable[GateVerdict]) -> list[GateVerdict]:
    """The newest verdict of each model check among `found` (oldest first)."""
    return _newest_per_gate(v for v in found if v.stage == CHECK_STAGE)


def summary(found: Sequence[GateVerdict]) -> dict[str, Any]:
    """The item's state after its verdicts `found` (oldest first), as a set's columns:
    `checks_state`, `blocking`, `flagging`, `checks_since` (see the module's doc).
    A failed check's streak begins at its first failure with no run of it since, as
    store/checks.py `checks_waiting` counts it."""
    now = current(found)
    blocking = [v.gate for v in now if not v.passed and v.mode == "discard"]
    flagging = [v.gate for v in now if not v.passed and v.mode == "flag" and v.check_state == RAN]
    checks = [v for v in found if v.stage == CHECK_STAGE]
    streaks: dict[str, Any] = {}
    for v in checks:
        if v.check_state == RAN:
            streaks.pop(v.gate, None)
        elif v.check_state == FAILED:
            streaks.setdefault(v.gate, v.created_at)
    return {
        "checks_state": ",".join(check_token(v) for v in newest_checks(checks)) or None,
        "blocking": _coded(blocking),
        "flagging": _coded(flagging),
        "checks_since": min(streaks.values()) if streaks else None,
    }


def _coded(gates: Iterable[str]) -> str | None:
    """Gate names as their store/coded.py codes, comma-separated; None for none."""
    return ",".join(code_of(GATES, gate) for gate in gates) or None


@dataclass(frozen=True, slots=True)
class Written:
    """A verdict row being written, read by `summary` as it reads a stored
    `GateVerdict`. Not an ORM object (issue 24, session 12): the instrumented
    constructor of a table model cost about 40 microseconds of CPU a verdict, a
    third of the writer's verdict write, for an object only read here."""

    item_id: int
    run_id: int | None
    created_at: datetime | None
    stage: str
    gate: str
    passed: bool
    mode: str
    reason: str | None
    evidence: Any

    @property
    def check_state(self) -> str:
        return guard_check_state(self.passed, self.evidence)  # as `GateVerdict.check_state`


def _verdict(row: Mapping[str, Any]) -> Written:
    return Written(*(row.get(f) for f in ROW_FIELDS))


def write(session: Session, rows: Iterable[Mapping[str, Any]]) -> None:
    """Store verdict rows (`GateVerdict.row_of`'s): each run of rows of one item,
    run and time is one set, with the item's state after it (`summary`, from its
    stored verdicts and this attempt's); one executemany for them all."""
    attempts = [list(group) for _, group in groupby(rows, key=_attempt)]
    if not attempts:
        return
    history = of_items(session, sorted({a[0]["item_id"] for a in attempts}))
    sets = []
    for attempt in attempts:
        found: list[Any] = history.setdefault(attempt[0]["item_id"], [])  # stored, then Written
        found.extend(_verdict(r) for r in attempt)
        sets.append(set_row(attempt) | summary(found))
    session.execute(insert(VerdictSet.__table__), sets)  # type: ignore[arg-type]


def move_rows_to_sets(session: Session, *, batch: int = 500) -> int:
    """Move every `gate_verdicts` row into sets, `batch` items at a time (each
    attempt: the rows of one item, run and time, in the order written); returns how
    many rows moved: migration 0040's body."""
    moved, last = 0, 0
    while True:
        ids = session.scalars(
            select(GateVerdict.item_id)
            .where(GateVerdict.item_id > last)
            .distinct()
            .order_by(GateVerdict.item_id)
            .limit(batch)
        ).all()
        if not ids:
            return moved
        chosen = GateVerdict.item_id.in_(ids)  # type: ignore[attr-defined]
        rows = session.scalars(
            select(GateVerdict).where(chosen).order_by(GateVerdict.item_id, GateVerdict.id)
        ).all()
        moving = [{f: getattr(v, f) for f in ROW_FIELDS} for v in rows]
        session.execute(delete(GateVerdict).where(chosen))  # before `write` reads the items
        session.expunge_all()
        write(session, moving)
        moved, last = moved + len(rows), ids[-1]


def move_sets_to_rows(session: Session, *, batch: int = 500) -> int:
    """`move_rows_to_sets` undone: every set's verdicts back into `gate_verdicts` rows,
    `batch` sets at a time, in the order written; returns how many rows. Migration
    0040's downgrade."""
    moved, last = 0, 0
    while True:
        sets = session.scalars(
            select(VerdictSet).where(VerdictSet.id > last).order_by(VerdictSet.id).limit(batch)
        ).all()
        if not sets:
            return moved
        rows = [{f: getattr(v, f) for f in ROW_FIELDS} for s in sets for v in unpack(s)]
        if rows:
            session.execute(insert(GateVerdict.__table__), rows)  # type: ignore[arg-type]
        session.execute(delete(VerdictSet).where(VerdictSet.id.in_([s.id for s in sets])))  # type: ignore[union-attr]
        session.expunge_all()
        moved, last = moved + len(rows), sets[-1].id


def unpack(stored: VerdictSet) -> list[GateVerdict]:
    """A set's verdicts as `GateVerdict` objects (never added to a session)."""
    return [
        GateVerdict(
            item_id=stored.item_id,
            run_id=stored.run_id,
            created_at=stored.created_at,
            **dict(zip(FIELDS, values, strict=True)),
        )
        for values in unpack_json(stored.verdicts)
    ]


def of_items(
    session: Session, item_ids: Sequence[int], *, failed_only: bool = False
) -> dict[int, list[GateVerdict]]:
    """The items' verdicts, oldest first, by item (an item without any is left out);
    with `failed_only`, only the verdicts that failed (SQL skips the sets with none).

    Every writer writes sets and migration 0040 moved the rows written before into
    sets, but `gate_verdicts` stays until its last readers go: rows found there are
    read as well, detached from the session, and the two merged by time (a stable
    sort: within an attempt, its gates' order)."""
    ids = list(item_ids)
    found: dict[int, list[GateVerdict]] = {}
    legacy = select(GateVerdict).where(GateVerdict.item_id.in_(ids))  # type: ignore[attr-defined]
    sets = select(VerdictSet).where(VerdictSet.item_id.in_(ids))  # type: ignore[attr-defined]
    if failed_only:
        legacy = legacy.where(GateVerdict.passed.is_(False))  # type: ignore[attr-defined]
        sets = sets.where(VerdictSet.failed_gates.is_not(None))  # type: ignore[union-attr]
    rows = session.scalars(legacy.order_by(GateVerdict.id)).all()
    for row in rows:
        session.expunge(row)
        found.setdefault(row.item_id, []).append(row)
    for stored in session.scalars(sets.order_by(VerdictSet.id)):
        unpacked = unpack(stored)
        if failed_only:
            unpacked = [v for v in unpacked if not v.passed]
        found.setdefault(stored.item_id, []).extend(unpacked)
    for listed in found.values():
        listed.sort(key=lambda v: v.created_at)
    return found


def item_failed(gate: str, item_id: Any) -> Any:
    """SQL: the item (`item_id`, e.g. `Item.id`) has a failed verdict of `gate`, as
    a row or in a set (its `failed_gates` list holds the name between commas)."""
    listed = _listed(VerdictSet.failed_gates)
    return or_(
        exists().where(
            GateVerdict.item_id == item_id,
            GateVerdict.gate == gate,
            GateVerdict.passed.is_(False),  # type: ignore[attr-defined]
        ),
        exists().where(
            VerdictSet.item_id == item_id,
            listed.contains(f",{code_of(GATES, gate)},", autoescape=True),
        ),
    )


def _listed(column: Any) -> Any:
    """SQL: a comma-separated column with a comma each side, for whole-token LIKEs."""
    return literal(",") + column + literal(",")


def is_newest(s: Any) -> Any:
    """SQL: `s` (an alias of VerdictSet) is its item's newest set."""
    newer = aliased(VerdictSet)
    return ~exists().where(newer.item_id == s.item_id, newer.id > s.id)


def newest_check_did_not_run(
    item_id: Any,
    *,
    states: Sequence[str] = NOT_RUN_STATES,
    gates_off: frozenset[str] = frozenset(),
    transient_only: bool = False,
    other_than_run: int | None = None,
) -> Any:
    """SQL: by the item's newest set, a model check of the item (of a gate not now
    `off`) did not run, in one of `states` (only a transient failure, with
    `transient_only`); with `other_than_run`, that set was written by another run
    (a run does not ask again what it has just asked): the item's newest set with
    model checks in it."""
    s = aliased(VerdictSet)
    tokens = _listed(s.checks_state)
    wanted = []
    for gate in (g for g in CHECK_GATES if g not in gates_off):
        for state in states:
            token = f",{code_of(GATES, gate)}:{state}"
            if transient_only:
                wanted.append(tokens.contains(token + ":transient,", autoescape=True))
            else:
                wanted.append(tokens.contains(token + ",", autoescape=True))
                wanted.append(tokens.contains(token + ":", autoescape=True))
    clauses = [s.item_id == item_id, is_newest(s), or_(*wanted) if wanted else false()]
    if other_than_run is not None:  # the item's newest set with checks in it
        c, newer = aliased(VerdictSet), aliased(VerdictSet)
        check = f",{code_of(STAGES, CHECK_STAGE)},"
        has_checks, newer_checks = (
            _listed(c.stages).contains(check),
            _listed(newer.stages).contains(check),
        )
        clauses.append(
            exists().where(
                c.item_id == s.item_id,
                has_checks,
                ~exists().where(newer.item_id == c.item_id, newer_checks, newer.id > c.id),
                or_(c.run_id.is_(None), c.run_id != other_than_run),
            )
        )
    return exists().where(*clauses)


def _names_but(column: Any, gates_off: frozenset[str]) -> Any:
    """SQL: a comma-separated column of gate names holds one not in `gates_off` (each
    name is there once: REPLACE takes each off gate out between its commas)."""
    listed = _listed(column)
    for gate in sorted(gates_off):
        listed = func.replace(listed, f",{code_of(GATES, gate)},", ",")
    return and_(column.is_not(None), listed != ",")


def failing_now(item_id: Any, column: str, gates_off: frozenset[str] = frozenset()) -> Any:
    """SQL: by the item's newest set, a gate not `off` fails on its current text:
    `column` "blocking" (in `discard`) or "flagging" (in `flag`, having run)."""
    s = aliased(VerdictSet)
    # Uncorrelated (IN, not EXISTS): PostgreSQL runs it once for the whole queue, not once
    # an item (bench/bench_queue.py's flagged-only count: 44 ms correlated, at 20,000).
    failing = select(s.item_id).where(is_newest(s), _names_but(getattr(s, column), gates_off))
    return item_id.in_(failing)


def newest_sets(session: Session, item_ids: Sequence[int]) -> dict[int, VerdictSet]:
    """Each item's newest set (the item's state after it), by item; not unpacked."""
    s = aliased(VerdictSet)
    statement = select(s).where(s.item_id.in_(list(item_ids)), is_newest(s))
    return {found.item_id: found for found in session.scalars(statement)}


def names(listed: str | None, gates_off: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """A comma-separated column's gate names, but those `off`."""
    found = (name_of(GATES, code) for code in (listed or "").split(",") if code)
    return tuple(gate for gate in found if gate not in gates_off)


def checks(listed: str | None) -> list[tuple[str, str, bool]]:
    """A `checks_state` column as (gate, state, passed): state as `check_state` gives it."""
    found = []
    for token in (listed or "").split(","):
        if token:
            code, state, *rest = token.split(":")
            found.append((name_of(GATES, code), state, state == RAN and not rest))
    return found


def checks_now(session: Session) -> list[tuple[str, str, bool]]:
    """Every item's newest verdict of each model check, from the newest sets'
    `checks_state`: (gate, state, passed)."""
    s = aliased(VerdictSet)
    statement = select(s.checks_state).where(is_newest(s), s.checks_state.is_not(None))
    return [found for listed in session.scalars(statement) for found in checks(listed)]


def failed_gate_names(session: Session) -> list[str]:
    """Every gate that has failed at least once, sorted (from the sets' `failed_gates`
    column and the rows not yet in sets; nothing unpacked)."""
    names = set(
        session.scalars(
            select(GateVerdict.gate).where(GateVerdict.passed.is_(False)).distinct()  # type: ignore[attr-defined]
        )
    )
    lists = select(VerdictSet.failed_gates).where(VerdictSet.failed_gates.is_not(None)).distinct()  # type: ignore[union-attr]
    for listed in session.scalars(lists):
        names.update(name_of(GATES, code) for code in listed.split(","))
    return sorted(names)


def every(session: Session) -> list[GateVerdict]:
    """Every item's verdicts, by item, each item's oldest first (tests, small stores)."""
    ids = session.scalars(select(Item.id).order_by(Item.id)).all()
    return [v for found in of_items(session, ids).values() for v in found]


def of_item(session: Session, item_id: int) -> list[GateVerdict]:
    """An item's verdicts, oldest attempt first, each attempt in its gates' order."""
    return of_items(session, [item_id]).get(item_id, [])
