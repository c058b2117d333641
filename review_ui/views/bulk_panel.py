"""The bulk actions panel under the queue and the similar-drafts box of the open
draft: Streamlit widgets over review_ui/desk/bulk.py, which does the decisions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st
from sqlalchemy.engine import Engine

from review_ui.desk.bulk import (
    assign_many,
    assignable_editors,
    label_of,
    reject_duplicates,
    reject_many,
    similar_drafts,
    similar_label,
    versions,
)
from review_ui.desk.decisions import NotAllowed, ReasonRequired, Reviewer
from review_ui.views.widgets import flash, plain, table
from store.assignments import NotAssignable

SEEN = "bulk_seen"  # {item id: version} of the list rows drawn last
CONFIRM = "bulk_confirm"  # a bulk rejection waiting for its confirmation


def remember_seen(engine: Engine, item_ids: Sequence[int]) -> dict[int, int]:
    """The versions of the list rows just drawn: what a selection can act on."""
    seen = versions(engine, item_ids)
    st.session_state[SEEN] = seen
    return seen


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
            [None, *assignable_editors(engine)],
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
    labels = [label_of(engine, i) for i in seen]
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
    found = similar_drafts(engine, item_id)
    if not found:
        return
    plain(f"{similar_label(len(found))}: the same story from another feed or version", kind="info")
    # Plain escaped lines, not a data grid: a grid on the open draft's page takes the
    # keyboard from the queue's N/P shortcuts (tests/test_review_keys_browser.py).
    lines = [
        f"#{d.item_id} · {d.score:.0%} alike · {d.feed or '-'} · {d.headline or d.title or ''}"
        for d in found[:SIMILAR_SHOWN]
    ]
    if len(found) > SIMILAR_SHOWN:
        lines.append(f"and {len(found) - SIMILAR_SHOWN:,} more")
    plain("\n".join(lines), style="white-space:pre-wrap;font-size:0.9rem;opacity:0.85")
    if reviewer.can_decide:
        others = {d.item_id: d.version for d in found}
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
