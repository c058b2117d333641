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

from review_ui.desk.queries import (
    decisions_per_editor,
    discards_per_day,
    items_per_feed,
    model_usage_per_day,
    since_days,
    status_counts,
)
from review_ui.views.widgets import plain, table
from store.desk_stats import EditorThroughput, duration_text, editor_throughput
from store.status import STATUSES

PERIODS = {"7 days": 7, "30 days": 30, "90 days": 90, "365 days": 365}


def _section(title: str) -> None:
    st.html(f'<div style="font-size:1.15rem;font-weight:650;margin-top:0.6rem">{title}</div>')


# Counts are whole: an axis of items, decisions or calls never shows 0.5.
COUNT_AXIS = {"format": "d", "tickMinStep": 1}


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
            x=alt.X("sum(items):Q", title="items", axis=alt.Axis(**COUNT_AXIS)),
            color=alt.Color("status:N", title="status"),
        )
        .properties(height=max(120, 28 * len(feeds)))
    )


def discards_chart(rows: list[tuple[str, str, int]]) -> alt.Chart:
    """Discards per day, stacked by why; a whole-number axis."""
    frame = pd.DataFrame(rows, columns=["day", "why", "items"])
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("day:O", title="day (UTC)"),
            y=alt.Y("sum(items):Q", title="items", axis=alt.Axis(**COUNT_AXIS)),
            color=alt.Color("why:N", title="why"),
        )
    )


def approval_chart(editors: list[tuple[str, int, int]]) -> alt.Chart:
    """Approval rate per editor on an axis that runs 0–100 %, whatever the rates
    are: a desk that approves 96 % must not look like one that approves half."""
    frame = pd.DataFrame(
        [(name, a / (a + r), a + r) for name, a, r in editors],
        columns=["editor", "approval rate", "decisions"],
    )
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y("editor:N", title=None, axis=alt.Axis(labelLimit=0)),
            x=alt.X(
                "approval rate:Q",
                scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%", values=[0, 0.25, 0.5, 0.75, 1]),
            ),
            tooltip=["editor", alt.Tooltip("approval rate:Q", format=".0%"), "decisions"],
        )
        .properties(height=max(120, 28 * len(frame)))
    )


def throughput_chart(rows: list[EditorThroughput]) -> alt.Chart:
    """Decisions per editor in the period, approved and rejected stacked."""
    frame = pd.DataFrame(
        [
            (r.editor, kind, n)
            for r in rows
            for kind, n in (("approved", r.approved), ("rejected", r.rejected))
        ],
        columns=["editor", "decision", "decisions"],
    )
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y("editor:N", title=None, axis=alt.Axis(labelLimit=0)),
            x=alt.X("sum(decisions):Q", title="decisions", axis=alt.Axis(**COUNT_AXIS)),
            color=alt.Color("decision:N", title="decision"),
        )
        .properties(height=max(120, 28 * len(rows)))
    )


def tokens_chart(frame: pd.DataFrame) -> alt.Chart:
    long = frame.melt("day", ["input tokens", "output tokens"], "tokens", "count")
    return (
        alt.Chart(long)
        .mark_line(point=True)
        .encode(
            x=alt.X("day:O", title="day (UTC)"),
            y=alt.Y("count:Q", title="tokens", axis=alt.Axis(**COUNT_AXIS)),
            color=alt.Color("tokens:N", title=None),
        )
    )


def cost_chart(frame: pd.DataFrame) -> alt.Chart:
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("day:O", title="day (UTC)"),
            y=alt.Y("cost (USD):Q", title="cost (USD)", axis=alt.Axis(format="$,.4~f")),
        )
    )


# Stored discard kinds (store/discard_kinds.py) as the stats page names them.
KIND_LABELS = {"refused": "refused link", "internal": "internal failure"}


def stats_view(engine: Engine) -> None:
    st.html('<div style="font-size:1.6rem;font-weight:700">Stats</div>')
    period = st.segmented_control("Period", list(PERIODS), default="30 days", key="s_period")
    days = PERIODS.get(period or "30 days", 30)
    since = since_days(days)
    with Session(engine) as session:
        throughput = editor_throughput(session, days)
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
        st.altair_chart(discards_chart(labelled), width="stretch")
        frame = pd.DataFrame(labelled, columns=["day", "why", "items"])
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
        table(
            [
                {
                    "editor": name,
                    "approved": approved,
                    "rejected": rejected,
                    "approval rate": f"{approved / (approved + rejected):.0%}",
                }
                for name, approved, rejected in editors
            ]
        )
        st.altair_chart(approval_chart(editors), width="stretch")
    else:
        plain("No decisions yet.", style="opacity:0.7")

    _throughput_section(throughput, days)
    _usage_section(usage)


def _throughput_section(rows: list[EditorThroughput], days: int) -> None:
    _section(f"Decisions per editor in the last {days} days")
    if not rows:
        plain("No decisions in this period.", style="opacity:0.7")
        return
    table(
        [
            {
                "editor": r.editor,
                "decisions": r.decisions,
                "approved": r.approved,
                "rejected": r.rejected,
                "per day": f"{r.per_day:.2f}",
                "median time to decision": duration_text(r.median_seconds),
            }
            for r in rows
        ]
    )
    st.altair_chart(throughput_chart(rows), width="stretch")
    plain(
        "Time to decision runs from the moment the draft was stored to the editor's "
        "approval or rejection (the median of this period's decisions).",
        style="font-size:0.85rem;opacity:0.7",
    )


def _usage_section(usage: list[tuple[str, int, int, float, int]]) -> None:
    _section("Model tokens and cost per day")
    if not usage:
        plain("No model calls in this period.", style="opacity:0.7")
        return
    frame = pd.DataFrame(
        usage, columns=["day", "input tokens", "output tokens", "cost (USD)", "calls"]
    )
    calls = int(frame["calls"].sum())
    tokens_in, tokens_out = int(frame["input tokens"].sum()), int(frame["output tokens"].sum())
    total = float(frame["cost (USD)"].sum())
    if not tokens_in + tokens_out and not total:
        plain(
            f"{calls:,} model call{'s' if calls != 1 else ''} in this period, none with tokens "
            "or a cost (recorded demo replies, or calls that failed): nothing to chart.",
            style="opacity:0.7",
        )
        return
    st.altair_chart(tokens_chart(frame), width="stretch")
    if total > 0:
        st.altair_chart(cost_chart(frame), width="stretch")
    else:
        plain(
            f"No cost recorded for the {calls:,} model calls in this period.", style="opacity:0.7"
        )
    plain(
        f"{calls:,} calls, {tokens_in:,} tokens in, {tokens_out:,} out, "
        f"${total:,.4f} in this period."
    )
