"""One item on screen: headline, draft beside its source with the evidence marked,
every gate verdict, the model checks, and the audit trail. Read-only: the
queue adds the decision buttons."""

from __future__ import annotations

import streamlit as st
from sqlalchemy.engine import Engine

from guards.checks import RAN
from guards.registry import CHECK_GATES
from review_ui.desk import flags, times
from review_ui.desk import highlight as hl
from review_ui.desk.queries import (
    MODEL_GATE_LABELS,
    ItemView,
    age,
    audit_trail,
    stamp,
    verdict_info,
)
from review_ui.settings import ReviewAppSettings
from review_ui.views import audit_view, check_panel, desk_panels
from review_ui.views.check_panel import selected_mark
from review_ui.views.widgets import heading, plain, source_link, table
from store.history import no_draft_reason

SOURCE_HEIGHT = 560  # px: a long source scrolls beside the draft
LONG_SOURCE = 2500  # characters: shorter sources are shown whole


def meta_line(view: ItemView) -> str:
    item = view.item
    parts = [
        view.feed or "no feed (submitted)",
        f"{age(item.published_at or item.seen_at)} old",
        f"seen {stamp(item.seen_at)}",
        f"item #{item.id}",
        f"version {item.version}",
    ]
    if item.summariser:
        parts.append(f"drafted by {item.summariser}")
    if item.recorded_reply:
        parts.append("recorded reply (demo), not a live model call")
    if view.edited:
        parts.append("edited by an editor")
    return " · ".join(parts)


def draw_header(view: ItemView, *, banner: bool = True) -> None:
    """Headline and the one line an editor needs: feed, age, item, version; and
    (`banner`) a banner when the model checks did not run on this draft (the queue
    says so in its checks summary instead)."""
    item = view.item
    heading(item.headline or item.title or "(no headline)")
    line = meta_line(view)  # one line: the whole of it on hover, with UTC
    seen = times.moment(item.seen_at)
    hover = f"{line} (seen {seen.utc})" if seen else line
    st.html(
        f'<div class="cd-text cd-meta" title="{hl.escape_text(hover)}" style="font-size:0.8rem;'
        'opacity:0.8;white-space:nowrap;overflow:hidden;text-overflow:ellipsis">'
        f"{hl.escape_text(line)}</div>"
    )
    if banner:
        check_panel.draw_banner(view)


def draw_texts(view: ItemView) -> None:
    """The draft beside its source, each grounded or missing term marked."""
    item = view.item
    infos = [verdict_info(v) for v in view.verdicts]
    draft = hl.draft_text(item.headline, item.summary)
    headline_end = len(item.headline or "")
    d_marks = hl.draft_marks(draft, infos)
    # Flagged sentences are marked in the draft itself, with nothing green inside.
    flagged = flags.spans(flags.flags_of(view, draft, d_marks))
    s_marks = hl.source_marks(item.source_text or "", infos)
    picked = selected_mark(view, item.source_text or "")
    if picked is not None:  # the claim picked in the claims table: its passage wins
        s_marks = hl.resolve([*s_marks, picked])
    left, right = st.columns(2, gap="medium")
    not_made = no_draft_reason(item, view.verdicts)
    with left:
        st.html('<div style="font-weight:600">Draft</div>')
        if not_made:  # a source gate discarded it before summarising: no draft to show
            plain(not_made, kind="warning")
        else:
            with st.container(border=True):
                st.html(
                    hl.block(
                        flags.render(draft, d_marks, flagged, 0, headline_end),
                        style="font-weight:650;font-size:1.05rem",
                    )
                )
                # The keyboard script watches .cd-draft-body: "seen" means in view.
                st.html(
                    '<div class="cd-draft-body">'
                    + hl.block(flags.render(draft, d_marks, flagged, headline_end + 2))
                    + "</div>"
                )
            st.html(hl.legend())
        source_link(item.source_url or item.original_url, key=f"src_{item.id}_{item.version}")
    with right:
        words = f" · {item.word_count} words" if item.word_count else ""
        st.html(f'<div style="font-weight:600">Source text{hl.escape_text(words)}</div>')
        source = item.source_text or ""
        height = SOURCE_HEIGHT if len(source) > LONG_SOURCE else "content"
        with st.container(border=True, height=height):
            if source:
                st.html(hl.block(hl.render(source, s_marks)))
            else:
                plain("(no source text stored)")


def draw_item(view: ItemView) -> None:
    draw_header(view)
    draw_texts(view)


