"""An outage is never the story's fault: `copydesk run` against a loopback API that
is down, capped, or refuses one article (the real SDK, a real SQLite database); and
what a run start says of the models (legacy, retiring, no price, no temperature)."""

from __future__ import annotations

import json
import re
from datetime import datetime

import pytest
from sqlmodel import Session, select

from store.db import open_store
from store.models import AuditEvent, Item, ModelCall, Run
from tests import anthropic_fake as fake_api
from tests.articles import long_articles, rss
from tests.pipeline_helpers import KEY, config_for, invoke

# Each test's database starts at the newest schema (conftest's migrated template), so
# `copydesk init` in write_config migrates nothing; what init makes is the same.
pytestmark = pytest.mark.usefixtures("migrated")


def serve_feed(httpserver, entries) -> str:  # type: ignore[no-untyped-def]
    """The loopback feed answers with these entries from now on: its URL."""
    httpserver.clear()
    httpserver.expect_request("/feed.xml").respond_with_data(
        rss(entries), content_type="application/rss+xml"
    )
    return httpserver.url_for("/feed.xml")


@pytest.fixture
def feed_url(httpserver):
    return serve_feed(httpserver, long_articles(8))


def statuses(sqlite_url: str) -> list[str]:
    with Session(open_store(sqlite_url)) as session:
        return [i.status for i in session.exec(select(Item).order_by(Item.id))]


