"""Issue 24: the page readers ask whether a page's story is stored already a batch
of pages at a time, one statement for many, on SQLite and PostgreSQL; a known story
is still discarded as a duplicate before any draft is made of it.

The look-up used to be one SELECT a page (with the pool's pre-ping, BEGIN and
ROLLBACK around it): 0.72 ms of CPU an article on PostgreSQL, the largest single
part of the extractive path after fetching and extraction (session 13's table).
The run's claims on its items were one statement for `max_concurrency` items, a
quarter of what the extractive backend's 4 workers hold in flight: now one for 16
(`CLAIM_BATCH`), or the window when smaller.

Counted in SQL statements (exact), not time."""

from __future__ import annotations

import pytest
from sqlalchemy import event
from sqlmodel import Session, select

from copydesk.config import Settings
from copydesk.services.feeds import add_feed
from copydesk.services.pipeline import Pipeline
from copydesk.services.pipeline import run as run_module
from copydesk.services.pipeline import writer as writer_module
from ingest.fetch import Fetcher
from store import verdicts
from store.models import AuditEvent, Item
from summarise.extractive import ExtractiveSummariser
from tests.articles import FERRY, LIBRARY, page_html, rss
from tests.ingest_helpers import LOOPBACK_ALLOW, install_loopback_only, logging_restored

PAGES = 24


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch):  # type: ignore[no-untyped-def]
    with logging_restored():
        yield install_loopback_only(monkeypatch)


def _story(i: int) -> str:
    return f"Report {i} from the council desk of Wrenfield.\n\n" + (FERRY, LIBRARY)[i % 2]