def _result(passed: bool, mode: str, off: bool = False, ran: bool = True) -> str:
    if not ran:  # a model check that never ran did not fail: nobody judged the draft
        return "not run"
    if off:
        return ("passed" if passed else "failed") + " (gate now off: not counted)"
    if passed:
        return "passed"
    return "FAILED" if mode == "discard" else f"failed ({mode})"


def draw_verdicts(view: ItemView, settings: ReviewAppSettings) -> None:
    """Every verdict on the current text with its reason, then the model checks or
    why they did not run on it. A gate switched off since it ran is shown as off."""
    st.html('<div style="font-weight:600">Checks</div>')
    if view.edited:
        plain(
            "These are the checks of the current, edited text; the pipeline's checks of its "
            "own draft are in the audit trail.",
            style="font-size:0.85rem;opacity:0.8",
        )
    rows = [
        {
            "check": v.gate,
            "result": _result(v.passed, v.mode, not view.counts(v), v.check_state == RAN),
            "mode": v.mode if view.counts(v) else f"off now (was {v.mode})",
            "stage": v.stage,
            "reason": v.reason,
        }
        for v in view.verdicts
    ]
    if rows:
        table(rows, key=f"verdicts_{view.item.id}_{view.item.version}")
    else:
        plain("No gate verdicts recorded for this item.", kind="warning")
    for gate in CHECK_GATES:
        verdict = view.model_verdict(gate)
        label = MODEL_GATE_LABELS[gate]
        if verdict is None:
            earlier = view.earlier_verdict(gate)
            if earlier is not None:
                before = _result(earlier.passed, earlier.mode, ran=earlier.check_state == RAN)
                plain(
                    f"{label}: not run on the edited text (it {before} on the pipeline's "
                    f"draft, which no longer applies: {earlier.reason})",
                    style="opacity:0.8",
                )
            else:
                plain(f"{label}: not run ({_why_not_run(gate, settings)})", style="opacity:0.8")
            continue
        off = not view.counts(verdict)
        if verdict.check_state != RAN:
            plain(f"{label}: {verdict.reason}", kind="warning")
        else:
            plain(f"{label}: {_result(verdict.passed, verdict.mode, off)}: {verdict.reason}")
        if check_panel.draw_model_check(view, verdict):
            continue
        entries = verdict.evidence if isinstance(verdict.evidence, list) else None
        if entries and all(isinstance(e, dict) for e in entries):
            table(entries, key=f"model_{gate}_{view.item.id}")
    with st.expander("Evidence of each check (JSON)"):
        for v in view.verdicts:
            plain(f"{v.stage} / {v.gate}: {v.reason}", style="font-weight:600")
            st.json(v.evidence if v.evidence is not None else {}, expanded=False)


def _why_not_run(gate: str, settings: ReviewAppSettings) -> str:
    from guards.registry import ALL_GATES

    if gate not in ALL_GATES:
        return "not configured"
    if settings.gates.mode(gate) == "off":
        return "off in config.toml"
    if gate in CHECK_GATES:
        return "not configured"  # drafts made before the model checks existed
    return "no verdict recorded for this item"


def draw_audit_trail(engine: Engine, item_id: int) -> None:
    """The same history `copydesk audit` prints, drawn with text-only widgets."""
    doc = audit_trail(engine, item_id)
    if doc is None:
        plain(f"No item #{item_id}.", kind="warning")
        return
    events = doc.get("events") or []
    zone = times.editor_zone()
    st.html(
        '<div style="font-weight:600">Status moves</div><div style="font-size:0.8rem;'
        f'opacity:0.7">Times in {hl.escape_text(str(zone))}; hover a time for UTC.</div>'
    )
    audit_view.draw_events(events, zone, key=f"trail_events_{item_id}")
    for name, title in (("verdicts", "Gate verdicts"), ("model_calls", "Model calls")):
        rows = doc.get(name) or []
        st.html(f'<div style="font-weight:600">{title} ({len(rows)})</div>')
        audit_view.trail_table(
            [{k: v for k, v in r.items() if k != "evidence"} for r in rows],
            zone,
            key=f"trail_{name}_{item_id}",
        )
    audit_view.draw_missing_quotes(doc.get("verdicts") or [], key=f"trail_quotes_{item_id}")
    desk_panels.draw_audit_edits(doc)
    notes = doc.get("notes") or []
    if notes:
        st.html(f'<div style="font-weight:600">Notes ({len(notes)})</div>')
        audit_view.trail_table(notes, zone, key=f"trail_notes_{item_id}")
    if any(isinstance(v, dict) for v in doc.values()):
        st.html('<div style="font-weight:600">Item</div>')
        audit_view.draw_facts(doc, zone, key=f"trail_facts_{item_id}")
    with st.expander("Raw audit document (JSON)"):
        st.json(doc, expanded=False)
