"""The queue: pending drafts oldest first, one open at a time, decided in seconds.

Keyboard: J next, K previous, A approve, R reject (the cursor goes to the reason
box; Enter rejects), E edit, N/P next/previous page, ? the list of shortcuts
(review_ui/views/shortcuts.py).
Decisions run in button callbacks with the item id and version bound when the
button was drawn, so the compare-and-set uses exactly the version the editor
was looking at, not whatever the database holds by the time they click.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Iterable
from typing import Any

import streamlit as st
from sqlalchemy.engine import Engine
from sqlmodel import Session

from guards.checks import RAN
from guards.registry import CHECK_GATES
from review_ui import streamlit_adapter
from review_ui.desk import bulk, claim_keeper, decisions, flags
from review_ui.desk import highlight as hl
from review_ui.desk.decisions import Blocked, NotAllowed, ReasonRequired, Reviewer
from review_ui.desk.queries import (
    MODEL_GATE_LABELS,
    ORDERS,
    PAGE_SIZE,
    QueueFilter,
    age,
    count_text,
    feed_choices,
    held_count,
    item_view,
    next_in_queue,
    page_of,
    queue_count,
    queue_neighbours,
    queue_page,
    queue_position,
    verdict_info,
)
from review_ui.settings import ReviewAppSettings
from review_ui.views import bulk_panel, desk_panels, forms, shortcuts
from review_ui.views.holds import hold_for_tests
from review_ui.views.item_panel import draw_audit_trail, draw_header, draw_texts, draw_verdicts
from review_ui.views.search import search_box
from review_ui.views.widgets import At, flash, plain, show_flash, table
from store import presence
from store.db import session_scope
from store.status import DRAFT, Conflict, IllegalMove

OPEN = "open_id"  # the item on screen
GEN = "queue_gen"  # bumped after every decision: resets the list's row selection
PICKED = "picked_row"
SHOWN = "shown_item"  # (item id, version, when it was first drawn: clock())
UNDO = "undo_offer"  # (item id, version after the decision, "approved"/"rejected", until)
COMPACT_CSS = streamlit_adapter.fill(
    "<style>__MAIN_BLOCK__{padding-top:2.75rem;padding-bottom:2rem}"
    "__MAIN_BLOCK__ __VERTICAL_BLOCK__{gap:0.45rem}</style>"
)
CLAIMED = "claimed"  # (item id, when this session last took or refreshed its claim)
ADDRESS_MOVED = "address_moved"  # this run wrote a new ?item= to the address
LINKED = "linked_item"  # the ?item= value last followed (a link is followed once)
FOLLOWED = "q_followed"  # the open item the list last moved its page to
PICKS = "q_picks"  # rows picked so far: a pick folds the list away again
FLAG_ASK = "flag_ask"  # (item id, version): A was pressed on this flagged draft; Y approves


def _editor() -> str | None:
    reviewer = st.session_state.get("reviewer")  # auth.SESSION_KEY
    return reviewer.name if reviewer is not None else None


def current_filter(settings: ReviewAppSettings) -> QueueFilter:
    return QueueFilter(
        feed_id=st.session_state.get("f_feed"),
        flagged_only=bool(st.session_state.get("f_flagged")),
        unchecked_only=bool(st.session_state.get("f_unchecked")),
        search=st.session_state.get("f_search") or "",
        gates_off=decisions.gates_off(settings.gates.all_modes()),
        blocked_only=bool(st.session_state.get("f_blocked")),
        order=st.session_state.get("f_order") or "ingested",
        editor=_editor(),
        show_held=bool(st.session_state.get("f_held")),
        assigned_to=_editor() if st.session_state.get("f_mine") else None,
    )


def open_from_link() -> bool:
    """`?item=42` in the address opens item 42 once the editor has signed in (the
    sign-in form keeps the address as it is). True when a link was followed.

    Only in the first run after signing in: from then on the page writes the
    address, and a key press can reach the server with the address as it was
    before the last move, which must not pull the editor back to that item."""
    if st.session_state.get(LINKED) is not None:
        return False
    wanted = str(st.query_params.get("item") or "").strip()
    st.session_state[LINKED] = wanted
    if not wanted.isdigit():
        return False
    st.session_state[OPEN] = int(wanted)
    return True


def _keep_in_address(item_id: int | None) -> None:
    """The address names the item on screen, so a reload or a copied link comes back to it."""
    if item_id is None:
        st.query_params.pop("item", None)
        return
    if st.query_params.get("item") != str(item_id):
        st.query_params["item"] = str(item_id)
        # The browser answers a new address with one more run of the page; a key
        # press made meanwhile reaches the server only after it. The draft's time on
        # screen is counted again from the end of that run (see `_mark_shown`), or
        # a second quick A would be applied as if the draft had been read (the
        # two-press test in tests/test_review_browser.py fails without this).
        st.session_state[ADDRESS_MOVED] = True
    st.session_state[LINKED] = str(item_id)


def leave_queue(engine: Engine) -> None:
    """The editor is on another view: the draft is free again, and the address no
    longer names it (a link copied from that view must not open a draft)."""
    release_claim(engine)
    if "item" in st.query_params:
        _keep_in_address(None)


def release_claim(engine: Engine) -> None:
    """The editor moved on (decided, left the queue view, signed out): their soft
    claim goes, so other editors' queues offer the draft again."""
    claim_keeper.stop(streamlit_adapter.this_session())  # before the release: no refresh after it
    editor = _editor()
    if editor is not None:
        st.session_state.pop(CLAIMED, None)
        with session_scope(engine) as session:
            presence.release(session, editor)


