"""The search box every view shares (the search itself: store/search.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

LABEL = "Search text, item number or link"
HELP = (
    "Words match anywhere in the headline, draft, title, source text or link (all must "
    'be there; the last word may be a beginning: "counc"). "Quoted words" match as a '
    "phrase. #42 opens item 42; a link or a piece of one finds its item."
)


def search_box(key: str, *, where: Any = None, on_change: Callable[[], None] | None = None) -> str:
    """Draw the search input (in `where`, e.g. st.sidebar or a column) and return
    what is typed in it."""
    target = where if where is not None else st
    target.text_input(LABEL, key=key, help=HELP, on_change=on_change, max_chars=500)
    return str(st.session_state.get(key) or "")
