"""Decisions on several drafts at once: reject a selection with one reason,
reject near duplicates of the open draft, assign a selection to an editor.

Every item goes through the same path as a single decision (`decisions.reject`,
one transaction and one audit event each, compare-and-set on the version the
editor saw when the list was drawn). An item that changed meanwhile (another
editor decided or edited it) is reported by name and skipped; the rest
proceed. Only items drawn in the editor's list can be in a selection, and a
bulk rejection asks for a confirmation that names the count (the panel that asks
is review_ui/views/bulk_panel.py; this module has no Streamlit in it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui.desk import decisions
from review_ui.desk.decisions import ReasonRequired, Reviewer
from review_ui.desk.queries import first_edit
from store import duplicates
from store.assignments import assign
from store.editors import list_editors
from store.models import Feed, Item
from store.notes import notes_for
from store.status import DRAFT, Conflict, IllegalMove


@dataclass
class BulkReport:
    done: list[str] = field(default_factory=list)  # item labels
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (label, why)
    versions: dict[int, int] = field(default_factory=dict)  # done: id -> version after

    def messages(self, verb: str) -> list[tuple[str, str]]:
        out = []
        if self.done:
            out.append(("success", f"{verb} {len(self.done)}: " + "; ".join(self.done)))
        for label, why in self.skipped:
            out.append(("error", f"Skipped {label}: {why}"))
        return out


def label_of(engine: Engine, item_id: int) -> str:
    with Session(engine) as session:
        return decisions.item_label(session, item_id)


def reject_many(
    engine: Engine,
    reviewer: Reviewer,
    seen: Mapping[int, int],
    reason: str,
    *,
    details: Mapping[str, Any] | None = None,
) -> BulkReport:
    """Reject each item at the version the editor saw, one decision each."""
    if not reason.strip():
        raise ReasonRequired("a rejection needs a reason")
    return _one_by_one(
        engine,
        seen,
        lambda s, i, v: decisions.reject(s, reviewer, i, v, reason, details=details),
    )


def undo_many(engine: Engine, reviewer: Reviewer, done: Mapping[int, int], verb: str) -> BulkReport:
    """Put a group decision back, item by item (each audited as undone), at the
    version the decision left; an item someone changed since is named and skipped."""
    return _one_by_one(
        engine,
        done,
        lambda s, i, v: decisions.reopen(s, reviewer, i, v, "undone", details={"undo": verb}),
    )


def _one_by_one(
    engine: Engine, versions: Mapping[int, int], move: Callable[[Session, int, int], Item]
) -> BulkReport:
    """`move(session, item_id, version)` on each item in its own decision (one
    transaction and audit event each); an item that changed since, or may not make
    the move, is named and skipped, the rest proceed."""
    report = BulkReport()
    for item_id, version in versions.items():
        label = label_of(engine, item_id)
        try:
            item = decisions.decide(engine, lambda s, i=item_id, v=version: move(s, i, v))
        except Conflict as conflict:
            report.skipped.append((label, _changed(conflict)))
        except (IllegalMove, LookupError) as exc:
            report.skipped.append((label, str(exc)))
        else:
            report.done.append(label)
            report.versions[item_id] = item.version
    return report


def caveats(engine: Engine, item_ids: Sequence[int]) -> dict[int, str]:
    """Why an item must not be swept into a group action without a look: an edit
    or a note by an editor (issue 25: a rejection of 12 took one of each)."""
    out = {}
    with Session(engine) as session:
        for item_id in item_ids:
            why = []
            edit = first_edit(session, item_id)
            if edit is not None:
                why.append(f"edited by {edit.actor.removeprefix('editor:')}")
            authors = sorted({n.author for n in notes_for(session, item_id)})
            if authors:
                why.append(f"has a note by {', '.join(authors)}")
            if why:
                out[item_id] = " and ".join(why) + ": left out unless ticked"
    return out


def _changed(conflict: Conflict) -> str:
    who = decisions.who_and_when(conflict)
    if conflict.status == DRAFT:
        return f"changed by {who} after your list was drawn; open it and decide again"
    return f"already {conflict.status} by {who}"


def reject_duplicates(
    engine: Engine, reviewer: Reviewer, kept: int, others: Mapping[int, int]
) -> BulkReport:
    """Reject `others` as duplicates of the draft `kept`, naming it in the reason."""
    reason = f"duplicate of {label_of(engine, kept)}"
    return reject_many(engine, reviewer, others, reason, details={"duplicate_of": kept})


def assign_many(
    engine: Engine, reviewer: Reviewer, item_ids: Sequence[int], editor: str | None
) -> BulkReport:
    """Assign each draft to `editor` (None: to nobody), one audited event each."""
    report = BulkReport()
    for item_id in item_ids:
        label = label_of(engine, item_id)

        def change(session: Session, item_id: int = item_id) -> None:
            decisions.require_editor(session, reviewer)
            item = session.get(Item, item_id, populate_existing=True)
            if item is None:
                raise LookupError(f"item {item_id} does not exist")
            if item.status != DRAFT:
                event = decisions.last_event(session, item_id)
                raise Conflict(
                    item_id,
                    item.status,
                    event.actor if event else None,
                    event.at if event else None,
                )
            assign(session, item, editor, actor=reviewer.actor)

        try:
            decisions.decide(engine, change)
        except Conflict as conflict:
            report.skipped.append((label, _changed(conflict)))
        except LookupError as exc:
            report.skipped.append((label, str(exc)))
        else:
            report.done.append(label)
    return report


# --------------------------------------------------------------------------- reads


def versions(engine: Engine, item_ids: Sequence[int]) -> dict[int, int]:
    """The versions of the list rows just drawn: what a selection can act on."""
    with Session(engine) as session:
        rows = session.execute(
            select(Item.id, Item.version).where(Item.id.in_(list(item_ids)))  # type: ignore[union-attr]
        ).all()
    return {int(i): int(v) for i, v in rows}


def similar_counts(engine: Engine, item_ids: Sequence[int]) -> dict[int, int]:
    with Session(engine) as session:
        found = duplicates.similar_drafts(session, item_ids)
    return {item_id: len(others) for item_id, others in found.items()}


def similar_label(count: int) -> str:
    return f"{count} similar draft{'' if count == 1 else 's'}" if count else ""


def assignable_editors(engine: Engine) -> list[str]:
    with Session(engine) as session:
        return [e.name for e in list_editors(session) if e.enabled and e.role == "editor"]


@dataclass
class Similar:
    """A near duplicate of the open draft, as the similar-drafts box lists it."""

    item_id: int
    version: int
    headline: str | None
    title: str | None
    feed: str | None
    score: float
    status: str = DRAFT


def similar_drafts(
    engine: Engine, item_id: int, statuses: Sequence[str] = (DRAFT,)
) -> list[Similar]:
    """The open draft's near duplicates in `statuses` (pending drafts, or also the
    stories already approved or published: `duplicates.KNOWN`), most alike first
    (store/duplicates.py)."""
    with Session(engine) as session:
        found = duplicates.similar_drafts(session, [item_id], statuses).get(item_id, [])
        if not found:
            return []
        ids = [other for other, _ in found]
        rows = session.execute(
            select(Item.id, Item.version, Item.headline, Item.title, Feed.name, Item.status)
            .outerjoin(Feed, Feed.id == Item.feed_id)
            .where(Item.id.in_(ids))  # type: ignore[union-attr]
        ).all()
    by_id = {r[0]: r for r in rows}
    return [
        Similar(i, by_id[i][1], by_id[i][2], by_id[i][3], by_id[i][4], score, by_id[i][5])
        for i, score in found
        if i in by_id
    ]