def _filters_changed() -> None:
    # A new list and a new page picker, starting at page 1.
    st.session_state[OPEN] = None
    st.session_state["q_page_last"] = 1
    st.session_state["q_filters_gen"] = st.session_state.get("q_filters_gen", 0) + 1
    st.session_state[GEN] = st.session_state.get(GEN, 0) + 1
    shortcuts.filters_changed()  # the cursor goes back to the queue: J/K work at once


# The sidebar's on/off filters: (label, session key, help).
_FILTER_TOGGLES = (
    ("Flagged only", "f_flagged", "a gate in flag mode fired"),
    (
        "Blocked only",
        "f_blocked",
        "an edit left a hard gate failing: it cannot be approved as it is",
    ),
    (
        "Show drafts others have open",
        "f_held",
        "by default the queue skips a draft another editor opened in the last few minutes",
    ),
    (
        "Checks did not run",
        "f_unchecked",
        "the model checks were not run (no model) or failed (an outage, a reply "
        "that broke the schema): no model has checked these drafts' claims",
    ),
)


def sidebar_filters(engine: Engine) -> None:
    with Session(engine) as session:
        feeds = dict(feed_choices(session))
    st.sidebar.selectbox(
        "Feed",
        [None, *feeds],
        format_func=lambda f: "All feeds" if f is None else feeds.get(f, f"feed {f}"),
        key="f_feed",
        on_change=_filters_changed,
    )
    for label, key, why in _FILTER_TOGGLES:
        st.sidebar.toggle(label, key=key, on_change=_filters_changed, help=why)
    st.sidebar.selectbox(
        "Order", list(ORDERS), format_func=ORDERS.get, key="f_order", on_change=_filters_changed
    )
    search_box("f_search", where=st.sidebar, on_change=_filters_changed)
    st.sidebar.toggle("Assigned to me", key="f_mine", on_change=_filters_changed)


def _show_held() -> None:
    st.session_state["f_held"] = True
    _filters_changed()


# --------------------------------------------------------------------------- callbacks


def _open(item_id: int | None) -> None:
    st.session_state[OPEN] = item_id


def _advance(engine: Engine, filt: QueueFilter, after_id: int) -> None:
    """After a decision the next draft opens (or the oldest, at the end)."""
    release_claim(engine)
    with Session(engine) as session:
        st.session_state[OPEN] = next_in_queue(session, filt, after_id)
    st.session_state[GEN] = st.session_state.get(GEN, 0) + 1


def _label(engine: Engine, item_id: int) -> str:
    with Session(engine) as session:
        return decisions.item_label(session, item_id)


def clock() -> float:
    """Seconds on a monotonic clock: the dwell and undo windows are measured by it.
    Tests drive the windows by putting a clock of their own here, so that none of
    them depends on how fast the machine draws a page."""
    return time.monotonic()


def _mark_shown(item_id: int, version: int, recount: bool = False) -> None:
    """Remember when this version of the draft was first fully drawn (`recount`:
    from now, whatever an earlier run drew)."""
    shown = st.session_state.get(SHOWN)
    if recount or not shown or tuple(shown[:2]) != (item_id, version):
        st.session_state[SHOWN] = (item_id, version, clock())


def _not_seen(settings: ReviewAppSettings, item_id: int, version: int) -> str | None:
    """Why a decision on this draft would be one on a draft nobody saw, or None.

    A second press of A that reaches the server after the next draft was drawn
    is bound to that next draft: it has been on screen for a fraction of a
    second, and is refused."""
    shown = st.session_state.get(SHOWN)
    if not shown or tuple(shown[:2]) != (item_id, version):
        return "it is not the draft on screen"
    seen = clock() - shown[2]
    wait = settings.review.dwell_seconds
    if seen < wait:
        return f"it had been on screen for only {seen:.1f} s (at least {wait:g} s); read it first"
    return None


def _offer_undo(settings: ReviewAppSettings, item_id: int, version: int, verb: str) -> None:
    until = clock() + settings.review.undo_seconds
    st.session_state[UNDO] = (item_id, version, verb, until)
    st.session_state.pop(forms.GROUP_UNDO, None)  # the newer offer wins


def _report_conflict(engine: Engine, filt: QueueFilter, conflict: Conflict) -> None:
    flash("error", decisions.conflict_message(conflict, _label(engine, conflict.item_id)))
    if conflict.status != DRAFT:
        _advance(engine, filt, conflict.item_id)


