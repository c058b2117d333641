"""`copydesk run` with the Anthropic backend: the real SDK, a loopback server that
answers like the API, a loopback feed, and a real SQLite database."""

from __future__ import annotations

import json
import threading
import time

import pytest
from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from store import verdicts as stored_verdicts
from store.db import open_store
from store.models import Item, ModelCall, Run
from tests import anthropic_fake as fake_api
from tests.articles import long_articles, rss
from tests.pipeline_helpers import KEY, config_for, invoke

# Each test's database starts at the newest schema (conftest's migrated template), so
# `copydesk init` in write_config migrates nothing; what init makes is the same.
pytestmark = pytest.mark.usefixtures("migrated")


@pytest.fixture
def feed_url(httpserver):
    httpserver.expect_request("/feed.xml").respond_with_data(
        rss(long_articles(8)), content_type="application/rss+xml"
    )
    return httpserver.url_for("/feed.xml")


class Concurrency:
    """Wraps a responder, counting how many requests are in flight at once."""

    def __init__(self, inner, delay: float = 0.15):
        self.inner, self.delay = inner, delay
        self.now = self.peak = 0
        self.lock = threading.Lock()

    def __call__(self, request_json):
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        time.sleep(self.delay)
        with self.lock:
            self.now -= 1
        return self.inner(request_json)


