"""`copydesk run` with model checks against the loopback fake API: the check call
fails closed (recorded as failed, never a pass), `[checks] require` makes such a
draft unapprovable, and a verified wrong fact discards the item."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from store.db import open_store
from store.models import AuditEvent, GateVerdict, Item, ModelCall, Run
from tests import anthropic_fake as fake_api
from tests.articles import long_articles, rss
from tests.pipeline_helpers import KEY, config_for, invoke


@pytest.fixture
def feed_url(httpserver):  # type: ignore[no-untyped-def]
    httpserver.expect_request("/feed.xml").respond_with_data(
        rss(long_articles(3)), content_type="application/rss+xml"
    )
    return httpserver.url_for("/feed.xml")


def with_checks(config, text: str):  # type: ignore[no-untyped-def]
    config.write_text(config.read_text() + f"\n[checks]\nmax_retries = 0\n{text}\n")
    return config


def run(tmp_path, monkeypatch, sqlite_url, feed_url, check: Any, extra: str = ""):  # type: ignore[no-untyped-def]
    fake = fake_api.FakeAnthropic(responder=fake_api.checks_responder(check), api_key=KEY)
    config = with_checks(config_for(tmp_path, sqlite_url, feed_url), extra)
    with fake.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run", "--json")
    assert result.exit_code == 0, result.output
    assert "model checks: anthropic:claude-haiku-4-5" in result.stderr
    engine = open_store(sqlite_url)
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
        verdicts = session.exec(select(GateVerdict).where(GateVerdict.stage == "check")).all()
        calls = session.exec(select(ModelCall).where(ModelCall.purpose == "checks")).all()
        events = session.exec(select(AuditEvent)).all()
    return config, items, verdicts, calls, events


def test_check_outage_is_recorded_as_failed_never_a_pass(
    tmp_path, sqlite_url, feed_url, monkeypatch
) -> None:
    config, items, verdicts, calls, events = run(
        tmp_path, monkeypatch, sqlite_url, feed_url, lambda source, draft: fake_api.overloaded()
    )
    assert {i.status for i in items} == {"draft"}  # a person reads it, with a warning
    assert len(verdicts) == 2 * len(items)
    for v in verdicts:
        assert not v.passed and v.mode == "flag"
        assert v.reason.startswith("failed (model API failed after 1 attempt(s) (529")
        assert v.evidence["state"] == "failed"
    assert len(calls) == len(items) and not any(c.ok for c in calls)
    drafted = [e for e in events if e.to_status == "draft"]
    assert all("model checks failed (" in e.reason for e in drafted)
    stats = CliRunner().invoke(app, ["--config", str(config), "stats", "--json"])
    counts = json.loads(stats.stdout)["model_checks"]["faithfulness"]
    assert counts == {
        "passed": 0,
        "problems found": 0,
        "not run": 0,
        "failed to run": len(items),
    }
    # The run's own closing report counts them too (the table, --json, runs.counts).
    with Session(open_store(sqlite_url)) as session:
        (row,) = session.exec(select(Run)).all()
    assert row.counts["totals"]["checks_failed"] == len(items) == 3
    assert row.counts["totals"]["checks_not_run"] == 0


def test_require_stores_failed_checks_as_blocking(tmp_path, sqlite_url, feed_url, monkeypatch):
    _, items, verdicts, _, _ = run(
        tmp_path,
        monkeypatch,
        sqlite_url,
        feed_url,
        lambda source, draft: fake_api.text_reply("I would rather not."),
        "require = true",
    )
    assert {i.status for i in items} == {"draft"}
    assert {(v.passed, v.mode) for v in verdicts} == {(False, "discard")}
    assert all("not usable" in v.reason for v in verdicts)


def test_verified_wrong_fact_discards_through_the_pipeline(
    tmp_path, sqlite_url, feed_url, monkeypatch
) -> None:
    def wrong(source: str, draft: str) -> Any:
        value = fake_api.grounded_check(source, draft)
        value["sentences"][-1] |= {"errors": ["factual"], "wrong_fact": True, "material": True}
        return fake_api.check_reply(value)

    config, items, verdicts, calls, events = run(tmp_path, monkeypatch, sqlite_url, feed_url, wrong)
    assert {i.status for i in items} == {"discarded"}
    assert all(c.ok for c in calls)
    faith = [v for v in verdicts if v.gate == "faithfulness"]
    assert faith and all(not v.passed and v.mode == "discard" for v in faith)
    discarded = [e for e in events if e.to_status == "discarded"]
    assert {e.details["discard_kind"] for e in discarded} == {"faithfulness"}
    listing = CliRunner().invoke(
        app, ["--config", str(config), "discards", "--gate", "faithfulness", "--json"]
    )
    assert listing.exit_code == 0 and "contradicted by the source" in listing.stdout