def _approve(
    engine: Engine,
    settings: ReviewAppSettings,
    reviewer: Reviewer,
    item_id: int,
    version: int,
    written_here: bool = False,
    anyway: bool = False,
) -> None:
    """`written_here`: the editor just typed this text ("Save and approve"), so it
    needs no time on screen. `anyway`: the editor pressed Y (or "Approve anyway")
    after A showed what the flags say; without it, A on a flagged draft only asks."""
    filt = current_filter(settings)
    unseen = None if written_here else _not_seen(settings, item_id, version)
    if unseen:
        flash("error", f"Not approved: {_label(engine, item_id)}: {unseen}.")
        return
    if not written_here and not anyway and _flagged(engine, filt, item_id):
        st.session_state[FLAG_ASK] = (item_id, version)
        return
    st.session_state.pop(FLAG_ASK, None)
    try:
        item = decisions.decide(
            engine,
            lambda s: decisions.approve(
                s,
                reviewer,
                item_id,
                version,
                off=filt.gates_off,
                require_checks=settings.checks.require,
            ),
        )
    except Conflict as conflict:
        _report_conflict(engine, filt, conflict)
    except (Blocked, NotAllowed, IllegalMove, LookupError) as exc:
        flash("error", f"Not approved: {_label(engine, item_id)}: {exc}")
    else:
        flash("success", f"Approved {_label(engine, item_id)}")
        _offer_undo(settings, item_id, item.version, "approved")
        _advance(engine, filt, item_id)


def _flagged(engine: Engine, filt: QueueFilter, item_id: int) -> bool:
    """Does a flag fire on the draft's current text (a second key approves it)?"""
    with Session(engine) as session:
        view = item_view(session, item_id, filt.gates_off)
    return bool(view and view.flags)


def _reject(
    engine: Engine,
    settings: ReviewAppSettings,
    reviewer: Reviewer,
    item_id: int,
    version: int,
    key: str,
) -> None:
    filt = current_filter(settings)
    reason = desk_panels.chosen_reason(key)
    label = _label(engine, item_id)
    unseen = _not_seen(settings, item_id, version)
    if unseen:
        flash("error", f"Not rejected: {label}: {unseen}.")
        return
    try:
        item = decisions.decide(
            engine, lambda s: decisions.reject(s, reviewer, item_id, version, reason)
        )
    except ReasonRequired:
        flash(
            "error",
            f"Not rejected: {label}: a rejection needs a reason. Pick or type one, then Enter.",
        )
    except Conflict as conflict:
        _report_conflict(engine, filt, conflict)
        if reason.strip():  # what the editor typed is not silently dropped
            flash("info", f"Your reason for {label}, not saved: {reason.strip()}")
    except (NotAllowed, IllegalMove, LookupError) as exc:
        flash("error", f"Not rejected: {label}: {exc}")
    else:
        flash("success", f"Rejected {label} (reason: {reason.strip()})")
        _offer_undo(settings, item_id, item.version, "rejected")
        _advance(engine, filt, item_id)


def _undo(
    engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer, item_id: int, version: int
) -> None:
    """Put a decision just made back: the item is a draft again, audited as undone."""
    offer = st.session_state.pop(UNDO, None)
    label = _label(engine, item_id)
    if not offer or tuple(offer[:2]) != (item_id, version) or clock() > offer[3]:
        flash(
            "error",
            f"Not undone: {label}: the time to undo has passed. Take the decision back "
            "from the Approved or Rejected view (with a reason).",
        )
        return
    verb = offer[2]
    try:
        decisions.decide(
            engine,
            lambda s: decisions.reopen(
                s, reviewer, item_id, version, "undone", details={"undo": verb}
            ),
        )
    except Conflict as conflict:
        _report_conflict(engine, current_filter(settings), conflict)
    except (NotAllowed, IllegalMove, LookupError) as exc:
        flash("error", f"Not undone: {label}: {exc}")
    else:
        flash("success", f"Undone: {label} is a draft again ({verb} taken back).")
        st.session_state[OPEN] = item_id
        st.session_state[GEN] = st.session_state.get(GEN, 0) + 1


def _undo_button(engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer) -> None:
    """Undo of the last decision, or of the last group action, while it lasts.
    Only numbers and fixed words in the labels: widget labels parse markdown."""
    group = st.session_state.get(forms.GROUP_UNDO)
    if group and time.monotonic() <= group[2]:
        st.button(
            f"Undo {len(group[0])}",
            key="undo_many",
            help=f"put the {len(group[0])} {group[1]} back in the queue",
            on_click=_undo_group,
            args=(engine, reviewer),
            width="stretch",
        )
        return
    st.session_state.pop(forms.GROUP_UNDO, None)
    offer = st.session_state.get(UNDO)
    if not offer:
        return
    item_id, version, verb, until = offer
    if clock() > until:
        st.session_state.pop(UNDO, None)
        return
    st.button(
        f"Undo #{item_id}",
        key="undo",
        help=f"put #{item_id} back in the queue ({verb} taken back)",
        on_click=_undo,
        args=(engine, settings, reviewer, item_id, version),
        width="stretch",
    )


