"""Everything the review UI knows about Streamlit's internals, in one place.

The pages use Streamlit's public API (`st.button`, `st.html`, ...). A few things
they need are not public: the names Streamlit's frontend gives its page (the
keyboard script reads them), and the server runtime's view of which browser
sessions are still connected (the claim keeper asks it). They are named here
and nowhere else, so that a Streamlit release that renames one fails one canary
test (tests/test_streamlit_adapter.py checks each against the installed
Streamlit: the attribute still exists, the string is still in the frontend
bundle), not an editor's page.

If the canary fails after an upgrade: find the new name in Streamlit's source,
change it here, and run the browser tests (`pytest -m browser`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

# --------------------------------------------------------------------------- the page

# The app's root element, and its attribute that says whether a script run is
# in progress ("running") or the page has settled ("notRunning").
APP = '[data-testid="stApp"]'
SCRIPT_STATE = "data-test-script-state"
NOT_RUNNING = "notRunning"
# Every widget with a `key=` sits in an element whose class is this prefix + the key.
KEY_CLASS = "st-key-"
# The sidebar, and the block holding the main column (its padding is ours to set).
SIDEBAR = '[data-testid="stSidebar"]'
MAIN_BLOCK = "[data-testid=stMainBlockContainer]"
# A column of elements (its gap between elements is ours to set: the queue's is tighter).
VERTICAL_BLOCK = "[data-testid=stVerticalBlock]"
# The holders of `st.button` and `st.form_submit_button`: a click on either asks for
# a page run (the keyboard script watches that one follows).
BUTTON = '[data-testid="stButton"]'
FORM_SUBMIT = '[data-testid="stFormSubmitButton"]'
# An open `st.dialog`, and the button in it that closes it.
DIALOG = '[role="dialog"]'
DIALOG_CLOSE = 'button[aria-label="Close"]'

# The same names as the canary finds them in the frontend bundle (minified: any
# quote). Each pattern is a regular expression over the bundle's text.
FRONTEND_NAMES: dict[str, str] = {
    "APP": r"[`\"']stApp[`\"']",
    "SCRIPT_STATE": r"data-test-script-state",
    "NOT_RUNNING": r"[`\"']notRunning[`\"']",
    "KEY_CLASS": r"[`\"']st-key-",
    "SIDEBAR": r"[`\"']stSidebar[`\"']",
    "MAIN_BLOCK": r"[`\"']stMainBlockContainer[`\"']",
    "VERTICAL_BLOCK": r"[`\"']stVerticalBlock[`\"']",
    "BUTTON": r"[`\"']stButton[`\"']",
    "FORM_SUBMIT": r"[`\"']stFormSubmitButton[`\"']",
    "DIALOG": r"role[`\"']?\s*:\s*[`\"']dialog[`\"']",
    "DIALOG_CLOSE": r"[`\"']aria-label[`\"']\s*:\s*[`\"']Close[`\"']",
}


def fill(template: str) -> str:
    """A script or style of ours with the page's names put in: `__APP__`,
    `__SCRIPT_STATE__`, `__NOT_RUNNING__`, `__KEY_CLASS__`, `__SIDEBAR__`,
    `__MAIN_BLOCK__`, `__VERTICAL_BLOCK__`, `__BUTTON__`, `__FORM_SUBMIT__`, `__DIALOG__`,
    `__DIALOG_CLOSE__`. Only these
    constants go in
    (never data), so the result is as fixed as the template."""
    for name in FRONTEND_NAMES:
        template = template.replace(f"__{name}__", globals()[name])
    return template


# --------------------------------------------------------------------------- the server


def this_session() -> str | None:
    """The running Streamlit session's id, or None when no server runtime knows it
    as connected (a bare script; AppTest, whose stand-in runtime answers nothing
    for real): then no claim keeper runs, and page runs alone refresh the claim."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not session_connected(ctx.session_id)():
        return None
    return ctx.session_id


def session_connected(session_id: str) -> Callable[[], bool]:
    """Whether the browser of `session_id` is still connected, asked from any thread
    (`Runtime.is_active_session` is thread-safe; a closed tab's session becomes
    inactive as soon as its websocket closes)."""
    from streamlit import runtime

    def connected() -> bool:
        # `is True`: AppTest's stand-in runtime answers with a mock, which is no answer.
        return runtime.exists() and runtime.get_instance().is_active_session(session_id) is True

    return connected


# --------------------------------------------------------------------------- presses

# The keyboard script (review_ui/views/shortcuts.py) gives every press that asks for
# a page run an id of its own, and puts it into the page's address, as the last part
# of its path ("/cd-press-<id>"), for exactly as long as the press's run request is
# being sent: Streamlit sends the page's address with every run request (its
# `context_info.url`, without the query string or the fragment), and the server
# reads it as `st.context.url` (public API:
# https://docs.streamlit.io/develop/api-reference/caching-and-state/st.context).
# The query string would not do: Streamlit sends the one it last wrote, not the
# address bar's.
PRESS_MARK = "cd-press-"
_PRESS_ID = re.compile(r"/" + PRESS_MARK + r"([a-z0-9]{1,40})$")


def press_id() -> str | None:
    """The id of the press whose run request started this page run, or None (a run
    nobody pressed for, or a press from a page without the keyboard script). Only
    the id's fixed alphabet is ever taken from the address."""
    import streamlit as st

    try:
        url = st.context.url
    except Exception:  # noqa: BLE001 - no runtime (a bare script): no press
        return None
    found = _PRESS_ID.search(urlsplit(url).path) if url else None
    return found.group(1) if found else None


# (module, attribute path) of every server internal used above: the canary
# imports each and checks that it is there.
SERVER_NAMES: tuple[tuple[str, str], ...] = (
    ("streamlit.runtime.scriptrunner", "get_script_run_ctx"),
    ("streamlit.runtime", "exists"),
    ("streamlit.runtime", "get_instance"),
    ("streamlit.runtime", "Runtime.is_active_session"),
)