def _serve(httpserver, pages: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    """A feed linking each page (no text in the feed: every page is fetched)."""
    httpserver.clear()
    entries = [
        {"guid": name, "title": f"Story {name}", "link": httpserver.url_for(f"/news/{name}")}
        for name in pages
    ]
    httpserver.expect_request("/feed.xml").respond_with_data(
        rss(entries), content_type="application/rss+xml"
    )
    for name, text in pages.items():
        httpserver.expect_request(f"/news/{name}").respond_with_data(
            page_html(f"Story {name}", text), content_type="text/html"
        )


def _run(engine, db_url: str, which: str = "content_hash IN") -> list[str]:  # type: ignore[no-untyped-def]
    """One run; the statements it sent that contain `which` (by default the
    duplicate look-ups, which ask by URL and by text, the writer's included)."""
    settings = Settings.model_validate(
        {
            "database": {"url": db_url},
            "summarise": {"backend": "extractive", "max_concurrency": 4},
            "ingest": {"allow_private": LOOPBACK_ALLOW, "respect_robots": False},
        }
    )
    looked: list[str] = []

    def note(conn, cursor, statement: str, *args) -> None:  # type: ignore[no-untyped-def]
        if which in statement:
            looked.append(statement)

    event.listen(engine, "before_cursor_execute", note)
    try:
        with Fetcher(settings.ingest) as fetcher:
            Pipeline(settings, engine, ExtractiveSummariser(), fetcher).run(force=True)
    finally:
        event.remove(engine, "before_cursor_execute", note)
    return looked


def test_the_page_readers_look_up_a_batch_of_pages_with_one_statement(
    engine, db_url, httpserver, monkeypatch
) -> None:
    # No timing: the pages are looked up 8 at a time (half the window of 4 workers)
    # or when no other page is being read, and the writer commits once, at the end.
    monkeypatch.setattr(run_module, "LOOKUP_LINGER", 3600.0)
    monkeypatch.setattr(writer_module, "COMMIT_LINGER", 3600.0)
    with Session(engine) as session:
        add_feed(session, httpserver.url_for("/feed.xml"), "Wrenfield Courier")
        session.commit()
    _serve(httpserver, {"first": _story(0)})
    _run(engine, db_url)
    with Session(engine) as session:
        [stored] = session.exec(select(Item)).all()
    assert stored.status == "draft"

    # 24 new pages, one of them the stored story under another link.
    pages = {f"p{i}": _story(i + 1) for i in range(PAGES - 1)}
    pages["copy"] = _story(0)
    _serve(httpserver, pages)
    looked = _run(engine, db_url)
    # The writer's one look-up for its batch, and the readers' for theirs.
    assert 2 <= len(looked) <= PAGES // 4  # failed before: 25, one a page and the writer's

    with Session(engine) as session:
        items = {i.dedup_key.rsplit("/", 1)[-1]: i for i in session.exec(select(Item)).all()}
        found = verdicts.of_items(session, [items["copy"].id])[items["copy"].id]
        last = session.exec(
            select(AuditEvent)
            .where(AuditEvent.item_id == items["copy"].id)
            .order_by(AuditEvent.id.desc())  # type: ignore[union-attr]
        ).first()
    assert items["copy"].status == "discarded"
    assert last.reason == f"duplicate of item {stored.id} (same text)"
    assert {v.stage for v in found} == {"source"}  # found by the readers: never drafted
    assert sorted(i.status for key, i in items.items() if key != "copy") == ["draft"] * PAGES


def test_a_run_claims_its_items_16_at_a_time(engine, db_url, httpserver) -> None:
    """4 workers keep 16 items in flight: 24 waiting items are claimed 16, then 8,
    then none is left (the claim that finds none ends the run's items)."""
    with Session(engine) as session:
        add_feed(session, httpserver.url_for("/feed.xml"), "Wrenfield Courier")
        session.commit()
    _serve(httpserver, {f"p{i}": _story(i) for i in range(PAGES)})
    claimed = _run(engine, db_url, "claim_until")
    claims = [s for s in claimed if " AS picked" in s or "WITH picked" in s]
    assert len(claims) == 3, claims  # failed before: 7, four items a claim
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
    assert sorted(i.status for i in items) == ["draft"] * PAGES
    assert all(i.claimed_by is None for i in items)


def test_the_run_loop_hears_of_each_finished_stage_without_watching_the_others(
    engine, db_url, httpserver, monkeypatch
) -> None:
    """The run loop waited with `concurrent.futures.wait`, which installs a waiter on
    every pending future (up to the window, 64 at concurrency 16) at every call, once
    a finished stage: 0.28 ms of CPU an article on the model path. Each future now
    tells the loop itself when it is done: no future is watched by a wait."""
    import concurrent.futures

    watched = [0]
    inner = concurrent.futures.wait

    def counting(fs, *args, **kwargs):  # type: ignore[no-untyped-def]
        watched[0] += len(fs)
        return inner(fs, *args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "wait", counting)
    monkeypatch.setattr(run_module, "wait", counting, raising=False)
    with Session(engine) as session:
        add_feed(session, httpserver.url_for("/feed.xml"), "Wrenfield Courier")
        session.commit()
    _serve(httpserver, {f"p{i}": _story(i) for i in range(PAGES)})
    _run(engine, db_url)
    # Each item's two stages, each at most once (failed before: 308, the pending
    # futures again at every wait).
    assert watched[0] <= 2 * PAGES, watched[0]
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
    assert sorted(i.status for i in items) == ["draft"] * PAGES


def test_the_run_reads_and_drafts_on_its_own_thread_back_to_back(
    engine, db_url, httpserver, monkeypatch
) -> None:
    """The page readers only fetch; the run's thread extracts the pages fetched back to
    back, and, for a summariser and checker that make no network call (extractive, no
    model checks), drafts them back to back after their look-up (issue 24, session 16:
    the same work cost 17-28% more CPU interleaved with other stages', page by page,
    than back to back). The same drafts."""
    import threading

    from copydesk.services.pipeline import draft as draft_module
    from copydesk.services.pipeline import source as source_module

    threads: dict[str, set[str]] = {"extract": set(), "draft": set()}

    def on_thread(kind, inner):  # type: ignore[no-untyped-def]
        def noted(*args, **kwargs):  # type: ignore[no-untyped-def]
            threads[kind].add(threading.current_thread().name)
            return inner(*args, **kwargs)

        return noted

    monkeypatch.setattr(
        source_module, "extract_page", on_thread("extract", source_module.extract_page)
    )
    monkeypatch.setattr(
        draft_module.DraftStage,
        "prepare",
        on_thread("draft", draft_module.DraftStage.prepare),
    )
    with Session(engine) as session:
        add_feed(session, httpserver.url_for("/feed.xml"), "Wrenfield Courier")
        session.commit()
    _serve(httpserver, {f"p{i}": _story(i) for i in range(PAGES)})
    _run(engine, db_url)
    here = threading.current_thread().name
    # Failed before: extracted on the page readers' threads, drafted on the model's.
    assert threads == {"extract": {here}, "draft": {here}}, threads
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
    assert sorted(i.status for i in items) == ["draft"] * PAGES
    assert all(i.summary and i.source_text for i in items)


def _run_with(engine, db_url: str, httpserver, summariser, pages: int) -> None:  # type: ignore[no-untyped-def]
    """One run over `pages` stories of one feed, drafted by `summariser` (a stand-in
    for a model: it drafts on the model's threads, at concurrency 4)."""
    with Session(engine) as session:
        add_feed(session, httpserver.url_for("/feed.xml"), "Wrenfield Courier")
        session.commit()
    _serve(httpserver, {f"p{i}": _story(i) for i in range(pages)})
    settings = Settings.model_validate(
        {
            "database": {"url": db_url},
            "summarise": {"backend": "extractive", "max_concurrency": 4},
            "ingest": {"allow_private": LOOPBACK_ALLOW, "respect_robots": False},
        }
    )
    with Fetcher(settings.ingest) as fetcher:
        Pipeline(settings, engine, summariser, fetcher).run(force=True)


class _OneAtATime:
    """A model (it drafts on the model's threads: no `local`) whose drafts finish one at
    a time, each only once the one before it is committed and every page let in has
    been looked up: a long model run once its threads have drifted out of step, items
    finishing apart, each after the run has dealt with the one before."""

    name = "one-at-a-time"

    def __init__(self) -> None:
        import threading

        self.inner = ExtractiveSummariser(sentences=2)
        self.turn = threading.Condition()
        self.started = self.committed = self.let_in = self.looked_up = 0

    def summarise(self, article):  # type: ignore[no-untyped-def]
        with self.turn:
            mine, self.started = self.started, self.started + 1
            # A bound, not a timing: each waits for the run to catch up.
            self.turn.wait_for(
                lambda: self.committed >= mine and self.looked_up == self.let_in, timeout=10
            )
        return self.inner.summarise(article)

    def note(self, **counts: int) -> None:
        with self.turn:
            for name, count in counts.items():
                setattr(self, name, getattr(self, name) + count)
            self.turn.notify_all()


def test_a_model_run_lets_new_items_in_a_look_up_batch_at_a_time(
    engine, db_url, httpserver, monkeypatch
) -> None:
    """Items finishing one at a time free the run's window one place at a time; the
    window was refilled so, a page a finished item, each page then read and looked up
    alone (issue 24, session 17: in a 3,200-article model run, look-ups of 3 pages, not
    16, once the model threads had drifted out of step). New items are let in once a
    look-up batch's places are free (8 at concurrency 4), together. Counted in
    look-ups (no timing: the look-ups wait for no linger, the drafts finish in order)."""
    from copydesk.services.pipeline import source as source_module

    monkeypatch.setattr(run_module, "LOOKUP_LINGER", 3600.0)
    monkeypatch.setattr(writer_module, "COMMIT_LINGER", 0.0)
    model = _OneAtATime()
    inner_commit = writer_module.Writer.commit_batch
    inner_look_up = source_module.SourceStage.look_up
    inner_jobs = Pipeline._claimed_jobs
    sizes: list[int] = []

    def commit_batch(self, outs):  # type: ignore[no-untyped-def]
        inner_commit(self, outs)
        model.note(committed=len(outs))

    def look_up(self, reads):  # type: ignore[no-untyped-def]
        sizes.append(len(reads))
        try:
            return inner_look_up(self, reads)
        finally:
            model.note(looked_up=len(reads))

    def claimed_jobs(self):  # type: ignore[no-untyped-def]
        for job in inner_jobs(self):
            model.note(let_in=1)  # on the run's thread, as the job is let in
            yield job

    monkeypatch.setattr(writer_module.Writer, "commit_batch", commit_batch)
    monkeypatch.setattr(source_module.SourceStage, "look_up", look_up)
    monkeypatch.setattr(Pipeline, "_claimed_jobs", claimed_jobs)
    pages = 48
    _run_with(engine, db_url, httpserver, model, pages)
    assert sum(sizes) == pages
    # 8 pages a look-up, half the window of 16 (failed before: 32 look-ups, all but
    # the first two of one or two pages).
    assert len(sizes) <= pages // 4, sizes
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
    assert sorted(i.status for i in items) == ["draft"] * pages


class _Apart:
    """A model whose drafts come back GAP seconds apart at least, one after another."""

    name = "apart"
    GAP = 0.3

    def __init__(self) -> None:
        import threading

        self.inner = ExtractiveSummariser(sentences=2)
        self.lock = threading.Lock()

    def summarise(self, article):  # type: ignore[no-untyped-def]
        import time

        with self.lock:  # one at a time, each GAP after the one before it
            time.sleep(self.GAP)
            return self.inner.summarise(article)


def test_a_model_run_commits_replies_a_little_apart_together(
    engine, db_url, httpserver, monkeypatch
) -> None:
    """Replies 0.3 s apart, as a long model run's come once its threads have drifted
    apart (about 20 a second at concurrency 16, each thread's on its own time), share a
    commit (`writer.COMMIT_LINGER`, 0.6 s): at 0.2 s each was committed alone (issue 24,
    session 17: 5-6 items a commit after the first minute of a 3,200-article run, 16
    before). A bound, not a timing: every reply is at least 0.3 s after the one before
    it, so at 0.2 s no two could share a commit; the last is committed at once."""
    batches: list[int] = []
    inner_commit = writer_module.Writer.commit_batch

    def commit_batch(self, outs):  # type: ignore[no-untyped-def]
        batches.append(len(outs))
        inner_commit(self, outs)

    monkeypatch.setattr(writer_module.Writer, "commit_batch", commit_batch)
    pages = 4
    _run_with(engine, db_url, httpserver, _Apart(), pages)
    assert sum(batches) == pages
    assert max(batches) >= 2, batches  # failed before: [1, 1, 1, 1]
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
    assert sorted(i.status for i in items) == ["draft"] * pages
