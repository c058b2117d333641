"""Feeds as the internet serves them, through the real pipeline into a real
database: every entry accounted for, the three layers of dedup, conditional GET,
backoff for failing feeds, malformed and compressed feeds, and feed health."""

from __future__ import annotations

import gzip
import json
import random
import tracemalloc
from datetime import timedelta

import pytest
from sqlmodel import Session, select
from typer.testing import CliRunner
from werkzeug.wrappers import Request, Response

from copydesk.config import Settings
from copydesk.services.feeds import add_feed
from copydesk.services.heartbeat import start_run_row
from copydesk.services.pipeline import Pipeline
from ingest.feeds import is_due, next_poll_after_failure
from ingest.fetch import Fetcher
from ingest.health import feed_health, usual_interval
from store.models import AuditEvent, Feed, Item, utcnow
from summarise.extractive import ExtractiveSummariser
from tests.articles import FERRY, LIBRARY, TITLES, page_html, paragraphs_html, rss
from tests.ingest_helpers import (
    LOOPBACK_ALLOW,
    install_loopback_only,
    logging_restored,
    resolver_for,
    serve_as_public,
)

TEASER = "<p>Read the full story on our website.</p>"


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch):
    with logging_restored():
        yield install_loopback_only(monkeypatch)


def settings_for(db_url: str, **ingest: object) -> Settings:
    return Settings.model_validate(
        {
            "database": {"url": db_url},
            "summarise": {
                "backend": "extractive",
                "retry_base_seconds": 0,
                "max_attempts": 3,
                "max_concurrency": 4,
            },
            "ingest": {"allow_private": LOOPBACK_ALLOW, "respect_robots": False} | ingest,
        }
    )


def run(settings, engine, *, resolver=None, force=False):
    with Fetcher(settings.ingest, resolver=resolver) as fetcher:
        pipeline = Pipeline(settings, engine, ExtractiveSummariser(), fetcher)
        return pipeline.run(force=force)


def add_feeds(engine, **feeds: str) -> dict[str, int]:
    with Session(engine, expire_on_commit=False) as session:
        ids = {name: add_feed(session, url, name).id for name, url in feeds.items()}
        session.commit()
    return ids


def items(engine) -> dict[str, Item]:
    with Session(engine) as session:
        return {i.entry_id or i.original_url: i for i in session.exec(select(Item))}


def last_event(engine, item_id: int) -> AuditEvent:
    with Session(engine) as session:
        return session.exec(
            select(AuditEvent).where(AuditEvent.item_id == item_id).order_by(AuditEvent.id.desc())
        ).first()


def feed_row(engine, feed_id: int) -> Feed:
    with Session(engine) as session:
        return session.get(Feed, feed_id)


def paths(server) -> list[str]:
    return [entry[0].path for entry in server.log]


# --------------------------------------------------------------------------- every entry


WIRE_PAGE = """<!doctype html><html><head><title>Wire</title></head><body>
<header><a href="/">Wire home</a></header><main><div class="story">
<h2>Island ferry cut for refit</h2>{body}</div>
<aside><h3>Most read</h3><ul><li><a href="/a">Other story one</a></li></ul></aside>
</main><footer>Wire Services Ltd</footer></body></html>"""


