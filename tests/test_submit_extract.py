"""`copydesk submit URL` and `copydesk extract PATH_OR_URL`, through the CLI."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from store.db import open_store
from store.models import AuditEvent, Item, Run
from tests.articles import FERRY, LIBRARY, TITLES, page_html
from tests.ingest_helpers import install_loopback_only, logging_restored


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch):
    with logging_restored():
        yield install_loopback_only(monkeypatch)


def write_config(tmp_path: Path, db_url: str, *, init: bool = True, **ingest: str) -> Path:
    lines = [
        f'[database]\nurl = "{db_url}"',
        '[summarise]\nbackend = "extractive"',
        '[ingest]\nallow_private = ["127.0.0.0/8", "::1/128"]',
    ]
    lines += [f"{k} = {v}" for k, v in ingest.items()]
    path = tmp_path / "config.toml"
    path.write_text("\n".join(lines))
    if init:  # only `copydesk init` creates a database
        done = CliRunner().invoke(app, ["--config", str(path), "init"])
        assert done.exit_code == 0, done.output
    return path


def invoke(config: Path, *args: str):
    return CliRunner().invoke(app, ["--config", str(config), *args], catch_exceptions=False)


@pytest.fixture
def site(httpserver):
    httpserver.expect_request("/robots.txt").respond_with_data(
        "User-agent: *\nDisallow: /private/\n", content_type="text/plain"
    )
    httpserver.expect_request("/news/ferry").respond_with_data(
        page_html(TITLES["ferry"], FERRY, canonical="/news/ferry"), content_type="text/html"
    )
    httpserver.expect_request("/news/gone").respond_with_data("gone", status=404)
    return httpserver


# --------------------------------------------------------------------------- submit


def test_submit_makes_a_draft_through_the_same_path(tmp_path, sqlite_url, site):
    config = write_config(tmp_path, sqlite_url)
    url = site.url_for("/news/ferry?utm_source=tipline")
    result = invoke(config, "submit", url, "--json")
    assert result.exit_code == 0, result.output
    outcome = json.loads(result.stdout)
    assert outcome["new"] and outcome["status"] == "draft"
    assert outcome["source_url"] == site.url_for("/news/ferry")

    engine = open_store(sqlite_url)
    with Session(engine) as session:
        item = session.get(Item, outcome["item_id"])
        events = session.exec(select(AuditEvent).where(AuditEvent.item_id == item.id)).all()
        run = session.exec(select(Run)).one()
    assert item.feed_id is None and item.text_origin == "page"
    assert item.original_url == url and item.summariser == "extractive"
    assert [e.to_status for e in events] == ["new", "draft"]
    assert events[0].reason == "submitted by hand"
    assert run.command == "submit"
    assert run.counts["feeds"][0]["name"] == "(submitted)"
    assert [entry[0].path for entry in site.log] == ["/robots.txt", "/news/ferry"]

    again = invoke(config, "submit", site.url_for("/news/ferry#top"))
    assert again.exit_code == 0
    assert f"item {item.id}: draft (already known: not processed again)" in again.stdout
    assert len(site.log) == 2

    # A short link to the same page is a new item, found to be the known story.
    site.expect_request("/r/ferry").respond_with_data(
        "", status=302, headers={"Location": "/news/ferry"}
    )
    short = invoke(config, "submit", site.url_for("/r/ferry"))
    assert short.exit_code == 0, short.output
    canonical = site.url_for("/news/ferry")
    expected = f"reason: duplicate of item {item.id} (same canonical URL {canonical})"
    assert expected in short.stdout


def test_submit_reports_a_discard_or_an_error_with_its_reason_and_exit_0(
    tmp_path, sqlite_url, site
):
    """A discard is an ordinary outcome of a tip: the command worked, says what
    became of the article, and exits 0."""
    site.expect_request("/news/busy").respond_with_data("busy", status=503)
    config = write_config(tmp_path, sqlite_url)
    gone = invoke(config, "submit", site.url_for("/news/gone"))
    assert gone.exit_code == 0, gone.output
    assert "discarded" in gone.stdout and "reason: page fetch failed: HTTP 404" in gone.stdout

    private = invoke(config, "submit", site.url_for("/private/memo"))
    assert private.exit_code == 0
    assert "reason: robots.txt disallows" in private.stdout
    assert "/private/memo" not in [entry[0].path for entry in site.log]

    busy = invoke(config, "submit", site.url_for("/news/busy"), "--json")
    assert busy.exit_code == 0
    outcome = json.loads(busy.stdout)
    assert outcome["status"] == "error" and outcome["reason"] == "page fetch failed: HTTP 503"

    with Session(open_store(sqlite_url)) as session:
        statuses = sorted(i.status for i in session.exec(select(Item)))
    assert statuses == ["discarded", "discarded", "error"]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("file:///etc/passwd", "give an http or https URL"),
        ("ftp://files.example.org/story.html", "give an http or https URL"),
        ("news.example.org/story", "give an http or https URL"),
        ("http:///story", "the URL has no host"),
        ("http://news.example.org:port/story", "not a valid URL"),
    ],
)
def test_submit_a_url_that_is_not_one_is_a_usage_error_and_makes_no_item(
    tmp_path, sqlite_url, url, why
):
    config = write_config(tmp_path, sqlite_url)
    result = invoke(config, "submit", url)
    assert result.exit_code == 2
    assert why in result.stderr
    engine = open_store(sqlite_url)
    with Session(engine) as session:
        assert session.exec(select(Item)).all() == []


def test_submit_with_an_unreachable_database_exits_3(tmp_path, site, monkeypatch):
    monkeypatch.setenv(
        "COPYDESK_DATABASE_URL", "postgresql+psycopg://nobody:secret@127.0.0.1:9/none"
    )
    config = write_config(tmp_path, "sqlite:///unused.db", init=False)
    result = invoke(config, "submit", site.url_for("/news/ferry"))
    assert result.exit_code == 3
    assert "secret" not in result.stderr
    assert site.log == []


@pytest.mark.usefixtures("migrated")  # only `copydesk init` creates a database
def test_submit_refuses_an_address_that_is_not_allowed(tmp_path, sqlite_url, site):
    config = tmp_path / "config.toml"
    config.write_text(f'[database]\nurl = "{sqlite_url}"\n[summarise]\nbackend = "extractive"\n')
    result = invoke(config, "submit", f"http://127.0.0.1:{site.port}/news/ferry")
    assert result.exit_code == 0
    assert "reason: link refused: address 127.0.0.1 is not public" in result.stdout
    assert site.log == []


# --------------------------------------------------------------------------- extract


def test_extract_a_local_file_as_json(tmp_path):
    page = tmp_path / "library.html.gz"
    page.write_bytes(gzip.compress(page_html(TITLES["library"], LIBRARY).encode()))
    config = write_config(tmp_path, f"sqlite:///{tmp_path / 'unused.db'}", init=False)
    result = invoke(config, "extract", str(page), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["title"] == TITLES["library"]
    assert "40% of its roof timbers" in data["text"]
    assert "First! Great article" not in data["text"]
    assert data["word_count"] > 250 and data["min_source_words"] == 150
    assert data["fetch"] is None
    assert not (tmp_path / "unused.db").exists()  # extract needs no database


def test_extract_a_url_shows_what_the_pipeline_would_see(tmp_path, site):
    config = write_config(tmp_path, f"sqlite:///{tmp_path / 'x.db'}")
    result = invoke(config, "extract", site.url_for("/news/ferry"))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "fetched: HTTP 200" in out
    assert f"title: {TITLES['ferry']}" in out
    assert f"canonical: {site.url_for('/news/ferry')}" in out
    assert "(enough for an article)" in out
    assert "The harbour master, Ilse Marrow" in out


def test_extract_explains_a_short_page_and_a_failed_fetch(tmp_path, site):
    short = tmp_path / "short.html"
    short.write_text(page_html("Short note", "The bridge is closed today. More later."))
    config = write_config(tmp_path, f"sqlite:///{tmp_path / 'x.db'}")
    result = invoke(config, "extract", str(short))
    assert result.exit_code == 0
    assert "too short: minimum 150" in result.stdout

    failed = invoke(config, "extract", site.url_for("/news/gone"))
    assert failed.exit_code == 1 and "HTTP 404" in failed.stderr
    ftp = invoke(config, "extract", "ftp://files.example.org/story.html")
    assert ftp.exit_code == 2
    missing = invoke(config, "extract", str(tmp_path / "nope.html"))
    assert missing.exit_code == 2 and "cannot read" in missing.stderr
