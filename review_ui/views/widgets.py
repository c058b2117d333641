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
import time
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import pandas as pd
import streamlit as st

from review_ui.desk.highlight import block, escape_text

_BOXES = {
    "info": "background:#e8f1fb;border-left:4px solid #1c6dd0;color:#0d2f57",
    "success": "background:#e6f6ea;border-left:4px solid #1e8e3e;color:#0b3d17",
    "warning": "background:#fff4d6;border-left:4px solid #b58100;color:#4d3800",
    "error": "background:#fde7e7;border-left:4px solid #c5221f;color:#5c0000",
}


def plain(text: str, *, kind: str | None = None, style: str = "") -> None:
    """Untrusted text as text, optionally in a coloured box like st.info/st.error."""
    box = _BOXES.get(kind or "", "")
    if box:
        style = f"{box};padding:0.6rem 0.8rem;border-radius:6px;{style}"
    st.html(block(escape_text(text), style=style))


def heading(text: str, *, size: str = "1.45rem") -> None:
    """A headline that may come from a model or a feed."""
    st.html(
        f'<div class="cd-headline" style="font-size:{size};font-weight:650;line-height:1.3">'
        f"{escape_text(text)}</div>"
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


def flash(kind: str, text: str) -> None:
    """Queue a message for the next run (decisions happen in callbacks), and keep
    it in the short log the queue shows, so a later message never hides it."""
    st.session_state.setdefault("flash", []).append((kind, text))
    log = st.session_state.setdefault(LOG, [])
    log.append((kind, text, time.time()))
    del log[:-LOG_SIZE]


def show_flash(*, log: bool = False) -> None:
    """The messages queued since the last run; with `log`, the last few messages
    instead, newest first (each names its item). The queue uses the log: two quick
    decisions each leave their message, even when the first run that would have
    shown it was cut short by the second key press (issue 12)."""
    fresh = st.session_state.pop("flash", [])
    if not log:
        for kind, text in fresh:
            plain(text, kind=kind)
        return
    now = time.time()
    for kind, text, at in reversed(st.session_state.get(LOG, [])):
        faded = now - at > LOG_FRESH_SECONDS
        plain(text, kind=kind, style="opacity:0.6;font-size:0.85rem" if faded else "")
