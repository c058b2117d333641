"""`copydesk run` with model checks against the loopback fake API: the check call
fails closed (recorded as failed, never a pass), `[checks] require` makes such a
draft unapprovable, a verified wrong fact discards the item, and a valid but
meaningless reply (issue 19 §3) never passes a draft: stored verdicts, statuses
and audit events, through the real SDK."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from store import verdicts as stored_verdicts
from store.db import open_store
from store.models import AuditEvent, Item, ModelCall, Run
from tests import anthropic_fake as fake_api
from tests.articles import long_articles, rss
from tests.pipeline_helpers import KEY, config_for, invoke

# Each test's database starts at the newest schema (conftest's migrated template), so
# `copydesk init` in write_config migrates nothing; what init makes is the same.
pytestmark = pytest.mark.usefixtures("migrated")


@pytest.fixture
def feed_url(httpserver):  # type: ignore[no-untyped-def]
    httpserver.expect_request("/feed.xml").respond_with_data(
        rss(long_articles(3)), content_type="application/rss+xml"
    )
    return httpserver.url_for("/feed.xml")


def with_checks(config, text: str):  # type: ignore[no-untyped-def]
    config.write_text(config.read_text() + f"\n[checks]\nmax_retries = 0\n{text}\n")
    return config


def run(tmp_path, monkeypatch, sqlite_url, feed_url, check: Any, extra: str = "", responder=None):  # type: ignore[no-untyped-def]
    """`copydesk run --json` over the loopback API: check calls answered by `check`
    (or every call by `responder`); the items, check verdicts, check calls and events."""
    fake = fake_api.FakeAnthropic(
        responder=responder or fake_api.checks_responder(check), api_key=KEY
    )
    config = with_checks(config_for(tmp_path, sqlite_url, feed_url), extra)
    with fake.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run", "--json")
    assert result.exit_code == 0, result.output
    assert "model checks: anthropic:claude-haiku-4-5" in result.stderr
    engine = open_store(sqlite_url)
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
        verdicts = [v for v in stored_verdicts.every(session) if v.stage == "check"]
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


# --- valid but meaningless check replies (issue 19 §3), through the real SDK -----------------


def degenerate(change):  # type: ignore[no-untyped-def]
    """A check call answered by a careful judge's reply, then spoilt by `change`."""

    def respond(source: str, draft: str) -> Any:
        value = fake_api.grounded_check(source, draft)
        change(value, source)
        return fake_api.check_reply(value)

    return respond


def _whole_article(value: dict, source: str) -> None:
    for c in value["claims"]:
        c["passage"] = source


def _one_word(value: dict, source: str) -> None:
    value["claims"][-1]["passage"] = "the"


def _another_text(value: dict, source: str) -> None:
    # The draft says the service will run (the library will close); the claim says
    # something was approved, which no sentence of the draft says.
    value["claims"][-1]["claim"] = value["claims"][-1]["claim"].replace(
        " will ", " approved and will "
    )


def _uncovered(value: dict, source: str) -> None:
    del value["claims"][-1]


def _immaterial_named_error(value: dict, source: str) -> None:
    value["sentences"][-1] |= {"errors": ["factual"], "material": False}


def _material_without_kind(value: dict, source: str) -> None:
    value["sentences"][-1] |= {"errors": [], "material": True}


def _no_passage(value: dict, source: str) -> None:
    value["sentences"][-1]["passage"] = None


@pytest.mark.parametrize(
    ("change", "gate", "words"),
    [
        (_whole_article, "claims_supported", "(passage not bounded)"),
        (_one_word, "claims_supported", "(passage shares no content with the claim)"),
        (_another_text, "claims_supported", "(claim not in the draft)"),
        (_uncovered, "claims_supported", "draft sentence(s) no claim covers"),
        (_immaterial_named_error, "faithfulness", "the model called not material: factual"),
        (_material_without_kind, "faithfulness", "material error(s): kind not named"),
        (_no_passage, "faithfulness", "the checking model quoted no passage of the source"),
    ],
    ids=lambda v: getattr(v, "__name__", "")[1:] or None,
)
def test_a_valid_but_meaningless_check_never_passes_a_draft(
    tmp_path, sqlite_url, feed_url, monkeypatch, change, gate: str, words: str
) -> None:
    """Before: each of these replies passed both checks (issue 19 §3)."""
    _, items, verdicts, calls, events = run(
        tmp_path, monkeypatch, sqlite_url, feed_url, degenerate(change)
    )
    assert all(c.ok for c in calls) and len(calls) == len(items) == 3
    assert {i.status for i in items} == {"draft"}  # a person reads it, flagged
    judged = [v for v in verdicts if v.gate == gate]
    assert len(judged) == len(items)
    for v in judged:
        assert not v.passed and v.mode == "flag", v.reason
        assert words in v.reason, v.reason
    drafted = [e for e in events if e.to_status == "draft"]
    assert len(drafted) == len(items)
    for e in drafted:  # the other check passed: only this one is the editor's warning
        assert e.reason == f"all hard gates passed; flagged: {gate}"
        assert e.details["flagged_gates"] == [gate] and e.details["checks"]["state"] == "ran"


def test_two_record_checks_calls_in_one_reply_fail_the_checks_closed(
    tmp_path, sqlite_url, feed_url, monkeypatch
) -> None:
    """Before: the last of two `record_checks` calls silently won (here a lenient one)."""

    def twice(source: str, draft: str) -> Any:
        lenient = {"claims": [], "sentences": []}
        good = fake_api.grounded_check(source, draft)
        return fake_api.message([fake_api.check_tool_use(good), fake_api.check_tool_use(lenient)])

    _, items, verdicts, calls, events = run(tmp_path, monkeypatch, sqlite_url, feed_url, twice)
    assert {i.status for i in items} == {"draft"}
    assert len(verdicts) == 2 * len(items) == 6
    for v in verdicts:
        assert not v.passed and v.mode == "flag" and v.evidence["state"] == "failed"
        assert "called record_checks 2 times" in v.reason, v.reason
    drafted = [e for e in events if e.to_status == "draft"]
    assert len(drafted) == 3 and all("model checks failed (" in e.reason for e in drafted)


def test_two_write_summary_calls_in_one_reply_fail_the_summary_closed(
    tmp_path, sqlite_url, feed_url, monkeypatch
) -> None:
    """Before: the last of two `write_summary` calls silently won."""
    first = fake_api.first_sentences_responder()

    def respond(request_json: Any) -> Any:
        if fake_api.draft_text(request_json) is not None:
            return first(request_json)
        return fake_api.message(
            [
                fake_api.tool_use("Ferry sinks", "The Kestrel Sound ferry sank on Tuesday."),
                fake_api.tool_use("Story", "Report from the council desk."),
            ]
        )

    _, items, verdicts, calls, events = run(
        tmp_path, monkeypatch, sqlite_url, feed_url, None, responder=respond
    )
    why = "the reply called write_summary 2 times; exactly one call is accepted"
    assert {i.status for i in items} == {"error"} and len(items) == 3  # no draft, none lost
    assert all(why in (i.last_error or "") for i in items)
    assert verdicts == [] and calls == []  # nothing was checked: there is no summary
    moved = [e for e in events if e.item_id is not None and e.to_status != "new"]
    assert [e.to_status for e in moved] == ["error"] * 3
    assert all(why in e.reason for e in moved)
