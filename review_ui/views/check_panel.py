"""The model checks on screen: a banner when they did not run, the claims table
(pick a claim to highlight its passage in the source pane), and each judged
sentence with its error kinds, rewrite and settling passage.

Everything here is model output or article text: it goes through
`highlight.escape_text` into `st.html`, never through markdown. The only
widget is a picker whose options are our own labels ("claim 1"...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from guards.checks import RAN
from review_ui.desk import highlight as hl
from review_ui.desk.queries import MODEL_GATE_LABELS, ItemView
from review_ui.views.widgets import plain
from store.models import GateVerdict

_CELL = "border:1px solid #d0d4da;padding:4px 6px;vertical-align:top;text-align:left"
_TABLE = "border-collapse:collapse;width:100%;font-size:0.88rem;margin:0.3rem 0"
_OUTCOME_STYLE = {
    "supported": "color:#0b3d17",
    "not supported": "color:#5c0000;font-weight:600",
}


def draw_banner(view: ItemView) -> None:
    """A warning above the draft when its model checks did not run."""
    missing = [v for v in view.draft_verdicts if v.check_state != RAN]
    if not missing:
        return
    what = "; ".join(f"{MODEL_GATE_LABELS.get(v.gate, v.gate)}: {v.reason}" for v in missing)
    text = (
        f"Model checks did not run on this draft ({what}). No model has checked its claims "
        "or judged its sentences: read it against the source."
    )
    if any(v.mode == "discard" for v in missing):
        text += " [checks] require = true: it cannot be approved until they run."
    plain(text, kind="warning")


def picker_key(view: ItemView) -> str:
    return f"claim_pick_{view.item.id}_{view.item.version}"


def selected_mark(view: ItemView, source: str) -> hl.Mark | None:
    """The passage of the claim picked in the claims table, to mark in the source."""
    picked = st.session_state.get(picker_key(view))
    verdict = view.model_verdict("claims_supported")
    if not isinstance(picked, int) or verdict is None or not isinstance(verdict.evidence, list):
        return None
    if not 1 <= picked <= len(verdict.evidence):
        return None
    entry = verdict.evidence[picked - 1]
    span = entry.get("source_span") if isinstance(entry, Mapping) else None
    if not (isinstance(span, list) and len(span) == 2 and 0 <= span[0] < span[1] <= len(source)):
        return None
    return hl.Mark(span[0], span[1], hl.SELECTED, f"claim {picked}: its passage")


def _cell(text: Any, style: str = "") -> str:
    shown = "(none)" if text is None or text == "" else str(text)
    return f'<td style="{_CELL};{style}">{hl.escape_text(shown)}</td>'


def draw_claims(view: ItemView, verdict: GateVerdict) -> None:
    """The claims table, then a picker that highlights a claim's passage."""
    entries = [e for e in verdict.evidence if isinstance(e, Mapping)]
    if not entries:
        return
    head = "".join(
        f'<th style="{_CELL}">{label}</th>'
        for label in ("#", "claim", "source passage (as the model gave it)", "outcome")
    )
    rows = []
    for n, e in enumerate(entries, 1):
        outcome = str(e.get("outcome", ""))
        if e.get("rule"):
            outcome += f": {e['rule']}" + (f" ({e['detail']})" if e.get("detail") else "")
        style = _OUTCOME_STYLE.get(str(e.get("outcome")), "")
        rows.append(
            f'<tr class="cd-claim">{_cell(n)}{_cell(e.get("claim"))}'
            f"{_cell(e.get('passage'))}{_cell(outcome, style)}</tr>"
        )
    st.html(f'<table class="cd-claims" style="{_TABLE}"><tr>{head}</tr>{"".join(rows)}</table>')
    st.segmented_control(
        "Highlight a claim's passage in the source",
        options=list(range(1, len(entries) + 1)),
        format_func=lambda n: f"claim {n}",
        key=picker_key(view),
    )


def _judged_html(n: int, e: Mapping[str, Any]) -> str:
    kinds = ", ".join(str(k) for k in e.get("errors") or []) or "no error"
    outcome = str(e.get("outcome", ""))
    if e.get("why") and outcome in ("not verified",):
        outcome += f" ({e['why']})"
    lines = [
        ("sentence", e.get("sentence")),
        ("outcome", f"{outcome} · {kinds}" + (" · material" if e.get("material") else "")),
        ("source passage", e.get("passage")),
        ("rewrite (reference only: never replaces the draft, never shipped)", e.get("rewrite")),
        ("a reader of the draft concludes", e.get("reader_draft")),
        ("a reader of the rewrite concludes", e.get("reader_rewrite")),
    ]
    body = "".join(
        f'<div><span style="opacity:0.7">{hl.escape_text(label)}:</span> '
        f"{hl.escape_text(str(value) if value else '(none)')}</div>"
        for label, value in lines
    )
    border = {"wrong fact": "#c5221f", "material error": "#b58100"}.get(str(e.get("outcome")))
    style = f"border-left:4px solid {border or '#d0d4da'};padding:4px 8px;margin:4px 0"
    return f'<div class="cd-judged" style="{style};font-size:0.88rem">{n}. {body}</div>'


def draw_judged(verdict: GateVerdict) -> None:
    """Each judged sentence, then any part of the draft nobody judged."""
    evidence = verdict.evidence if isinstance(verdict.evidence, Mapping) else {}
    entries = [e for e in evidence.get("sentences") or [] if isinstance(e, Mapping)]
    if entries:
        st.html("".join(_judged_html(n, e) for n, e in enumerate(entries, 1)))
    for gap in evidence.get("not_judged") or []:
        plain(f"not judged by the model: {gap}", kind="warning")


def draw_model_check(view: ItemView, verdict: GateVerdict) -> bool:
    """The detail of a model check that ran; False when it has none to show."""
    if verdict.check_state != RAN:
        return True  # the banner and the one-line reason say it all
    if verdict.gate == "claims_supported" and isinstance(verdict.evidence, list):
        draw_claims(view, verdict)
        return True
    if verdict.gate == "faithfulness" and isinstance(verdict.evidence, Mapping):
        draw_judged(verdict)
        return True
    return False