def _undo_group(engine: Engine, reviewer: Reviewer) -> None:
    group = st.session_state.pop(forms.GROUP_UNDO, None)
    if not group or time.monotonic() > group[2]:
        flash("error", "Not undone: the time to undo has passed.")
        return
    try:
        report = bulk.undo_many(engine, reviewer, group[0], group[1])
    except NotAllowed as exc:
        flash("error", f"Not undone: {exc}")
        return
    for kind, text in report.messages(f"Undone ({group[1]} taken back), drafts again"):
        flash(kind, text)
    st.session_state[GEN] = st.session_state.get(GEN, 0) + 1


def _edit_values(item_id: int, version: int) -> tuple[str, str]:
    return (
        st.session_state.get(f"edit_headline_{item_id}_{version}") or "",
        st.session_state.get(f"edit_summary_{item_id}_{version}") or "",
    )


def _check_edit(
    settings: ReviewAppSettings,
    source: str | None,
    url: str | None,
    language: str | None,
    item_id: int,
    version: int,
) -> None:
    """The gates on the unsaved edit, read as saving it would: in the item's language."""
    headline, summary = _edit_values(item_id, version)
    gates = settings.gates
    results = decisions.check_text(
        source, url, headline, summary, gates.modes, gates.min_source_words, language
    )
    st.session_state["edit_check"] = {
        "key": (item_id, version),
        "draft": hl.draft_text(headline, summary),
        "results": [r.to_dict() for r in results],
    }


def _decide_text(
    engine: Engine,
    settings: ReviewAppSettings,
    change: Callable[..., Any],
    refused: str,
    hard_failed: str,
) -> Any | None:
    """Run an edit or a revert (`change(session, gate_modes=, min_source_words=)`);
    report a conflict, a refusal, or a saved text a hard gate fails (`hard_failed`
    with the reasons in its {}). The outcome when saved and no hard gate fails."""
    filt = current_filter(settings)
    gates = settings.gates
    try:
        outcome = decisions.decide(
            engine,
            lambda s: change(s, gate_modes=gates.modes, min_source_words=gates.min_source_words),
        )
    except Conflict as conflict:
        _report_conflict(engine, filt, conflict)
        return None
    except (NotAllowed, IllegalMove, LookupError) as exc:
        flash("error", f"{refused}: {exc}")
        return None
    st.session_state.pop("edit_check", None)
    if outcome.hard_failures:
        flash("error", hard_failed.format(_reasons(outcome.hard_failures)))
        return None
    return outcome


def _reasons(results: Iterable[Any]) -> str:
    return "; ".join(f"{r.gate}: {r.verdict.reason}" for r in results)


def _save_edit(
    engine: Engine,
    settings: ReviewAppSettings,
    reviewer: Reviewer,
    item_id: int,
    version: int,
    then_approve: bool,
) -> None:
    headline, summary = _edit_values(item_id, version)
    outcome = _decide_text(
        engine,
        settings,
        lambda s, **gates: decisions.edit(
            s, reviewer, item_id, version, headline, summary, **gates
        ),
        "Edit not saved",
        "Edit saved, but it cannot be approved while a hard gate fails: {}. Edit again or reject.",
    )
    if outcome is None:
        return
    flagged = _reasons(outcome.flagged)
    flash(
        "success",
        "Edit saved; every hard gate passes." + (f" Flagged: {flagged}" if flagged else ""),
    )
    if then_approve:
        _approve(engine, settings, reviewer, item_id, outcome.version, written_here=True)


def _revert(
    engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer, item_id: int, version: int
) -> None:
    """Back to the pipeline's draft after a failed (or regretted) edit."""
    outcome = _decide_text(
        engine,
        settings,
        lambda s, **gates: decisions.revert(s, reviewer, item_id, version, **gates),
        "Not reverted",
        "Reverted to the pipeline's draft, but a hard gate fails: {}.",
    )
    if outcome is None:
        return
    flash(
        "success",
        "Reverted to the pipeline's draft; every hard gate passes on it again. The audit "
        "keeps every text. (The pipeline's model checks are not counted again.)",
    )


# --------------------------------------------------------------------------- the page


