"""A feed cut by `max_feed_bytes` is reported everywhere, with the entries read;
feeds and pages have separate caps."""

from __future__ import annotations

import json

from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from store.db import open_store
from store.models import Feed, Item
from tests.articles import rss
from tests.test_pipeline_e2e import write_config


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
