"""Drawing untrusted text safely, and small building blocks the views share.

Rules this module enforces for the whole app:

- Text from articles, feeds, model output or the database goes out through
  `plain`, `heading`, `st.text`, `st.code`, `st.json` or `st.dataframe`, never
  through `st.markdown`, `st.write`, `st.caption`, `st.error` & co., widget
  labels or radio options: those parse markdown, which would load a remote
  image or make a `javascript:` link live.
- `plain` and `heading` build their HTML from `html.escape`d text and show it
  with `st.html`, which does not parse markdown.
- A link is drawn only for an absolute http(s) URL with a host, and only as
  `st.link_button`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import pandas as pd
import streamlit as st

from review_ui import streamlit_adapter
from review_ui.desk import times
from review_ui.desk.highlight import block, escape_text
from review_ui.views.holds import hold_for_tests


def _browser_zone() -> str | None:
    """The editor's time zone as the browser names it (Streamlit's public
    `st.context.timezone`; https://docs.streamlit.io/develop/api-reference/utilities/st.context)."""
    return st.context.timezone


# One time-zone rule for the whole desk (review_ui/desk/times.py): the browser's.
times.use_zone_of(_browser_zone)

_BOXES = {
    "info": "background:#e8f1fb;border-left:4px solid #1c6dd0;color:#0d2f57",
    "success": "background:#e6f6ea;border-left:4px solid #1e8e3e;color:#0b3d17",
    "warning": "background:#fff4d6;border-left:4px solid #b58100;color:#4d3800",
    "error": "background:#fde7e7;border-left:4px solid #c5221f;color:#5c0000",
}


@dataclass(frozen=True)
class At:
    """A time inside a line `plain` draws: shown in the editor's zone, UTC on hover."""

    value: datetime | None


def time_html(value: datetime | None) -> str:
    """`<time>` in the editor's zone with the UTC moment as its title (our own
    text only: a formatted time; escaped all the same). "-" for no time."""
    shown = times.moment(value)
    if shown is None:
        return "-"
    return (
        f'<time class="cd-time" datetime="{escape_text(shown.iso)}" '
        f'title="{escape_text(shown.utc)}" style="cursor:help">{escape_text(shown.local)}</time>'
    )


def zone_help() -> str:
    """A time column's help (its header's hover)."""
    return f"In {times.editor_zone()}, your browser's time zone; hover a time for UTC."


# The lists' tables: compact, the header apart, long text wrapping in its cell.
_LIST_STYLE = (
    "<style>table.cd-list{border-collapse:collapse;width:100%;font-size:0.88rem}"
    "table.cd-list th{text-align:left;font-weight:600;border-bottom:2px solid #d0d4da;"
    "padding:0.25rem 0.6rem 0.25rem 0;white-space:nowrap}"
    "table.cd-list td{border-bottom:1px solid #e6e8eb;padding:0.25rem 0.6rem 0.25rem 0;"
    "vertical-align:top;overflow-wrap:anywhere}</style>"
)


def list_cell(value: Any) -> str:
    """One cell of `html_table`: a time as `time_html` (the editor's zone, UTC on
    hover), nothing for None, anything else as escaped text."""
    if isinstance(value, At | datetime):
        return time_html(value.value if isinstance(value, At) else value)
    return "" if value is None else escape_text(str(cell(value)))