def queue_view(engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer) -> None:
    filt = current_filter(settings)
    with Session(engine) as session:
        total = queue_count(session, filt)
        held = held_count(session, filt)
    filtered = filt.narrowed
    # Less empty space above the queue, so a draft, its checks and the buttons fit
    # a 1280x720 screen (tests/test_review_desk_browser.py). Fixed CSS, no text in it.
    st.html(COMPACT_CSS)
    # The count and the page keys share one row, and messages are out of the flow
    # (show_flash): however many decisions are made, the draft keeps its place.
    head = st.columns([6, 3, 3, 3], vertical_alignment="center") if total else [st.container()]
    head[0].html(
        '<div class="cd-count cd-queue-count" style="opacity:0.8;font-size:0.9rem">'
        '<h1 style="display:inline;'
        'font-size:inherit;font-weight:700;padding:0;margin:0">Review queue</h1> · '
        f"{count_text(total, filt.search)} pending draft{'' if total == 1 else 's'}"
        f"{' (filtered)' if filtered else ''}, {ORDERS.get(filt.order, '')}</div>"
    )
    shortcuts.install(settings.review.dwell_seconds)
    show_flash(log=True)
    if held:
        st.button(
            f"{held:,} more open by other editors: show them",
            key="show_held",
            on_click=_show_held,
            help="skipped because another editor opened them in the last few minutes",
        )
    item_id = st.session_state.get(OPEN)
    if total == 0 and item_id is None:
        plain(
            "Nothing to review." if not filtered else "No pending draft matches the filters.",
            kind="success",
        )
        _undo_button(engine, settings, reviewer)  # no draft: no strip to hold it
        _keep_in_address(None)
        return
    if total:
        shortcuts.toolbar(engine, filt, total, settings.review.reject_reasons, head[1:])
    if item_id is None:
        with Session(engine) as session:
            item_id = next_in_queue(session, filt)
        st.session_state[OPEN] = item_id
    rows = _queue_list(engine, filt, total, item_id) if total else []
    item_id = st.session_state.get(OPEN)  # a row picked in the list opens at once
    moved_before = st.session_state.pop(ADDRESS_MOVED, False)  # by the run before this one
    shown = st.session_state.get(SHOWN)
    if item_id is None or (shown and shown[0] == item_id):
        # Written once the draft has been on screen for a run already, not in the
        # run that first draws it: the new address costs one more run of the page,
        # and a quick second A press would reach the server after it.
        _keep_in_address(item_id)
    if item_id is not None:
        drawn = _item(engine, settings, reviewer, filt, item_id)
        hold_for_tests("middle")  # tests only: the draft and its buttons drawn, not the rest
        # Last, once the whole page is drawn and on its way to the browser: a run
        # cut short by the next key press never counts as having shown a draft.
        if drawn is not None:
            # The keyboard script's "this draft is on screen", drawn after all of it.
            st.html(shortcuts.draft_marker(*drawn), width="content")
            # The preset reasons the digits 1-9 put in the reason box (hidden, as text).
            st.html(shortcuts.presets_html(settings.review.reject_reasons), width="content")
            _mark_shown(*drawn, recount=moved_before)
    # Below the open draft, so the draft, its checks and its buttons keep the top of a
    # 1280x720 screen (tests/test_review_desk_browser.py).
    bulk_panel.bulk_panel(engine, settings, reviewer, rows, key=str(st.session_state.get(GEN, 0)))


def _digest(rows: Iterable[Any]) -> str:
    ids = ",".join(str(r.id) for r in rows)
    return hashlib.blake2s(ids.encode(), digest_size=6).hexdigest()


def _follow(engine: Engine, filt: QueueFilter, open_id: int | None, pages: int) -> None:
    """When the item on screen changed (J/K, a decision, a link, a pick), the list
    turns to its page: a new page picker starts there."""
    if open_id is None or st.session_state.get(FOLLOWED) == open_id:
        return
    with Session(engine) as session:
        page = page_of(session, filt, open_id)
    st.session_state[FOLLOWED] = open_id
    st.session_state["q_page_last"] = min(page, pages)
    st.session_state["q_page_gen"] = st.session_state.get("q_page_gen", 0) + 1


