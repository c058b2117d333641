"""The review queue's page. `main(settings)` draws it on every Streamlit rerun.

The settings are handed in by the entry script (`copydesk/review_app.py`, the
one `copydesk review` runs): the review UI never reads config.toml or imports
the application. Nothing but the sign-in form is drawn until someone has
signed in.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui.desk.decisions import gates_off
from review_ui.desk.highlight import escape_text
from review_ui.desk.queries import QueueFilter, queue_count
from review_ui.desk.session_tokens import SessionSecretError
from review_ui.settings import ReviewAppSettings
from review_ui.views import auth
from review_ui.views.holds import hold_for_tests
from review_ui.views.lists import decided_view, discarded_view
from review_ui.views.publish import (
    approved_view,
    delivery_failed_view,
    published_view,
    source_changed_view,
)
from review_ui.views.queue import (
    leave_queue,
    open_from_link,
    queue_view,
    release_claim,
    sidebar_filters,
)
from review_ui.views.shortcuts import answer_marker
from review_ui.views.stats import stats_view
from review_ui.views.widgets import flash_run_completed, flash_run_starts, plain
from store import audit_chain
from store.db import StoreError, open_store

VIEWS = (
    "Queue",
    "Discarded",
    "Approved",
    "Rejected",
    "Published",
    "Delivery failed",
    "Retracted",
    "Source changed",
    "Stats",
)


@st.cache_resource(show_spinner=False)
def engine_for(url: str) -> Engine:
    """One engine (and connection pool) per database for the whole server."""
    return open_store(url, create=False)  # only init and migrate create one (issue 22)


def cannot_start(problem: object) -> None:
    """One line on the page instead of a traceback (bad config, unreachable database)."""
    st.set_page_config(page_title="copydesk review", layout="wide")
    plain(f"copydesk review cannot start: {problem}", kind="error")
    st.stop()


def _signing_out(engine: Engine, sign_out: Callable[[], None]) -> None:
    release_claim(engine)
    sign_out()


def _password_sign_out(engine: Engine, settings: ReviewAppSettings) -> None:
    release_claim(engine)
    auth.end_session(engine, settings)


def main(settings: ReviewAppSettings) -> None:
    hold_for_tests("start")
    answer_marker()  # which press started this run: the keyboard script's answer
    flash_run_starts()
    try:
        _main(settings)
    finally:
        hold_for_tests("end")
    flash_run_completed()  # not reached by a run cut short (a rerun or a stop)


def _main(settings: ReviewAppSettings) -> None:
    try:
        engine = engine_for(settings.database_url)
    except StoreError as exc:
        cannot_start(exc)
        return
    if settings.audit_anchor:  # every decision advances it (store/audit_chain.py)
        audit_chain.keep_anchor(engine, Path(settings.audit_anchor))
    if settings.review.auth == "password":
        try:  # made on first use; a file others may read is refused
            auth.session_secret(settings)
        except SessionSecretError as exc:
            cannot_start(exc)
            return
    st.set_page_config(page_title="copydesk review", layout="wide")

    reviewer = auth.require_sign_in(engine, settings)
    if open_from_link():  # ?item=42: that item, in the queue view
        st.session_state["view"] = "Queue"

    with st.sidebar:
        st.html(
            '<div style="font-weight:700;font-size:1.1rem">copydesk review</div>'
            '<div class="cd-who" style="font-size:0.9rem">Signed in as '
            f"<b>{escape_text(reviewer.name)}</b> ({escape_text(reviewer.role)})</div>"
        )
        if settings.review.auth == "oidc":
            st.button(
                "Sign out", key="sign_out", on_click=_signing_out, args=(engine, auth.sign_out_oidc)
            )
        else:
            st.button(
                "Sign out", key="sign_out", on_click=_password_sign_out, args=(engine, settings)
            )
            auth.keep_cookie(settings)
        # One pending count everywhere (issue 25): the queue's own count for this
        # editor without filters (drafts other editors have open are offered apart).
        mine = QueueFilter(editor=reviewer.name, gates_off=gates_off(settings.gates.all_modes()))
        with Session(engine) as session:
            pending = queue_count(session, mine)
        # Fixed option labels: a label that changed after each decision ("Queue (4)"
        # then "Queue (3)") made the radio show nothing selected (issue 12). The
        # pending count is a line of its own.
        view = st.radio("View", VIEWS, key="view")
        st.html(f'<div class="cd-pending" style="font-size:0.85rem">{pending:,} pending</div>')
    if view == "Queue":
        sidebar_filters(engine)
        st.sidebar.caption("Keys: J next · K previous · A approve · R reject · E edit · ? all")
        queue_view(engine, settings, reviewer)
        return
    leave_queue(engine)  # moved on from the queue: the draft is free, the address names none
    if view == "Discarded":
        discarded_view(engine, settings)
    elif view == "Approved":
        approved_view(engine, settings, reviewer)
    elif view == "Published":
        published_view(engine, settings, reviewer)
    elif view == "Delivery failed":
        delivery_failed_view(engine, settings, reviewer)
    elif view == "Retracted":
        decided_view(engine, settings, "retracted")
    elif view == "Source changed":
        source_changed_view(engine, settings, reviewer)
    elif view == "Rejected":
        decided_view(engine, settings, "rejected", reviewer)
    else:
        stats_view(engine)