@pytest.fixture
def newsroom(httpserver):
    """Two feeds on invented hosts (resolved to loopback) covering every way an
    entry can end: drafts, each kind of discard, a transient error, and every
    layer of dedup."""
    port = httpserver.port
    gazette = f"http://gazette.test:{port}"
    entries = [
        ("g-ferry", TITLES["ferry"], f"{gazette}/news/ferry"),
        ("g-library", TITLES["library"], f"{gazette}/news/library"),
        ("g-nolink", "An entry without a link", None),
        ("g-js", "A script link", "javascript:alert(document.cookie)"),
        ("g-file", "A file link", "file:///etc/passwd"),
        ("g-metadata", "A link into the cloud's metadata", "http://metadata.test/latest/"),
        ("g-members", "Members only", f"{gazette}/members/story"),
        ("g-gone", "Taken down", f"{gazette}/news/gone"),
        ("g-busy", "Server busy", f"{gazette}/news/busy"),
        ("g-short", "Short note", f"{gazette}/news/short"),
        ("g-photo", "A photo", f"{gazette}/media/photo.jpg"),
        ("g-ferry-utm", TITLES["ferry"], f"{gazette}/news/ferry?utm_source=newsletter#top"),
        ("g-library-short", TITLES["library"], f"{gazette}/go/library"),
        ("g-amp", TITLES["ferry"], f"{gazette}/amp/ferry"),
    ]
    httpserver.expect_request("/gazette.xml").respond_with_data(
        rss([{"guid": g, "title": t, "link": link, "content": TEASER} for g, t, link in entries]),
        content_type="application/rss+xml",
    )
    wire = [("w-ferry", "Island ferry cut for refit", f"http://wire.test:{port}/s/ferry-service")]
    httpserver.expect_request("/wire.xml").respond_with_data(
        rss([{"guid": g, "title": t, "link": link, "content": TEASER} for g, t, link in wire]),
        content_type="application/rss+xml",
    )
    httpserver.expect_request("/robots.txt").respond_with_data(
        "User-agent: *\nDisallow: /members/\n", content_type="text/plain"
    )
    html = "text/html; charset=utf-8"
    httpserver.expect_request("/news/ferry").respond_with_data(
        page_html(TITLES["ferry"], FERRY), content_type=html
    )
    httpserver.expect_request("/news/library").respond_with_data(
        page_html(TITLES["library"], LIBRARY), content_type=html
    )
    httpserver.expect_request("/amp/ferry").respond_with_data(
        page_html(
            TITLES["ferry"], FERRY.replace("Tuesday", "Tuesday evening"), canonical="/news/ferry"
        ),
        content_type=html,
    )
    httpserver.expect_request("/go/library").respond_with_data(
        "", status=301, headers={"Location": "/news/library?utm_campaign=short"}
    )
    httpserver.expect_request("/news/gone").respond_with_data("gone", status=404)
    httpserver.expect_request("/news/busy").respond_with_data(
        "busy", status=503, headers={"Retry-After": "3600"}
    )
    httpserver.expect_request("/news/short").respond_with_data(
        page_html("Short note", "The bridge is closed today. More later."), content_type=html
    )
    httpserver.expect_request("/media/photo.jpg").respond_with_data(
        b"\xff\xd8\xff\xe0 not really a jpeg", content_type="image/jpeg"
    )
    httpserver.expect_request("/s/ferry-service").respond_with_data(
        WIRE_PAGE.format(body=paragraphs_html(FERRY)), content_type=html
    )
    resolver = resolver_for({"metadata.test": "169.254.169.254"}, default="127.0.0.1")
    return {
        "gazette": f"{gazette}/gazette.xml",
        "wire": f"http://wire.test:{port}/wire.xml",
        "resolver": resolver,
    }


