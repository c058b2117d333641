"""A feed cut by `max_feed_bytes` is reported everywhere, with the entries read;
feeds and pages have separate caps."""

from __future__ import annotations

import json

import pytest
from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from store.db import open_store
from store.models import Feed, Item
from tests.articles import rss
from tests.pipeline_helpers import write_config

# Each test's database starts at the newest schema (conftest's migrated template), so
# `copydesk init` in write_config migrates nothing; what init makes is the same.
pytestmark = pytest.mark.usefixtures("migrated")


def big_feed(n: int) -> str:
    return rss(
        [
            {
                "guid": f"b-{i}",
                "title": f"Harbour notice {i}",
                "link": f"https://tollmere.example.test/notice/{i}",
                "content": f"Notice {i}: the Tollmere harbour office changes berth {i}.",
            }
            for i in range(n)
        ]
    )


def invoke(config, *args: str):
    return CliRunner().invoke(app, ["--config", str(config), *args])


def test_a_feed_cut_by_its_cap_is_reported_with_the_entries_read(
    tmp_path, sqlite_url, httpserver
) -> None:
    body = big_feed(600)
    httpserver.expect_request("/feed.xml").respond_with_data(
        body, content_type="application/rss+xml"
    )
    config = write_config(tmp_path, sqlite_url, httpserver.url_for("/feed.xml"))
    cap = len(body.encode()) // 4
    text = config.read_text().replace(
        "respect_robots = false",
        f"respect_robots = false\nmax_feed_bytes = {cap}\nmax_page_bytes = 1000",
    )
    config.write_text(text)

    result = invoke(config, "run", "--json")
    assert result.exit_code == 0, result.stderr
    [feed] = json.loads(result.stdout)["feeds"]
    assert feed["truncated"] is True
    assert 100 < feed["entries_read"] < 600 and feed["seen"] == feed["entries_read"]
    with Session(open_store(sqlite_url)) as session:
        items = session.exec(select(Item)).all()
        row = session.exec(select(Feed)).one()
    assert len(items) == feed["entries_read"]  # every entry read is an item
    assert row.truncated and row.entries_read == feed["entries_read"] and row.etag is None

    table = invoke(config, "run", "--all")
    assert "CUT OFF at max_feed_bytes" in table.stdout
    listed = invoke(config, "feeds", "list")
    assert "cut" in listed.stdout and str(feed["entries_read"]) in listed.stdout
    assert invoke(config, "feeds", "list", "--check").exit_code == 1
    [as_json] = json.loads(invoke(config, "feeds", "list", "--json").stdout)
    assert as_json["truncated"] is True and as_json["state"] == "cut"
    assert as_json["entries_read"] == feed["entries_read"]

    # Raised above the feed's size: every entry is read, and the feed is ok again.
    config.write_text(text.replace(f"max_feed_bytes = {cap}", "max_feed_bytes = 50000000"))
    result = invoke(config, "run", "--all", "--json")
    [feed] = json.loads(result.stdout)["feeds"]
    assert feed["truncated"] is False and feed["entries_read"] == 600
    assert invoke(config, "feeds", "list", "--check").exit_code == 0
    with Session(open_store(sqlite_url)) as session:
        assert len(session.exec(select(Item)).all()) == 600


# ------------------------------------------------------------------ what reaches trafilatura


def test_inert_parts_are_stripped_before_extraction_and_the_article_survives() -> None:
    from ingest.extract import extract_page, strip_inert
    from tests.articles import FERRY, paragraphs_html

    script = (
        b"<SCRIPT type='text/javascript'>var s = '</div><p>Invented council vote</p>';</SCRIPT >"
    )
    ld = b'<script type="application/ld+json">{"author": {"name": "Ines Marrow"}}</script>'
    page = (
        b"<html><head><title>Ferry refit</title>" + ld + b"<style>p{color:red}</style></head>"
        b"<body><!-- <p>a comment that looks like text</p> --><article><h1>Ferry refit</h1>"
        + script
        + paragraphs_html(FERRY).encode()
        + b"</article><noscript><p>enable scripts</p></noscript></body></html>"
    )
    stripped = strip_inert(page)
    assert b"Invented council vote" not in stripped and b"comment that looks" not in stripped
    assert b"color:red" not in stripped and b"enable scripts" not in stripped
    assert ld in stripped  # structured data (author, date) stays for trafilatura
    extracted = extract_page(page, "https://tollmere.example.test/ferry")
    assert FERRY.split(".")[0] in extracted.text and not extracted.cut
    assert "Invented council vote" not in extracted.text


