"""`copydesk eval --from-decisions`: editors' decisions as labels for the gates.

Read-only. For every draft an editor approved or rejected (since DATE), it looks
at the gate verdicts the pipeline stored for the draft, the editor's edits (the
audit keeps both texts) and the last decision, and reports per flagging gate
how often a flagged draft was

* approved unchanged (a likely false alarm),
* rejected,
* edited where the flag pointed (a number, quotation or name the gate objected
  to is gone from the edited text), or edited elsewhere;

and how often a draft no gate flagged was rejected, or edited in a way that
changed a number, name or quotation (a likely miss).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session, select

from guards.numbers import tokenise
from guards.quotes import find_quotes
from store import verdicts as stored_verdicts
from store.models import AuditEvent
from store.status import APPROVED, DRAFT, REJECTED

# Capitalised words: a rough reading of names, enough to tell whether an edit
# touched one (the names gate is the real judge). Sentence-initial words count
# too: an edit that only reorders a sentence may then look like a name change,
# which errs towards reporting a likely miss.
_NAME = re.compile(r"\b[A-Z][\w’'-]+")
_FINDING_KEYS = ("number", "quote", "name", "date", "text", "claim", "sentence")


@dataclass
class Decided:
    """One decided draft: its flags, its edits and the last decision."""

    item_id: int
    decision: str  # APPROVED or REJECTED
    flags: dict[str, list[str]] = field(default_factory=dict)  # gate -> what it objected to
    edits: list[tuple[str, str]] = field(default_factory=list)  # (before, after) texts


def _text(value: Any) -> str:
    if not isinstance(value, dict):
        return ""
    return f"{value.get('headline') or ''}\n\n{value.get('summary') or ''}"


def _objections(evidence: Any) -> list[str]:
    """The strings a failing verdict objected to (entries not marked found)."""
    found: list[str] = []
    if isinstance(evidence, dict) and isinstance(evidence.get("sentences"), list):
        evidence = evidence["sentences"]  # faithfulness: the judged sentences
    items = evidence if isinstance(evidence, list) else [evidence]
    for entry in items:
        if not isinstance(entry, dict):
            continue
        passed = entry.get("found") is True or entry.get("outcome") in ("supported", "faithful")
        if not passed:
            found += [str(entry[k]) for k in _FINDING_KEYS if isinstance(entry.get(k), str)]
    return [f for f in found if f.strip()]


def _not_run(evidence: Any) -> bool:
    """A model check that could not run failed without pointing at anything."""
    return isinstance(evidence, dict) and evidence.get("state") in ("not run", "failed")


def _facts(text: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    numbers = frozenset(t.value for t in tokenise(text) if t.digits >= 2)
    quotes = frozenset(" ".join(text[q.start : q.end].split()).lower() for q in find_quotes(text))
    names = frozenset(m.group() for m in _NAME.finditer(text))
    return numbers, quotes, names


def load_decided(session: Session, since: datetime | None) -> list[Decided]:
    events = select(AuditEvent).where(AuditEvent.actor.like("editor:%"))  # type: ignore[attr-defined]
    if since is not None:
        events = events.where(AuditEvent.at >= since)
    decided: dict[int, Decided] = {}
    edits: dict[int, list[tuple[str, str]]] = {}
    for e in session.exec(events.order_by(AuditEvent.at, AuditEvent.id)):
        if e.to_status in (APPROVED, REJECTED) and e.from_status == DRAFT:
            decided[e.item_id] = Decided(e.item_id, e.to_status)
        elif (
            e.from_status == DRAFT
            and e.to_status == DRAFT
            and isinstance(e.details, dict)
            and "after" in e.details  # an edit (an assignment has none)
        ):
            edits.setdefault(e.item_id, []).append(
                (_text(e.details.get("before")), _text(e.details.get("after")))
            )
    if not decided:
        return []
    by_item = stored_verdicts.of_items(session, list(decided), failed_only=True)
    verdicts = [v for listed in by_item.values() for v in listed if v.stage in ("draft", "check")]
    for v in verdicts:
        if not _not_run(v.evidence):
            decided[v.item_id].flags[v.gate] = _objections(v.evidence)
    for item_id, d in decided.items():
        d.edits = edits.get(item_id, [])
    return list(decided.values())


def _edited_at(objections: list[str], edits: list[tuple[str, str]]) -> bool:
    """Did the edits remove something the gate objected to?"""
    first, last = edits[0][0], edits[-1][1]
    return any(o in first and o not in last for o in objections)


def tally(decided: list[Decided]) -> dict[str, Any]:
    """Per flagging gate and for unflagged drafts: what editors did with them."""
    gates: dict[str, Counter[str]] = {}
    unflagged: Counter[str] = Counter()
    for d in decided:
        for gate, objections in d.flags.items():
            c = gates.setdefault(gate, Counter())
            c["flagged"] += 1
            if d.decision == REJECTED:
                c["rejected"] += 1
            elif d.edits:
                c["edited_at_flag" if _edited_at(objections, d.edits) else "edited_elsewhere"] += 1
            else:
                c["approved_unchanged"] += 1
        if d.flags:
            continue
        unflagged["decided"] += 1
        changed = bool(d.edits) and _facts(d.edits[0][0]) != _facts(d.edits[-1][1])
        if d.decision == REJECTED:
            unflagged["rejected"] += 1
        elif changed:
            unflagged["edited_number_name_or_quote"] += 1
        elif d.edits:
            unflagged["edited_otherwise"] += 1
        else:
            unflagged["approved_unchanged"] += 1
    unflagged["likely_misses"] = unflagged["rejected"] + unflagged["edited_number_name_or_quote"]
    columns = ("flagged", "approved_unchanged", "rejected", "edited_at_flag", "edited_elsewhere")
    return {
        "decided": len(decided),
        "gates": {g: {k: c[k] for k in columns} for g, c in sorted(gates.items())},
        "unflagged": {
            k: unflagged[k]
            for k in (
                "decided",
                "approved_unchanged",
                "rejected",
                "edited_number_name_or_quote",
                "edited_otherwise",
                "likely_misses",
            )
        },
    }