def test_every_entry_ends_as_an_item_with_a_status_and_a_reason(
    engine, db_url, newsroom, httpserver, _loopback_only
):
    settings = settings_for(db_url, respect_robots=True)
    ids = add_feeds(engine, Gazette=newsroom["gazette"], Wire=newsroom["wire"])
    report = run(settings, engine, resolver=newsroom["resolver"])

    by_feed = {f.name: f.to_dict() for f in report.feeds}
    gazette, wire = by_feed["Gazette"], by_feed["Wire"]
    assert (gazette["seen"], gazette["new"], gazette["duplicates"]) == (14, 13, 1)
    assert (wire["seen"], wire["new"]) == (1, 1)
    # The gazette's ferry page and the wire's copy of it carry the same text; their
    # fetches run side by side, so which one is committed first (and so is the story)
    # depends on the machine's timing. Whichever it is, the other is its duplicate.
    got = items(engine)
    story, copy = (
        ("g-ferry", "w-ferry") if got["g-ferry"].status == "draft" else ("w-ferry", "g-ferry")
    )
    gazette_won = story == "g-ferry"
    assert (gazette["drafts"], wire["drafts"]) == ((2, 0) if gazette_won else (1, 1))
    assert gazette["errors"] == 1
    assert gazette["discarded_by"] == {
        "duplicate": 2 if gazette_won else 3,
        "fetch": 2,
        "refused": 1,
        "robots": 1,
        "source_length": 1,
        "source_url": 3,
    }
    assert wire["discarded_by"] == ({"duplicate": 1} if gazette_won else {})

    assert len(got) == 14
    status = {key: item.status for key, item in got.items()}
    assert status == {
        story: "draft",
        copy: "discarded",
        "g-library": "draft",
        "g-nolink": "discarded",
        "g-js": "discarded",
        "g-file": "discarded",
        "g-metadata": "discarded",
        "g-members": "discarded",
        "g-gone": "discarded",
        "g-busy": "error",
        "g-short": "discarded",
        "g-photo": "discarded",
        "g-library-short": "discarded",
        "g-amp": "discarded",
    }
    reason = {key: last_event(engine, item.id).reason for key, item in got.items()}
    ferry, library = got["g-ferry"].id, got["g-library"].id
    assert reason["g-nolink"] == "source_url: no source URL"
    assert "scheme is javascript" in reason["g-js"]
    assert "scheme is file" in reason["g-file"]
    assert reason["g-metadata"] == (
        "link refused: host metadata.test resolves to non-public address 169.254.169.254"
    )
    assert reason["g-members"].startswith("robots.txt disallows ")
    assert reason["g-gone"] == "page fetch failed: HTTP 404"
    assert reason["g-busy"] == "page fetch failed: HTTP 503"
    assert reason["g-short"].startswith("source_length: source has")
    assert reason["g-photo"] == "the link is image/jpeg, not a page"
    assert reason["g-library-short"] == (
        f"duplicate of item {library} (same canonical URL {got['g-library'].source_url})"
    )
    assert reason["g-amp"] == (
        f"duplicate of item {ferry} (same canonical URL {got['g-ferry'].source_url})"
    )
    # g-amp names the gazette's ferry page as canonical: a duplicate of it by URL,
    # whichever copy of the text won.
    assert reason[copy] == f"duplicate of item {got[story].id} (same text)"

    # The story that counts keeps its fingerprint; a duplicate points at it.
    assert got[story].content_hash and got[copy].content_hash is None
    assert last_event(engine, got[copy].id).details["duplicate_of"] == got[story].id
    assert got["w-ferry"].feed_id == ids["Wire"]
    # The transient failure waits at least as long as the server asked.
    busy = got["g-busy"]
    assert busy.attempts == 1 and busy.next_attempt_at is not None
    wait = busy.next_attempt_at.replace(tzinfo=busy.next_attempt_at.tzinfo or utcnow().tzinfo)
    assert wait - utcnow() > timedelta(minutes=59)

    # No request for refused links or disallowed pages; nothing left the machine.
    requested = paths(httpserver)
    assert "/members/story" not in requested
    assert requested.count("/robots.txt") == 2  # once per host: gazette.test, wire.test
    assert _loopback_only == []


def test_a_second_run_adds_nothing(sqlite_engine, sqlite_url, newsroom):
    settings = settings_for(sqlite_url, respect_robots=True)
    add_feeds(sqlite_engine, Gazette=newsroom["gazette"], Wire=newsroom["wire"])
    run(settings, sqlite_engine, resolver=newsroom["resolver"])
    before = {k: (i.status, i.version) for k, i in items(sqlite_engine).items()}
    report = run(settings, sqlite_engine, resolver=newsroom["resolver"])
    totals = report.totals()
    assert totals["new"] == 0 and totals["duplicates"] == 15
    after = {k: (i.status, i.version) for k, i in items(sqlite_engine).items()}
    assert after == before  # g-busy waits for its Retry-After: not retried yet


# --------------------------------------------------------------------------- conditional GET


