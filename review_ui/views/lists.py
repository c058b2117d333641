"""Discarded, approved, rejected and published items: paged lists, and one item
with its full audit trail when a row is picked."""

from __future__ import annotations

import math
from functools import partial

import streamlit as st
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui.desk import decisions
from review_ui.desk.decisions import NotAllowed, ReasonRequired, Reviewer, gates_off
from review_ui.desk.queries import (
    PAGE_SIZE,
    DiscardFilter,
    count_text,
    decided_count,
    decided_page,
    discard_count,
    discard_page,
    failed_gate_names,
    feed_choices,
    item_view,
)
from review_ui.settings import ReviewAppSettings
from review_ui.views import forms
from review_ui.views.item_panel import draw_audit_trail, draw_item, draw_verdicts
from review_ui.views.search import search_box
from review_ui.views.widgets import (
    At,
    flash,
    html_table,
    pick_item,
    plain,
    show_flash,
    zone_help,
)
from store.status import Conflict, IllegalMove


def _title(text: str) -> None:
    st.html(f'<h1 style="font-size:1.6rem;font-weight:700;margin:0;padding:0">{text}</h1>')


def _count(count: int, search: str = "") -> None:
    st.html(
        f'<div class="cd-count" style="opacity:0.8">{count_text(count, search)} '
        f"item{'' if count == 1 else 's'}</div>"
    )


def _page(key: str, total: int) -> int:
    pages = max(1, math.ceil(total / PAGE_SIZE))
    if (st.session_state.get(key) or 1) > pages:
        st.session_state[key] = pages
    return st.pagination(pages, key=key) if pages > 1 else 1


def _detail(engine: Engine, settings: ReviewAppSettings, item_id: int) -> None:
    st.divider()
    with Session(engine) as session:
        view = item_view(session, item_id, gates_off(settings.gates.all_modes()))
    if view is None:
        plain(f"No item #{item_id}.", kind="warning")
        return
    draw_item(view)
    draw_verdicts(view, settings)
    st.html('<div style="font-size:1.2rem;font-weight:650">Audit trail</div>')
    draw_audit_trail(engine, item_id)


def discarded_view(engine: Engine, settings: ReviewAppSettings) -> None:
    _title("Discarded")
    with Session(engine) as session:
        gates = failed_gate_names(session)
        feeds = dict(feed_choices(session))
    cols = st.columns(4)
    gate = cols[0].selectbox(
        "Failed gate",
        [None, *gates],
        format_func=lambda g: "Any gate" if g is None else g,
        key="d_gate",
    )
    feed = cols[1].selectbox(
        "Feed",
        [None, *feeds],
        format_func=lambda f: "All feeds" if f is None else feeds.get(f, f"feed {f}"),
        key="d_feed",
    )
    since = cols[2].date_input("Discarded from", value=None, key="d_since")
    until = cols[3].date_input("until (inclusive)", value=None, key="d_until")
    search = search_box("d_search")
    filt = DiscardFilter(gate=gate, feed_id=feed, since=since, until=until, search=search)  # type: ignore[arg-type]
    with Session(engine) as session:
        total = discard_count(session, filt)
        _count(total, search)
        if total == 0:
            plain("No discarded item matches.", kind="info")
            return
        page = _page("d_page", total)
        rows = discard_page(session, filt, page=page)
    # Why comes first: it is what this view is read for. Every time reads in the
    # editor's zone with UTC on hover (review_ui/desk/times.py), hence an HTML table.
    html_table(
        [
            {
                # The gate that discarded the item leads (issue 25), then why.
                "gate": r.failed[0][0] if r.failed else "(no gate ran)",
                "why discarded": "; ".join(f"{g}: {reason}" for g, _, reason in r.failed)
                or (r.reason or ""),
                "#": r.id,
                "title": r.title,
                "feed": r.feed,
                "discarded": At(r.discarded_at),
            }
            for r in rows
        ],
        helps={
            "gate": "the gate that discarded it",
            "why discarded": "failed gates with their reasons, or why no gate ran",
            "discarded": zone_help(),
        },
    )
    picked = pick_item([r.id for r in rows], key=f"d_pick_{page}_{filt}")
    if picked is not None:
        _detail(engine, settings, picked)


STATUS_TITLES = {
    "approved": "Approved",
    "rejected": "Rejected",
    "published": "Published",
    "retracted": "Retracted",
}


def decided_view(
    engine: Engine, settings: ReviewAppSettings, status: str, reviewer: Reviewer | None = None
) -> None:
    show_flash()
    if status == "rejected" and reviewer is not None and reviewer.can_decide:
        _reopen_form(engine, reviewer)
    _title(STATUS_TITLES[status])
    search = search_box(f"{status}_search")
    with Session(engine) as session:
        total = decided_count(session, status, search)
        _count(total, search)
        if total == 0:
            plain(
                f"No {status} items match." if search.strip() else f"No {status} items yet.",
                kind="info",
            )
            return
        page = _page(f"{status}_page", total)
        rows = decided_page(session, status, page=page, search=search)
    html_table(
        [
            {
                "#": r.id,
                "decided": At(r.decided_at),
                "by": r.decided_by or "-",
                "feed": r.feed,
                "headline": r.headline,
                **({"reason": r.reason or ""} if status == "rejected" else {}),
            }
            for r in rows
        ],
        helps={"decided": zone_help()},
    )
    picked = pick_item([r.id for r in rows], key=f"{status}_pick_{page}_{search}")
    if picked is not None:
        _detail(engine, settings, picked)


def _reopen_form(engine: Engine, reviewer: Reviewer) -> None:
    """A rejected item back to the queue, with a reason (audited as rejected -> draft)."""
    texts = ("reopen", "Reopen a rejected item", "Reopen as a draft")
    forms.decided_form(engine, "rejected", texts, partial(_reopen, engine, reviewer))


def _reopen(engine: Engine, reviewer: Reviewer, item_id: int, version: int, reason: str) -> bool:
    with Session(engine) as session:
        label = decisions.item_label(session, item_id)
    try:
        decisions.decide(
            engine,
            lambda s: decisions.reopen(
                s, reviewer, item_id, version, reason, details={"reopened": True}
            ),
        )
    except Conflict as exc:
        flash("error", decisions.conflict_message(exc, label))
    except (ReasonRequired, NotAllowed, IllegalMove, LookupError) as exc:
        flash("error", f"Not reopened: {label}: {exc}")
    else:
        flash("success", f"Reopened {label}: it is back in the queue.")
        return True
    return False