def test_auto_uses_anthropic_with_a_key_and_fills_the_ledger(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    meter = Concurrency(fake_api.first_sentences_responder())
    fake = fake_api.FakeAnthropic(responder=meter, api_key=KEY)
    config = config_for(tmp_path, sqlite_url, feed_url)
    with fake.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run", "--json")
    assert result.exit_code == 0, result.output
    assert "summariser: anthropic:claude-haiku-4-5 (ANTHROPIC_API_KEY is set)" in result.stderr
    assert json.loads(result.stdout)["totals"]["drafts"] == 8

    # Calls ran in parallel, never more than max_concurrency at once.
    assert 1 < meter.peak <= 4
    engine = open_store(sqlite_url)
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
        calls = session.exec(select(ModelCall)).all()
        run = session.exec(select(Run)).one()
    assert {i.status for i in items} == {"draft"}
    assert {i.summariser for i in items} == {"anthropic:claude-haiku-4-5"}
    # One summary call and one check call per item, never one per claim.
    assert sorted(c.purpose for c in calls) == ["checks"] * 8 + ["summary"] * 8
    assert {(c.item_id, c.purpose) for c in calls} == {
        (i.id, p) for i in items for p in ("summary", "checks")
    }
    with Session(engine) as session:
        checked = [v for v in stored_verdicts.every(session) if v.stage == "check"]
    assert len(checked) == 16 and all(v.passed for v in checked), [
        v.evidence for v in checked if not v.passed
    ][:1]
    for call in calls:
        assert call.item_id is not None and call.run_id == run.id
        assert call.purpose in ("summary", "checks") and call.ok
        assert call.temperature == 0 and call.temperature_in_force
        assert call.api_version == "2023-06-01"
        assert call.prompt_hash and call.request_id
        assert call.input_tokens == 1200 and call.output_tokens == 140
        assert call.cost_usd == pytest.approx((1200 * 1.0 + 140 * 5.0) / 1e6)
        assert KEY not in json.dumps(call.request_json)
    # Every message request carried temperature 0 and the pinned version.
    for seen in fake.message_requests:
        assert seen.json["temperature"] == 0
        assert seen.headers["anthropic-version"] == "2023-06-01"

    stats = CliRunner().invoke(app, ["--config", str(config), "stats", "--json"])
    row = json.loads(stats.stdout)["runs"][0]
    assert (row["model_calls"], row["input_tokens"], row["output_tokens"]) == (16, 19200, 2240)
    assert row["cost_usd"] == pytest.approx(16 * 0.0019)


def test_refused_key_stops_the_run_before_any_item_is_touched(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    fake = fake_api.FakeAnthropic(api_key="sk-ant-some-other-key")
    config = config_for(tmp_path, sqlite_url, feed_url)
    with fake.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run")
    assert result.exit_code == 3
    assert "refused" in result.stderr and "401" in result.stderr
    assert KEY not in result.stderr + result.stdout
    assert fake.message_requests == []
    with Session(open_store(sqlite_url)) as session:
        assert session.exec(select(Item)).all() == []


def test_overloaded_model_sends_items_to_error_and_a_later_run_drafts_them(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    config = config_for(tmp_path, sqlite_url, feed_url, "breaker_failures = 100")
    down = fake_api.FakeAnthropic(responder=lambda _req: fake_api.overloaded(), api_key=KEY)
    with down.serve() as base_url:
        first = invoke(config, monkeypatch, base_url, "run", "--json")
    assert first.exit_code == 0  # the run did its job: the failures are recorded
    engine = open_store(sqlite_url)
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
        failed_calls = session.exec(select(ModelCall).where(ModelCall.ok == False)).all()  # noqa: E712
    assert {i.status for i in items} == {"error"}
    assert all(i.attempts == 1 and "529" in i.last_error for i in items)
    assert len(failed_calls) == 8

    up = fake_api.FakeAnthropic(responder=fake_api.first_sentences_responder(), api_key=KEY)
    with up.serve() as base_url:
        second = invoke(config, monkeypatch, base_url, "run", "--json")
    report = json.loads(second.stdout)
    assert report["totals"]["retried"] == 8 and report["totals"]["drafts"] == 8
    with Session(engine) as session:
        assert {i.status for i in session.exec(select(Item))} == {"draft"}


def test_model_rejecting_temperature_mid_run_stops_and_loses_nothing(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    config = config_for(tmp_path, sqlite_url, feed_url, "max_concurrency = 1")
    config.write_text(config.read_text().replace("max_concurrency = 4", ""))
    fake = fake_api.FakeAnthropic(
        responder=lambda _req: fake_api.temperature_deprecated(), api_key=KEY
    )
    with fake.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run")
    assert result.exit_code == 3
    assert "temperature" in result.stderr
    with Session(open_store(sqlite_url)) as session:
        statuses = [i.status for i in session.exec(select(Item))]
    # Nothing was discarded or drafted: the first waits in `error` (one rejection may be
    # its article's), the rest still new, for a fixed config.
    assert statuses and set(statuses) == {"new", "error"} and statuses.count("error") == 1


def test_an_outage_at_start_is_not_fatal_feeds_are_still_polled(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    """A 529 on the model check says nothing about the configuration: the feed is
    read, every entry stored, and the items wait in `error` for a later run."""
    fake = fake_api.FakeAnthropic(
        responder=lambda _req: fake_api.overloaded(),
        model_reply=fake_api.overloaded(),
        api_key=KEY,
    )
    # The breaker (tests/test_model_outage.py) set out of reach: this is about the start.
    config = config_for(tmp_path, sqlite_url, feed_url, "breaker_failures = 100")
    with fake.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run", "--json")
    assert result.exit_code == 0, result.output
    with Session(open_store(sqlite_url)) as session:
        items = session.exec(select(Item)).all()
    assert len(items) == 8 and {i.status for i in items} == {"error"}
    assert {i.summariser for i in items} == {"anthropic:claude-haiku-4-5"}


def test_a_stopped_run_still_writes_its_calls_to_the_ledger(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    config = config_for(tmp_path, sqlite_url, feed_url)
    fake = fake_api.FakeAnthropic(responder=lambda _req: fake_api.unauthorized(), api_key=None)
    with fake.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run")
    assert result.exit_code == 3
    assert "refused" in result.stderr
    engine = open_store(sqlite_url)
    with Session(engine) as session:
        calls = session.exec(select(ModelCall)).all()
        run = session.exec(select(Run)).one()
        statuses = {i.status for i in session.exec(select(Item))}
    assert len(calls) == len(fake.message_requests) >= 1
    assert all(not c.ok and c.run_id == run.id for c in calls)
    assert run.exit_status == 3 and "refused" in run.error
    assert statuses == {"new"}


def test_a_refused_key_at_start_leaves_a_run_row_saying_why(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    fake = fake_api.FakeAnthropic(api_key="sk-ant-another-key")
    config = config_for(tmp_path, sqlite_url, feed_url)
    with fake.serve() as base_url:
        invoke(config, monkeypatch, base_url, "run")
    with Session(open_store(sqlite_url)) as session:
        run = session.exec(select(Run)).one()
    assert run.exit_status == 3 and run.ended_at is not None
    assert "refused" in run.error and KEY not in run.error


def test_after_a_stopping_reply_no_queued_item_calls_the_model_even_on_a_busy_machine(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    """The run's own thread is slow to cancel what is queued (here: it sleeps while
    recording the stopping call, as on a loaded machine); the model thread must not
    go on calling the model for the queued items meanwhile."""
    from copydesk.services.pipeline.writer import Writer

    config = config_for(tmp_path, sqlite_url, feed_url)
    config.write_text(config.read_text().replace("max_concurrency = 4", "max_concurrency = 1"))
    shape = "system.0.cache_control: Extra inputs are not permitted"
    fake = fake_api.FakeAnthropic(responder=lambda _req: fake_api.bad_request(shape), api_key=KEY)
    record = Writer.record_calls

    def slow_record(self, item_id, calls):  # type: ignore[no-untyped-def]
        time.sleep(1.0)
        record(self, item_id, calls)

    monkeypatch.setattr(Writer, "record_calls", slow_record)
    with fake.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run")
    assert result.exit_code == 3, result.output
    assert len(fake.message_requests) == 2  # the first waits in `error`, the second stops
    with Session(open_store(sqlite_url)) as session:
        assert {i.status for i in session.exec(select(Item))} == {"new", "error"}


def test_a_request_shape_error_stops_the_run_after_one_call_and_keeps_the_backlog(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    """`cache_control: Extra inputs are not permitted` is the same for all 8 items:
    with no answered summary to compare, the first waits in `error` and the second
    stops the run (exit 3, one line); nothing is discarded."""
    config = config_for(tmp_path, sqlite_url, feed_url)
    config.write_text(config.read_text().replace("max_concurrency = 4", "max_concurrency = 1"))
    shape = "system.0.cache_control: Extra inputs are not permitted"
    fake = fake_api.FakeAnthropic(responder=lambda _req: fake_api.bad_request(shape), api_key=KEY)
    with fake.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run")
    assert result.exit_code == 3
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("copydesk: error: run stopped:") and "Traceback" not in result.stderr
    assert "Extra inputs are not permitted" in line
    assert 2 <= len(fake.message_requests) <= 3
    with Session(open_store(sqlite_url)) as session:
        statuses = [i.status for i in session.exec(select(Item))]
        run = session.exec(select(Run)).one()
    assert len(statuses) == 8 and set(statuses) == {"new", "error"}
    assert run.exit_status == 3 and "rejected the request" in run.error