def test_conditional_get_a_304_costs_nothing(sqlite_engine, sqlite_url, httpserver):
    state = {"etag": '"v1"', "entries": 1}
    seen_headers: list[dict[str, str]] = []

    def feed(request: Request) -> Response:
        seen_headers.append(dict(request.headers))
        if request.headers.get("If-None-Match") == state["etag"]:
            return Response(status=304, headers={"ETag": state["etag"]})
        body = rss(
            [
                {"guid": f"e{i}", "title": f"Entry {i}", "link": None, "content": TEASER}
                for i in range(state["entries"])
            ]
        )
        headers = {"ETag": state["etag"], "Last-Modified": "Mon, 30 Nov 2026 09:00:00 GMT"}
        return Response(body, content_type="application/rss+xml", headers=headers)

    httpserver.expect_request("/feed.xml").respond_with_handler(feed)
    (feed_id,) = add_feeds(sqlite_engine, F=httpserver.url_for("/feed.xml")).values()
    settings = settings_for(sqlite_url)

    first = run(settings, sqlite_engine).feeds[0]
    row = feed_row(sqlite_engine, feed_id)
    assert (first.seen, first.new) == (1, 1)
    assert row.etag == '"v1"' and row.last_modified == "Mon, 30 Nov 2026 09:00:00 GMT"
    assert "If-None-Match" not in seen_headers[0]

    second = run(settings, sqlite_engine).feeds[0]
    assert seen_headers[1]["If-None-Match"] == '"v1"'
    assert seen_headers[1]["If-Modified-Since"] == "Mon, 30 Nov 2026 09:00:00 GMT"
    assert second.not_modified and second.seen == 0 and second.new == 0
    after_304 = feed_row(sqlite_engine, feed_id)
    assert after_304.last_success_at > row.last_success_at
    assert after_304.etag == '"v1"' and after_304.consecutive_errors == 0

    state.update(etag='"v2"', entries=2)
    third = run(settings, sqlite_engine).feeds[0]
    assert (third.seen, third.new, third.duplicates) == (2, 1, 1)
    assert feed_row(sqlite_engine, feed_id).etag == '"v2"'


# --------------------------------------------------------------------------- the allow-list's scope


@pytest.fixture
def public_feed_server(monkeypatch):
    yield from serve_as_public(monkeypatch)


def test_only_an_allow_listed_feed_may_link_into_the_allow_list(
    sqlite_engine, sqlite_url, httpserver, public_feed_server
):
    """The intranet (127.0.0.1, allow-listed) serves a feed and two pages. The
    intranet feed's entry reaches its page; the same intranet's other page, linked
    from a public feed, is refused with no request made."""
    html = "text/html; charset=utf-8"
    ferry_page = httpserver.url_for("/news/ferry").replace("localhost", "127.0.0.1")
    library_page = ferry_page.replace("/news/ferry", "/news/library")
    httpserver.expect_request("/intranet.xml").respond_with_data(
        rss([{"guid": "i-ferry", "title": TITLES["ferry"], "link": ferry_page}]),
        content_type="application/rss+xml",
    )
    httpserver.expect_request("/news/ferry").respond_with_data(
        page_html(TITLES["ferry"], FERRY), content_type=html
    )
    httpserver.expect_request("/news/library").respond_with_data(
        page_html(TITLES["library"], LIBRARY), content_type=html
    )
    public_feed_server.expect_request("/public.xml").respond_with_data(
        rss([{"guid": "p-library", "title": TITLES["library"], "link": library_page}]),
        content_type="application/rss+xml",
    )
    add_feeds(
        sqlite_engine,
        Intranet=ferry_page.replace("/news/ferry", "/intranet.xml"),
        Public=public_feed_server.url_for("/public.xml"),
    )
    settings = settings_for(sqlite_url, allow_private=["127.0.0.1/32"])
    report = run(settings, sqlite_engine)

    by_feed = {f.name: f for f in report.feeds}
    assert by_feed["Intranet"].drafts == 1 and by_feed["Public"].fetch_error is None
    got = items(sqlite_engine)
    assert got["i-ferry"].status == "draft"
    assert got["p-library"].status == "discarded"
    assert last_event(sqlite_engine, got["p-library"].id).reason == (
        "link refused: address 127.0.0.1 is not public"
    )
    assert "/news/library" not in paths(httpserver)


# --------------------------------------------------------------------------- memory


