"""Drafts whose model checks did not run: listed (`copydesk unchecked`), and
re-checked by a later run when they failed for a passing reason (an outage, a
timeout, an overload), at most `[checks] recheck_attempts` times, through the
same check call, with an audit event that bumps the version so an editor who
opened the draft before the re-check is refused. All against the loopback fake
Anthropic API through the real SDK and `copydesk run`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from copydesk.config import load_settings
from copydesk.services.recheck import recheck_drafts
from review_ui.desk import decisions
from store import status as st
from store import verdicts as stored_verdicts
from store.db import open_store
from store.editors import add_editor
from store.models import AuditEvent, GateVerdict, Item, ModelCall
from summarise.checks import CheckOutcome
from tests import anthropic_fake as fake_api
from tests.articles import long_articles, rss
from tests.pipeline_helpers import KEY, config_for, invoke

ANN = decisions.Reviewer("ann", "editor")


@pytest.fixture
def feed_url(httpserver):  # type: ignore[no-untyped-def]
    httpserver.expect_request("/feed.xml").respond_with_data(
        rss(long_articles(2)), content_type="application/rss+xml"
    )
    return httpserver.url_for("/feed.xml")


def grounded(source: str, draft: str) -> Any:
    return fake_api.check_reply(fake_api.grounded_check(source, draft))


def wrong_fact(source: str, draft: str) -> Any:
    value = fake_api.grounded_check(source, draft)
    value["sentences"][-1] |= {"errors": ["factual"], "wrong_fact": True, "material": True}
    return fake_api.check_reply(value)


def outage(source: str, draft: str) -> Any:
    return fake_api.overloaded()


class Desk:
    """A config, a database and a fake API whose check replies a test can switch."""

    def __init__(self, tmp_path, sqlite_url, feed_url, monkeypatch, extra: str = ""):  # type: ignore[no-untyped-def]
        self.check: Any = outage
        self.config = config_for(tmp_path, sqlite_url, feed_url)
        self.config.write_text(self.config.read_text() + f"\n[checks]\nmax_retries = 0\n{extra}\n")
        self.fake = fake_api.FakeAnthropic(
            responder=fake_api.checks_responder(lambda source, draft: self.check(source, draft)),
            api_key=KEY,
        )
        self.monkeypatch = monkeypatch
        self.engine = open_store(sqlite_url)

    def run(self) -> dict[str, Any]:
        with self.fake.serve() as base_url:
            result = invoke(self.config, self.monkeypatch, base_url, "run", "--json")
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    def cli(self, *args: str) -> Any:
        return CliRunner().invoke(app, ["--config", str(self.config), *args])

    def items(self) -> list[Item]:
        with Session(self.engine) as session:
            return list(session.exec(select(Item).order_by(Item.id)).all())

    def newest_checks(self, item_id: int) -> dict[str, GateVerdict]:
        with Session(self.engine) as session:
            rows = stored_verdicts.of_item(session, item_id)
        return {v.gate: v for v in rows if v.stage == "check"}

    def rechecked_events(self, item_id: int) -> list[AuditEvent]:
        with Session(self.engine) as session:
            return list(
                session.exec(
                    select(AuditEvent).where(
                        AuditEvent.item_id == item_id, AuditEvent.reason == "rechecked"
                    )
                ).all()
            )


@pytest.fixture
def desk(tmp_path, db_url, migrated, feed_url, monkeypatch):  # type: ignore[no-untyped-def]
    made = Desk(tmp_path, db_url, feed_url, monkeypatch)
    yield made
    made.engine.dispose()


def test_unchecked_lists_drafts_whose_checks_failed_with_why(desk: Desk) -> None:
    desk.run()
    items = desk.items()
    assert {i.status for i in items} == {"draft"}
    listing = desk.cli("unchecked", "--json")
    assert listing.exit_code == 0, listing.output
    document = json.loads(listing.stdout)
    assert sorted(row["item_id"] for row in document["items"]) == [i.id for i in items]
    first = document["items"][0]
    assert first["status"] == "draft" and first["rechecks"] == 0
    assert {c["gate"] for c in first["checks"]} == {"claims_supported", "faithfulness"}
    assert all(c["state"] == "failed" and c["transient"] for c in first["checks"])
    assert "529" in first["checks"][0]["why"]
    assert document["counts"] == {"failed": 2, "not run": 0}
    # Both drafts wait for their checks, since the run's check verdicts; the next
    # run re-checks them by itself (on both backends: the SQL of store.checks).
    waiting = document["waiting"]
    assert waiting["count"] == 2 and waiting["rechecked_by_next_run"] == 2, waiting
    assert waiting["need_recheck_failed"] == 0 and waiting["since"]
    assert json.loads(desk.cli("stats", "--json").stdout)["checks_waiting"] == waiting
    # Filters: none of them "not run"; none approved.
    assert json.loads(desk.cli("unchecked", "--state", "not-run", "--json").stdout)["items"] == []
    assert json.loads(desk.cli("unchecked", "--status", "approved", "--json").stdout)["items"] == []
    table = desk.cli("unchecked")
    assert table.exit_code == 0 and "failed" in table.stdout and "529" in table.stdout
    assert desk.cli("unchecked", "--state", "maybe").exit_code == 2


def test_a_later_run_rechecks_a_transient_failure(desk: Desk) -> None:
    desk.run()
    before = {i.id: i.version for i in desk.items()}
    desk.check = grounded  # the API is back
    report = desk.run()
    assert report["rechecks"] == {
        "attempted": 2,
        "ran": 2,
        "failed_again": 0,
        "discarded": 0,
        "dropped": 0,
        "deferred": 0,
    }
    for item in desk.items():
        assert item.status == "draft"
        assert item.version == before[item.id] + 1  # an editor's open screen is stale
        checks = desk.newest_checks(item.id)
        assert all(v.passed and v.check_state == "ran" for v in checks.values()), checks
        [event] = desk.rechecked_events(item.id)
        assert (event.from_status, event.to_status, event.actor) == ("draft", "draft", "run:2")
        assert event.details["attempt"] == 1 and event.details["checks"]["state"] == "ran"
    with Session(desk.engine) as session:
        calls = session.exec(select(ModelCall).where(ModelCall.purpose == "checks")).all()
    assert sorted(c.ok for c in calls) == [False, False, True, True]  # both attempts in the ledger
    assert json.loads(desk.cli("unchecked", "--json").stdout)["items"] == []
    assert json.loads(desk.cli("stats", "--json").stdout)["checks_waiting"]["count"] == 0
    # stats counts each item's current checks: the failed attempt is history now.
    counts = json.loads(desk.cli("stats", "--json").stdout)["model_checks"]["faithfulness"]
    assert counts == {"passed": 2, "problems found": 0, "not run": 0, "failed to run": 0}
    # The re-check is not an edit: the pipeline's verdicts still apply to the text.
    history = desk.cli("audit", str(desk.items()[0].id), "--json")
    assert history.exit_code == 0 and "rechecked" in history.stdout
    assert desk.run().get("rechecks") is None  # nothing due any more


def test_a_recheck_that_finds_a_wrong_fact_discards_and_refuses_the_stale_editor(
    desk: Desk,
) -> None:
    desk.run()
    with Session(desk.engine) as session:
        add_editor(session, "ann", "a long enough password 1")
        session.commit()
    opened = {i.id: i.version for i in desk.items()}  # ann has the drafts on screen
    desk.check = wrong_fact
    assert desk.run()["rechecks"]["discarded"] == 2
    for item in desk.items():
        assert (item.status, item.discard_kind) == ("discarded", "faithfulness")
        with Session(desk.engine) as session:
            with pytest.raises(st.Conflict) as refused:
                decisions.approve(session, ANN, item.id, opened[item.id])
            assert refused.value.status == "discarded"
    listing = desk.cli("discards", "--gate", "faithfulness", "--json")
    assert listing.exit_code == 0 and "on re-check 1" in listing.stdout


def test_an_editor_with_the_draft_open_is_refused_after_a_recheck(desk: Desk) -> None:
    desk.run()
    with Session(desk.engine) as session:
        add_editor(session, "ann", "a long enough password 1")
        session.commit()
    item = desk.items()[0]
    desk.check = grounded
    desk.run()
    with Session(desk.engine) as session:
        with pytest.raises(st.Conflict) as refused:
            decisions.approve(session, ANN, item.id, item.version)
    message = decisions.conflict_message(refused.value)
    assert f"the model checks of #{item.id} were re-run by run:2" in message, message
    with Session(desk.engine) as session:  # on the version she now sees, she may decide
        fresh = session.get(Item, item.id)
        decisions.approve(session, ANN, item.id, fresh.version)
        session.commit()
    assert desk.items()[0].status == "approved"


def test_an_editor_deciding_while_the_model_answers_keeps_the_decision(desk: Desk) -> None:
    """The race the other way: the re-check read the draft, the editor approved it
    while the model was answering; the re-check is dropped, its call still billed."""
    desk.run()
    with Session(desk.engine) as session:
        add_editor(session, "ann", "a long enough password 1")
        session.commit()
    settings = load_settings(desk.config)
    target = desk.items()[0]

    class DecidingMeanwhile:
        name = "scripted"

        def check(self, article, draft):  # type: ignore[no-untyped-def]
            with Session(desk.engine) as session:
                item = session.get(Item, target.id)
                if item.status == "draft":
                    decisions.approve(session, ANN, item.id, item.version)
                    session.commit()
            value = fake_api.grounded_check(article.text, draft)
            value["sentences"][-1] |= {"errors": ["factual"], "wrong_fact": True, "material": True}
            from summarise.checks import parse_check_input

            return CheckOutcome("ran", None, parse_check_input(value), checker="scripted")

    report = recheck_drafts(desk.engine, settings, DecidingMeanwhile(), actor="run:99")
    assert (report.attempted, report.dropped, report.discarded) == (2, 1, 1)
    assert desk.items()[0].status == "approved"  # the editor's decision stands
    assert desk.rechecked_events(target.id) == []


def test_rechecks_are_bounded_and_recorded(
    tmp_path, sqlite_url, migrated, feed_url, monkeypatch
) -> None:
    desk = Desk(tmp_path, sqlite_url, feed_url, monkeypatch, "recheck_attempts = 2")
    for _ in range(4):  # the first run, then three more during a long outage
        desk.run()
    for item in desk.items():
        events = desk.rechecked_events(item.id)
        assert [e.details["attempt"] for e in events] == [1, 2]
        assert all(e.details["checks"]["state"] == "failed" for e in events)
        assert all(v.check_state == "failed" for v in desk.newest_checks(item.id).values())
    listing = json.loads(desk.cli("unchecked", "--json").stdout)
    assert {row["rechecks"] for row in listing["items"]} == {2}
    # Its re-checks spent, each draft still waits; only `recheck --failed` asks again.
    waiting = listing["waiting"]
    assert waiting["count"] == 2 and waiting["rechecked_by_next_run"] == 0
    assert waiting["need_recheck_failed"] == 2
    assert "2 only with `copydesk recheck --failed`" in desk.cli("unchecked").stdout
    desk.engine.dispose()


def test_a_reply_that_broke_the_schema_is_not_rechecked(desk: Desk) -> None:
    desk.check = lambda source, draft: fake_api.check_reply({"claims": "none", "sentences": []})
    desk.run()
    first = {i.id: desk.newest_checks(i.id)["faithfulness"].id for i in desk.items()}
    assert all(
        not v.evidence.get("transient")
        for i in desk.items()
        for v in desk.newest_checks(i.id).values()
    )
    desk.check = grounded
    assert desk.run().get("rechecks") is None
    assert {i.id: desk.newest_checks(i.id)["faithfulness"].id for i in desk.items()} == first


def test_copydesk_recheck_does_it_now_and_refuses_without_a_key(desk: Desk) -> None:
    desk.run()
    desk.check = grounded
    with desk.fake.serve() as base_url:
        result = invoke(desk.config, desk.monkeypatch, base_url, "recheck", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rechecks"]["ran"] == 2
    assert all(len(desk.rechecked_events(i.id)) == 1 for i in desk.items())
    desk.monkeypatch.delenv("ANTHROPIC_API_KEY")
    refused = desk.cli("recheck")
    assert refused.exit_code == 3
    assert "model checks cannot run: no model" in refused.stderr


def refused_shape(source: str, draft: str) -> Any:
    """A configuration failure: the API refuses the request itself (not an outage)."""
    return fake_api.bad_request("tools.1.input_schema: not a supported schema")


def test_recheck_failed_rechecks_checks_that_failed_for_a_configuration_reason(
    desk: Desk,
) -> None:
    """Before: only passing failures were re-checkable; a check refused for the
    configuration stayed failed even after the configuration was fixed."""
    desk.check = refused_shape
    desk.run()
    assert all(
        v.check_state == "failed" for i in desk.items() for v in desk.newest_checks(i.id).values()
    )
    waiting = json.loads(desk.cli("stats", "--json").stdout)["checks_waiting"]
    assert (waiting["count"], waiting["rechecked_by_next_run"]) == (2, 0)
    assert waiting["need_recheck_failed"] == 2
    desk.check = grounded  # the configuration is fixed
    with desk.fake.serve() as base_url:
        plain = invoke(desk.config, desk.monkeypatch, base_url, "recheck", "--json")
        assert json.loads(plain.stdout)["rechecks"] == {}
        result = invoke(desk.config, desk.monkeypatch, base_url, "recheck", "--failed", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rechecks"]["ran"] == 2
    assert all(
        v.check_state == "ran" and v.passed
        for i in desk.items()
        for v in desk.newest_checks(i.id).values()
    )


def test_no_recheck_when_the_model_checks_are_off_now(desk: Desk) -> None:
    desk.run()
    text = desk.config.read_text()
    off = 'claims_supported = "off"\nfaithfulness = "off"\n'
    if "[gates.modes]" in text:
        text = text.replace("[gates.modes]\n", "[gates.modes]\n" + off, 1)
    else:
        text += "\n[gates.modes]\n" + off
    desk.config.write_text(text)
    desk.check = grounded
    assert desk.run().get("rechecks") is None
    assert all(desk.rechecked_events(i.id) == [] for i in desk.items())


def test_rechecks_stop_at_the_runs_deadline_and_the_rest_wait(
    tmp_path, db_url, migrated, feed_url, monkeypatch
) -> None:
    """Issue 26: re-checks that hang do not hold the run (and SQLite's run slot) for
    hours. The run's deadline ([runs] deadline_seconds after it started) bounds the
    re-check pass: no re-check starts after it; the drafts left are counted as
    deferred and re-checked by a later run. The clock is the test's: each check
    call "hangs" 2,000 s of it, against a deadline of 1,500 s."""
    from copydesk.services import recheck

    desk = Desk(tmp_path, db_url, feed_url, monkeypatch)
    desk.config.write_text(desk.config.read_text() + "\n[runs]\ndeadline_seconds = 1500\n")
    desk.run()  # two drafts whose checks failed (an outage)
    now = [0.0]
    monkeypatch.setattr(recheck, "clock", lambda: now[0])

    def hangs_then_outage(source: str, draft: str) -> Any:
        now[0] += 2000
        return fake_api.overloaded()

    desk.check = hangs_then_outage
    done = desk.run()["rechecks"]
    assert (done["attempted"], done["deferred"]) == (1, 1)
    first, second = desk.items()
    assert len(desk.rechecked_events(first.id)) == 1
    assert desk.rechecked_events(second.id) == []
    with desk.fake.serve() as base_url:  # `copydesk recheck` has the same deadline
        text = invoke(desk.config, monkeypatch, base_url, "recheck")
    assert "1 deferred to a later run (the run's deadline passed)" in text.stdout

    desk.check = grounded  # a later run, answered at once: nothing is deferred
    done = desk.run()["rechecks"]
    assert done["deferred"] == 0 and done["ran"] == 2
    assert [len(desk.rechecked_events(i.id)) for i in (first, second)] in ([3, 1], [2, 2])
    desk.engine.dispose()
