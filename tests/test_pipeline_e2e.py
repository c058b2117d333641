"""End to end: a loopback server serves a feed and pages; `copydesk run` fills
the database; a second run adds nothing; every discard has its reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from store import verdicts as stored_verdicts
from store.db import open_store
from store.models import AuditEvent, Item, Run
from tests.articles import FERRY, LIBRARY, TITLES, page_html, paragraphs_html, rss
from tests.pipeline_helpers import write_config

# Each test's database starts at the newest schema (conftest's migrated template), so
# `copydesk init` in write_config migrates nothing; what init makes is the same.
pytestmark = pytest.mark.usefixtures("migrated")

TEASER = "<p>Full story on our website.</p>"


@pytest.fixture
def newsroom(httpserver):
    """A feed of seven entries covering every path an entry can take."""
    base = httpserver.url_for("")
    items = [
        {
            "guid": "g-ferry",
            "title": TITLES["ferry"],
            "link": f"{base}news/ferry",
            "content": paragraphs_html(FERRY),
        },
        {
            "guid": "g-library",
            "title": TITLES["library"],
            "link": f"{base}news/library",
            "content": TEASER,
        },
        {
            "guid": "g-gone",
            "title": "A story that was taken down",
            "link": f"{base}news/gone",
            "content": TEASER,
        },
        {
            "guid": "g-flaky",
            "title": "A server having a bad day",
            "link": f"{base}news/flaky",
            "content": TEASER,
        },
        {
            "guid": "g-nolink",
            "title": "An entry without a link",
            "link": None,
            "content": paragraphs_html(LIBRARY),
        },
        {
            "guid": "g-ferry-again",
            "title": TITLES["ferry"],
            "link": f"{base}news/ferry?utm_source=newsletter&utm_medium=email#comments",
            "content": paragraphs_html(FERRY),
        },
        {"guid": "g-short", "title": "Short note", "link": f"{base}news/short", "content": TEASER},
    ]
    httpserver.expect_request("/feed.xml").respond_with_data(
        rss(items), content_type="application/rss+xml"
    )
    httpserver.expect_request("/news/library").respond_with_data(
        page_html(TITLES["library"], LIBRARY), content_type="text/html"
    )
    httpserver.expect_request("/news/gone").respond_with_data("gone", status=404)
    httpserver.expect_request("/news/flaky").respond_with_data("busy", status=503)
    httpserver.expect_request("/news/short").respond_with_data(
        page_html("Short note", "The bridge is closed today. More later."),
        content_type="text/html",
    )
    return httpserver.url_for("/feed.xml")


def run_cli(config: Path, *args: str):
    result = CliRunner().invoke(app, ["--config", str(config), *args], catch_exceptions=False)
    return result


def items_by_guid(engine) -> dict[str, Item]:
    with Session(engine) as session:
        return {i.entry_id: i for i in session.exec(select(Item))}


def test_run_fills_the_database_and_accounts_for_every_entry(tmp_path, newsroom, sqlite_url):
    config = write_config(tmp_path, sqlite_url, newsroom)
    result = run_cli(config, "run", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    feed = report["feeds"][0]
    assert (feed["seen"], feed["new"], feed["duplicates"]) == (7, 6, 1)
    assert feed["drafts"] == 2
    assert feed["errors"] == 1
    assert feed["discarded_by"] == {"fetch": 1, "source_length": 1, "source_url": 1}

    engine = open_store(sqlite_url)
    items = items_by_guid(engine)
    assert set(items) == {"g-ferry", "g-library", "g-gone", "g-flaky", "g-nolink", "g-short"}
    assert items["g-ferry"].status == "draft"
    assert items["g-ferry"].text_origin == "feed_content"
    assert items["g-ferry"].summariser == "extractive"
    assert items["g-ferry"].source_url.endswith("/news/ferry")
    assert items["g-library"].status == "draft"
    assert items["g-library"].text_origin == "page"
    assert items["g-library"].fetch_status == 200
    assert "Comments" not in items["g-library"].source_text
    assert "40% of its roof timbers" in items["g-library"].source_text
    assert items["g-gone"].status == "discarded"
    assert items["g-flaky"].status == "error"
    assert items["g-flaky"].attempts == 1
    assert "HTTP 503" in items["g-flaky"].last_error
    assert items["g-nolink"].status == "discarded"
    assert items["g-nolink"].source_url is None
    assert items["g-short"].status == "discarded"

    with Session(engine) as session:
        events = session.exec(select(AuditEvent).order_by(AuditEvent.id)).all()
        verdicts = stored_verdicts.every(session)
        run = session.exec(select(Run)).one()
    # Every item was born with an event, and every move has one with reason and actor.
    by_item: dict[int, list[AuditEvent]] = {}
    for event in events:
        by_item.setdefault(event.item_id, []).append(event)
    for item in items.values():
        trail = by_item[item.id]
        assert trail[0].from_status is None and trail[0].to_status == "new"
        assert trail[-1].to_status == item.status
        assert all(e.actor == f"run:{run.id}" for e in trail)
        if item.status == "discarded":
            assert trail[-1].reason, f"discard of {item.entry_id} has no reason"
    assert "HTTP 404" in by_item[items["g-gone"].id][-1].reason
    assert "source_url" in by_item[items["g-nolink"].id][-1].reason
    failed = {(v.item_id, v.gate) for v in verdicts if not v.passed}
    assert (items["g-nolink"].id, "source_url") in failed
    assert (items["g-short"].id, "source_length") in failed
    drafted = {v.gate for v in verdicts if v.item_id == items["g-ferry"].id}
    assert drafted == {
        "source_url",
        "source_length",
        "numbers_grounded",
        "quotes_verbatim",
        "speakers_match",
        "names_grounded",
        "dates_grounded",
        "claims_supported",
        "faithfulness",
    }
    # Without a model the checks are recorded as not run: never a pass, never a discard.
    unchecked = [v for v in verdicts if v.item_id == items["g-ferry"].id and v.stage == "check"]
    assert {(v.passed, v.mode, v.reason) for v in unchecked} == {
        (False, "flag", "not run (no model)")
    }
    assert items["g-ferry"].status == "draft"
    assert run.exit_status == 0 and run.ended_at is not None
    assert run.counts["totals"]["new"] == 6


def test_second_run_adds_nothing_and_retries_the_transient_failure(tmp_path, newsroom, sqlite_url):
    config = write_config(tmp_path, sqlite_url, newsroom)
    assert run_cli(config, "run").exit_code == 0
    engine = open_store(sqlite_url)
    before = {k: (i.status, i.version) for k, i in items_by_guid(engine).items()}

    second = run_cli(config, "run", "--json")
    assert second.exit_code == 0
    feed = json.loads(second.stdout)["feeds"][0]
    assert (feed["new"], feed["duplicates"], feed["retried"]) == (0, 7, 1)
    after = items_by_guid(engine)
    assert len(after) == len(before)
    for guid, (status, version) in before.items():
        if guid != "g-flaky":
            assert (after[guid].status, after[guid].version) == (status, version)
    assert after["g-flaky"].status == "error" and after["g-flaky"].attempts == 2

    # max_attempts = 3: the third failure gives up and discards, with the count.
    run_cli(config, "run")
    flaky = items_by_guid(engine)["g-flaky"]
    assert flaky.status == "discarded"
    with Session(engine) as session:
        events = session.exec(
            select(AuditEvent).where(AuditEvent.item_id == flaky.id).order_by(AuditEvent.id)
        ).all()
    # A failed attempt moves it new -> error; a later run whose retry time has come
    # moves it back to new before trying again; the third failure gives up from new.
    assert [(e.from_status, e.to_status) for e in events] == [
        (None, "new"),
        ("new", "error"),
        ("error", "new"),
        ("new", "error"),
        ("error", "new"),
        ("new", "discarded"),
    ]
    assert "failed 3 times" in events[-1].reason

    third = run_cli(config, "run")
    assert "nothing new" in third.stdout


def test_bad_config_is_one_line_and_exit_3(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[summarise]\nbackend = "gpt"\n')
    result = CliRunner().invoke(app, ["--config", str(config), "run"])
    assert result.exit_code == 3
    assert "summarise.backend" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_unreachable_database_is_one_line_and_exit_3(tmp_path, monkeypatch):
    monkeypatch.setenv(
        "COPYDESK_DATABASE_URL", "postgresql+psycopg://nobody:secret@127.0.0.1:9/none"
    )
    result = CliRunner().invoke(app, ["run"])
    assert result.exit_code == 3
    assert "cannot be opened" in result.stderr
    assert "secret" not in result.stderr


def test_json_logs_for_schedulers(tmp_path, newsroom, sqlite_url):
    config = write_config(tmp_path, sqlite_url, newsroom)
    result = CliRunner().invoke(app, ["--config", str(config), "--log-format", "json", "run"])
    assert result.exit_code == 0
    lines = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    moves = [line for line in lines if "item_id" in line]
    assert len(moves) == 6
    assert {line["status"] for line in moves} == {"draft", "discarded", "error"}
    assert all(line["level"] in ("info", "warning") and line["ts"] for line in lines)