def test_listing_the_waiting_items_does_not_load_their_texts(sqlite_engine, sqlite_url):
    """Items waiting with their feed text: the list of jobs holds no texts (the
    worker reads each when it starts on it), so memory does not grow with the
    number of waiting items times their length."""
    n, paragraph = 300, "The harbour board of Tollmere met on Tuesday about the ferry. "
    texts = [f"Story {i}. " + paragraph * 320 for i in range(n)]  # about 20 kB each
    with Session(sqlite_engine) as session:
        session.add_all(
            Item(
                dedup_key=f"https://gazette.example.org/story/{i}",
                source_url=f"https://gazette.example.org/story/{i}",
                title=f"Story {i}",
                source_text=text,
                text_origin="feed_content",
            )
            for i, text in enumerate(texts)
        )
        session.commit()
    total = sum(len(t) for t in texts)
    settings = settings_for(sqlite_url)
    with Fetcher(settings.ingest) as fetcher:
        pipeline = Pipeline(settings, sqlite_engine, ExtractiveSummariser(), fetcher)
        pipeline.run_id = start_run_row(sqlite_engine, "run", "extractive")
        tracemalloc.start()
        try:
            assert pipeline._pending_jobs() == n
            jobs = list(pipeline._claimed_jobs())  # every waiting item, claimed
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < total / 6, f"listing {n} jobs peaked at {peak} bytes ({total} of text)"
        assert len(jobs) == n and all(job.has_text for job in jobs)
        assert pipeline.source.stored_text(jobs[0]) == texts[0]


# --------------------------------------------------------------------------- failing feeds


def test_backoff_doubles_with_jitter_is_capped_at_a_day_and_respects_retry_after():
    now = utcnow()
    rng = random.Random(7)
    delays = [
        (next_poll_after_failure(n, now, base_seconds=300, rng=rng) - now).total_seconds()
        for n in range(1, 12)
    ]
    for n, delay in enumerate(delays[:5], start=1):
        assert 0.8 * 300 * 2 ** (n - 1) <= delay <= 300 * 2 ** (n - 1)
    assert all(delay <= 86400 for delay in delays) and delays[-1] >= 0.8 * 86400
    late = next_poll_after_failure(1, now, base_seconds=300, retry_after=7200) - now
    assert late >= timedelta(hours=2)
    assert next_poll_after_failure(10_000, now, base_seconds=300) - now <= timedelta(days=1)
    far = next_poll_after_failure(1, now, base_seconds=300, retry_after=10 * 86400) - now
    assert far == timedelta(days=1)  # a Retry-After beyond the cap waits a day


def test_feeds_failing_for_long_spread_out_below_the_cap():
    """Jitter after the cap: fifty feeds down for weeks do not all come back at the
    same second 24 hours on; each waits between 0.8 and 1 day."""
    now = utcnow()
    rng = random.Random(11)
    delays = [
        (next_poll_after_failure(40, now, base_seconds=300, rng=rng) - now).total_seconds()
        for _ in range(50)
    ]
    assert all(0.8 * 86400 <= d <= 86400 for d in delays)
    assert len({round(d) for d in delays}) > 40, "retries bunch up"
    assert max(delays) - min(delays) > 0.1 * 86400
    assert is_due(None, now) and is_due(now, now) and not is_due(now + timedelta(seconds=1), now)