def html_table(
    rows: Sequence[Mapping[str, Any]], *, helps: Mapping[str, str] | None = None
) -> None:
    """Rows as an HTML table (`st.dataframe`'s grid cannot put a hover on a cell,
    and a time must show UTC on hover, issue 25). Every value and header goes
    through `html.escape` (`list_cell`): an article's text is never HTML here.
    `helps`: a header's hover, by column. A table picks no row: the view offers
    a control bound to the item id beside it (`pick_item`)."""
    if not rows:
        return
    helps = helps or {}
    head = "".join(
        f'<th scope="col" title="{escape_text(helps[name])}">{escape_text(name)}</th>'
        if name in helps
        else f'<th scope="col">{escape_text(name)}</th>'
        for name in rows[0]
    )
    body = "".join(
        "<tr>" + "".join(f"<td>{list_cell(v)}</td>" for v in row.values()) + "</tr>" for row in rows
    )
    st.html(
        f'{_LIST_STYLE}<div style="overflow-x:auto"><table class="cd-list">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def pick_item(ids: Sequence[int], *, key: str, label: str = "Open item") -> int | None:
    """Which listed item to open: a choice of item ids ("#42"), none at first. Bound
    to the id, not to a row number, so a list that changes between two runs never
    opens another item than the one chosen."""
    return st.selectbox(
        label,
        [None, *ids],
        format_func=lambda i: (
            "none (pick one to see it and its audit trail)" if i is None else f"#{i}"
        ),
        key=key,
    )


def plain(text: str | Sequence[str | At], *, kind: str | None = None, style: str = "") -> None:
    """Untrusted text as text, optionally in a coloured box like st.info/st.error.
    `text` may be parts: strings (escaped) and `At` times (`time_html`)."""
    box = _BOXES.get(kind or "", "")
    if box:
        style = f"{box};padding:0.6rem 0.8rem;border-radius:6px;{style}"
    parts = [text] if isinstance(text, str) else text
    inner = "".join(time_html(p.value) if isinstance(p, At) else escape_text(p) for p in parts)
    st.html(block(inner, style=style))


def heading(text: str, *, size: str = "1.45rem") -> None:
    """A headline that may come from a model or a feed: the page's second-level
    heading, under the view's own (screen readers move between headings)."""
    st.html(
        f'<h2 class="cd-headline" style="font-size:{size};font-weight:650;line-height:1.3;'
        f'margin:0;padding:0">{escape_text(text)}</h2>'
    )


def is_web_url(url: str | None) -> bool:
    """Only absolute http(s) URLs with a host become links."""
    if not url:
        return False
    try:
        parts = urlsplit(url.strip())
        return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def source_link(url: str | None, *, key: str) -> None:
    """The source URL: a link button when it is a web URL, plain text otherwise."""
    if is_web_url(url):
        st.link_button("Open source ↗", url.strip(), key=key)  # type: ignore[union-attr]
        plain(url or "", style="font-size:0.8rem;opacity:0.75")
    elif url:
        plain(f"Source URL (not a web link, not clickable): {url}", kind="warning")
    else:
        plain("No source URL.", kind="warning")


def cell(value: Any) -> Any:
    """A value fit for a dataframe cell: scalars as they are, the rest as JSON text."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def table(rows: Iterable[Mapping[str, Any]], **kwargs: Any) -> Any:
    """st.dataframe of dict rows; the grid draws every cell as text."""
    frame = pd.DataFrame([{k: cell(v) for k, v in row.items()} for row in rows])
    kwargs.setdefault("hide_index", True)
    return st.dataframe(frame, **kwargs)


LOG = "flash_log"  # the last few messages, newest last: (kind, text, time.time())
LOG_SIZE = 5
LOG_FRESH_SECONDS = 20  # messages older than this are drawn faded
# The newest message: fixed at the top of the screen, over the page's empty top
# margin, one line (the whole text on hover and in the sidebar); clicks go through.
_STRIP = (
    "position:fixed;top:0.45rem;right:4.5rem;z-index:1000001;max-width:min(46rem,62vw);"
    "padding:0.3rem 0.8rem;border-radius:6px;white-space:nowrap;overflow:hidden;"
    "text-overflow:ellipsis;pointer-events:none;box-shadow:0 1px 4px rgba(0,0,0,0.15)"
)


FLASH = "flash"  # messages queued for the page, oldest first: (kind, text)
FLASH_DRAWN = "flash_drawn"  # how many of them this page run has drawn (None: not yet)
FLASH_SHOWN = "flash_shown"  # how many of them a completed page run put on screen
FLASH_KEEP = "flash_keep"  # set: the next page run was not asked for by the editor


def flash(kind: str, text: str) -> None:
    """Queue a message for the next run (decisions happen in callbacks), and keep
    it in the short log the queue shows, so a later message never hides it."""
    st.session_state.setdefault(FLASH, []).append((kind, text))
    log = st.session_state.setdefault(LOG, [])
    log.append((kind, text, time.time()))
    del log[:-LOG_SIZE]


def flash_run_starts() -> None:
    """A page run begins (review_ui/app.py `main`): no message drawn in it yet. The
    messages a completed run put on screen leave the queue now, when the editor has
    done something since; a run the page asked for by itself (`keep_flash_for_rerun`)
    draws them again, so it never takes an answer away before the next press."""
    shown = st.session_state.pop(FLASH_SHOWN, 0)
    if shown and not st.session_state.pop(FLASH_KEEP, False):
        del st.session_state.get(FLASH, [])[:shown]
    st.session_state.pop(FLASH_KEEP, None)
    st.session_state[FLASH_DRAWN] = None


def flash_run_completed() -> None:
    """The page run reached its end: the messages it drew are on screen. A run cut
    short by the next press (Streamlit stops it at its next element and starts
    another at once) never gets here, so the run that replaces it draws them again:
    an editor never loses the answer to a press (issue 25)."""
    drawn = st.session_state.pop(FLASH_DRAWN, None)
    if drawn:
        st.session_state[FLASH_SHOWN] = drawn


def keep_flash_for_rerun() -> None:
    """Called just before a rerun of the whole page that the editor did not ask
    for (the publish progress line's, when a background publish ends): the messages
    on screen are drawn again by it (issue 25: an answer is never lost)."""
    st.session_state[FLASH_KEEP] = True


def show_flash(*, log: bool = False) -> None:
    """The messages queued and not yet on a completed page; with `log`, the last
    few messages instead (each names its item), out of the page's flow so they never
    push the draft down (issue 25): the newest, while fresh, in a fixed strip at the
    top of the screen, where the editor is looking; all of them, newest first, in
    the sidebar. Two quick decisions each leave their message, even when the first
    run that would have shown it was cut short by the second key press (issue 12)."""
    if log:
        st.session_state.pop(FLASH, None)  # each one is in the log
        _show_log()
    elif st.session_state.get(FLASH_DRAWN) is None:  # once a run (a view may ask twice)
        queued = list(st.session_state.get(FLASH, []))
        st.session_state[FLASH_DRAWN] = len(queued)
        if not queued:
            return
        with st.container(key=ANSWERS):
            for kind, text in queued:
                plain(text, kind=kind)
            _bring_into_view()
        hold_for_tests("flash")  # tests only: the messages drawn, not the rest


ANSWERS = "cd_answers"  # the container of the messages `show_flash` draws in the page
# Brings the messages just drawn into view when they are not (the page was scrolled,
# or the browser kept the button pressed in place as they were drawn above it): the
# answer to a press shows where the editor is looking (issue 25). Fixed text: only
# Streamlit's key-class prefix (review_ui/streamlit_adapter.py) and a counter go in.
_INTO_VIEW = streamlit_adapter.fill("""<script>/* answers %d */
(() => {
  const box = document.querySelector(".__KEY_CLASS__cd_answers");
  if (!box) return;
  const at = box.getBoundingClientRect();
  if (at.top < 0 || at.bottom > window.innerHeight) box.scrollIntoView({block: "center"});
})();
</script>""")


def _bring_into_view() -> None:
    """`_INTO_VIEW`, a new script each time (Streamlit runs a script it has not drawn)."""
    count = st.session_state.get("answers_drawn", 0) + 1
    st.session_state["answers_drawn"] = count
    st.html(_INTO_VIEW % count, unsafe_allow_javascript=True, width="content")


def own_script(body: str) -> bool:
    """True for the script this module draws (tests tell it from article text)."""
    return re.fullmatch(re.escape(_INTO_VIEW).replace("%d", r"\d+"), body) is not None


def _show_log() -> None:
    now = time.time()
    messages = st.session_state.get(LOG, [])
    if messages and now - messages[-1][2] <= LOG_FRESH_SECONDS:
        kind, text, _ = messages[-1]
        st.html(
            f'<div class="cd-text cd-message" role="status" title="{escape_text(text)}" '
            f'style="{_BOXES.get(kind, "")};{_STRIP}">{escape_text(text)}</div>'
        )
    for kind, text, at in reversed(messages):
        faded = now - at > LOG_FRESH_SECONDS
        with st.sidebar:
            plain(text, kind=kind, style="font-size:0.8rem" + (";opacity:0.6" if faded else ""))
