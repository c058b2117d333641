"""Stats: where items end up, why they are discarded, who decides, what the model costs.

Every number is one grouped SQL query; charts draw labels (feed names, gate
names) as SVG text, never as HTML.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui.queries import (
    decisions_per_editor,
    discards_per_day,
    items_per_feed,
    model_usage_per_day,
    since_days,
    status_counts,
)
from review_ui.widgets import plain, table
from store.status import STATUSES

PERIODS = {"7 days": 7, "30 days": 30, "90 days": 90, "365 days": 365}


def _section(title: str) -> None:
    st.html(f'<div style="font-size:1.15rem;font-weight:650;margin-top:0.6rem">{title}</div>')


def feed_chart(per_feed: list[tuple[str, str, int]]) -> alt.Chart:
    """Horizontal stacked bars with whole feed names: st.bar_chart cuts axis labels
    short, and "Brinmoor Courier - …" is useless when three feeds start alike.
    Vega draws the names as SVG text, never as HTML."""
    frame = pd.DataFrame(per_feed, columns=["feed", "status", "items"])
    feeds = frame.groupby("feed")["items"].sum().sort_values(ascending=False).index.tolist()
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y("feed:N", sort=feeds, title=None, axis=alt.Axis(labelLimit=0)),
            x=alt.X("sum(items):Q", title="items"),
            color=alt.Color("status:N", title="status"),
        )
        .properties(height=max(120, 28 * len(feeds)))
    )


# Stored discard kinds (store/discard_kinds.py) as the stats page names them.
KIND_LABELS = {"refused": "refused link", "internal": "internal failure"}


def stats_view(engine: Engine) -> None:
    st.html('<div style="font-size:1.6rem;font-weight:700">Stats</div>')
    period = st.segmented_control("Period", list(PERIODS), default="30 days", key="s_period")
    since = since_days(PERIODS.get(period or "30 days", 30))
    with Session(engine) as session:
        counts = status_counts(session)
        discards = discards_per_day(session, since)
        per_feed = items_per_feed(session)
        editors = decisions_per_editor(session)
        usage = model_usage_per_day(session, since)

    _section("Items by status (all time)")
    cols = st.columns(len(STATUSES))
    for col, status in zip(cols, STATUSES, strict=True):
        col.metric(status, f"{counts.get(status, 0):,}")

    _section("Discards per day, by failed gate or other reason")
    if discards:
        labelled = [(day, KIND_LABELS.get(kind, kind), n) for day, kind, n in discards]
        frame = pd.DataFrame(labelled, columns=["day", "why", "items"])
        st.bar_chart(frame, x="day", y="items", color="why", stack=True)
        totals = frame.groupby("why")["items"].sum().sort_values(ascending=False)
        plain(
            f"{int(totals.sum()):,} discarded in this period: "
            + ", ".join(f"{why} {int(n):,}" for why, n in totals.items())
        )
    else:
        plain("No discards in this period.", style="opacity:0.7")

    _section("Drafts per feed (drafted items, by where they are now)")
    if per_feed:
        st.altair_chart(feed_chart(per_feed), width="stretch")
    else:
        plain("No drafts yet.", style="opacity:0.7")

    _section("Approval rate per editor (all time)")
    if editors:
        rows = [
            {
                "editor": name,
                "approved": approved,
                "rejected": rejected,
                "approval rate": f"{approved / (approved + rejected):.0%}",
            }
            for name, approved, rejected in editors
        ]
        table(rows)
        frame = pd.DataFrame(
            [(r["editor"], r["approved"] / (r["approved"] + r["rejected"])) for r in rows],
            columns=["editor", "approval rate"],
        )
        st.bar_chart(frame, x="editor", y="approval rate", horizontal=True)
    else:
        plain("No decisions yet.", style="opacity:0.7")

    _section("Model tokens and cost per day")
    if usage:
        frame = pd.DataFrame(
            usage, columns=["day", "input tokens", "output tokens", "cost (USD)", "calls"]
        )
        st.line_chart(frame, x="day", y=["input tokens", "output tokens"])
        st.bar_chart(frame, x="day", y="cost (USD)")
        total = frame["cost (USD)"].sum()
        plain(
            f"{int(frame['calls'].sum()):,} calls, {int(frame['input tokens'].sum()):,} tokens in, "
            f"{int(frame['output tokens'].sum()):,} out, ${total:,.4f} in this period."
        )
    else:
        plain("No model calls in this period.", style="opacity:0.7")