def test_an_outage_longer_than_max_attempts_discards_nothing(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    """Before: after max_attempts runs of 529s the whole backlog was discarded, exit 0."""
    # max_attempts = 3 and retry_base_seconds = 0 (tests/pipeline_helpers.py)
    config = config_for(tmp_path, sqlite_url, feed_url, "breaker_failures = 100")
    down = fake_api.FakeAnthropic(responder=lambda _req: fake_api.overloaded(), api_key=KEY)
    with down.serve() as base_url:
        for _ in range(4):
            result = invoke(config, monkeypatch, base_url, "run")
            assert result.exit_code == 0, result.output
    found = statuses(sqlite_url)
    assert len(found) == 8 and "discarded" not in found
    with Session(open_store(sqlite_url)) as session:
        attempts = [i.attempts for i in session.exec(select(Item))]
    assert min(attempts) == 4  # retried past max_attempts (3), still waiting


def test_the_breaker_stops_the_run_with_one_line_and_keeps_the_backlog(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    config = config_for(tmp_path, sqlite_url, feed_url, "breaker_failures = 3")
    config.write_text(config.read_text().replace("max_concurrency = 4", "max_concurrency = 1"))
    down = fake_api.FakeAnthropic(responder=lambda _req: fake_api.overloaded(), api_key=KEY)
    with down.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run")
    assert result.exit_code == 3, result.output
    line = result.stderr.strip().splitlines()[-1]
    assert re.search(
        r"Anthropic API unavailable since \d\d:\d\d UTC: 529 overloaded_error; 8 items wait", line
    ), line
    assert len(down.message_requests) == 3  # no model work after the breaker opened
    assert set(statuses(sqlite_url)) == {"new", "error"}
    with Session(open_store(sqlite_url)) as session:
        run = session.exec(select(Run)).one()
    assert run.exit_status == 3 and "unavailable since" in run.error


def test_check_call_failures_open_the_breaker_and_summaries_do_not_reset_it(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    """Before: only summary calls counted, and each answered summary reset the streak,
    so a checking model that was down never stopped the run (8 of 8 checks failed)."""
    config = config_for(tmp_path, sqlite_url, feed_url, "breaker_failures = 3")
    config.write_text(config.read_text().replace("max_concurrency = 4", "max_concurrency = 1"))
    summaries = fake_api.first_sentences_responder()

    def respond(request_json):  # type: ignore[no-untyped-def]
        if fake_api.draft_text(request_json) is not None:
            return fake_api.overloaded()  # the check calls' outage
        return summaries(request_json)

    down = fake_api.FakeAnthropic(responder=respond, api_key=KEY)
    with down.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run")
    assert result.exit_code == 3, result.output
    line = result.stderr.strip().splitlines()[-1]
    assert "Anthropic API unavailable since" in line and "(check calls)" in line, line
    checks = [r for r in down.message_requests if fake_api.draft_text(r.json) is not None]
    # Three drafts' checks (each tried by the SDK's retries), then no model work.
    assert len({fake_api.draft_text(r.json) for r in checks}) == 3
    found = statuses(sqlite_url)
    # The three drafts are kept (their checks wait for a re-check); nothing is discarded.
    assert found.count("draft") == 3 and "discarded" not in found


def test_the_spend_cap_stops_the_run_at_once(tmp_path, sqlite_url, feed_url, monkeypatch):
    config = config_for(tmp_path, sqlite_url, feed_url)
    config.write_text(config.read_text().replace("max_concurrency = 4", "max_concurrency = 1"))
    capped = fake_api.FakeAnthropic(responder=lambda _req: fake_api.spend_cap(), api_key=KEY)
    with capped.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run")
    assert result.exit_code == 3
    assert "spend cap" in result.stderr.strip().splitlines()[-1]
    assert len(capped.message_requests) == 1
    assert set(statuses(sqlite_url)) == {"new"}


def _the_api_refuses_one_story_once_the_others_are_drafts(  # type: ignore[no-untyped-def]
    tmp_path, sqlite_url, httpserver, monkeypatch, entries, *, refused: int
):
    """Run the feed without story `refused` (the API answers every request), then with
    it, one model call at a time, the API refusing that story's requests with a 400.
    The other stories come first, in a run of their own: within one run the page
    readers' order decides whether the refused story is the first model call, and a
    first rejection with no answer to compare only waits (draft.py). Gives the config
    and the second run's result."""
    good = fake_api.first_sentences_responder()
    others = entries[:refused] + entries[refused + 1 :]
    config = config_for(tmp_path, sqlite_url, serve_feed(httpserver, others))
    with fake_api.FakeAnthropic(responder=good, api_key=KEY).serve() as base_url:
        assert invoke(config, monkeypatch, base_url, "run").exit_code == 0
    assert statuses(sqlite_url) == ["draft"] * len(others)
    serve_feed(httpserver, entries)

    def respond(request_json):  # type: ignore[no-untyped-def]
        if f"Report {refused} from the council desk" in json.dumps(request_json):
            return fake_api.bad_request("messages.0.content.0.text: exceeds the allowed size")
        return good(request_json)

    config.write_text(config.read_text().replace("max_concurrency = 4", "max_concurrency = 1"))
    with fake_api.FakeAnthropic(responder=respond, api_key=KEY).serve() as base_url:
        return config, invoke(config, monkeypatch, base_url, "run")


def test_a_400_one_article_provokes_quarantines_that_article_only(
    tmp_path, sqlite_url, httpserver, monkeypatch
):
    """Before: any 400 stopped every cron run (or, with the right words, discarded
    every item). Now the article whose request the API refuses while others pass
    is discarded with the API's message; the others become drafts."""
    config, result = _the_api_refuses_one_story_once_the_others_are_drafts(
        tmp_path, sqlite_url, httpserver, monkeypatch, long_articles(8), refused=3
    )
    assert result.exit_code == 0, result.output
    found = statuses(sqlite_url)
    assert found.count("draft") == 7 and found.count("discarded") == 1
    with Session(open_store(sqlite_url)) as session:
        bad = session.exec(select(Item).where(Item.status == "discarded")).one()
        event = session.exec(
            select(AuditEvent).where(
                AuditEvent.item_id == bad.id, AuditEvent.to_status == "discarded"
            )
        ).one()
    assert bad.discard_kind == "model"
    assert "quarantined" in event.reason and "exceeds the allowed size" in event.reason


def test_a_retry_after_beyond_the_cap_sends_the_item_to_wait_until_then(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    config = config_for(tmp_path, sqlite_url, feed_url)
    config.write_text(config.read_text().replace("max_retries = 0", "max_retries = 2", 1))
    fake = fake_api.FakeAnthropic(
        responder=lambda _req: fake_api.rate_limited_for(3600), api_key=KEY
    )
    with fake.serve() as base_url:
        invoke(config, monkeypatch, base_url, "run")
    assert len(fake.message_requests) <= 8  # one attempt each: nobody slept an hour
    with Session(open_store(sqlite_url)) as session:
        waiting = session.exec(select(Item).where(Item.status == "error")).all()
    assert waiting
    for item in waiting:
        wait = item.next_attempt_at.replace(tzinfo=None) - item.updated_at.replace(tzinfo=None)
        assert wait.total_seconds() >= 3500


# --- run start ----------------------------------------------------------------------------------


def test_the_checking_model_is_preflighted_and_its_section_named(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    """Before: only the summariser was preflighted; a checker refusing temperature 0
    failed every check of the run instead of stopping it before any work."""
    config = config_for(tmp_path, sqlite_url, feed_url)
    config.write_text(config.read_text() + '\n[checks]\nmodel = "claude-haiku-5-5"\n')
    fake = fake_api.FakeAnthropic(responder=fake_api.first_sentences_responder(), api_key=KEY)
    with fake.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run")
    assert result.exit_code == 3
    line = result.stderr.strip().splitlines()[-1]
    assert "[checks]" in line and 'temperature = "model-default"' in line
    assert fake.message_requests == []


def test_run_start_warns_of_a_legacy_model_and_an_unknown_price(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    config = config_for(tmp_path, sqlite_url, feed_url)
    config.write_text(
        config.read_text()
        + '\n[checks]\nmodel = "claude-fable-5-1"\ntemperature = "model-default"\n'
    )
    fake = fake_api.FakeAnthropic(responder=fake_api.first_sentences_responder(), api_key=KEY)
    with fake.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run")
    assert result.exit_code == 0, result.output
    assert "warning: model claude-haiku-4-5 is a legacy model" in result.stderr
    assert "warning: model claude-fable-5-1 has no price: its cost is unknown" in result.stderr


def test_every_run_start_warns_of_the_retirement_date_the_models_api_gives(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    """The date comes from the model's card (GET /v1/models/{id}), through the SDK,
    for the writer and the checker alike, and again at the next run's start."""
    config = config_for(tmp_path, sqlite_url, feed_url)
    card = fake_api.model_card("claude-haiku-4-5", retires_at="2027-03-15T00:00:00Z")
    fake = fake_api.FakeAnthropic(
        responder=fake_api.first_sentences_responder(), api_key=KEY, model_reply=card
    )
    warning = "warning: model claude-haiku-4-5 is deprecated and retires on 2027-03-15"
    for _ in range(2):
        with fake.serve() as base_url:
            result = invoke(config, monkeypatch, base_url, "run")
        assert result.exit_code == 0, result.output
        assert warning in result.stderr, result.stderr
    assert any(r.path.startswith("/v1/models/") for r in fake.requests)


def test_model_default_is_on_every_ledger_row_and_in_the_audit(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    """Issue 19 §1: a model that refuses `temperature` runs only with the explicit
    `temperature = "model-default"`, and every call's row and the audit say so."""
    model = '"claude-sonnet-5"'
    config = config_for(
        tmp_path, sqlite_url, feed_url, f"model = {model}", 'temperature = "model-default"'
    )
    config.write_text(
        config.read_text() + f'\n[checks]\nmodel = {model}\ntemperature = "model-default"\n'
    )
    fake = fake_api.FakeAnthropic(responder=fake_api.first_sentences_responder(), api_key=KEY)
    with fake.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run")
        assert result.exit_code == 0, result.output
        assert set(statuses(sqlite_url)) == {"draft"}
        sent = fake.message_requests
        assert len(sent) == 16 and not any("temperature" in r.json for r in sent)
        with Session(open_store(sqlite_url)) as session:
            calls = session.exec(select(ModelCall)).all()
        assert {c.purpose for c in calls} == {"summary", "checks"} and len(calls) == 16
        assert {(c.temperature, c.temperature_in_force) for c in calls} == {(None, False)}
        audit = invoke(config, monkeypatch, base_url, "audit", "1")
    assert audit.exit_code == 0, audit.output
    assert audit.stdout.count("temperature: none sent (the model's own default)") == 2


def test_stats_says_how_many_wait_and_an_unknown_cost_is_not_zero(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    """Before: stats summed the priced calls only (an unpriced model cost "0.0000")
    and said nothing of the items an outage left waiting."""
    config = config_for(tmp_path, sqlite_url, feed_url, "breaker_failures = 100")
    down = fake_api.FakeAnthropic(responder=lambda _req: fake_api.overloaded(), api_key=KEY)
    with down.serve() as base_url:
        invoke(config, monkeypatch, base_url, "run")
        result = invoke(config, monkeypatch, base_url, "stats", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["waiting"]["count"] == 8 and document["waiting"]["oldest_failure"]
    with down.serve() as base_url:
        text = invoke(config, monkeypatch, base_url, "stats")
    assert "waiting for a retry: 8 item(s), since " in text.stdout

    unpriced = config_for(tmp_path, sqlite_url, feed_url)  # the same store, another model
    unpriced.write_text(
        unpriced.read_text().replace("[summarise]\n", '[summarise]\nmodel = "claude-nova-1"\n', 1)
        + '\n[checks]\nbackend = "off"\n'
    )
    up = fake_api.FakeAnthropic(responder=fake_api.first_sentences_responder(), api_key=KEY)
    with up.serve() as base_url:
        invoke(unpriced, monkeypatch, base_url, "run")
        result = invoke(unpriced, monkeypatch, base_url, "stats", "--json")
    newest = json.loads(result.stdout)["runs"][0]
    assert newest["cost_usd"] is None and newest["cost_unknown_calls"] == 8


def at(iso: str) -> datetime:
    return datetime.fromisoformat(iso).replace(tzinfo=None)


def test_stats_and_unchecked_say_how_many_drafts_wait_for_checks_and_since_when(
    tmp_path, sqlite_url, feed_url, monkeypatch
):
    """Before: stats counted only the items in `error`, and since their newest failure
    (`updated_at` moves at every retry); drafts an outage of the checking model left
    unchecked were in neither stats nor a count in `unchecked`."""
    config = config_for(tmp_path, sqlite_url, feed_url, "breaker_failures = 100")
    config.write_text(config.read_text() + "\n[checks]\nmax_retries = 0\n")
    summaries = fake_api.first_sentences_responder()
    titles_down = {"Report 1 from", "Report 2 from"}  # two articles' summaries fail too

    def respond(request_json):  # type: ignore[no-untyped-def]
        sent = json.dumps(request_json)
        if fake_api.draft_text(request_json) is not None:
            return fake_api.overloaded()  # the checking model is down
        if any(t in sent for t in titles_down):
            return fake_api.overloaded()
        return summaries(request_json)

    down = fake_api.FakeAnthropic(responder=respond, api_key=KEY)
    with down.serve() as base_url:
        first = invoke(config, monkeypatch, base_url, "run")
        assert first.exit_code == 0, first.output
        with Session(open_store(sqlite_url)) as session:
            first_run = session.exec(select(Run)).one()
            first_end = first_run.ended_at.replace(tzinfo=None)
        again = invoke(config, monkeypatch, base_url, "run")  # re-checks fail, retries fail
        assert again.exit_code == 0, again.output
        result = invoke(config, monkeypatch, base_url, "stats", "--json")
        text = invoke(config, monkeypatch, base_url, "stats")
        unchecked = invoke(config, monkeypatch, base_url, "unchecked", "--json")
        unchecked_text = invoke(config, monkeypatch, base_url, "unchecked")
    document = json.loads(result.stdout)
    # Since the first failure (the first run), not since the newest retry.
    assert document["waiting"]["count"] == 2
    assert at(document["waiting"]["since"]) <= first_end, document["waiting"]
    checks = document["checks_waiting"]
    assert checks["count"] == 6, checks
    assert at(checks["since"]) <= first_end, checks
    assert checks["rechecked_by_next_run"] == 6 and checks["need_recheck_failed"] == 0
    line = f"drafts waiting for their checks: 6, since {checks['since'][:19]} UTC"
    assert line in text.stdout
    assert f"waiting for a retry: 2 item(s), since {document['waiting']['since'][:19]}" in (
        text.stdout
    )
    assert json.loads(unchecked.stdout)["waiting"] == checks
    assert line in unchecked_text.stdout


def test_a_copy_of_a_story_the_api_refused_is_not_its_duplicate(
    tmp_path, sqlite_url, httpserver, monkeypatch
):
    """Before: an item that failed for our side (quarantined by a 400, a fetch error)
    kept its text fingerprint, so a second copy of the same story was discarded as its
    duplicate. A duplicate counts only against an item that is live or was discarded
    for its content (copydesk/services/pipeline/duplicates.py NOT_CONTENT)."""
    entries = long_articles(4)
    good = fake_api.first_sentences_responder()
    config, result = _the_api_refuses_one_story_once_the_others_are_drafts(
        tmp_path, sqlite_url, httpserver, monkeypatch, entries, refused=2
    )
    assert result.exit_code == 0, result.output
    assert statuses(sqlite_url).count("discarded") == 1
    # The wire's copy of story 2, under another link, once the API takes it.
    copy = dict(entries[2], guid="wire-2", link="https://wire.example.org/tollmere/2")
    serve_feed(httpserver, [*entries, copy])
    with fake_api.FakeAnthropic(responder=good, api_key=KEY).serve() as base_url:
        assert invoke(config, monkeypatch, base_url, "run").exit_code == 0
    with Session(open_store(sqlite_url)) as session:
        wire = session.exec(select(Item).where(Item.original_url == copy["link"])).one()
        reasons = [
            e.reason for e in session.exec(select(AuditEvent).where(AuditEvent.item_id == wire.id))
        ]
    assert wire.status == "draft", reasons
    assert statuses(sqlite_url).count("draft") == 4
