"""Decisions on several drafts at once: reject a selection with one reason,
reject near duplicates of the open draft, assign a selection to an editor.

Every item goes through the same path as a single decision (`decisions.reject`,
one transaction and one audit event each, compare-and-set on the version the
editor saw when the list was drawn). An item that changed meanwhile (another
editor decided or edited it) is reported by name and skipped; the rest
proceed. Only items drawn in the editor's list can be in a selection, and a
bulk rejection asks for a confirmation that names the count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui import decisions
from review_ui.decisions import NotAllowed, ReasonRequired, Reviewer
from review_ui.widgets import flash, plain, table
from store import duplicates
from store.assignments import NotAssignable, assign
from store.editors import list_editors
from store.models import Feed, Item
from store.status import DRAFT, Conflict, IllegalMove

SEEN = "bulk_seen"  # {item id: version} of the list rows drawn last
CONFIRM = "bulk_confirm"  # a bulk rejection waiting for its confirmation


@dataclass
class BulkReport:
    done: list[str] = field(default_factory=list)  # item labels
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (label, why)

    def messages(self, verb: str) -> list[tuple[str, str]]:
        out = []
        if self.done:
            out.append(("success", f"{verb} {len(self.done)}: " + "; ".join(self.done)))
        for label, why in self.skipped:
            out.append(("error", f"Skipped {label}: {why}"))
        return out


def _label(engine: Engine, item_id: int) -> str:
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
    report = BulkReport()
    for item_id, version in seen.items():
        label = _label(engine, item_id)
        try:
            decisions.decide(
                engine,
                lambda s, i=item_id, v=version: decisions.reject(
                    s, reviewer, i, v, reason, details=details
                ),
            )
        except Conflict as conflict:
            report.skipped.append((label, _changed(conflict)))
        except (IllegalMove, LookupError) as exc:
            report.skipped.append((label, str(exc)))
        else:
            report.done.append(label)
    return report


def _changed(conflict: Conflict) -> str:
    who = decisions.who_and_when(conflict)
    if conflict.status == DRAFT:
        return f"changed by {who} after your list was drawn; open it and decide again"
    return f"already {conflict.status} by {who}"


def reject_duplicates(
    engine: Engine, reviewer: Reviewer, kept: int, others: Mapping[int, int]
) -> BulkReport:
    """Reject `others` as duplicates of the draft `kept`, naming it in the reason."""
    reason = f"duplicate of {_label(engine, kept)}"
    return reject_many(engine, reviewer, others, reason, details={"duplicate_of": kept})


def assign_many(
    engine: Engine, reviewer: Reviewer, item_ids: Sequence[int], editor: str | None
) -> BulkReport:
    """Assign each draft to `editor` (None: to nobody), one audited event each."""
    report = BulkReport()
    for item_id in item_ids:
        label = _label(engine, item_id)

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


# --------------------------------------------------------------------------- drawing


def remember_seen(engine: Engine, item_ids: Sequence[int]) -> dict[int, int]:
    """The versions of the list rows just drawn: what a selection can act on."""
    with Session(engine) as session:
        rows = session.execute(
            select(Item.id, Item.version).where(Item.id.in_(list(item_ids)))  # type: ignore[union-attr]
        ).all()
    seen = {int(i): int(v) for i, v in rows}
    st.session_state[SEEN] = seen
    return seen


def similar_counts(engine: Engine, item_ids: Sequence[int]) -> dict[int, int]:
    with Session(engine) as session:
        found = duplicates.similar_drafts(session, item_ids)
    return {item_id: len(others) for item_id, others in found.items()}


def similar_label(count: int) -> str:
    return f"{count} similar draft{'' if count == 1 else 's'}" if count else ""


def _editors(engine: Engine) -> list[str]:
    with Session(engine) as session:
        return [e.name for e in list_editors(session) if e.enabled and e.role == "editor"]


def bulk_panel(engine: Engine, reviewer: Reviewer, rows: Sequence[Any], key: str) -> None:
    """Select drafts of the list drawn above, then reject or assign them."""
    if not reviewer.can_decide or not rows:
        return
    seen = remember_seen(engine, [r.id for r in rows])
    headlines = {r.id: r.headline for r in rows}
    with st.expander("Bulk actions on this page", key="bulk_box"):
        # Item numbers only in the options (widget options parse markdown); the
        # headlines are listed below, as text.
        picked = st.multiselect(
            "Select drafts",
            list(seen),
            format_func=lambda i: f"#{i}",
            key=f"bulk_pick_{key}_{st.session_state.get('bulk_gen', 0)}",
        )
        if not picked:
            plain("Pick drafts from the list above by number.", style="opacity:0.7")
            return
        table([{"#": i, "headline": headlines.get(i, "")} for i in picked], key="bulk_selected")
        cols = st.columns([3, 1], vertical_alignment="bottom")
        cols[0].text_input("Reason for rejecting the selection", key="bulk_reason")
        cols[1].button(
            f"Reject {len(picked)} selected…",
            key="bulk_reject",
            on_click=_ask_confirmation,
            args=(engine, {i: seen[i] for i in picked if i in seen}),
            width="stretch",
        )
        cols = st.columns([3, 1], vertical_alignment="bottom")
        cols[0].selectbox(
            "Assign to",
            [None, *_editors(engine)],
            format_func=lambda n: "nobody" if n is None else n,
            key="bulk_assignee",
        )
        cols[1].button(
            f"Assign {len(picked)} selected",
            key="bulk_assign",
            on_click=_assign,
            args=(engine, reviewer, list(picked)),
            width="stretch",
        )


def confirmation(engine: Engine, reviewer: Reviewer) -> None:
    """The confirmation step of a bulk rejection, above the list."""
    pending = st.session_state.get(CONFIRM)
    if not pending:
        return
    count = len(pending["seen"])
    plain(
        f"Reject {count} draft{'' if count == 1 else 's'} with the reason "
        f'"{pending["reason"]}"? ' + "; ".join(pending["labels"]),
        kind="warning",
    )
    cols = st.columns([1, 1, 3])
    cols[0].button(
        f"Confirm: reject {count}",
        key="bulk_confirm_yes",
        type="primary",
        on_click=_reject_confirmed,
        args=(engine, reviewer),
    )
    cols[1].button("Cancel", key="bulk_confirm_no", on_click=st.session_state.pop, args=(CONFIRM,))


def _ask_confirmation(engine: Engine, seen: dict[int, int]) -> None:
    reason = (st.session_state.get("bulk_reason") or "").strip()
    if not seen:
        flash("error", "Select drafts first.")
        return
    if not reason:
        flash("error", "A rejection needs a reason: type it, then Reject selected.")
        return
    labels = [_label(engine, i) for i in seen]
    st.session_state[CONFIRM] = {"seen": seen, "reason": reason, "labels": labels}


def _reject_confirmed(engine: Engine, reviewer: Reviewer) -> None:
    pending = st.session_state.pop(CONFIRM, None)
    if not pending:
        return
    try:
        report = reject_many(engine, reviewer, pending["seen"], pending["reason"])
    except (NotAllowed, ReasonRequired) as exc:
        flash("error", f"Nothing rejected: {exc}")
        return
    for kind, text in report.messages("Rejected"):
        flash(kind, text)
    st.session_state.pop("bulk_reason", None)
    _new_list()


def _assign(engine: Engine, reviewer: Reviewer, item_ids: list[int]) -> None:
    editor = st.session_state.get("bulk_assignee")
    try:
        report = assign_many(engine, reviewer, item_ids, editor)
    except (NotAllowed, NotAssignable) as exc:
        flash("error", f"Nothing assigned: {exc}")
        return
    for kind, text in report.messages(f"Assigned to {editor or 'nobody'}"):
        flash(kind, text)
    _new_list()


def _new_list() -> None:
    """A fresh list and an empty selection after a bulk action."""
    st.session_state["queue_gen"] = st.session_state.get("queue_gen", 0) + 1
    st.session_state["bulk_gen"] = st.session_state.get("bulk_gen", 0) + 1


# --------------------------------------------------------------------------- duplicates


SIMILAR_SHOWN = 5  # similar drafts listed by name under the open draft


def similar_box(engine: Engine, reviewer: Reviewer, item_id: int) -> None:
    """The open draft's near duplicates, and one action rejecting them all."""
    with Session(engine) as session:
        found = duplicates.similar_drafts(session, [item_id]).get(item_id, [])
        if not found:
            return
        ids = [other for other, _ in found]
        rows = session.execute(
            select(Item.id, Item.version, Item.headline, Item.title, Feed.name)
            .outerjoin(Feed, Feed.id == Item.feed_id)
            .where(Item.id.in_(ids))  # type: ignore[union-attr]
        ).all()
    by_id = {r[0]: r for r in rows}
    score = dict(found)
    plain(f"{similar_label(len(found))}: the same story from another feed or version", kind="info")
    # Plain escaped lines, not a data grid: a grid on the open draft's page takes the
    # keyboard from the queue's N/P shortcuts (tests/test_review_keys_browser.py).
    shown = [i for i in ids if i in by_id]
    lines = [
        f"#{i} · {score[i]:.0%} alike · {by_id[i][4] or '-'} · {by_id[i][2] or by_id[i][3] or ''}"
        for i in shown[:SIMILAR_SHOWN]
    ]
    if len(shown) > SIMILAR_SHOWN:
        lines.append(f"and {len(shown) - SIMILAR_SHOWN:,} more")
    plain("\n".join(lines), style="white-space:pre-wrap;font-size:0.9rem;opacity:0.85")
    if reviewer.can_decide:
        others = {i: by_id[i][1] for i in ids if i in by_id}
        st.button(
            f"Reject the {len(others)} other{'' if len(others) == 1 else 's'} as duplicates "
            f"of #{item_id}",
            key="dup_reject",
            on_click=_reject_duplicates,
            args=(engine, reviewer, item_id, others),
        )


def _reject_duplicates(
    engine: Engine, reviewer: Reviewer, kept: int, others: dict[int, int]
) -> None:
    try:
        report = reject_duplicates(engine, reviewer, kept, others)
    except NotAllowed as exc:
        flash("error", f"Nothing rejected: {exc}")
        return
    for kind, text in report.messages(f"Rejected as duplicates of #{kept}"):
        flash(kind, text)
    _new_list()
