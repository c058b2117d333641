"""The queue's keyboard: the help overlay, the page keys, and the three keys
Streamlit's own `shortcut=` cannot give.

J, K and A are button shortcuts (views_queue.py), N and P too (here). Streamlit
reserves R (its "rerun") and C, and does not take punctuation such as "?", so R
(reject: the cursor goes to the reason box), E (edit: the edit box opens with
the cursor in the summary) and ? (this help) are read by a small script of our
own, `KEYS_SCRIPT`. It is a fixed string: no text from an article, a feed, a
model or the database is ever put into it. It acts only when the focus is not in
a text box and no Ctrl/Cmd/Alt is held, and it never decides anything: R only
moves the cursor, and the rejection itself (Enter) is checked on the server like
every decision, including the `[review] dwell_seconds` rule.

After a filter is used, `refocus_queue` takes the cursor out of the sidebar box,
so J and K work straight away instead of typing into the search field.
"""

from __future__ import annotations

import html

import streamlit as st
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui.queries import PAGE_SIZE, QueueFilter, queue_page, queue_position

OPEN = "open_id"  # views_queue.OPEN: the item on screen
REFOCUS = "q_refocus"  # bumped by a filter change: the next run blurs the sidebar box

# (key, what it does), in the order the help lists them.
SHORTCUTS: tuple[tuple[str, str], ...] = (
    ("J", "next draft in the queue"),
    ("K", "previous draft in the queue"),
    ("A", "approve the draft on screen (once it has been on screen for a moment)"),
    ("R", "reject: puts the cursor in the reason box; type or pick a reason, then Enter"),
    ("E", "edit: opens the edit box with the cursor in the summary"),
    ("N", "next page of the list (opens its first draft)"),
    ("P", "previous page of the list (opens its first draft)"),
    ("?", "this list of shortcuts"),
    ("Enter", "in the reason box: reject with that reason"),
    ("Esc", "close this list"),
)

# Our own script (see the module docstring). Installed once per page: a listener in
# the capture phase, so R reaches us before Streamlit's "rerun" key.
KEYS_SCRIPT = """<script>
(() => {
  if (window.__copydeskKeys) return;
  window.__copydeskKeys = true;
  const typing = (el) => el && (el.isContentEditable ||
    ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
  // The edit box may still be opening: try again until the cursor is in it.
  const focusSoon = (find, tries) => {
    const el = find();
    if (el) { el.focus(); el.scrollIntoView({block: "center"}); }
    if ((!el || document.activeElement !== el) && tries > 0) {
      setTimeout(() => focusSoon(find, tries - 1), 50);
    }
  };
  window.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    const key = event.key;
    if (key === "?") {
      const help = document.querySelector(".st-key-keys_help button");
      if (help) { event.preventDefault(); event.stopImmediatePropagation(); help.click(); }
    } else if ((key === "r" || key === "R") && !event.shiftKey) {
      const box = document.querySelector('input[aria-label="Reason for rejecting"]');
      if (!box) return;
      event.preventDefault(); event.stopImmediatePropagation();
      box.focus(); box.scrollIntoView({block: "center"});
    } else if ((key === "e" || key === "E") && !event.shiftKey) {
      const edit = [...document.querySelectorAll("summary")]
        .find((s) => s.textContent.includes("Edit the draft"));
      if (!edit) return;
      const area = () => edit.parentElement.querySelector('textarea[aria-label="Summary"]');
      event.preventDefault(); event.stopImmediatePropagation();
      if (!edit.parentElement.open) edit.click();
      focusSoon(area, 40);
    }
  }, true);
})();
</script>"""

# Blurs a sidebar box after a filter change; the counter makes each one a new
# script, which Streamlit runs again.
_REFOCUS_SCRIPT = """<script>/* refocus %d */
(() => {
  const el = document.activeElement;
  if (el && el !== document.body && el.closest('[data-testid="stSidebar"]')) el.blur();
})();
</script>"""


def own_script(body: str) -> bool:
    """True for the scripts this module draws (tests tell them from article text)."""
    return body == KEYS_SCRIPT or body.startswith("<script>/* refocus ")


def filters_changed() -> None:
    """Called by the sidebar filters' on_change: ask the next run to free the keys."""
    st.session_state[REFOCUS] = st.session_state.get(REFOCUS, 0) + 1


def install() -> None:
    """The keyboard script, and the blur a filter change asked for."""
    st.html(KEYS_SCRIPT, unsafe_allow_javascript=True, width="content")
    pending = st.session_state.get(REFOCUS, 0)
    if pending:
        st.html(_REFOCUS_SCRIPT % pending, unsafe_allow_javascript=True, width="content")


def help_html() -> str:
    """The shortcuts as an HTML table (our own text, escaped all the same)."""
    rows = "".join(
        f'<tr><td style="padding:2px 12px 2px 0"><kbd>{html.escape(key)}</kbd></td>'
        f"<td>{html.escape(what)}</td></tr>"
        for key, what in SHORTCUTS
    )
    return f'<table class="cd-keys">{rows}</table>'


@st.dialog("Keyboard shortcuts")
def _help() -> None:
    st.html(help_html())


def _page_first(engine: Engine, filt: QueueFilter, step: int) -> None:
    """Open the first draft of the next (+1) or previous (-1) page of the list."""
    current = st.session_state.get(OPEN)
    with Session(engine) as session:
        position = queue_position(session, filt, current) if current is not None else 1
        page = max(1, (max(position, 1) - 1) // PAGE_SIZE + 1 + step)
        rows = queue_page(session, filt, page=page)
    if not rows:
        return
    st.session_state[OPEN] = rows[0].id  # the list follows the open item to its page


def toolbar(engine: Engine, filt: QueueFilter, total: int) -> None:
    """Previous page (P), next page (N) and the shortcuts help (?) above the queue."""
    pages = max(1, -(-total // PAGE_SIZE))
    # Wide enough for each label at 1024 px with the sidebar open (issue 12).
    cols = st.columns([4, 4, 5, 3], vertical_alignment="center")
    cols[0].button(
        "◀◀ Page",
        key="page_prev",
        shortcut="P",
        disabled=pages == 1,
        on_click=_page_first,
        args=(engine, filt, -1),
        width="stretch",
    )
    cols[1].button(
        "Page ▶▶",
        key="page_next",
        shortcut="N",
        disabled=pages == 1,
        on_click=_page_first,
        args=(engine, filt, 1),
        width="stretch",
    )
    if cols[2].button("Shortcuts (?)", key="keys_help", width="stretch"):
        _help()