def _queue_list(engine: Engine, filt: QueueFilter, total: int, open_id: int | None) -> list[Any]:
    pages = max(1, math.ceil(total / PAGE_SIZE))
    _follow(engine, filt, open_id, pages)
    # The page picker's state is never written through st.session_state (Streamlit
    # warns when a widget with a default is also set that way, issue 12): a
    # filter change, a new page count or the open item moving to another page
    # starts a new picker, on the page it should show, clamped to the pages there are.
    gens = f"{st.session_state.get('q_filters_gen', 0)}_{st.session_state.get('q_page_gen', 0)}"
    key = f"q_page_{gens}_{pages}"
    kept = min(st.session_state.get("q_page_last") or 1, pages)
    # Folded to one line while an item is open, so the draft and its buttons fit
    # on the screen; a pick folds it again. The label is fixed (a label that
    # changes makes a new expander).
    picks = st.session_state.get(PICKS, 0)
    with st.expander("List of pending drafts", expanded=open_id is None, key=f"q_list_{picks}"):
        page = st.pagination(pages, default=kept, key=key) if pages > 1 else 1
        st.session_state["q_page_last"] = page
        st.html(
            f'<div class="cd-list-page" style="opacity:0.7;font-size:0.85rem">{total:,} drafts, '
            f"page {page:,} of {pages:,}. Pick a row to open it.</div>"
        )
        with Session(engine) as session:
            rows = queue_page(session, filt, page=page)
        similar = bulk.similar_counts(engine, [r.id for r in rows])
        here = [n for n, r in enumerate(rows) if r.id == open_id]
        event = table(
            [
                {
                    "": "▶" if r.id == open_id else "",
                    "#": r.id,
                    "age": age(r.published_at) if r.published_at else "-",
                    "ingested": age(r.seen_at),
                    "feed": r.feed,
                    "checks": r.badge,
                    "similar": bulk.similar_label(similar.get(r.id, 0)),
                    "assigned": r.assigned_to or "",
                    "headline": r.headline,
                }
                for r in rows
            ],
            # A new table whenever the open item changes: its highlighted row is
            # the item on screen (a table keeps a user's selection for its key).
            # And a new one when its rows change (another editor took one): a kept
            # selection is a row number, which would now point at another draft.
            key=f"q_table_{st.session_state.get(GEN, 0)}_{page}_{open_id}_{_digest(rows)}",
            on_select="rerun",
            selection_mode="single-row",
            selection_default={"selection": {"rows": here}} if here else None,
        )
        chosen = event.selection.rows if event is not None else []
        if chosen and rows[chosen[0]].id != open_id:
            st.session_state[PICKED] = (page, rows[chosen[0]].id)
            st.session_state[OPEN] = rows[chosen[0]].id
            st.session_state[PICKS] = picks + 1
            st.session_state[FOLLOWED] = rows[chosen[0]].id  # already on its page
            st.rerun()  # draw the page again around the picked item
    return rows


def _item(
    engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer, filt: QueueFilter, item_id: int
) -> tuple[int, int] | None:
    """Draw one item; (id, version) of the draft drawn, None when it left the queue."""
    with Session(engine) as session:
        view = item_view(session, item_id, filt.gates_off)
        original = decisions.pipeline_draft(session, item_id) if view and view.edited else None
        before, after = queue_neighbours(session, filt, item_id)
        position = queue_position(session, filt, item_id)
        total = queue_count(session, filt)
    if view is None:
        st.session_state[OPEN] = None
        st.rerun()
    item = view.item
    # Wide enough for "◀ Previous K" at 1024 px with the sidebar open (issue 12).
    nav = st.columns([3, 3, 5, 3], vertical_alignment="center")
    nav[0].button(
        "◀ Previous",
        key="nav_prev",
        shortcut="K",
        disabled=before is None,
        on_click=_open,
        args=(before,),
        width="stretch",
    )
    nav[1].button(
        "Next ▶",
        key="nav_next",
        shortcut="J",
        disabled=after is None,
        on_click=_open,
        args=(after,),
        width="stretch",
    )
    in_queue = item.status == DRAFT
    nav[2].html(
        f'<div class="cd-strip" style="opacity:0.8">Draft {position:,} of {total:,} in the '
        f"queue · item #{item.id}</div>"
        if in_queue
        else f'<div style="opacity:0.8">Item #{item.id}</div>'
    )
    if not in_queue:
        who = (view.last_event.actor if view.last_event else "someone").removeprefix("editor:")
        when = view.last_event.at if view.last_event else None
        plain(
            (f"This item left the queue: {item.status} by {who} at ", At(when), "."),
            kind="warning",
        )
    with nav[3]:
        _undo_button(engine, settings, reviewer)
    if in_queue:
        _presence(engine, settings, reviewer, item.id)
    draw_header(view)
    _checks_summary(view)
    if in_queue:
        bulk_panel.similar_box(engine, settings, reviewer, item.id)
        _actions(engine, settings, reviewer, view, original)
    draw_texts(view)
    desk_panels.draw_changes(original, (item.headline or "", item.summary or ""))
    desk_panels.draw_notes(engine, reviewer, item.id)
    if in_queue and reviewer.can_decide:
        _edit_box(engine, settings, reviewer, view)
    draw_verdicts(view, settings)
    with st.expander("Audit trail"):
        draw_audit_trail(engine, item.id)
    return (item.id, item.version) if in_queue else None


def _checks_summary(view: Any) -> None:
    """One line above the buttons: what the checks say, in words, so the decision
    can be made without scrolling to the Checks table (which has every reason).
    A model check that never ran is "not run", neither passed nor failed."""
    counted = [v for v in view.verdicts if view.counts(v)]
    ran = [v for v in counted if v.check_state == RAN]
    passed = sum(1 for v in ran if v.passed)
    blocked = sorted({_check_name(v.gate) for v in view.hard_failures})
    flagged = sorted({_check_name(v.gate) for v in view.flags})
    not_run = sorted({_check_name(v.gate) for v in counted if v.check_state != RAN})
    parts = [f"{passed} of {len(ran)} passed"]
    if blocked:
        parts.append("blocked by the " + ", ".join(blocked))
    if flagged:
        parts.append("flagged by the " + ", ".join(flagged))
    if not_run:
        parts.append("not run: " + ", ".join(not_run))
    colour = "#c5221f" if blocked else "#b58100" if flagged or not_run else "#1e8e3e"
    st.html(
        f'<div class="cd-checks-summary" style="font-size:0.9rem;border-left:4px solid {colour};'
        f'padding:0.15rem 0.6rem">Checks: {hl.escape_text(" · ".join(parts))} (details '
        "below the draft)</div>"
    )


