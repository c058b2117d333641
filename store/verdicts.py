"""Gate verdicts stored as one packed set per attempt (issue 19 §4, migration 0037).

A pipeline attempt writes nine or so verdicts on an item at once, and every reader
reads an item's verdicts whole (the desk, `copydesk audit`, the history, the
re-check). As rows of `gate_verdicts` they cost more than the article itself; as one
`verdict_sets` row per attempt they are one zlib stream of compact JSON, packed
against store/packing.py's preset dictionary (the gates' names, reasons and evidence
shapes recur there), beside the few small columns SQL filters on:

- `failed_gates`: the gates whose verdict failed, comma-separated, in order;
- `checks_state`: the model checks that did not run, comma-separated tokens
  "gate:state" (guards.checks `check_state`: "not run", "failed"), ":transient"
  after a failure for a passing reason; None when all ran;
- `stages`: the stages present ("source,draft,check").

This module is the only reader and writer of `verdict_sets`. It takes the rows the
writers build today (`GateVerdict.row_of`) and gives back `GateVerdict` objects,
not attached to any session (never added: they are not `gate_verdicts` rows), in
the order they were written, so a reader switched here sees what it saw before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import groupby
from typing import Any

from sqlalchemy import delete, exists, false, insert, literal, or_, select
from sqlalchemy.orm import aliased
from sqlmodel import Session

from guards.checks import NOT_RUN_STATES, RAN
from guards.checks import check_state as guard_check_state
from guards.registry import CHECK_GATES
from store.models import GateVerdict, VerdictSet, utcnow
from store.packing import pack_json, unpack_json

FIELDS = ("stage", "gate", "passed", "mode", "reason", "evidence")
ROW_FIELDS = ("item_id", "run_id", "created_at", *FIELDS)  # `GateVerdict.row_of`'s keys


def _attempt(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return (row["item_id"], row.get("run_id"), row.get("created_at"))


def set_row(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One attempt's verdict rows (same item, run and time) as a `verdict_sets` row."""
    first = rows[0]
    failed = [r["gate"] for r in rows if not r["passed"]]
    states = [_check_token(r) for r in rows]
    stages = list(dict.fromkeys(r["stage"] for r in rows))
    return {
        "item_id": first["item_id"],
        "run_id": first.get("run_id"),
        "failed_gates": ",".join(failed) or None,
        "checks_state": ",".join(t for t in states if t) or None,
        "stages": ",".join(stages),
        "verdicts": pack_json([[r[f] for f in FIELDS] for r in rows]),
        "created_at": first.get("created_at") or utcnow(),
    }


def _check_token(row: Mapping[str, Any]) -> str | None:
    """A check that did not run, as "gate:state" (":transient" after a failure for a
    passing reason: an outage); None for a verdict that ran."""
    state = guard_check_state(row["passed"], row["evidence"])
    if state == RAN:
        return None
    evidence = row["evidence"] if isinstance(row["evidence"], dict) else {}
    return f"{row['gate']}:{state}" + (":transient" if evidence.get("transient") else "")


def write(session: Session, rows: Iterable[Mapping[str, Any]]) -> None:
    """Store verdict rows (`GateVerdict.row_of`'s): each run of rows of one item,
    run and time is one set; one executemany for them all."""
    sets = [set_row(list(group)) for _, group in groupby(rows, key=_attempt)]
    if sets:
        session.execute(insert(VerdictSet.__table__), sets)  # type: ignore[arg-type]


def move_rows_to_sets(session: Session, *, batch: int = 500) -> int:
    """Move every `gate_verdicts` row into sets, `batch` items at a time (each
    attempt: the rows of one item, run and time, in the order written); returns how
    many rows moved. The body of the migration that will end `gate_verdicts`."""
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
        write(session, [{f: getattr(v, f) for f in ROW_FIELDS} for v in rows])
        session.execute(delete(GateVerdict).where(chosen))
        session.expunge_all()
        moved, last = moved + len(rows), ids[-1]


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

    Until migration 0037's successor copies `gate_verdicts` into sets and drops it,
    an item may hold rows there too (written before 0037, or by a writer not yet
    switched): they are read as well, detached from the session, and the two merged
    by time (a stable sort: within an attempt, its gates' order)."""
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
            VerdictSet.item_id == item_id, listed.contains(f",{gate},", autoescape=True)
        ),
    )


def _listed(column: Any) -> Any:
    """SQL: a comma-separated column with a comma each side, for whole-token LIKEs."""
    return literal(",") + column + literal(",")


def newest_check_did_not_run(
    item_id: Any,
    *,
    states: Sequence[str] = NOT_RUN_STATES,
    gates_off: frozenset[str] = frozenset(),
    transient_only: bool = False,
    other_than_run: int | None = None,
) -> Any:
    """SQL: the item's newest set with model checks in it holds a check (of a gate
    not now `off`) that did not run, in one of `states` (only a transient failure,
    with `transient_only`; written by a run other than `other_than_run`, if given).
    Sets only (not yet `gate_verdicts` rows): store/checks.py's twin-to-be."""
    s, newer = aliased(VerdictSet), aliased(VerdictSet)
    tokens = _listed(s.checks_state)
    wanted = []
    for gate in (g for g in CHECK_GATES if g not in gates_off):
        for state in states:
            token = f",{gate}:{state}"
            if transient_only:
                wanted.append(tokens.contains(token + ":transient,", autoescape=True))
            else:
                wanted.append(tokens.contains(token + ",", autoescape=True))
                wanted.append(tokens.contains(token + ":", autoescape=True))
    clauses = [
        s.item_id == item_id,
        _listed(s.stages).contains(",check,"),
        ~exists().where(
            newer.item_id == s.item_id,
            _listed(newer.stages).contains(",check,"),
            newer.id > s.id,
        ),
        or_(*wanted) if wanted else false(),
    ]
    if other_than_run is not None:
        clauses.append(or_(s.run_id.is_(None), s.run_id != other_than_run))
    return exists().where(*clauses)


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
        names.update(listed.split(","))
    return sorted(names)


def of_item(session: Session, item_id: int) -> list[GateVerdict]:
    """An item's verdicts, oldest attempt first, each attempt in its gates' order."""
    return of_items(session, [item_id]).get(item_id, [])
