"""The Approved view (Publish now, take an approval back), the Published view (each
item's deliveries), the Delivery failed view (what a target refused or keeps
failing, with Retry) and the Source changed view (summaries a changed source no
longer grounds). Untrusted text (headlines, a target's answer) goes through `plain`
and `table`, never markdown."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st
from sqlalchemy.engine import Engine
from sqlmodel import Session

from publish import worker
from publish.service import NotPublishable, PublishReport
from review_ui.desk import publishing
from review_ui.desk.decisions import NotAllowed, Reviewer, conflict_message
from review_ui.desk.queries import decided_page, stamp
from review_ui.settings import ReviewAppSettings
from review_ui.views import forms
from review_ui.views.lists import decided_view
from review_ui.views.widgets import (
    At,
    flash,
    html_table,
    keep_flash_for_rerun,
    plain,
    show_flash,
    table,
    zone_help,
)
from store.deliveries import TargetState, Trouble, target_states, troubles
from store.status import Conflict, IllegalMove


def approved_view(engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer) -> None:
    show_flash()
    job = publishing.current_job(engine)
    running = job is not None and job.state == worker.RUNNING
    if running:
        _progress(engine, settings)
    elif job is not None:
        _last_publish(job)
    if reviewer.can_decide:
        st.button(
            "Publish now…",
            key="publish_now",
            type="primary",
            on_click=_ask_publish,
            args=(engine, settings),
            disabled=running,  # one publish at a time (publish/worker.py refuses a second)
            help="lists what would be delivered to the configured targets, then asks; "
            "the publish then runs in the background",
        )
        # What it will publish, where the editor is looking, before anything is sent.
        forms.confirmation("publish_now", _publish_confirmed(engine, settings, reviewer))
        _take_back_form(engine, reviewer)
    decided_view(engine, settings, "approved")
    _delivery_states(engine, settings)


STATES_SHOWN = 200  # approved items in the delivery-state table, oldest approval first


def _delivery_states(engine: Engine, settings: ReviewAppSettings) -> None:
    """Each approved item's state on each configured target (README: the Approved
    view shows it): delivered, failed, sending, pending (and its next try), or not
    sent yet. Refused ones are retried from the Delivery failed view."""
    names = [t.name for t in settings.publish.targets]
    with Session(engine) as session:
        items = publishing.approved_items(session, settings.review.undo_seconds)[:STATES_SHOWN]
        states = target_states(session, [i.item_id for i in items], names)
    if not items:
        return
    st.html('<div style="font-size:1.2rem;font-weight:650">Delivery state per target</div>')
    table(
        [
            {
                "#": i.item_id,
                "headline": i.headline,
                **{name: _state_label(state) for name, state in states[i.item_id].items()},
                "note": "inside its Undo window" if i.in_undo_window else "",
            }
            for i in items
        ],
        key="approved_delivery_states",
    )


def _state_label(state: TargetState) -> str:
    if state.state == "pending" and state.next_attempt_at is not None:
        return f"pending: next try after {stamp(state.next_attempt_at)}"
    return state.state


def _ask_publish(engine: Engine, settings: ReviewAppSettings) -> None:
    """Publish now lists the approved items first. One approved within its Undo
    window is named and left for later: it is never shipped while Undo still
    offers to take it back."""
    window = settings.review.undo_seconds
    with Session(engine) as session:
        items = publishing.approved_items(session, window)
    ready = [i for i in items if not i.in_undo_window]
    waiting = [i for i in items if i.in_undo_window]
    notes = [
        f"Not now: #{i.item_id} {i.headline}: approved {stamp(i.decided_at)}, still inside "
        f"its Undo window ({window:g} s); publish again after it."
        for i in waiting
    ]
    if not ready:
        flash("info", "Nothing to publish now." + (" " + " ".join(notes) if notes else ""))
        return
    forms.ask(
        forms.Ask(
            where="publish_now",
            verb="publish",
            question=f"Publish {len(ready)} approved item{'' if len(ready) == 1 else 's'} to "
            f"{', '.join(t.name for t in settings.publish.targets) or 'no target'}?",
            items={i.item_id: i.version for i in ready},
            labels={i.item_id: f"#{i.item_id} {i.headline}" for i in ready},
            notes=notes,
        )
    )


def _publish_confirmed(
    engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer
) -> Callable[[forms.Ask, dict[int, int]], None]:
    def act(request: forms.Ask, chosen: dict[int, int]) -> None:
        _publish_now(engine, settings, reviewer, list(chosen))

    return act


def _publish_now(
    engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer, item_ids: list[int]
) -> None:
    """Hands the publish to a background worker and returns: the page shows its
    progress, then what it did (`_progress`, `_last_publish`)."""
    try:
        publishing.publish_in_background(engine, settings, reviewer, item_ids)
    except NotAllowed as exc:
        flash("error", str(exc))
    except worker.AlreadyRunning as exc:
        flash("info", f"Not started: {exc}; its progress is shown here.")
    except ValueError as exc:
        flash("error", f"Not published: {exc}")


PROGRESS_SECONDS = 1.0  # how often the progress line is drawn again while a publish runs


@st.fragment(run_every=PROGRESS_SECONDS)
def _progress(engine: Engine, settings: ReviewAppSettings) -> None:
    """The running publish, drawn again every PROGRESS_SECONDS (only this part of the
    page); once it has ended, the whole page is drawn again with what it did."""
    job = publishing.current_job(engine)
    if job is None or job.state != worker.RUNNING:
        keep_flash_for_rerun()  # the answers on screen stay: the editor pressed nothing
        st.rerun(scope="app")
        return
    with Session(engine) as session:
        made, total = publishing.job_progress(session, job, settings)
    targets = ", ".join(t.name for t in settings.publish.targets)
    plain(
        f"Publishing {len(job.item_ids)} item(s) to {targets}, started by {job.started_by} at "
        f"{stamp(job.started_at)}: {made} of {total} deliveries made. It runs in the "
        "background: you can leave this page.",
        kind="info",
    )
    st.progress(made / total if total else 0.0)


def _last_publish(job: worker.Job) -> None:
    who = f"Last publish (started by {job.started_by}, ended {stamp(job.finished_at)})"
    if job.report is None:
        plain(
            f"{who} stopped: {job.error}. What it delivered stays delivered and is not sent "
            "again; Publish now again finishes the rest (a delivery it was sending waits "
            "until its claim runs out, [publish] lease_seconds).",
            kind="error",
        )
        return
    report = job.report
    plain(
        f"{who}: Published {len(report.published)} item(s); "
        f"{len(report.delivered)} deliveries made.",
        kind="success" if report.clean else "warning",
    )
    _report_problems(report, lambda kind, text: plain(text, kind=kind))


def _report_problems(report: PublishReport, say: Callable[[str, str], None] = flash) -> None:
    for item_id, target, why in report.failed:
        say("error", f"Item {item_id}: {target} refused it for good: {why}")
    for item_id, target, why in report.pending:
        say("warning", f"Item {item_id}: {target} will be retried: {why}")
    for item_id, why in report.blocked:
        say("error", f"Item {item_id} not sent: {why}")


def _take_back_form(engine: Engine, reviewer: Reviewer) -> None:
    texts = ("take_back", "Take an approval back", "Take back to draft")
    forms.decided_form(engine, "approved", texts, partial(_take_back, engine, reviewer))


def _take_back(engine: Engine, reviewer: Reviewer, item_id: int, version: int, reason: str) -> bool:
    try:
        publishing.take_back(engine, reviewer, item_id, version, reason)
    except Conflict as exc:
        flash("error", conflict_message(exc))
    except (NotAllowed, IllegalMove, ValueError, LookupError) as exc:
        flash("error", f"Not taken back: #{item_id}: {exc}")
    else:
        flash("success", f"Item #{item_id} is a draft again.")
        return True
    return False


def published_view(engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer) -> None:
    show_flash()
    if reviewer.can_decide:
        _retract_form(engine, settings, reviewer)
    decided_view(engine, settings, "published")
    with Session(engine) as session:
        rows = decided_page(session, "published", page=1)
        summaries = publishing.delivery_summaries(session, [r.id for r in rows])
    if not rows:
        return
    st.html('<div style="font-size:1.2rem;font-weight:650">Deliveries</div>')
    table(
        [{"#": r.id, "headline": r.headline, "deliveries": summaries.get(r.id, "-")} for r in rows],
        key="published_deliveries",
    )
    picked = st.selectbox(
        "Deliveries of item",
        [r.id for r in rows],
        format_func=lambda i: f"#{i}",
        key="published_pick",
    )
    with Session(engine) as session:
        detail = publishing.deliveries(session, picked)
    # Escaped HTML tables where a cell holds a time: the editor's zone, UTC on hover
    # (issue 25's one time zone rule; st.dataframe cannot put a hover on a cell).
    html_table(
        [
            {
                "target": d.target,
                "kind": d.kind,
                "state": d.state,
                "attempts": d.attempts,
                "delivered": d.delivered_at,
                "last error": d.last_error or "",
            }
            for d in detail
        ],
        helps={"delivered": zone_help()},
    )


def _retract_form(engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer) -> None:
    """Retract a published item from the desk: a reason is required, editors only."""
    texts = ("retract", "Retract a published item", "Retract")
    forms.decided_form(engine, "published", texts, partial(_retract, engine, settings, reviewer))


def _retract(
    engine: Engine,
    settings: ReviewAppSettings,
    reviewer: Reviewer,
    item_id: int,
    version: int,
    reason: str,
) -> bool:
    try:
        report = publishing.retract_now(engine, settings, reviewer, item_id, version, reason)
    except Conflict as exc:
        flash("error", conflict_message(exc))
    except (NotAllowed, NotPublishable, ValueError) as exc:
        flash("error", f"Not retracted: #{item_id}: {exc}")
    else:
        sent = f"; retractions sent: {len(report.delivered)}" if report else ""
        flash("success", f"Retracted #{item_id} (reason: {reason.strip()}){sent}.")
        return True
    return False


def delivery_failed_view(engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer) -> None:
    """Each item a target refused (failed) or keeps failing (waiting for its next
    try), with the target's answer and the tries so far; an editor's Retry sends
    it again now (audited, publish.service.retry_failed)."""
    show_flash()
    st.html('<h1 style="font-size:1.6rem;font-weight:700;margin:0;padding:0">Delivery failed</h1>')
    with Session(engine) as session:
        found = troubles(session)
    if not found:
        plain("Every delivery went out, or is on its way.", kind="info")
        return
    by_item: dict[int, list[Trouble]] = {}
    for trouble in found:
        by_item.setdefault(trouble.item_id, []).append(trouble)
    for item_id, rows in by_item.items():
        first = rows[0]
        with st.container(border=True, key=f"failed_{item_id}"):
            plain(f"#{item_id} {first.headline}", style="font-weight:650")
            plain(
                f"{first.item_status.capitalize()}: its {_kinds(rows)} did not reach "
                f"{', '.join(t.target for t in rows)}."
            )
            html_table(
                [
                    {
                        "target": t.target,
                        "kind": t.kind,
                        "state": "failed" if t.state == "failed" else "pending",
                        "next try": None if t.state == "failed" else t.next_attempt_at,
                        "attempts": t.attempts,
                        "answer": t.error,
                        "since": t.since,
                    }
                    for t in rows
                ],
                helps={"next try": zone_help(), "since": zone_help()},
            )
            if reviewer.can_decide:
                st.button(
                    f"Retry #{item_id}",
                    key=f"retry_{item_id}",
                    on_click=_retry,
                    args=(engine, settings, reviewer, item_id),
                    help="send it again now to the targets above (recorded in its audit trail)",
                )


def _kinds(rows: list[Trouble]) -> str:
    kinds = {t.kind for t in rows}
    return (
        "retraction"
        if kinds == {"retract"}
        else "publication"
        if kinds == {"publish"}
        else "deliveries"
    )


def _retry(engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer, item_id: int) -> None:
    try:
        again, report = publishing.retry_now(engine, settings, reviewer, item_id)
    except NotAllowed as exc:
        flash("error", str(exc))
        return
    except ValueError as exc:
        flash("error", f"Not retried: #{item_id}: {exc}")
        return
    if report is None:
        flash("info", f"Nothing to retry for #{item_id}: it was retried or sent meanwhile.")
        return
    sent = [t for i, t, _ in report.delivered if i == item_id]
    flash(
        "success" if sent else "warning",
        f"Retried #{item_id}: delivered to {', '.join(sent) or 'no target'}"
        + ("; it is published." if item_id in report.published else "."),
    )
    _report_problems(report)


def source_changed_view(engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer) -> None:
    show_flash()
    st.html('<h1 style="font-size:1.6rem;font-weight:700;margin:0;padding:0">Source changed</h1>')
    with Session(engine) as session:
        changes = publishing.open_source_changes(session)
    if not changes:
        plain("No published summary is waiting on a changed source.", kind="info")
        return
    for change in changes:
        with st.container(border=True):
            plain(f"#{change.item_id} {change.headline}", style="font-weight:650")
            plain(("Source re-read ", At(change.checked_at), f": {change.source_url or ''}"))
            for failure in change.failing:
                plain(f"{failure['gate']}: {failure['reason']}", kind="error")
            for n, passage in enumerate(change.passages, 1):
                cols = st.columns(2)
                with cols[0]:
                    plain(f"Before ({n})", style="font-weight:600")
                    plain(passage.get("before", ""), style="white-space:pre-wrap")
                with cols[1]:
                    plain(f"After ({n})", style="font-weight:600")
                    plain(passage.get("after", ""), style="white-space:pre-wrap")
            if reviewer.can_decide:
                # The summary is wrong now: retract it (a reason), and the check is closed.
                forms.item_form(
                    f"source_retract_{change.check_id}",
                    f"Retract #{change.item_id}",
                    {change.item_id: (change.version, f"#{change.item_id} {change.headline}")},
                    "Retract",
                    partial(_retract_changed, engine, settings, reviewer, change.check_id),
                )
                # The summary can be put right: a correction draft, republished later
                # under the same id with this note.
                forms.item_form(
                    f"source_correct_{change.check_id}",
                    f"Reopen #{change.item_id} as a correction",
                    {change.item_id: (change.version, f"#{change.item_id} {change.headline}")},
                    "Reopen as a correction",
                    partial(_correct_changed, engine, reviewer, change.check_id),
                )
                st.button(
                    "Reviewed",
                    key=f"resolve_{change.check_id}",
                    on_click=_resolve,
                    args=(engine, reviewer, change.check_id),
                    help="mark as seen: the summary stands",
                )


def _retract_changed(
    engine: Engine,
    settings: ReviewAppSettings,
    reviewer: Reviewer,
    check_id: int,
    item_id: int,
    version: int,
    reason: str,
) -> bool:
    if not _retract(engine, settings, reviewer, item_id, version, reason):
        return False
    _resolve(engine, reviewer, check_id)
    return True


def _correct_changed(
    engine: Engine, reviewer: Reviewer, check_id: int, item_id: int, version: int, note: str
) -> bool:
    try:
        publishing.reopen_as_correction(engine, reviewer, item_id, version, note)
    except Conflict as exc:
        flash("error", conflict_message(exc))
    except (NotAllowed, IllegalMove, ValueError, LookupError) as exc:
        flash("error", f"Not reopened: #{item_id}: {exc}")
    else:
        _resolve(engine, reviewer, check_id)
        flash(
            "success",
            f"#{item_id} is a correction draft in the queue; once approved it is republished "
            "under the same id with the note.",
        )
        return True
    return False


def _resolve(engine: Engine, reviewer: Reviewer, check_id: int) -> None:
    try:
        publishing.resolve_source_change(engine, reviewer, check_id)
    except NotAllowed as exc:
        flash("error", str(exc))