def _check_name(gate: str) -> str:
    """A check in words: "faithfulness judge", "numbers check"."""
    if gate in MODEL_GATE_LABELS:
        return MODEL_GATE_LABELS[gate]
    return gate.removesuffix("_grounded").removesuffix("_verbatim").replace("_", " ") + " check"


def _open_for(seconds: float) -> str:
    minutes = int(seconds // 60)
    return "less than a minute" if minutes < 1 else f"{minutes} min"


def _presence(
    engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer, item_id: int
) -> None:
    """Who else has this draft open, and this editor's own soft claim on it, taken
    or refreshed on every run of the page that shows it (any click or key press):
    other editors' queues skip it for `[review] claim_seconds` after that.

    Between page runs the claim is kept fresh on the server, not by the page: the
    session's claim keeper (review_ui/desk/claim_keeper.py), a thread of its own that
    refreshes it every `claim_seconds / 3` while this browser session is
    connected, for at most `[review] claim_idle_seconds` after the last page run,
    and stops when the editor opens another draft, decides, leaves the queue or
    signs out. A closed tab's claim is not released: it lapses at its expiry.

    Not a Streamlit fragment with `run_every`, which would rerun part of the page
    on a timer: any fragment on the page changes how a key press during a rerun
    is handled, and two quick presses of A then approved the draft that was never
    seen (the dwell test in tests/test_review_browser.py fails with one). The
    keeper never makes the page run."""
    now = presence.utcnow()
    ttl = settings.review.claim_seconds
    keeping = reviewer.can_decide and settings.review.claim_idle_seconds > 0
    session_key = streamlit_adapter.this_session() if keeping else None
    if session_key is not None:
        # Before the claim moves: a keeper still refreshing the previous draft
        # could otherwise move it back.
        claim_keeper.stop_if_other(session_key, reviewer.name, item_id)
    # One write per item every few seconds at most, not one per rerun: J/K and
    # typing rerun the page often, and on SQLite every write is a commit.
    last = st.session_state.get(CLAIMED)
    due = not last or last[0] != item_id or (now - last[1]).total_seconds() > min(30, ttl / 10)
    with session_scope(engine) as session:
        if reviewer.can_decide and due:
            presence.hold(session, reviewer.name, item_id, ttl, now=now)
            st.session_state[CLAIMED] = (item_id, now)
        others = presence.others_on(session, item_id, reviewer.name, now=now)
    if session_key is not None:
        claim_keeper.keep(
            session_key,
            engine,
            reviewer.name,
            item_id,
            ttl=ttl,
            idle_seconds=settings.review.claim_idle_seconds,
            is_connected=streamlit_adapter.session_connected(session_key),
        )
    for other in others:
        plain(
            f"{other.editor} has had this open for "
            f"{_open_for(other.open_for(now).total_seconds())}",
            kind="warning",
            style="padding:0.3rem 0.8rem",
        )


def _actions(
    engine: Engine,
    settings: ReviewAppSettings,
    reviewer: Reviewer,
    view: Any,
    original: tuple[str, str] | None,
) -> None:
    item = view.item
    if not reviewer.can_decide:
        # Keyed: the A key finds it and says why nothing was approved (shortcuts.py).
        with st.container(key=f"viewer_{item.id}"):
            plain(
                "You are signed in as a viewer: you can read everything, but only editors decide.",
                kind="info",
            )
        return
    blocked = [f"{v.gate}: {v.reason}" for v in view.hard_failures]
    if settings.checks.require:  # a model check that did not judge the current text
        blocked += [
            f"{gate}: not run on the current text, and [checks] require = true"
            for gate in CHECK_GATES
            if gate not in view.gates_off and view.model_verdict(gate) is None
        ]
    approve_col, reject_col = st.columns([1, 2], vertical_alignment="bottom")
    with approve_col:
        st.button(
            "Approve",
            # The key names the draft: a click can only apply to the draft whose
            # button it was. A is read by review_ui/views/shortcuts.py, which measures the
            # time on screen from the moment the key was pressed.
            key=f"approve_{item.id}_{item.version}",
            type="primary",
            disabled=bool(blocked),
            on_click=_approve,
            args=(engine, settings, reviewer, item.id, item.version),
            width="stretch",
        )
    with reject_col:
        reason_key = f"reason_{item.id}_{item.version}"
        with st.form(f"reject_form_{item.id}_{item.version}", border=False, enter_to_submit=True):
            cols = st.columns([2, 2, 1], vertical_alignment="bottom")
            desk_panels.reason_inputs(cols[0], cols[1], settings, reason_key)
            cols[2].form_submit_button(
                "Reject",
                key=f"reject_submit_{item.id}_{item.version}",
                on_click=_reject,
                args=(engine, settings, reviewer, item.id, item.version, reason_key),
                width="stretch",
            )
    if blocked:
        reasons = "; ".join(blocked)
        plain(f"Approval blocked while a hard gate fails: {reasons}", kind="error")
    else:
        _flag_lines(engine, settings, reviewer, view)
    current = (item.headline or "", item.summary or "")
    if original is not None and original != current:
        st.button(
            "Revert to the pipeline's draft",
            key="edit_revert",
            help="Puts the pipeline's headline and summary back (the gates run on it again); "
            "the audit keeps every text.",
            on_click=_revert,
            args=(engine, settings, reviewer, item.id, item.version),
        )


def _flag_lines(engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer, view: Any) -> None:
    """Beside the buttons: what is wrong with a flagged draft, one plain line per
    problem; after A, the second key that approves it anyway (Y)."""
    item = view.item
    draft = hl.draft_text(item.headline, item.summary)
    marks = hl.draft_marks(draft, [verdict_info(v) for v in view.verdicts])
    lines = [f.line for f in flags.flags_of(view, draft, marks) if f.line]
    if not lines:
        return
    text = "Flagged: " + " ".join(lines[:2])
    if len(lines) > 2:
        text += f" (and {len(lines) - 2} more: the checks below the draft)"
    asked = st.session_state.get(FLAG_ASK) == (item.id, item.version)
    # One row, so asking for Y moves nothing on the screen (the draft stays in view).
    cols = st.columns([5, 1.4], vertical_alignment="center") if asked else [st.container()]
    confirm = (
        f'<div class="cd-flag-confirm" role="alert" style="font-weight:650;margin-top:0.2rem">'
        f"#{int(item.id)} is flagged: press Y (or the button) to approve it anyway.</div>"
        if asked
        else ""
    )
    cols[0].html(
        '<div class="cd-flag-why cd-text" style="background:#fff4d6;border-left:4px solid '
        f'#b58100;padding:0.3rem 0.7rem;font-size:0.9rem">{hl.escape_text(text)}{confirm}</div>'
    )
    if asked:
        cols[1].button(
            "Approve anyway (Y)",
            key=f"approve_flagged_{item.id}_{item.version}",
            type="primary",
            on_click=_approve,
            args=(engine, settings, reviewer, item.id, item.version),
            kwargs={"anyway": True},
            width="stretch",
        )


def _edit_box(engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer, view: Any) -> None:
    item = view.item
    key = (item.id, item.version)
    check = st.session_state.get("edit_check")
    with st.expander("Edit the draft", expanded=bool(check and check["key"] == key)):
        plain(
            "Every deterministic gate re-checks the edited text at once. An edit that fails "
            "a hard gate is saved for the record but cannot be approved.",
            style="font-size:0.85rem;opacity:0.8",
        )
        with st.form(f"edit_form_{item.id}_{item.version}", border=False, enter_to_submit=False):
            st.text_input(
                "Headline", value=item.headline or "", key=f"edit_headline_{item.id}_{item.version}"
            )
            st.text_area(
                "Summary",
                value=item.summary or "",
                height=180,
                key=f"edit_summary_{item.id}_{item.version}",
            )
            cols = st.columns(3)
            source, url = item.source_text, item.source_url
            cols[0].form_submit_button(
                "Check",
                key="edit_check_btn",
                on_click=_check_edit,
                args=(settings, source, url, item.language, item.id, item.version),
                width="stretch",
            )
            cols[1].form_submit_button(
                "Save edit",
                key="edit_save",
                on_click=_save_edit,
                args=(engine, settings, reviewer, item.id, item.version, False),
                width="stretch",
            )
            cols[2].form_submit_button(
                "Save and approve",
                key="edit_save_approve",
                type="primary",
                on_click=_save_edit,
                args=(engine, settings, reviewer, item.id, item.version, True),
                width="stretch",
            )
        if check and check["key"] == key:
            _show_check(check)


def _show_check(check: dict[str, Any]) -> None:
    infos = [
        hl.VerdictInfo(r["gate"], r["passed"], r["mode"], r["reason"], r["evidence"])
        for r in check["results"]
    ]
    draft = check["draft"]
    marks = hl.draft_marks(draft, infos)
    hard = [i for i in infos if not i.passed and i.mode == "discard"]
    if hard:
        plain(
            "Check: this text cannot be approved: "
            + "; ".join(f"{i.gate}: {i.reason}" for i in hard),
            kind="error",
        )
    else:
        plain("Check: every hard gate passes on this text (not saved yet).", kind="success")
    st.html(hl.block(hl.render(draft, marks)))
    table(
        [{"check": i.gate, "passed": i.passed, "mode": i.mode, "reason": i.reason} for i in infos]
    )
