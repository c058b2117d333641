"""The audit trail as an editor reads it: times in the editor's own time zone (the
browser's: review_ui/desk/times.py) with UTC on hover, blank cells where
there is nothing, and each quotation the source lacks beside the source's
closest wording (guards/closest.py).

Everything here is built from escaped text (`html.escape`); nothing from an
article, a feed or a model is parsed as HTML or markdown.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any
from zoneinfo import ZoneInfo

import streamlit as st

from guards.closest import closest_pairs
from review_ui.desk import times
from review_ui.views.widgets import At, cell, table

TIME_FIELDS = frozenset({"at", "created_at"})


def local_time(value: Any, zone: ZoneInfo) -> tuple[str, str]:
    """(the time in `zone`, to the second, the same time in UTC) as text; ("", "")
    for no time (review_ui/desk/times.py: one rule for the whole desk)."""
    shown = times.moment(value, zone, seconds=True)
    return (shown.local, shown.utc) if shown else ("", "")


def _shown(value: Any) -> str:
    """A cell's text: blank for nothing (never "None")."""
    shown = cell(value)
    return "" if shown is None else str(shown)


def trail_table(rows: Sequence[Mapping[str, Any]], zone: ZoneInfo, key: str) -> None:
    """Rows as one of the trail's HTML tables: a time (a `TIME_FIELDS` column, or a
    cell given as `At`) in the editor's zone to the second with the UTC moment on
    hovering its cell, a blank cell for nothing, every value and header escaped.
    One rule for every table of the trail (issue 25): `st.dataframe`'s grid cannot
    put a hover on a cell."""
    if not rows:
        return
    columns = list(rows[0])

    def td(column: str, value: Any) -> str:
        if column in TIME_FIELDS or isinstance(value, At):
            local, utc = local_time(value.value if isinstance(value, At) else value, zone)
            if not local:
                return "<td></td>"  # no time: a blank cell, with nothing to hover
            return f'<td class="cd-time" title="{html.escape(utc)}">{html.escape(local)}</td>'
        return f"<td>{html.escape(_shown(value))}</td>"

    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(td(c, r.get(c)) for c in columns) + "</tr>" for r in rows)
    st.html(
        f'<table class="cd-trail" data-key="{html.escape(key)}" '
        'style="border-collapse:collapse;font-size:0.85rem;width:100%">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        "<style>.cd-trail td,.cd-trail th{border-bottom:1px solid #ddd;padding:4px 6px;"
        "text-align:left;vertical-align:top;overflow-wrap:anywhere}"
        ".cd-trail td.cd-time{white-space:nowrap;cursor:help}</style>"
    )


def draw_facts(doc: Mapping[str, Any], zone: ZoneInfo, key: str) -> None:
    """The item's facts (each part of the audit document that is a mapping), one
    row a field; a field named `*_at` is a time, read like every other time."""
    trail_table(
        [
            {"part": part, "field": name, "value": At(value) if name.endswith("_at") else value}
            for part, values in doc.items()
            if isinstance(values, dict)
            for name, value in values.items()
        ],
        zone,
        key,
    )


def draw_events(events: list[dict[str, Any]], zone: ZoneInfo, key: str) -> None:
    """Status moves as a table whose times read in the editor's zone, UTC on hover."""
    rows = [
        {
            "at": event.get("at"),
            "actor": event.get("actor"),
            "move": f"{event.get('from_status') or '(born)'} → {event.get('to_status') or ''}",
            "reason": event.get("reason"),
            "details": event.get("details"),
        }
        for event in events
    ]
    trail_table(rows, zone, key)


def draw_missing_quotes(verdicts: list[dict[str, Any]], key: str) -> None:
    """Each quotation the source lacks, beside what the source says closest to it."""
    pairs = [
        pair
        for v in verdicts
        if v.get("gate") == "quotes_verbatim" and not v.get("passed")
        for pair in closest_pairs(v.get("evidence"))
    ]
    if not pairs:
        return
    st.html(f'<div style="font-weight:600">Quotations not in the source ({len(pairs)})</div>')
    table(
        [
            {
                "the draft says": quote,
                "closest source wording": closest if closest is not None else "(nothing close)",
                "similarity": f"{similarity:.0f}%" if similarity is not None else "",
            }
            for quote, closest, similarity in pairs
        ],
        key=key,
    )
