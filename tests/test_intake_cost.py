"""Issue 24: a feed's new entries are born in a few statements, however many there
are, on SQLite and PostgreSQL; every entry still ends as a `new` item with its own
audit event, and the chain holds.

Each entry used to cost a savepoint, an ORM flush of its item and its audit event
(four statements, and the ORM's bookkeeping, per entry): CPU on the run's thread
for every article. Counted in SQL statements (exact), not time."""

from __future__ import annotations

import pytest
from sqlalchemy import event
from sqlmodel import Session, select

from copydesk.config import Settings
from copydesk.services.feeds import add_feed
from copydesk.services.pipeline import Pipeline
from copydesk.services.pipeline import intake as intake_module
from ingest.fetch import Fetcher
from store import audit_chain
from store.models import AuditEvent, Item
from summarise.extractive import ExtractiveSummariser
from tests.articles import long_articles, rss
from tests.ingest_helpers import LOOPBACK_ALLOW, install_loopback_only, logging_restored


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch):  # type: ignore[no-untyped-def]
    with logging_restored():
        yield install_loopback_only(monkeypatch)


def _settings(db_url: str) -> Settings:
    return Settings.model_validate(
        {
            "database": {"url": db_url},
            "summarise": {"backend": "extractive", "max_concurrency": 2},
            "ingest": {"allow_private": LOOPBACK_ALLOW, "respect_robots": False},
        }
    )


def _poll(engine, db_url: str, httpserver, entries, monkeypatch) -> tuple[int, dict]:  # type: ignore[no-untyped-def]
    """One run over a feed of `entries` (their text in the feed, no page fetched):
    the statements sent while the feed's entries were made items, and the report."""
    httpserver.clear()
    httpserver.expect_request("/feed.xml").respond_with_data(
        rss(entries), content_type="application/rss+xml"
    )
    sent = [0]
    counting = [False]

    def note(*args) -> None:  # type: ignore[no-untyped-def]
        sent[0] += counting[0]

    inner = intake_module.Intake._create_items

    def create_items(self, *args):  # type: ignore[no-untyped-def]
        counting[0] = True
        try:
            return inner(self, *args)
        finally:
            counting[0] = False

    monkeypatch.setattr(intake_module.Intake, "_create_items", create_items)
    settings = _settings(db_url)
    event.listen(engine, "before_cursor_execute", note)
    try:
        with Fetcher(settings.ingest) as fetcher:
            pipeline = Pipeline(
                settings, engine, ExtractiveSummariser(), fetcher, fetch_pages=False
            )
            report = pipeline.run(force=True).to_dict()
    finally:
        event.remove(engine, "before_cursor_execute", note)
    return sent[0], report["totals"]


def _with_feed(engine, httpserver) -> None:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        add_feed(session, httpserver.url_for("/feed.xml"), "Wendle Gazette")
        session.commit()


def _born(engine) -> dict[str, AuditEvent]:  # type: ignore[no-untyped-def]
    """Each item's first event, by entry id."""
    with Session(engine) as session:
        items = {i.id: i.entry_id for i in session.exec(select(Item))}
        events = session.exec(select(AuditEvent).order_by(AuditEvent.id)).all()
    born: dict[str, AuditEvent] = {}
    for e in events:
        if e.item_id in items and e.from_status is None:
            assert items[e.item_id] not in born  # one birth each
            born[items[e.item_id]] = e
    return born


def test_a_feeds_entries_are_born_in_statements_that_do_not_grow_with_them(
    engine, db_url, httpserver, monkeypatch
) -> None:
    _with_feed(engine, httpserver)
    articles = long_articles(16)
    few, totals = _poll(engine, db_url, httpserver, articles[:3], monkeypatch)
    assert totals["new"] == 3
    many, totals = _poll(engine, db_url, httpserver, articles[:16], monkeypatch)
    assert (totals["new"], totals["duplicates"]) == (13, 3)
    # Before: 4 statements an entry (savepoint, item, event, release): 12 vs 52.
    assert many == few, (few, many)

    born = _born(engine)
    assert sorted(born) == sorted(a["guid"] for a in articles)
    for a in articles:
        e = born[a["guid"]]
        assert (e.to_status, e.reason) == ("new", "seen in feed Wendle Gazette")
        assert e.details["entry_id"] == a["guid"]
        assert e.details["link"] == a["link"]
    report = audit_chain.verify(engine)
    assert report.ok, report.problem


