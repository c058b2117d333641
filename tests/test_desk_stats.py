"""Issue 12, stats that read right: the approval rate on a 0-100 % axis, whole
numbers on every count axis, a sentence instead of an empty chart, and decisions
per editor with the median time from draft stored to decision, in the review
app (the Vega-Lite specs the page sends, through AppTest) and in `copydesk stats`."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlmodel import Session
from streamlit.testing.v1 import AppTest

from store.db import open_store, session_scope
from store.desk_stats import duration_text, editor_throughput
from store.models import AuditEvent
from tests.apptest_helpers import signed_in
from tests.desk_helpers import seed_decided_desk
from tests.review_seed import write_config


@pytest.fixture
def desk(
    sqlite_url: str, migrated: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    engine = open_store(sqlite_url)
    ids = seed_decided_desk(engine)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COPYDESK_CONFIG", str(write_config(tmp_path / "c.toml", sqlite_url)))
    monkeypatch.setenv("COPYDESK_DATABASE_URL", sqlite_url)
    return {"engine": engine, "ids": ids, "url": sqlite_url, "tmp": tmp_path}


def stats_page(name: str = "alice") -> AppTest:
    return signed_in(name, "Stats")


def specs(at: AppTest) -> list[dict[str, Any]]:
    """The Vega-Lite spec of every chart on the page, as the browser receives it."""
    return [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]


def texts(at: AppTest) -> str:
    parts = [str(e.value) for e in at.get("html")]
    parts += [e.value.to_csv() for e in at.dataframe]
    return "\n".join(parts)


def _encoding(spec: dict[str, Any], field: str) -> tuple[str, dict[str, Any]] | None:
    for channel, enc in spec.get("encoding", {}).items():
        if isinstance(enc, dict) and enc.get("field") == field:  # not the tooltip list
            return channel, enc
    return None


def test_approval_rate_axis_runs_from_0_to_100_percent(desk: dict[str, Any]) -> None:
    charts = [s for s in specs(stats_page()) if _encoding(s, "approval rate")]
    assert len(charts) == 1
    _, enc = _encoding(charts[0], "approval rate")  # type: ignore[misc]
    assert enc["scale"]["domain"] == [0, 1]  # alice approves 100 %, bob 0 %: both on one scale
    assert enc["axis"]["format"] == "%"


def test_every_count_axis_is_whole_numbers(desk: dict[str, Any]) -> None:
    charts = specs(stats_page())
    counted = [
        enc
        for spec in charts
        for field in ("items", "decisions")
        if (found := _encoding(spec, field)) is not None
        for enc in [found[1]]
    ]
    assert len(counted) >= 3  # discards per day, drafts per feed, decisions per editor
    for enc in counted:
        assert enc["axis"]["format"] == "d" and enc["axis"]["tickMinStep"] == 1, enc


def test_calls_without_tokens_or_cost_are_a_sentence_not_a_flat_chart(desk: dict[str, Any]) -> None:
    """The seed's drafts come from recorded replies: ledger rows with no tokens and
    no cost. A chart of them would be a flat line at 0.000000."""
    at = stats_page()
    assert "5 model calls in this period, none with tokens or a cost" in texts(at)
    fields = {
        enc.get("field")
        for spec in specs(at)
        for enc in spec.get("encoding", {}).values()
        if isinstance(enc, dict)
    }
    assert "cost (USD)" not in fields and "count" not in fields  # no tokens or cost chart


def test_decisions_per_editor_and_median_time_to_decision(desk: dict[str, Any]) -> None:
    engine, ids = desk["engine"], desk["ids"]
    with Session(engine) as session:
        rows = {r.editor: r for r in editor_throughput(session, 30)}
        events = list(session.scalars(select(AuditEvent).order_by(AuditEvent.id)))
    assert set(rows) == {"alice", "bob"}
    assert (rows["alice"].approved, rows["alice"].rejected, rows["alice"].decisions) == (2, 0, 2)
    assert (rows["bob"].approved, rows["bob"].rejected) == (0, 1)
    assert rows["alice"].per_day == pytest.approx(2 / 30)

    def waited(key: str) -> float:
        item_events = [e for e in events if e.item_id == ids[key]]
        stored = min(e.at for e in item_events if e.to_status == "draft")
        decided = max(e.at for e in item_events if e.to_status in ("approved", "rejected"))
        return (decided - stored).total_seconds()

    expected = statistics.median([waited("bridge"), waited("school")])
    assert rows["alice"].median_seconds == pytest.approx(expected)
    assert rows["alice"].median_seconds > 0  # the seed runs before the decisions

    at = stats_page()
    table = next(d.value for d in at.dataframe if "median time to decision" in d.value.columns)
    shown = table.set_index("editor")
    assert shown.loc["alice", "decisions"] == 2 and shown.loc["bob", "rejected"] == 1
    assert shown.loc["alice", "median time to decision"] == duration_text(expected)
    assert "Decisions per editor in the last 30 days" in texts(at)


def test_a_period_without_calls_or_decisions_says_so(desk: dict[str, Any]) -> None:
    from datetime import UTC, datetime, timedelta

    from store.models import ModelCall

    with session_scope(desk["engine"]) as session:  # the calls were made long ago
        for call in session.scalars(select(ModelCall)):
            call.created_at = datetime.now(UTC) - timedelta(days=400)
    at = stats_page()
    shown = texts(at)
    assert "No model calls in this period." in shown
    assert "0.000000" not in shown


def test_decisions_outside_the_period_are_not_counted(desk: dict[str, Any]) -> None:
    from datetime import UTC, datetime, timedelta

    later = datetime.now(UTC) + timedelta(days=31)
    with Session(desk["engine"]) as session:
        assert editor_throughput(session, 30, now=later) == []


def test_durations_read_as_a_person_would_say_them() -> None:
    assert [duration_text(s) for s in (None, 4, 59.6, 600, 3600, 3900, 86400, 93600)] == [
        "-",
        "4 s",
        "1 min",
        "10 min",
        "1 h",
        "1 h 5 min",
        "1 d",
        "1 d 2 h",
    ]


# --------------------------------------------------------------------------- copydesk stats


def test_copydesk_stats_shows_decisions_per_editor_in_text_and_json(desk: dict[str, Any]) -> None:
    from tests.cli_helpers import cli_env
    from tests.cli_helpers import run_here as run  # in this process: not about one (issue 23)

    env = cli_env(desk["tmp"], COPYDESK_DATABASE_URL=desk["url"])
    result = run(["stats", "--json"], desk["tmp"], env=env)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)  # stdout is JSON and nothing else
    editors = document["editors"]
    assert editors["days"] == 30
    rows = {r["editor"]: r for r in editors["decisions"]}
    assert (rows["alice"]["decisions"], rows["alice"]["approved"]) == (2, 2)
    assert (rows["bob"]["decisions"], rows["bob"]["rejected"]) == (1, 1)
    assert rows["alice"]["median_seconds_to_decision"] >= 0
    assert rows["alice"]["decisions_per_day"] == round(2 / 30, 2)

    text = run(["stats", "--days", "7"], desk["tmp"], env=env)
    assert text.returncode == 0, text.stderr
    assert "decisions per editor, last 7 days" in text.stdout
    alice = next(line for line in text.stdout.splitlines() if " alice " in f" {line} ")
    assert alice.split("│")[2].strip() == "2"  # decisions
    assert run(["stats", "--days", "0"], desk["tmp"], env=env).returncode == 2