def test_a_failing_feed_backs_off_is_skipped_until_due_and_recovers(
    sqlite_engine, sqlite_url, httpserver
):
    state = {"ok": False}

    def feed(request: Request) -> Response:
        if not state["ok"]:
            return Response("down for maintenance", status=500)
        return Response(rss([{"guid": "x", "title": "Back", "link": None, "content": TEASER}]))

    httpserver.expect_request("/feed.xml").respond_with_handler(feed)
    (feed_id,) = add_feeds(sqlite_engine, Flaky=httpserver.url_for("/feed.xml")).values()
    settings = settings_for(sqlite_url, retry_base_seconds=600)

    first = run(settings, sqlite_engine).feeds[0]
    row = feed_row(sqlite_engine, feed_id)
    assert first.fetch_error == "HTTP 500" and row.consecutive_errors == 1
    assert row.last_error == "HTTP 500" and row.last_success_at is None
    delay = row.next_fetch_at.replace(tzinfo=utcnow().tzinfo) - utcnow()
    assert timedelta(minutes=7) < delay <= timedelta(minutes=12)
    assert first.next_fetch_at is not None

    skipped = run(settings, sqlite_engine)
    assert skipped.feeds[0].skipped.startswith("not due until ")
    assert skipped.to_dict()["skipped_feeds"] == 1
    assert len(httpserver.log) == 1  # not fetched

    forced = run(settings, sqlite_engine, force=True)
    assert forced.feeds[0].skipped is None and len(httpserver.log) == 2
    assert feed_row(sqlite_engine, feed_id).consecutive_errors == 2

    with Session(sqlite_engine) as session:  # down for weeks: still polled within a day
        session.get(Feed, feed_id).consecutive_errors = 60
        session.commit()
    run(settings, sqlite_engine, force=True)
    row = feed_row(sqlite_engine, feed_id)
    assert row.consecutive_errors == 61
    assert row.next_fetch_at.replace(tzinfo=utcnow().tzinfo) - utcnow() <= timedelta(days=1)

    state["ok"] = True
    recovered = run(settings, sqlite_engine, force=True).feeds[0]
    row = feed_row(sqlite_engine, feed_id)
    assert recovered.new == 1 and recovered.fetch_error is None
    assert row.consecutive_errors == 0 and row.last_error is None and row.next_fetch_at is None
    assert row.last_success_at is not None


def test_a_page_that_is_not_a_feed_is_a_feed_error(sqlite_engine, sqlite_url, httpserver):
    httpserver.expect_request("/news").respond_with_data(
        "<html><body><h1>Front page</h1><p>No feed here.</p></body></html>",
        content_type="text/html",
    )
    (feed_id,) = add_feeds(sqlite_engine, Wrong=httpserver.url_for("/news")).values()
    report = run(settings_for(sqlite_url), sqlite_engine).feeds[0]
    assert report.fetch_error.startswith("not a feed")
    assert feed_row(sqlite_engine, feed_id).consecutive_errors == 1


# --------------------------------------------------------------------------- feeds in the wild