def test_an_entry_another_worker_created_meanwhile_is_a_duplicate_not_a_failure(
    engine, db_url, httpserver, monkeypatch
) -> None:
    """The race between the look-up of known entries and the insert: the entries
    another worker made items of meanwhile (simulated: the look-up sees none) are
    counted as duplicates; the others are born, each with its event."""
    _with_feed(engine, httpserver)
    articles = long_articles(6)
    _, totals = _poll(engine, db_url, httpserver, articles[:4], monkeypatch)
    assert totals["new"] == 4
    monkeypatch.setattr(intake_module, "_existing", lambda *args, **kwargs: set())
    _, totals = _poll(engine, db_url, httpserver, articles, monkeypatch)
    assert (totals["new"], totals["duplicates"]) == (2, 4)
    born = _born(engine)
    assert sorted(born) == sorted(a["guid"] for a in articles)
    with Session(engine) as session:
        assert len(session.exec(select(Item.id)).all()) == 6
    assert audit_chain.verify(engine).ok


def test_items_born_together_are_the_rows_one_at_a_time_made(engine) -> None:
    """`create_many` writes what `create` wrote, column for column, and the events
    chain in the order given."""
    from store import status as st
    from store.db import session_scope

    def item(n: int) -> Item:
        url = f"https://wendle.example.test/tide/{n}"
        return Item(
            dedup_key=url, source_url=url, title=f"Tide table {n}", entry_id=f"t-{n}", language="en"
        )

    with session_scope(engine) as session:
        st.create(session, item(0), actor="cli", reason="seen", details={"n": 0})
    with session_scope(engine) as session:
        born = [(item(n), f"seen {n}", {"n": n}) for n in (1, 2, 3)]
        events = st.create_many(session, born, actor="cli")
        assert [e.item_id for e in events] == [i.id for i, _, _ in born]
    skip = {"id", "dedup_key", "source_url", "title", "entry_id", "created_at", "updated_at"}
    skip |= {"seen_at"}
    with Session(engine) as session:
        rows = session.exec(select(Item).order_by(Item.id)).all()
        events = session.exec(select(AuditEvent).order_by(AuditEvent.id)).all()
    columns = [c.name for c in Item.__table__.columns if c.name not in skip]
    first = {c: getattr(rows[0], c) for c in columns}
    for row in rows[1:]:
        assert {c: getattr(row, c) for c in columns} == first
    assert [e.item_id for e in events] == [r.id for r in rows]
    assert [e.reason for e in events] == ["seen", "seen 1", "seen 2", "seen 3"]
    assert [e.details for e in events] == [{"n": n} for n in range(4)]
    assert audit_chain.verify(engine).ok


def _births_peak(engine, feed_id: int, first: int, n: int) -> tuple[int, dict]:  # type: ignore[no-untyped-def]
    """The peak of memory allocated while n fresh entries (ids first..first+n-1, each
    with ~300 words of feed text) become items, in bytes (tracemalloc: counted, not
    timed), and the feed's report."""
    import tracemalloc

    from copydesk.services.pipeline.state import RunState
    from copydesk.services.reports import FeedReport
    from ingest.feeds import Entry
    from store.db import session_scope
    from store.models import Feed

    body = " ".join(
        f"The Marrow Vale ferry {w} carried {w * 7} riders past Hollin Point." for w in range(25)
    )
    entries = [
        Entry(f"m-{i}", f"https://marrow.example.test/f/{i}", f"Ferry log {i}", None, None, body)
        for i in range(first, first + n)
    ]
    state = RunState(_settings(str(engine.url)), engine, run_id=1)
    births = intake_module.Intake(
        state, None, fetch_pages=False, workers=1, progress=lambda *a: None
    )
    report = FeedReport("Marrow Vale Courier", "https://marrow.example.test/feed")
    with session_scope(engine) as session:
        feed = session.get(Feed, feed_id)
        tracemalloc.start()
        try:
            births._create_items(session, feed, entries, report)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    return peak, {"new": report.new, "seen": report.seen}


