"""`copydesk replay`: today's deterministic gates over the stored source and summary
of past items, listing every item whose outcome would flip.

- A draft, approved or published item that would now fail a hard gate.
- A discard that the gates made (a stored failing verdict of a deterministic gate
  in mode `discard`, none of a model check) that would now pass every gate that can
  run on what is stored (the draft gates need a summary; a discard made before
  summarising is judged on the source gates).

It changes nothing, except with `apply_to_drafts`: pending drafts that now fail a
hard gate move to `discarded` through the status machine, with an audit event that
names the replay and the gates. Approved and published items are only listed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from guards.registry import CHECK_GATES, DRAFT_GATES, SOURCE_GATES, GateResult, run_gates
from publish.evidence import draft_text
from store import status as st
from store import verdicts as stored_verdicts
from store.db import session_scope
from store.models import GateVerdict, Item, utcnow

REPLAYED = (st.DRAFT, st.APPROVED, st.PUBLISHED, st.DISCARDED)


@dataclass(frozen=True)
class Flip:
    item_id: int
    status: str
    now: str  # "fails" or "passes"
    gates: tuple[str, ...]  # the gates that now fail (or that failed before and now pass)
    reasons: tuple[str, ...]
    results: tuple[GateResult, ...] = ()  # the failing verdicts, kept with a discard

    def to_dict(self) -> dict[str, Any]:
        return {
            "item": self.item_id,
            "status": self.status,
            "now": self.now,
            "gates": list(self.gates),
            "reasons": list(self.reasons),
        }


@dataclass
class ReplayReport:
    examined: int = 0
    flips: list[Flip] = field(default_factory=list)
    discarded: list[int] = field(default_factory=list)  # drafts moved by --apply-to-drafts


def replay(
    engine: Engine,
    *,
    modes: dict[str, str],
    min_source_words: int,
    since: datetime | None = None,
    gate: str | None = None,
    apply_to_drafts: bool = False,
) -> ReplayReport:
    report = ReplayReport()
    names = (gate,) if gate else SOURCE_GATES + DRAFT_GATES
    with Session(engine) as session:
        query = select(Item.id).where(col(Item.status).in_(REPLAYED)).order_by(Item.id)
        if since is not None:
            query = query.where(col(Item.created_at) >= since)
        ids = list(session.scalars(query))
    for item_id in ids:
        with Session(engine) as session:
            item = session.get(Item, item_id)
            flip = _judge(session, item, names, modes, min_source_words)
        report.examined += 1
        if flip is None:
            continue
        report.flips.append(flip)
        if apply_to_drafts and flip.status == st.DRAFT and flip.now == "fails":
            if _discard_draft(engine, flip, modes):
                report.discarded.append(flip.item_id)
    return report


def _judge(
    session: Session,
    item: Item,
    names: tuple[str, ...],
    modes: dict[str, str],
    min_source_words: int,
) -> Flip | None:
    has_draft = bool(item.summary)
    runnable = tuple(n for n in names if n in SOURCE_GATES or has_draft)
    if item.source_text is None or not runnable:
        return None
    results = run_gates(
        runnable,
        item.source_text,
        item.source_url,
        draft_text(item.headline, item.summary or "") if has_draft else "",
        modes=modes,
        min_source_words=min_source_words,
        language=item.language,
    )
    failing = [r for r in results if r.hard_fail]
    if item.status != st.DISCARDED:
        return _flip(item, "fails", failing) if failing else None
    before = _stored_failures(session, item.id)
    if not before or before & set(CHECK_GATES) or failing:
        return None  # not a gate's discard, a model check's, or it still fails
    judged = {r.gate for r in results}
    if not before <= judged:
        return None  # a gate that failed it was not replayed (--gate, or no summary)
    return Flip(item.id, item.status, "passes", tuple(sorted(before)), ())


def _flip(item: Item, now: str, failing: list[GateResult]) -> Flip:
    return Flip(
        item.id,
        item.status,
        now,
        tuple(r.gate for r in failing),
        tuple(r.verdict.reason for r in failing),
        tuple(failing),
    )


def _stored_failures(session: Session, item_id: int | None) -> set[str]:
    if item_id is None:
        return set()
    failed = stored_verdicts.of_items(session, [item_id], failed_only=True).get(item_id, [])
    return {v.gate for v in failed if v.mode == "discard"}


def _discard_draft(engine: Engine, flip: Flip, modes: dict[str, str]) -> bool:
    """draft -> discarded, named as a replay; False when the draft moved meanwhile."""
    with session_scope(engine) as session:
        item = session.get(Item, flip.item_id)
        if item is None or item.status != st.DRAFT:
            return False
        st.move(
            session,
            item,
            st.DISCARDED,
            actor="replay",
            reason="replay: "
            + "; ".join(f"{g}: {r}" for g, r in zip(flip.gates, flip.reasons, strict=True)),
            details={
                "replay": {
                    "at": utcnow().isoformat(),
                    "gates": list(flip.gates),
                    "modes": {g: modes.get(g) for g in flip.gates},
                }
            },
            discard_kind=flip.gates[0] if flip.gates else None,
        )
        now = utcnow()  # the verdicts that discarded it, as the pipeline keeps them: one set
        rows = [
            GateVerdict.row_of(result, item_id=item.id, stage="replay", created_at=now)
            for result in flip.results
        ]
        stored_verdicts.write(session, rows)
    return True
