"""Two building blocks every action on decided or several items uses (issue 25).

- `item_form`: pick an item, give a reason, act. The item picked and the version
  the list showed are handed to the action by the submit button's callback
  (bound when the form was drawn, like a decision button's key), and the form
  is never cleared on a refusal: after "a reason is required" the item chosen is
  still the item chosen, never reset to the first of the list.
- `ask` / `confirmation`: an action on several items first shows the whole list
  where the editor is looking (just below the button that asked), with any item
  another editor edited or left a note on listed but left out unless ticked;
  nothing happens until "Confirm" is pressed.

Item text goes through `plain` (escaped), never a widget label: labels hold
item numbers and counts only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui import streamlit_adapter
from review_ui.desk.highlight import escape_text
from review_ui.desk.queries import decided_choices
from review_ui.views.widgets import flash

PENDING = "confirm_pending"  # the Ask waiting for its confirmation, if any
GROUP_UNDO = "undo_group"  # ({id: version after}, verb, until): Undo of a group action


def item_form(
    key: str,
    title: str,
    items: Mapping[int, tuple[int, str]],
    submit: str,
    act: Callable[[int, int, str], bool],
) -> None:
    """An expander with a form: the item (`items`: id -> (version shown, label)),
    a required reason, and `submit`. `act(item_id, version, reason)` returns True
    when it did what was asked (the reason box is then emptied)."""
    if not items:
        return
    versions = {item_id: version for item_id, (version, _) in items.items()}
    labels = {item_id: label for item_id, (_, label) in items.items()}
    with st.expander(title, expanded=bool(st.session_state.get(f"{key}_open"))):
        with st.form(key, clear_on_submit=False, border=False):
            st.selectbox(
                "Item",
                list(labels),
                format_func=lambda i: labels.get(i, f"#{i}"),
                key=f"{key}_item",
            )
            st.text_input("Reason (required)", key=f"{key}_reason")
            st.form_submit_button(submit, on_click=_submitted, args=(key, versions, act))


def decided_form(
    engine: Engine, status: str, texts: tuple[str, str, str], act: Callable[[int, int, str], bool]
) -> None:
    """`item_form` over the first page of `status` items; `texts`: (key, title, submit)."""
    with Session(engine) as session:
        items = decided_choices(session, status)
    key, title, submit = texts
    item_form(key, title, items, submit, act)


def _submitted(key: str, versions: Mapping[int, int], act: Callable[[int, int, str], bool]) -> None:
    st.session_state[f"{key}_open"] = True  # the form stays open, with what was chosen
    item_id = st.session_state.get(f"{key}_item")
    if item_id is None:  # never a silent no-op: say why nothing happened
        flash("error", "Nothing done: pick an item first.")
        return
    reason = st.session_state.get(f"{key}_reason") or ""
    if act(int(item_id), versions.get(int(item_id), -1), reason):
        st.session_state[f"{key}_reason"] = ""


@dataclass
class Ask:
    """One action on several items, waiting for its confirmation."""

    where: str  # which button asked: the confirmation is drawn there
    verb: str  # "reject", "publish"
    question: str  # our own words
    items: dict[int, int]  # id -> version shown: included unless a caveat says otherwise
    labels: dict[int, str]
    caveats: dict[int, str] = field(default_factory=dict)  # id -> why it is left out
    notes: list[str] = field(default_factory=list)  # lines about what is not included
    payload: dict[str, Any] = field(default_factory=dict)


def ask(request: Ask) -> None:
    st.session_state[PENDING] = request
    st.session_state["confirm_gen"] = st.session_state.get("confirm_gen", 0) + 1


def pending(where: str) -> Ask | None:
    request = st.session_state.get(PENDING)
    return request if isinstance(request, Ask) and request.where == where else None


def cancel() -> None:
    st.session_state.pop(PENDING, None)


def _ticked(request: Ask) -> dict[int, int]:
    gen = st.session_state.get("confirm_gen", 0)
    return {
        item_id: version
        for item_id, version in request.items.items()
        if item_id not in request.caveats or st.session_state.get(f"confirm_inc_{gen}_{item_id}")
    }


def confirmation(where: str, act: Callable[[Ask, dict[int, int]], None]) -> None:
    """The waiting confirmation for the button `where`, if any: the whole list, a
    box to include each item with a caveat, Confirm and Cancel."""
    request = pending(where)
    if request is None:
        return
    gen = st.session_state.get("confirm_gen", 0)
    lines = [request.question]
    for item_id in request.items:
        caveat = request.caveats.get(item_id)
        lines.append(
            f"• {request.labels.get(item_id, f'#{item_id}')}" + (f" ({caveat})" if caveat else "")
        )
    lines += request.notes
    st.html(
        f'<div class="cd-confirm cd-text" data-gen="{int(gen)}" role="alertdialog" '
        'style="border:2px solid #b58100;'
        'border-radius:6px;padding:0.5rem 0.8rem;background:#fffaf0;white-space:pre-wrap">'
        + "\n".join(escape_text(line) for line in lines)
        + "</div>"
    )
    for item_id in request.caveats:
        st.checkbox(f"Include #{item_id}", key=f"confirm_inc_{gen}_{item_id}")
    chosen = _ticked(request)
    cols = st.columns([2, 1, 3])
    cols[0].button(
        f"Confirm: {request.verb} {len(chosen)}",
        key=f"confirm_yes_{gen}",
        type="primary",
        disabled=not chosen,
        on_click=_confirmed,
        args=(request, act),
    )
    cols[1].button("Cancel", key=f"confirm_no_{gen}", on_click=cancel)
    # Where the editor is looking (issue 25): the button that asked may sit at the
    # bottom of the screen, and the list drawn under it below the fold (at 1280x720,
    # the queue's bulk panel). Scrolled into view once per confirmation.
    st.html(_IN_VIEW % int(gen), unsafe_allow_javascript=True, width="content")


# Brings confirmation `gen` (the list, then its Confirm button) into view, once; the
# only value put into it is that integer.
_IN_VIEW = streamlit_adapter.fill("""<script>(() => {
  const gen = "%d";
  const show = (tries) => {
    const box = document.querySelector('.cd-confirm[data-gen="' + gen + '"]');
    const yes = document.querySelector('[class*="__KEY_CLASS__confirm_yes_' + gen + '"]');
    if (!box || !yes) { if (tries > 0) setTimeout(() => show(tries - 1), 50); return; }
    if (box.dataset.cdShown) return;
    box.dataset.cdShown = "1";
    box.scrollIntoView({block: "nearest"});
    yes.scrollIntoView({block: "nearest"});
  };
  show(200);
})();</script>""")


def _confirmed(request: Ask, act: Callable[[Ask, dict[int, int]], None]) -> None:
    chosen = _ticked(request)
    cancel()
    if chosen:
        act(request, chosen)


def offer_group_undo(done: Mapping[int, int], verb: str, seconds: float) -> None:
    """Undo for a group action, like a single decision's (the queue draws it)."""
    if done:
        st.session_state[GROUP_UNDO] = (dict(done), verb, time.monotonic() + seconds)
        st.session_state.pop("undo_offer", None)  # views.queue.UNDO: the newer one wins