def test_a_long_feeds_entries_are_born_a_chunk_at_a_time(engine) -> None:
    """Issue 24 (RSS of a 3,200-article run): the entries of a long feed become items
    a chunk at a time, in the feed's one transaction, so the objects alive at once (an
    item and an event per entry, with their rows) do not grow with the feed: the
    peak for 1,200 entries is not four times that for 300. Before: one batch of
    every entry (3,200 entries held about 30 MB at once, and the process's RSS
    kept that high-water mark for the rest of the run)."""
    with Session(engine) as session:
        feed = add_feed(session, "https://marrow.example.test/feed", "Marrow Vale Courier")
        session.commit()
        feed_id = feed.id
    small, report = _births_peak(engine, feed_id, 0, 300)
    assert report == {"new": 300, "seen": 300}
    large, report = _births_peak(engine, feed_id, 300, 1200)
    assert report == {"new": 1200, "seen": 1200}
    assert large < 2 * small, (small, large)
    born = _born(engine)
    assert sorted(born) == sorted(f"m-{i}" for i in range(1500))
    with Session(engine) as session:
        events = session.exec(select(AuditEvent).order_by(AuditEvent.id)).all()
    ids = [e.item_id for e in events if e.item_id is not None]
    assert len(ids) == 1500 and ids == sorted(ids)  # in the feed's order, an event each
    assert audit_chain.verify(engine).ok


def test_a_feeds_entries_are_born_without_an_orm_item_each(
    engine, db_url, httpserver, monkeypatch
) -> None:
    """Issue 24, session 13: intake builds each new item's row as plain column values
    for `st.create_many`'s Core INSERT; an `Item` ORM object an entry (SQLModel's
    constructor, about 0.1 ms of CPU, only to be read back column by column) is
    built no more. The rows are those an `Item` would have given: the model's
    defaults, the feed's values, the feed text where it is the source."""
    _with_feed(engine, httpserver)
    articles = long_articles(5)
    built = [0]

    def count(*args) -> None:  # type: ignore[no-untyped-def]
        built[0] += 1

    event.listen(Item, "init", count)
    try:
        _, totals = _poll(engine, db_url, httpserver, articles, monkeypatch)
    finally:
        event.remove(Item, "init", count)
    assert totals["new"] == 5
    assert built[0] == 0, f"{built[0]} Item objects built for 5 entries"
    with Session(engine) as session:
        rows = session.exec(select(Item).order_by(Item.id)).all()
    assert [r.entry_id for r in rows] == [a["guid"] for a in articles]
    for row, article in zip(rows, articles, strict=True):
        assert row.original_url == article["link"]
        assert row.title == article["title"]
        assert row.seen_at is not None and row.created_at is not None
        assert row.text_origin == "feed_content" and row.word_count >= 150
    assert audit_chain.verify(engine).ok


def test_items_born_from_column_values_are_the_rows_an_item_gives(engine) -> None:
    """`create_many` takes an item's column values as well as an `Item`: missing
    columns take the model's defaults, so the two rows are the same column for column."""
    from store import status as st
    from store.db import session_scope

    def values(n: int) -> dict:
        url = f"https://quillon.example.test/weir/{n}"
        return {"dedup_key": url, "source_url": url, "title": f"Weir gauge {n}"}

    with session_scope(engine) as session:
        st.create_many(session, [(Item(**values(0)), "seen", None)], actor="cli")
    with session_scope(engine) as session:
        events = st.create_many(session, [(values(1), "seen", None)], actor="cli")
    skip = {"id", "dedup_key", "source_url", "title", "created_at", "updated_at", "seen_at"}
    with Session(engine) as session:
        rows = session.exec(select(Item).order_by(Item.id)).all()
    columns = [c.name for c in Item.__table__.columns if c.name not in skip]
    assert {c: getattr(rows[1], c) for c in columns} == {c: getattr(rows[0], c) for c in columns}
    assert events[0].item_id == rows[1].id and rows[1].status == "new"
    assert rows[1].seen_at is not None and rows[1].created_at is not None
    assert audit_chain.verify(engine).ok