def test_hostile_markup_strips_in_linear_time_and_an_open_script_runs_to_the_end() -> None:
    from ingest.extract import reduce_page, strip_inert

    many_open = b"<p>kept</p>" + b"<!-- x --><script>" * 1 + b"<scrip" * 200_000
    assert strip_inert(many_open) == b"<p>kept</p>"
    openers = b"<p>a</p>" + b"<style" * 300_000  # 1.8 MB of openers, none closed
    assert strip_inert(openers) == b"<p>a</p>"
    html, cut = reduce_page(b"<p>" + b"word " * 1000 + b"</p>" * 10, max_bytes=2000)
    assert cut and len(html) == 2000 and html.startswith(b"<p>word")
    html, cut = reduce_page(b"<p>one</p>" * 400, max_bytes=2005)
    assert cut and html == b"<p>one</p>" * 200  # cut before a tag, never inside one


# ------------------------------------------------------------------ a page cut by its cap


def test_a_page_cut_by_its_cap_is_reported_everywhere(db_url, tmp_path, httpserver) -> None:
    """Issue 26: a page cut by max_page_bytes is said out loud, as the feed cap is:
    a log line, `run --json`, `feeds list --check`, the item's own column, and a
    badge on the draft in the queue. A page under the cap says nothing."""
    from review_ui.desk.queries import QueueFilter, queue_page
    from tests.articles import FERRY, LIBRARY, TITLES, page_html

    long_page = page_html(TITLES["ferry"], FERRY + "\n\n" + LIBRARY)
    cap = len(long_page.encode()) * 2 // 3
    short_page = page_html(TITLES["library"], LIBRARY)
    assert len(short_page.encode()) < cap
    feed = rss(
        [
            {"guid": "long", "title": TITLES["ferry"], "link": httpserver.url_for("/long")},
            {"guid": "short", "title": TITLES["library"], "link": httpserver.url_for("/short")},
        ]
    )
    httpserver.expect_request("/feed.xml").respond_with_data(feed, content_type="text/xml")
    httpserver.expect_request("/long").respond_with_data(long_page, content_type="text/html")
    httpserver.expect_request("/short").respond_with_data(short_page, content_type="text/html")
    config = write_config(tmp_path, db_url, httpserver.url_for("/feed.xml"))
    config.write_text(
        config.read_text().replace(
            "respect_robots = false", f"respect_robots = false\nmax_page_bytes = {cap}"
        )
    )
    assert invoke(config, "feeds", "list", "--check").exit_code == 0

    result = invoke(config, "run", "--json")
    assert result.exit_code == 0, result.stderr
    [report] = json.loads(result.stdout)["feeds"]
    assert report["pages_cut"] == 1 and report["drafts"] == 2
    assert json.loads(result.stdout)["totals"]["pages_cut"] == 1
    assert f"cut off at max_page_bytes ({cap} bytes kept)" in result.stderr
    assert result.stderr.count("cut off at max_page_bytes") == 1  # the short page: nothing

    with Session(open_store(db_url)) as session:
        by_entry = {i.entry_id: i for i in session.exec(select(Item))}
        rows = {r.id: r for r in queue_page(session, QueueFilter())}
    long_item, short_item = by_entry["long"], by_entry["short"]
    assert (long_item.page_cut_at, short_item.page_cut_at) == (cap, None)
    assert rows[long_item.id].badge == f"source cut at {cap:,} bytes"
    assert rows[short_item.id].badge == ""

    listed = invoke(config, "feeds", "list")
    assert "PAGES CUT" in listed.stdout and "max_page_bytes" in listed.stdout
    [as_json] = json.loads(invoke(config, "feeds", "list", "--json").stdout)
    assert as_json["state"] == "pages cut" and as_json["needs_attention"] is True
    assert invoke(config, "feeds", "list", "--check").exit_code == 1


def test_the_run_table_says_how_many_pages_were_cut() -> None:
    from copydesk.cli import context as cx
    from copydesk.cli.run import _print_report
    from copydesk.services.reports import FeedReport, RunReport

    report = RunReport(1, "extractive", [FeedReport("Gazette", "https://g.example.test/")])
    with cx.out.capture() as quiet:
        _print_report(report, as_json=False)
    assert "max_page_bytes" not in quiet.get()
    report.feeds[0].pages_cut = 2
    with cx.out.capture() as said:
        _print_report(report, as_json=False)
    assert "2 page(s) CUT at max_page_bytes" in said.get()
