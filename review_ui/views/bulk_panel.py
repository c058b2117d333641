"""The bulk actions panel under the queue and the similar-drafts box of the open
draft: Streamlit widgets over review_ui/desk/bulk.py, which does the decisions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st
from sqlalchemy.engine import Engine

from review_ui.desk.bulk import (
    Similar,
    assign_many,
    assignable_editors,
    caveats,
    label_of,
    reject_duplicates,
    reject_many,
    similar_drafts,
    similar_label,
    versions,
)
from review_ui.desk.decisions import NotAllowed, ReasonRequired, Reviewer
from review_ui.settings import ReviewAppSettings
from review_ui.views import forms
from review_ui.views.widgets import flash, plain
from store import duplicates
from store.assignments import NotAssignable

SEEN = "bulk_seen"  # {item id: version} of the list rows drawn last


def remember_seen(engine: Engine, item_ids: Sequence[int]) -> dict[int, int]:
    """The versions of the list rows just drawn: what a selection can act on."""
    seen = versions(engine, item_ids)
    st.session_state[SEEN] = seen
    return seen


def bulk_panel(
    engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer, rows: Sequence[Any], key: str
) -> None:
    """Tick drafts of the list drawn above, then reject or assign them.

    The actions come first and the drafts, one box each, under them: a box is
    ticked with one click, with no option menu that must stay open (a menu opened
    at the screen's bottom edge closed before an option could be picked at
    1280x720), and no action button moves when a box is ticked."""
    if not reviewer.can_decide or not rows:
        return
    seen = remember_seen(engine, [r.id for r in rows])
    headlines = {r.id: r.headline for r in rows}
    gen = st.session_state.get("bulk_gen", 0)

    def box(item_id: int) -> str:
        return f"bulk_pick_{key}_{gen}_{item_id}"

    picked = [i for i in seen if st.session_state.get(box(i))]
    with st.expander("Bulk actions on this page", key="bulk_box"):
        cols = st.columns([2, 1], vertical_alignment="bottom")  # its label whole at 1024 px
        cols[0].text_input("Rejection reason for the ticked drafts", key="bulk_reason")
        cols[1].button(
            f"Reject {len(picked)} selected…",
            key="bulk_reject",
            on_click=_ask_confirmation,
            args=(engine, {i: seen[i] for i in picked}),
            disabled=not picked,
            width="stretch",
        )
        # The whole list, where the editor is looking, before anything is rejected.
        forms.confirmation("bulk_reject", _reject_confirmed(engine, settings, reviewer))
        cols = st.columns([2, 1], vertical_alignment="bottom")  # its label whole at 1024 px
        cols[0].selectbox(
            "Assign to",
            [None, *assignable_editors(engine)],
            format_func=lambda n: "nobody" if n is None else n,
            key="bulk_assignee",
        )
        cols[1].button(
            f"Assign {len(picked)} selected",
            key="bulk_assign",
            on_click=_assign,
            args=(engine, reviewer, picked),
            disabled=not picked,
            width="stretch",
        )
        plain("Tick the drafts to act on (this page of the list):", style="opacity:0.7")
        for item_id in seen:
            # The item number only in the label (labels parse markdown); the
            # headline beside it, as text.
            cols = st.columns([1, 9], vertical_alignment="center")
            cols[0].checkbox(f"#{item_id}", key=box(item_id))
            with cols[1]:
                plain(headlines.get(item_id) or "", style="font-size:0.9rem")


def _ask_confirmation(engine: Engine, seen: dict[int, int]) -> None:
    reason = (st.session_state.get("bulk_reason") or "").strip()
    if not seen:
        flash("error", "Select drafts first.")
        return
    if not reason:
        flash("error", "A rejection needs a reason: type it, then Reject selected.")
        return
    count = len(seen)
    forms.ask(
        forms.Ask(
            where="bulk_reject",
            verb="reject",
            question=f'Reject {count} draft{"" if count == 1 else "s"} with the reason "{reason}"?',
            items=dict(seen),
            labels={i: label_of(engine, i) for i in seen},
            caveats=caveats(engine, list(seen)),
            payload={"reason": reason},
        )
    )


def _reject_confirmed(
    engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer
) -> Callable[[forms.Ask, dict[int, int]], None]:
    def act(request: forms.Ask, chosen: dict[int, int]) -> None:
        try:
            report = reject_many(engine, reviewer, chosen, request.payload["reason"])
        except (NotAllowed, ReasonRequired) as exc:
            flash("error", f"Nothing rejected: {exc}")
            return
        for kind, text in report.messages("Rejected"):
            flash(kind, text)
        forms.offer_group_undo(report.versions, "rejected", settings.review.undo_seconds)
        st.session_state.pop("bulk_reason", None)
        _new_list()

    return act


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


SIMILAR_SHOWN = 5  # similar drafts named in the one line under the open draft's checks


def _ids(found: Sequence[Similar]) -> str:
    shown = ", ".join(f"#{d.item_id}" for d in found[:SIMILAR_SHOWN])
    more = len(found) - SIMILAR_SHOWN
    return shown + (f" and {more:,} more" if more > 0 else "")


def similar_box(
    engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer, item_id: int
) -> None:
    """One line naming the open draft's near duplicates, pending and already told
    (approved or published: the same story was approved three times), and one
    action rejecting the pending ones, which first lists them all (below)."""
    found = similar_drafts(engine, item_id, duplicates.KNOWN)
    if not found:
        return
    pending = [d for d in found if d.status == "draft"]
    told = [d for d in found if d.status != "draft"]
    parts = []
    if pending:
        parts.append(f"{similar_label(len(pending))} pending: {_ids(pending)}")
    for status in sorted({d.status for d in told}):
        parts.append(f"already {status}: {_ids([d for d in told if d.status == status])}")
    cols = st.columns([5, 2], vertical_alignment="center")
    with cols[0]:
        plain(
            "Same story: " + "; ".join(parts),
            kind="warning" if told else "info",
            style="padding:0.3rem 0.7rem;font-size:0.9rem",
        )
    if reviewer.can_decide and pending:
        cols[1].button(
            "Reject these…",
            key="dup_reject",
            on_click=_ask_duplicates,
            args=(engine, item_id, pending),
            width="stretch",
        )
        forms.confirmation("dup_reject", _reject_duplicates(engine, settings, reviewer, item_id))


def _ask_duplicates(engine: Engine, kept: int, pending: Sequence[Similar]) -> None:
    ids = [d.item_id for d in pending]
    forms.ask(
        forms.Ask(
            where="dup_reject",
            verb="reject",
            question=f"Reject {len(ids)} draft{'' if len(ids) == 1 else 's'} as duplicates of "
            f"#{kept}? Every one of them:",
            items={d.item_id: d.version for d in pending},
            labels={
                d.item_id: f"#{d.item_id} · {d.score:.0%} alike · {d.feed or '-'} · "
                f"{d.headline or d.title or ''}"
                for d in pending
            },
            caveats=caveats(engine, ids),
        )
    )


def _reject_duplicates(
    engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer, kept: int
) -> Callable[[forms.Ask, dict[int, int]], None]:
    def act(request: forms.Ask, chosen: dict[int, int]) -> None:
        try:
            report = reject_duplicates(engine, reviewer, kept, chosen)
        except NotAllowed as exc:
            flash("error", f"Nothing rejected: {exc}")
            return
        for kind, text in report.messages(f"Rejected as duplicates of #{kept}"):
            flash(kind, text)
        forms.offer_group_undo(report.versions, "rejected", settings.review.undo_seconds)
        _new_list()

    return act