BROKEN_FEED = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Broken &nbsp; Gazette</title>
<item><title>First &amp; only</title><guid isPermaLink="false">b1</guid>
<description>Ferry news</description></item>
<item><title>Second</title><guid isPermaLink="false">b2</guid>
<description>Library news & more</description></item>
</channel></rss>"""


def test_a_malformed_feed_keeps_its_entries_and_records_the_warning(
    sqlite_engine, sqlite_url, httpserver
):
    httpserver.expect_request("/broken.xml").respond_with_data(
        BROKEN_FEED, content_type="application/rss+xml"
    )
    (feed_id,) = add_feeds(sqlite_engine, Broken=httpserver.url_for("/broken.xml")).values()
    report = run(settings_for(sqlite_url), sqlite_engine).feeds[0]
    row = feed_row(sqlite_engine, feed_id)
    assert report.new == 2 and report.fetch_error is None
    assert row.bozo_message and report.bozo == row.bozo_message
    assert row.consecutive_errors == 0
    assert {i.entry_id for i in items(sqlite_engine).values()} == {"b1", "b2"}


def test_unannounced_gzip_and_relative_links(sqlite_engine, sqlite_url, httpserver):
    feed = rss(
        [
            {"guid": "r1", "title": TITLES["ferry"], "link": "../news/ferry", "content": TEASER},
            {"guid": "r2", "title": "Deep", "link": "story?id=4", "content": TEASER},
        ]
    )
    httpserver.expect_request("/feeds/main.xml").respond_with_data(
        gzip.compress(feed.encode()), content_type="application/rss+xml"
    )
    httpserver.expect_request("/x").respond_with_data(
        feed, content_type="application/rss+xml", headers={"Content-Location": "/feeds/deep/"}
    )
    httpserver.expect_request("/news/ferry").respond_with_data(
        page_html(TITLES["ferry"], FERRY), content_type="text/html"
    )
    httpserver.expect_request("/feeds/story").respond_with_data("gone", status=404)
    httpserver.expect_request("/feeds/deep/story").respond_with_data("gone", status=404)
    add_feeds(
        sqlite_engine, Main=httpserver.url_for("/feeds/main.xml"), Moved=httpserver.url_for("/x")
    )
    run(settings_for(sqlite_url), sqlite_engine)
    with Session(sqlite_engine) as session:
        by_url = {i.original_url: i for i in session.exec(select(Item))}
    urls = set(by_url)
    base = httpserver.url_for("")
    assert urls == {
        f"{base}news/ferry",
        f"{base}feeds/story?id=4",
        # resolved against the Content-Location header, not the URL asked for
        f"{base}feeds/news/ferry",
        f"{base}feeds/deep/story?id=4",
    }
    assert by_url[f"{base}news/ferry"].status == "draft"  # fetched and extracted


def test_a_feed_over_the_size_cap_is_parsed_as_far_as_it_goes(
    sqlite_engine, sqlite_url, httpserver
):
    entries = [
        {"guid": f"c{i}", "title": f"Entry {i}", "link": None, "content": TEASER * 5}
        for i in range(200)
    ]
    body = rss(entries)
    httpserver.expect_request("/big.xml").respond_with_data(
        body, content_type="application/rss+xml"
    )
    (feed_id,) = add_feeds(sqlite_engine, Big=httpserver.url_for("/big.xml")).values()
    report = run(settings_for(sqlite_url, max_feed_bytes=len(body) // 2), sqlite_engine).feeds[0]
    assert 50 < report.new < 200
    assert "cut off" in feed_row(sqlite_engine, feed_id).bozo_message


# --------------------------------------------------------------------------- feed health


def test_usual_interval_and_health_states():
    now = utcnow()
    hourly = [now - timedelta(hours=h) for h in range(1, 20)]
    assert usual_interval(hourly) == timedelta(hours=1)
    assert usual_interval([now]) is None
    common = {"enabled": True, "created_at": now - timedelta(days=30), "now": now}
    common["failing_after"] = timedelta(hours=48)
    ok = feed_health(
        last_fetched_at=now,
        last_success_at=now,
        consecutive_errors=0,
        entry_times=hourly,
        **common,
    )
    assert ok.state == "ok" and not ok.needs_attention
    daily_then_silent = [now - timedelta(days=10 + d) for d in range(10)]
    stale = feed_health(
        last_fetched_at=now,
        last_success_at=now,
        consecutive_errors=0,
        entry_times=daily_then_silent,
        **common,
    )
    assert stale.state == "stale" and stale.needs_attention
    assert "usually one every 24.0 h" in stale.detail
    retrying = feed_health(
        last_fetched_at=now,
        last_success_at=now - timedelta(hours=3),
        consecutive_errors=2,
        entry_times=hourly,
        **common,
    )
    assert retrying.state == "retrying" and not retrying.needs_attention
    failing = feed_health(
        last_fetched_at=now,
        last_success_at=now - timedelta(days=3),
        consecutive_errors=40,
        entry_times=hourly,
        **common,
    )
    assert failing.state == "failing" and failing.needs_attention
    never = feed_health(
        last_fetched_at=None,
        last_success_at=None,
        consecutive_errors=0,
        entry_times=[],
        **common,
    )
    assert never.state == "never fetched"


def test_feeds_list_marks_failing_and_stale_feeds(tmp_path, sqlite_engine, sqlite_url):
    from copydesk.cli import app

    now = utcnow()
    with Session(sqlite_engine) as session:
        healthy = Feed(url="https://a.example.org/rss", name="Healthy", last_fetched_at=now)
        healthy.last_success_at = now
        failing = Feed(url="https://b.example.org/rss", name="Failing", last_fetched_at=now)
        failing.last_success_at = now - timedelta(days=4)
        failing.consecutive_errors = 30
        failing.last_error = "HTTP 502"
        silent = Feed(url="https://c.example.org/rss", name="Silent", last_fetched_at=now)
        silent.last_success_at = now
        new = Feed(url="https://d.example.org/rss", name="Brand [bold]new[/bold]")
        session.add_all([healthy, failing, silent, new])
        session.flush()
        for n in range(8):
            session.add(
                Item(
                    dedup_key=f"h{n}",
                    feed_id=healthy.id,
                    published_at=now - timedelta(hours=n + 1),
                )
            )
            session.add(
                Item(dedup_key=f"s{n}", feed_id=silent.id, published_at=now - timedelta(days=9 + n))
            )
        session.commit()
    config = tmp_path / "config.toml"
    config.write_text(f'[database]\nurl = "{sqlite_url}"\n')
    runner = CliRunner()
    table = runner.invoke(app, ["--config", str(config), "feeds", "list"])
    assert table.exit_code == 0, table.output
    assert "FAILING" in table.stdout and "STALE" in table.stdout
    assert "Brand [bold]new[/bold]" in table.stdout  # a name is text, not markup
    assert "needs a person: Failing, Silent" in table.stdout

    as_json = runner.invoke(app, ["--config", str(config), "feeds", "list", "--json"])
    states = {row["name"]: row["state"] for row in json.loads(as_json.stdout)}
    assert states == {
        "Healthy": "ok",
        "Failing": "failing",
        "Silent": "stale",
        "Brand [bold]new[/bold]": "never fetched",
    }
    check = runner.invoke(app, ["--config", str(config), "feeds", "list", "--check"])
    assert check.exit_code == 1


def test_a_page_over_the_size_cap_is_cut_off_and_the_cut_recorded(
    sqlite_engine, sqlite_url, httpserver
):
    page = page_html(TITLES["ferry"], FERRY + "\n\n" + LIBRARY)
    cap = len(page.encode()) * 2 // 3
    feed = rss([{"guid": "big", "title": TITLES["ferry"], "link": httpserver.url_for("/long")}])
    httpserver.expect_request("/feed.xml").respond_with_data(feed, content_type="text/xml")
    httpserver.expect_request("/long").respond_with_data(page, content_type="text/html")
    add_feeds(sqlite_engine, Long=httpserver.url_for("/feed.xml"))
    run(settings_for(sqlite_url, max_page_bytes=cap), sqlite_engine)
    item = items(sqlite_engine)["big"]
    assert item.fetch_bytes == cap and item.fetch_status == 200
    assert "Kestrel Sound" in item.source_text and "Mabel Tunney" not in item.source_text
    assert last_event(sqlite_engine, item.id).details["fetch"] == {
        "truncated": True,
        "kept_bytes": cap,
    }


def test_json_feed_entries_and_a_broken_json_feed():
    from ingest.feeds import parse_feed
    from ingest.fetch import FetchResult

    body = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "Harbour Notes",
        "items": [
            {
                "id": "n1",
                "url": "/notes/dredging",
                "title": "Dredging starts",
                "content_html": "<p>The dredger Marlow arrived at Pellow Quay.</p>",
                "date_published": "Tue, 01 Dec 2026 08:00:00 +0000",
                "authors": [{"name": "Ilse Marrow"}],
            },
            {"url": "https://notes.example.org/tides", "content_text": "Tide tables."},
            "not an item",
        ],
    }
    url = "https://notes.example.org/feed.json"
    ok = parse_feed(
        FetchResult(
            url, url, 200, {"content-type": "application/feed+json"}, json.dumps(body).encode()
        )
    )
    assert ok.fetch.error is None and ok.title == "Harbour Notes"
    first, second = ok.entries
    assert first.link == "https://notes.example.org/notes/dredging"
    assert first.entry_id == "n1" and first.author == "Ilse Marrow"
    assert first.published.isoformat() == "2026-12-01T08:00:00+00:00"
    assert first.content_text == "The dredger Marlow arrived at Pellow Quay."
    assert second.entry_id == "https://notes.example.org/tides"

    broken = parse_feed(FetchResult(url, url, 200, {"content-type": "application/json"}, b"{oops"))
    assert broken.fetch.error.startswith("not a feed: JSONDecodeError")
    other = parse_feed(FetchResult(url, url, 200, {}, b'{"hello": "world"}'))
    assert other.fetch.error == "not a feed: JSON without a jsonfeed.org version"
