"""Parts of the open item an editor works with beside the decision buttons: what
an edit changed (a word diff against the pipeline's draft) and editors' notes.

Notes are stored by `store.notes` with the account name and the time; adding
one re-reads the editor's role in its own transaction (viewers only look) and
never touches the item's status or version."""

from __future__ import annotations

from typing import Any

import streamlit as st
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui.desk import diffs
from review_ui.desk.decisions import NotAllowed, Reviewer, decide, item_label, require_editor
from review_ui.settings import ReviewAppSettings
from review_ui.views.widgets import At, flash, plain
from store.notes import MAX_NOTE_CHARS, NoteRefused, add_note, notes_for


def reason_inputs(preset_col: Any, text_col: Any, settings: ReviewAppSettings, key: str) -> None:
    """The reject box: a preset reason from `[review] reject_reasons`, free text, or
    both. R puts the cursor in the text box (review_ui/views/shortcuts.py)."""
    presets = settings.review.reject_reasons
    # Labels hidden (each widget keeps its label for screen readers): the row of
    # buttons stays one line high, so the draft below keeps its place on screen.
    if presets:
        preset_col.selectbox(
            "Preset reason",
            [None, *presets],
            key=f"{key}_preset",
            format_func=lambda r: "Preset reason (or type one)" if r is None else r,
            label_visibility="collapsed",
        )
    # Not bound to the address: a shared link must never carry an editor's unsent
    # reason (issue 25). The keyboard script keeps what is typed in this browser
    # tab (sessionStorage, for this editor and this draft), so a reload brings it
    # back and nobody else's browser ever has it.
    text_col.text_input(
        "Reason for rejecting",
        key=key,
        placeholder="Reason for rejecting: your own words, or a number 1-9 for a preset",
        label_visibility="collapsed",
    )


def chosen_reason(key: str) -> str:
    """What is stored as the rejection's reason: the preset, the typed text, or
    "preset: typed text" when the editor gave both."""
    preset = (st.session_state.get(f"{key}_preset") or "").strip()
    typed = (st.session_state.get(key) or "").strip()
    if preset and typed:
        return f"{preset}: {typed}"
    return preset or typed


def draw_changes(original: tuple[str, str] | None, current: tuple[str, str]) -> None:
    """The current text as a word diff against the pipeline's draft (edited items only)."""
    if original is None:
        return
    summary, block = diffs.draft_diff_html(original, current)
    st.html('<div style="font-weight:600">Changes from the pipeline\'s draft</div>')
    plain(summary, style="font-size:0.85rem;opacity:0.8")
    st.html(f'<div class="cd-diff">{block}</div>')


def draw_audit_edits(doc: dict[str, Any]) -> None:
    """The audit trail's edits, each as a word diff against the pipeline's draft."""
    for n, edit in enumerate(doc.get("edits") or [], 1):
        plain(
            f"Edit {n}: {edit.get('reason')} by {edit.get('actor')} at {edit.get('at')} "
            f"(-{edit.get('words_deleted')} +{edit.get('words_inserted')} words against the "
            "pipeline's draft)",
            style="font-weight:600",
        )
        st.html(f'<div class="cd-diff">{diffs.json_diff_html(edit.get("diff") or [])}</div>')


def draw_notes(engine: Engine, reviewer: Reviewer, item_id: int) -> None:
    """The item's notes, oldest first, and (for editors) a box to add one."""
    with Session(engine) as session:
        notes = notes_for(session, item_id)
    title = f"Notes ({len(notes)})" if notes else "Notes"
    with st.expander(title, expanded=bool(notes)):
        for note in notes:
            plain((f"{note.author} at ", At(note.created_at)), style="font-weight:600")
            plain(note.body, style="margin-bottom:0.4rem")
        if not notes:
            plain("No notes yet.", style="opacity:0.7")
        if not reviewer.can_decide:
            return
        with st.form(f"note_form_{item_id}", border=False, clear_on_submit=True):
            st.text_area(
                "Add a note",
                key=f"note_{item_id}",
                max_chars=MAX_NOTE_CHARS,
                height=80,
                placeholder="e.g. asked the council press office to confirm the figure",
            )
            st.form_submit_button(
                "Save note",
                key=f"note_save_{item_id}",
                on_click=_save_note,
                args=(engine, reviewer, item_id),
            )


def _save_note(engine: Engine, reviewer: Reviewer, item_id: int) -> None:
    body = st.session_state.get(f"note_{item_id}") or ""

    def action(session: Session) -> str:
        require_editor(session, reviewer)
        add_note(session, item_id, reviewer.name, body)
        return item_label(session, item_id)

    try:
        label = decide(engine, action)
    except (NotAllowed, NoteRefused) as exc:
        flash("error", f"Note not saved: {exc}")
    else:
        flash("success", f"Note saved on {label}")
