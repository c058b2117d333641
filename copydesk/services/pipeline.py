"""The pipeline: walks every item through ingest -> source gates -> summarise ->
draft gates -> store, and accounts for every entry it sees.

Network and model work (feed fetches, page fetches, summaries) runs in a thread
pool; every database write happens on the calling thread, in short transactions:
one per feed for the items a feed brings, and one for the items that finished
together (up to COMMIT_BATCH; one item when they finish one at a time). Nothing
is reported before its commit, so a crash loses only unreported work, and those
items are still `new` in the database and are picked up by the next run. Workers
may read the database (an item's source text when they start on it, duplicate
look-ups), never write it.

Every entry ends as an item with a status and a reason, or is counted as a
duplicate of one that does:

- an entry already seen (same entry id in its feed, or same canonical URL) is
  not a new item: the report counts it under `duplicates`;
- an item whose fetched page turns out to be an article already known (its
  final URL after redirects or its rel=canonical is an earlier item's URL, or
  its text is the same as another item's) is discarded with the reason
  "duplicate of item N (...)", so the audit trail says where the story lives.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import defer
from sqlmodel import Session, col, select

from copydesk.config import Settings
from copydesk.services.heartbeat import Heartbeat, start_run_row, take_sqlite_slot
from copydesk.services.recheck import recheck_drafts
from copydesk.services.reports import FeedReport, RunReport
from guards.registry import CHECK_GATES, DRAFT_GATES, GateResult, run_checks, run_gates
from guards.source import count_words
from ingest.dedup import item_keys, text_fingerprint, url_aliases
from ingest.extract import extract_page
from ingest.feeds import Entry, FeedResult, fetch_feed, is_due, next_poll_after_failure
from ingest.fetch import Fetcher, FetchResult
from ingest.settings import FeedSettings
from store import audit_chain, claims
from store import status as st
from store.changes import ItemChanges
from store.db import session_scope
from store.models import Feed, GateVerdict, Item, ModelCall, Run, utcnow
from summarise.base import (
    Article,
    BackendUnavailable,
    CallRecord,
    Draft,
    Summariser,
    SummaryFailed,
)
from summarise.checks import FAILED, NOT_RUN, RAN, Checker, NoChecker

log = logging.getLogger("copydesk.pipeline")

MAX_BACKOFF = timedelta(days=1)
IN_CHUNK = 500  # keys per IN (...) query: far below every database's parameter limit
POLLED_ELSEWHERE = "another run is polling it"
PAGE_READERS = 4  # threads fetching and extracting pages while the model works
# Outcomes that finish together are committed together, up to this many per
# transaction: no item waits for a batch to fill, and a busy writer batches more.
COMMIT_BATCH = 32
PAGE_TYPES = ("html", "xml", "text/")  # content types a page's article can be read from
Progress = Callable[[str, int, int], None]  # (phase, done, total)


class _LostClaim(Exception):
    """This run's claim on a feed was taken over: what it fetched is not written."""


class BackendFailure(RuntimeError):
    """The summariser cannot work at all (key refused, model rejects temperature 0):
    the run stops and untouched items stay `new` for the next run. The calls that
    found it out still go to the ledger."""

    def __init__(
        self, message: str, *, item_id: int | None = None, calls: list[CallRecord] | None = None
    ):
        super().__init__(message)
        self.item_id = item_id
        self.calls = calls or []


# --------------------------------------------------------------------------- work units


@dataclass(frozen=True)
class Job:
    """What a worker thread needs to know about an item: a small snapshot, not an
    ORM row. The source text is not in it: the worker reads it when it starts on
    the item, so that listing thousands of waiting items costs no texts."""

    item_id: int
    version: int
    dedup_key: str
    source_url: str | None
    title: str | None
    has_text: bool  # the item already has its source text (from the feed)
    attempts: int
    feed_url: str | None  # the feed that brought it; None when submitted by hand


@dataclass
class Outcome:
    """What a worker found; the calling thread turns it into one transaction."""

    job: Job
    to_status: str  # draft, discarded or error
    reason: str | None = None
    changes: ItemChanges = field(default_factory=ItemChanges)  # columns set with the move
    verdicts: list[tuple[str, GateResult]] = field(default_factory=list)  # (stage, result)
    calls: list[CallRecord] = field(default_factory=list)
    draft: Draft | None = None
    discard_kind: str | None = None  # the gate, or "fetch", "refused", "duplicate", "model"...
    details: dict[str, Any] = field(default_factory=dict)  # for the audit event
    aliases: list[str] = field(default_factory=list)  # other canonical URLs of the page
    fingerprint: str | None = None  # of the article text, once it passed source_length
    titles: list[str] = field(default_factory=list)  # headlines to ignore in the fingerprint


def compose_source(title: str | None, body: str) -> str:
    """The article as the gates and the model see it: its headline, then its text."""
    body = body.strip()
    if title and not body.startswith(title.strip()):
        return f"{title.strip()}\n\n{body}"
    return body


class Pipeline:
    def __init__(
        self,
        settings: Settings,
        engine: Engine,
        summariser: Summariser,
        fetcher: Fetcher,
        *,
        command: str = "run",
        fetch_pages: bool = True,
        progress: Progress | None = None,
        checker: Checker | None = None,
    ):
        self.settings = settings
        self.engine = engine
        self.summariser = summariser
        # The model checks after the draft gates; without one they are "not run".
        self.checker: Checker = checker or NoChecker("no model")
        self.fetcher = fetcher
        self.command = command
        self.fetch_pages = fetch_pages
        self.progress = progress or (lambda phase, done, total: None)
        self.run_id: int | None = None
        self.reports: dict[int, FeedReport] = {}
        # Texts claimed by an item of this run: two workers holding the same story
        # at once must not both summarise it.
        self._claims: dict[str, int] = {}
        self._claims_lock = threading.Lock()
        self._feed_tokens: dict[int, int] = {}  # feed id -> this run's claim token
        self._backend_stopped = threading.Event()  # set by the model call that stops the run

    @property
    def actor(self) -> str:
        return f"run:{self.run_id}"

    @property
    def workers(self) -> int:
        return self.settings.summarise.max_concurrency

    # ------------------------------------------------------------------ the run

    def run(self, only_feeds: Iterable[str] | None = None, *, force: bool = False) -> RunReport:
        """Poll the feeds that are due (all of them with `force`), then work through
        every `new` item and every `error` item whose retry time has come."""
        with self._recorded_run() as report:
            feeds = self._feeds(only_feeds)
            due = self._due_feeds(feeds, force)
            self._ingest_feeds(due)
            self._wait_for_other_polls()
            total = self._pending_jobs()
            self._process(self._claimed_jobs(), total)
            self.recheck(report)
        return report

    def recheck_only(self) -> RunReport:
        """A run that only re-checks (`copydesk recheck`)."""
        with self._recorded_run() as report:
            self.recheck(report)
        return report

    def recheck(self, report: RunReport) -> None:
        """Re-check the drafts whose model checks failed for a passing reason
        (copydesk/services/recheck.py); what it did goes in the run's report."""
        done = recheck_drafts(
            self.engine, self.settings, self.checker, actor=self.actor, run_id=self.run_id
        )
        if done.attempted or done.dropped:
            report.rechecks = done.to_dict()

    def submit(self, url: str) -> tuple[RunReport, int, bool]:
        """One article by hand (an editor's tip), through the same path as a feed
        entry: (report, item id, whether the item is new). A URL already known is
        not processed again."""
        item_id, created = 0, False
        with self._recorded_run() as report:
            item_id, created = self._create_submitted(url)
            if created:
                with Session(self.engine) as session:
                    self._process([_job(session.get(Item, item_id), None)], 1)
        return report, item_id, created

    @contextmanager
    def _recorded_run(self) -> Iterator[RunReport]:
        """A run row from start to end, whatever happens. A stopped backend is
        recorded and the run returns; anything else (the database went away, a
        bug; an item's own failure never gets here) is recorded and re-raised,
        for the caller to report in one line."""
        report = self._start_run()
        heartbeat = Heartbeat(self.engine, self.run_id, self.lease, self._counts_so_far)
        try:
            with heartbeat:
                yield report
        except BackendFailure as exc:
            report.fatal = str(exc)
            log.error("run %s stopped: %s", self.run_id, exc)
        except Exception as exc:
            report.fatal = f"run crashed: {type(exc).__name__}: {exc}"
            raise
        finally:
            self._finish_run(report)

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=self.settings.runs.lease_seconds)

    def _start_run(self) -> RunReport:
        """The run's row. On SQLite a `run` first waits for its turn (one at a time);
        `AnotherRunInProgress` says when the wait ran out."""
        name = self.summariser.name
        if self.command == "run" and self.engine.dialect.name == "sqlite":
            wait = self.settings.runs.wait_seconds
            self.run_id = take_sqlite_slot(
                self.engine, self.command, name, lease=self.lease, wait=wait
            )
        else:
            self.run_id = start_run_row(self.engine, self.command, name)
        log.info("run %s started with summariser %s", self.run_id, name)
        return RunReport(self.run_id, name)

    def _counts_so_far(self) -> dict[str, Any]:
        """What the heartbeat writes on the run row as the run goes."""
        report = RunReport(self.run_id, self.summariser.name, feeds=list(self.reports.values()))
        return report.to_dict()

    def _finish_run(self, report: RunReport) -> None:
        report.feeds = list(self.reports.values())
        with session_scope(self.engine) as session:
            claims.release_all(session, self.run_id)
            run = session.get(Run, self.run_id)
            run.ended_at = utcnow()
            run.counts = report.to_dict()
            run.exit_status = report.exit_status
            run.error = report.fatal
        if self.settings.runs.audit_anchor:
            _write_audit_anchor(self.engine, Path(self.settings.runs.audit_anchor))

    def _feeds(self, only: Iterable[str] | None) -> list[Feed]:
        with session_scope(self.engine) as session:
            sync_config_feeds(session, self.settings.feeds)
            query = select(Feed).where(Feed.enabled == True).order_by(Feed.id)  # noqa: E712
            feeds = list(session.exec(query))
        if only is not None:
            wanted = set(only)
            feeds = [f for f in feeds if f.name in wanted or f.url in wanted]
        return feeds

    def _due_feeds(self, feeds: list[Feed], force: bool) -> list[Feed]:
        """Feeds backing off after errors wait for their time, unless forced; the
        report names each one skipped and when it is due."""
        if force:
            return feeds
        now = utcnow()
        due = []
        for feed in feeds:
            if is_due(feed.next_fetch_at, now):
                due.append(feed)
                continue
            when = feed.next_fetch_at.isoformat(timespec="seconds")
            report = FeedReport(feed.name, feed.url, skipped=f"not due until {when}")
            report.next_fetch_at = when
            self.reports[feed.id] = report
            log.info("feed %s skipped: backing off until %s", feed.name, when)
        return due

    # ------------------------------------------------------------------ feeds

    def _ingest_feeds(self, feeds: list[Feed]) -> None:
        """Fetch and parse the feeds in the pool (each host at most N at a time, by
        the fetcher), and write what each brought on this thread, in feed order."""
        self.progress("feeds", 0, len(feeds))
        feeds = self._claim_feeds(feeds)
        if not feeds:
            return
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="feeds") as pool:
            results = pool.map(self._fetch_feed, feeds)
            for i, (feed, result) in enumerate(zip(feeds, results, strict=True)):
                self.reports[feed.id] = self._ingest_feed(feed, result)
                self.progress("feeds", i + 1, len(feeds))

    def _claim_feeds(self, feeds: list[Feed]) -> list[Feed]:
        """The feeds this run may poll: one another live run is polling is left to it."""
        mine = []
        for feed in feeds:
            with session_scope(self.engine) as session:
                token = claims.claim_feed(session, feed.id, self.run_id, self.lease)
            if token is None:
                report = FeedReport(feed.name, feed.url, skipped=POLLED_ELSEWHERE)
                self.reports[feed.id] = report
                log.info("feed %s skipped: another run is polling it", feed.name)
                continue
            self._feed_tokens[feed.id] = token
            mine.append(feed)
        return mine

    def _wait_for_other_polls(self) -> None:
        """A feed skipped because another run is polling it brings its items when
        that poll is written: wait for it (never past a lease), so that runs started
        together share those items instead of the later ones finding nothing to do."""
        busy = [fid for fid, r in self.reports.items() if r.skipped == POLLED_ELSEWHERE]
        deadline = utcnow() + self.lease
        while busy and utcnow() < deadline:
            with Session(self.engine) as session:
                now = utcnow()
                busy = session.exec(
                    select(Feed.id).where(
                        col(Feed.id).in_(busy),
                        col(Feed.claim_until).is_not(None),
                        col(Feed.claim_until) > now,
                    )
                ).all()
            if busy:
                time.sleep(0.2)

    def _fetch_feed(self, feed: Feed) -> FeedResult:
        """In a worker. One feed that breaks the parser must not stop the run: the
        failure is recorded on the feed like any other."""
        try:
            return fetch_feed(
                feed.url, self.fetcher, etag=feed.etag, last_modified=feed.last_modified
            )
        except Exception as exc:  # noqa: BLE001 - recorded on the feed, logged with traceback
            log.exception("feed %s: unexpected failure", feed.name)
            return FeedResult(
                FetchResult(
                    feed.url, feed.url, error=f"internal error: {type(exc).__name__}: {exc}"
                )
            )

    def _ingest_feed(self, feed: Feed, result: FeedResult) -> FeedReport:
        """One transaction per feed: its fetch record and the items it brings."""
        report = FeedReport(feed.name, feed.url)
        try:
            with session_scope(self.engine) as session:
                if not claims.release_feed(session, feed.id, self._feed_tokens[feed.id]):
                    raise _LostClaim
                self._record_feed_fetch(session, feed, result, report)
                if result.fetch.ok:
                    self._create_items(session, feed, result.entries, report)
        except _LostClaim:
            log.warning("feed %s: its claim ran out and another run took it over", feed.name)
            return FeedReport(feed.name, feed.url, skipped="claim taken over by another run")
        if result.fetch.ok:
            log.info(
                "feed %s: %d entries, %d new%s",
                feed.name,
                report.seen,
                report.new,
                f" (malformed: {result.bozo})" if result.bozo else "",
            )
        return report

    def _record_feed_fetch(
        self, session: Session, feed: Feed, result: FeedResult, report: FeedReport
    ) -> None:
        fetched = result.fetch
        now = utcnow()
        row = session.get(Feed, feed.id)
        row.last_fetched_at = now
        if fetched.ok or fetched.not_modified:
            report.not_modified = fetched.not_modified
            row.last_success_at = now
            row.consecutive_errors = 0
            row.last_error = None
            row.next_fetch_at = None  # due again on the next run
            if fetched.ok:  # a 304 says nothing new about the feed's body
                row.bozo_message = result.bozo
                row.etag = fetched.headers.get("etag")
                row.last_modified = fetched.headers.get("last-modified")
                _record_feed_size(row, result, report)
            report.bozo = row.bozo_message
            return
        report.fetch_error = fetched.error
        row.consecutive_errors += 1
        row.last_error = fetched.error
        row.next_fetch_at = next_poll_after_failure(
            row.consecutive_errors,
            now,
            base_seconds=self.settings.ingest.retry_base_seconds,
            retry_after=fetched.retry_after,
        )
        report.next_fetch_at = row.next_fetch_at.isoformat(timespec="seconds")
        log.warning(
            "feed %s failed (%d in a row, next try %s): %s",
            feed.name,
            row.consecutive_errors,
            report.next_fetch_at,
            fetched.error,
        )

    def _create_items(
        self, session: Session, feed: Feed, entries: list[Entry], report: FeedReport
    ) -> None:
        """An entry seen before (same entry id in this feed, or same canonical URL
        anywhere) is counted as a duplicate; every other entry becomes a `new` item
        with its audit event."""
        if not entries:
            return
        keyed = [(entry, *item_keys(feed.id, entry.entry_id, entry.link)) for entry in entries]
        known_ids = _existing(
            session, Item.entry_id, [e.entry_id for e, _, _ in keyed], Item.feed_id == feed.id
        )
        known_keys = _existing(session, Item.dedup_key, [k for _, _, k in keyed])
        for entry, source_url, dedup_key in keyed:
            report.seen += 1
            if entry.entry_id in known_ids or dedup_key in known_keys:
                report.duplicates += 1
                continue
            known_ids.add(entry.entry_id)
            known_keys.add(dedup_key)
            if self._insert_entry(session, feed, entry, source_url, dedup_key):
                report.new += 1
            else:
                report.duplicates += 1

    def _insert_entry(
        self, session: Session, feed: Feed, entry: Entry, source_url: str | None, dedup_key: str
    ) -> bool:
        text = entry.content_text
        enough = count_words(text) >= self.settings.gates.min_source_words
        use_feed_text = bool(text) and (enough or not self.fetch_pages or not entry.link)
        item = Item(
            dedup_key=dedup_key,
            feed_id=feed.id,
            entry_id=entry.entry_id,
            source_url=source_url,
            original_url=entry.link,
            title=entry.title,
            author=entry.author,
            published_at=entry.published,
        )
        if use_feed_text:
            item.source_text = compose_source(entry.title, text)
            item.word_count = count_words(item.source_text)
            item.text_origin = "feed_content"
        try:
            with session.begin_nested():
                st.create(
                    session,
                    item,
                    actor=self.actor,
                    reason=f"seen in feed {feed.name}",
                    details={
                        "feed": feed.name,
                        "feed_url": feed.url,
                        "entry_id": entry.entry_id,
                        "link": entry.link,
                    },
                )
        except IntegrityError:  # another worker created it a moment ago
            return False
        return True

    def _create_submitted(self, url: str) -> tuple[int, bool]:
        """The item for a submitted URL: (id, True) when new, the known item's id
        and False when the canonical URL was seen before."""
        link = url.strip()
        report = self._report_for(None)
        report.seen += 1
        source_url, dedup_key = item_keys(None, None, link)
        with session_scope(self.engine) as session:
            existing = session.exec(select(Item.id).where(Item.dedup_key == dedup_key)).first()
            if existing is not None:
                report.duplicates += 1
                return existing, False
            item = Item(
                dedup_key=dedup_key,
                source_url=source_url,
                original_url=link,
                claimed_by=self.run_id,  # born claimed: no other run starts on it
                claim_until=utcnow() + self.lease,
            )
            st.create(
                session,
                item,
                actor=self.actor,
                reason="submitted by hand",
                details={"link": link, "command": self.command},
            )
            report.new += 1
            return item.id, True

    # ------------------------------------------------------------------ processing

    def _pending_jobs(self) -> int:
        """Move every `error` item whose retry time has come back to `new`, and count
        the items waiting (for the progress bar: other runs may take some of them).
        Another run may move the same item first: that item is simply theirs."""
        now = utcnow()
        big = (defer(Item.source_text), defer(Item.summary), defer(Item.last_error))
        with session_scope(self.engine) as session:
            due = session.exec(
                select(Item).options(*big).where(Item.status == st.ERROR).order_by(Item.id)
            ).all()
            for item in due:
                if item.next_attempt_at and item.next_attempt_at > now:
                    continue
                try:
                    with session.begin_nested():
                        st.move(
                            session,
                            item,
                            st.NEW,
                            actor=self.actor,
                            reason=f"retry after {item.attempts} failed attempt(s)",
                        )
                except st.Conflict as exc:
                    log.info("item %s: %s; left to that run", item.id, exc)
                    continue
                self._report_for(item.feed_id).retried += 1
            waiting = select(func.count(Item.id)).where(Item.status == st.NEW)
            return session.exec(waiting).one()

    def _claimed_jobs(self) -> Iterator[Job]:
        """Waiting items, claimed a small batch at a time as the workers need them, so
        runs working at once share the backlog instead of each taking all of it."""
        batch = max(1, self.workers)
        feed_urls: dict[int, str] = {}
        while True:
            with session_scope(self.engine) as session:
                claimed = claims.claim_items(session, self.run_id, batch, self.lease)
                if not feed_urls or any(c.feed_id not in feed_urls for c in claimed):
                    feed_urls = dict(session.exec(select(Feed.id, Feed.url)).all())
            if not claimed:
                return
            for c in claimed:
                yield Job(
                    c.item_id,
                    c.version,
                    c.dedup_key,
                    c.source_url,
                    c.title,
                    c.has_text,
                    c.attempts,
                    feed_urls.get(c.feed_id) if c.feed_id else None,
                )

    def _process(self, jobs: Iterable[Job], total: int) -> None:
        """A bounded two-stage pipeline: page fetching and extraction in one pool,
        model calls in another (`max_concurrency`), so pages are read while earlier
        articles are with the model and a run takes as long as the slower of the two,
        not their sum. At most `window` items are in flight (memory stays flat
        however many are waiting); every outcome is committed here, on this thread."""
        self.progress("items", 0, total)
        queue: Iterator[Job] = iter(jobs)
        window = self.workers * 4
        readers = min(self.workers, PAGE_READERS)
        pending: dict[Future[Any], str] = {}  # future -> "source" or "model"
        stop: BackendFailure | None = None
        done = 0
        with (
            ThreadPoolExecutor(max_workers=readers, thread_name_prefix="pages") as pages,
            ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="model") as model,
        ):
            while True:
                while stop is None and len(pending) < window:
                    job = next(queue, None)
                    if job is None:
                        break
                    pending[pages.submit(self._source_safely, job)] = "source"
                if not pending:
                    break
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                ready: list[Outcome] = []  # committed together, in one transaction
                for future in finished:
                    stage = pending.pop(future)
                    if future.cancelled():
                        continue
                    try:
                        result = future.result()
                    except BackendFailure as exc:
                        self._record_calls(exc.item_id, exc.calls)
                        stop = stop or exc
                        result = None
                    if stage == "source" and result is not None and result[1] is not None:
                        if stop is None:  # on to the model; after a stop the item waits
                            pending[model.submit(self._draft_safely, *result)] = "model"
                        continue
                    if result is not None:
                        ready.append(result[0] if stage == "source" else result)
                    else:
                        done += 1
                for start in range(0, len(ready), COMMIT_BATCH):
                    self._commit_batch(ready[start : start + COMMIT_BATCH])
                done += len(ready)
                if finished:
                    self.progress("items", done, max(done, total))
                if stop is not None:
                    # Start nothing new; what is already running finishes and is kept.
                    for future in [f for f in pending if f.cancel()]:
                        pending.pop(future)
        if stop is not None:
            raise stop

    def _source_safely(self, job: Job) -> tuple[Outcome, Article | None]:
        """`prepare_source`, with a bug or a surprise confined to its item: the item
        goes to `error` with the reason (retried, then discarded), the run goes on."""
        try:
            return self.prepare_source(job)
        except Exception as exc:
            return self._unexpected(Outcome(job, st.ERROR), exc), None

    def _draft_safely(self, out: Outcome, article: Article) -> Outcome | None:
        """`prepare_draft`, likewise; a stopped backend stops the run. Once one model
        call has stopped it, a queued item makes no call (None: it stays `new`), even
        before the run's thread gets round to cancelling it (a busy machine)."""
        if self._backend_stopped.is_set():
            return None
        try:
            return self.prepare_draft(out, article)
        except BackendFailure:
            self._backend_stopped.set()
            raise
        except Exception as exc:
            return self._unexpected(Outcome(out.job, st.ERROR, calls=out.calls), exc)

    def _unexpected(self, out: Outcome, exc: Exception) -> Outcome:
        log.error("item %s: unexpected error", out.job.item_id, exc_info=exc)
        reason = f"unexpected error: {type(exc).__name__}: {exc}"
        return self._failed(out, reason, True, "internal")

    def _record_calls(self, item_id: int | None, calls: list[CallRecord]) -> None:
        """Ledger rows for calls whose item was not committed: every call is a row."""
        if not calls:
            return
        with session_scope(self.engine) as session:
            for call in calls:
                session.add(ModelCall.of(call, item_id=item_id, run_id=self.run_id))

    def prepare(self, job: Job) -> Outcome:
        """Everything but the database writes: fetch, gates, duplicate look-ups,
        summary, checks. Runs in a worker (the run itself splits it in two stages)."""
        out, article = self.prepare_source(job)
        return out if article is None else self.prepare_draft(out, article)

    def prepare_source(self, job: Job) -> tuple[Outcome, Article | None]:
        """The article's text: fetched, extracted, through the source gates and the
        duplicate look-ups. (outcome, None) when the item ends here."""
        out = Outcome(job, st.DRAFT)
        gates = self.settings.gates
        modes = gates.all_modes()
        # No request is made for a link that is not an absolute http(s) URL.
        url_result = run_gates(("source_url",), "", job.source_url, "", modes=modes)
        out.verdicts += [("source", r) for r in url_result]
        if any(r.hard_fail for r in url_result):
            return _discard(out, url_result), None
        text = self._stored_text(job) if job.has_text else None
        if text is None:
            text = self._fetch_page(job, out)
            if text is None:
                return out, None
        length = run_gates(
            ("source_length",),
            text,
            job.source_url,
            "",
            modes=modes,
            min_source_words=gates.min_source_words,
        )
        out.verdicts += [("source", r) for r in length]
        if any(r.hard_fail for r in length):
            return _discard(out, length), None
        out.fingerprint = text_fingerprint(text, job.title, *out.titles)
        duplicate = self._duplicate_in_store(out) or self._claim(out)
        if duplicate is not None:
            return _duplicate(out, *duplicate), None
        article = Article(job.dedup_key, out.changes.get("title", job.title), job.source_url, text)
        return out, article

    def prepare_draft(self, out: Outcome, article: Article) -> Outcome:
        """The model's draft of the article, through the draft gates and the checks."""
        job, text = out.job, article.text
        modes = self.settings.gates.all_modes()
        out.changes.summariser = self.summariser.name  # recorded whatever the outcome
        try:
            draft = self.summariser.summarise(article)
        except SummaryFailed as exc:
            out.calls += exc.calls
            return self._failed(out, f"summariser failed: {exc.reason}", exc.transient, "model")
        except BackendUnavailable as exc:
            raise BackendFailure(str(exc), item_id=job.item_id, calls=exc.calls) from None
        out.calls += draft.calls
        out.draft = draft
        out.changes.update(
            headline=draft.headline,
            summary=draft.summary,
            summariser=draft.backend,
            recorded_reply=draft.recorded_reply,
        )
        checks = run_gates(DRAFT_GATES, text, job.source_url, draft.text, modes=modes)
        out.verdicts += [("draft", r) for r in checks]
        if any(r.hard_fail for r in checks):
            return _discard(out, checks)
        return self._model_checks(out, article, draft)

    def _model_checks(self, out: Outcome, article: Article, draft: Draft) -> Outcome:
        """The second line of defence, after the draft gates passed: one check call,
        judged by the pure gates. A check that did not run is recorded as such
        (never a pass); a verified wrong fact discards the item."""
        modes = self.settings.gates.all_modes()
        if all(modes[gate] == "off" for gate in CHECK_GATES):
            return out
        checked = self.checker.check(article, draft.text)
        out.calls += checked.calls
        ran = checked.state == RAN
        results = run_checks(
            article.text,
            draft.text,
            checked.reply,
            modes=modes,
            why_not=checked.reason or "",
            state=checked.state,
            require=self.settings.checks.require,
            transient=checked.transient,
        )
        out.verdicts += [("check", r) for r in results]
        out.details["checks"] = {
            "state": checked.state,
            "checker": checked.checker or self.checker.name,
            "reason": checked.reason,
            "recorded_reply": checked.recorded_reply,
        }
        if not ran:
            out.details["checks_not_run"] = f"{checked.state} ({checked.reason})"
        if any(r.hard_fail for r in results):
            return _discard(out, results)
        return out

    def _fetch_page(self, job: Job, out: Outcome) -> str | None:
        """The article text from its page, or None with the outcome set: refused,
        disallowed by robots.txt, failed (transient or not), or not a web page."""
        if not self.fetch_pages:
            _failed_permanently(out, "the feed carries no text and page fetching is off", "fetch")
            return None
        result = self.fetcher.get_page(job.source_url, trusted=self._trusted(job))
        out.changes.update(fetch_status=result.status, fetch_bytes=len(result.content))
        fetch_notes = _fetch_notes(result)
        if fetch_notes:
            out.details["fetch"] = fetch_notes
        if result.error:
            if result.disallowed:
                _failed_permanently(out, result.error, "robots")
            elif result.refused:  # the error reads "refused: <why>"
                _failed_permanently(out, f"link {result.error}", "refused")
            else:
                self._failed(
                    out,
                    f"page fetch failed: {result.error}",
                    result.transient,
                    "fetch",
                    retry_after=result.retry_after,
                )
            return None
        content_type = result.headers.get("content-type", "").lower()
        if content_type and not any(kind in content_type for kind in PAGE_TYPES):
            _failed_permanently(
                out, f"the link is {content_type.split(';')[0]}, not a page", "fetch"
            )
            return None
        try:
            extracted = extract_page(
                result.content, result.final_url, max_bytes=self.settings.ingest.max_extract_bytes
            )
        except Exception as exc:  # noqa: BLE001 - one odd page must not stop the run
            log.exception("item %s: extraction failed", job.item_id)
            _failed_permanently(out, f"text extraction failed: {type(exc).__name__}", "fetch")
            return None
        if extracted.cut:
            out.details.setdefault("fetch", {})["extract_cut_at_bytes"] = (
                self.settings.ingest.max_extract_bytes
            )
        title = job.title or extracted.title
        text = compose_source(title, extracted.text)
        out.titles = [t for t in (extracted.title,) if t]
        out.aliases = url_aliases(job.source_url, result.final_url, extracted.canonical_url)
        out.changes.update(
            source_text=text,
            word_count=count_words(text),
            text_origin="page",
            title=title,
        )
        if out.aliases:
            duplicate = self._duplicate_in_store(out)
            if duplicate is not None:
                _duplicate(out, *duplicate)
                return None
        return text

    def _stored_text(self, job: Job) -> str | None:
        """The item's source text, read by the worker when it starts on the item (a
        read-only look-up): memory holds the texts of the window in flight only."""
        with Session(self.engine) as session:
            query = select(Item.source_text).where(Item.id == job.item_id)
            return session.exec(query).first()

    def _trusted(self, job: Job) -> bool:
        """Whether the allow-list (`ingest.allow_private`) applies to the item's page:
        an editor's own tip, or a link in a feed whose own host is allow-listed (an
        intranet feed linking intranet pages). A public feed's link never reaches a
        private address, whatever the allow-list says."""
        return job.feed_url is None or self.fetcher.vouches_for(job.feed_url)

    # ------------------------------------------------------------------ duplicates

    def _claim(self, out: Outcome) -> tuple[int, str] | None:
        """First item of this run to hold a text owns it; a later one is its duplicate."""
        with self._claims_lock:
            owner = self._claims.setdefault(out.fingerprint, out.job.item_id)
        if owner != out.job.item_id:
            return owner, "same text"
        return None

    def _duplicate_in_store(self, out: Outcome) -> tuple[int, str] | None:
        """A read-only look-up from a worker, so that no model call is spent on a
        known story; `_commit` repeats it inside the writing transaction."""
        with Session(self.engine) as session:
            return find_duplicate(session, out.job.item_id, out.aliases, out.fingerprint)

    # ------------------------------------------------------------------ outcomes

    def _failed(
        self,
        out: Outcome,
        reason: str,
        transient: bool,
        kind: str,
        *,
        retry_after: float | None = None,
    ) -> Outcome:
        """A transient failure goes to `error` for a later retry, until the attempts
        run out; anything else discards the item with the reason."""
        if not transient:
            return _failed_permanently(out, reason, kind)
        attempts = out.job.attempts + 1
        limit = self.settings.summarise.max_attempts
        out.changes.update(attempts=attempts, last_error=reason)
        if attempts >= limit:
            what = {"model": "model", "fetch": "fetch"}.get(kind, "processing")
            out.changes.next_attempt_at = None
            return _failed_permanently(out, f"{what} failed {attempts} times: {reason}", kind)
        base = self.settings.summarise.retry_base_seconds
        delay = min(timedelta(seconds=base * 2 ** (attempts - 1)), MAX_BACKOFF)
        delay *= random.uniform(0.8, 1.0)  # after the cap, so items do not all wake at once
        if retry_after is not None:  # the server said when; never sooner than that
            delay = max(delay, timedelta(seconds=min(retry_after, MAX_BACKOFF.total_seconds())))
        out.changes.next_attempt_at = utcnow() + delay
        out.to_status, out.reason = st.ERROR, reason
        return out

    def _commit_batch(self, outs: list[Outcome]) -> None:
        """The outcomes that finished together, in one transaction (one commit, one
        flush to disk for all of them: the writer thread keeps up with more workers).
        Nothing is counted or reported before the commit, so a crash loses only what
        was never reported, and those items are still `new` under this run's claim
        (another run takes them over when it runs out). A `Conflict` on one of them
        rolls the transaction back; they are then committed one at a time, so the
        other items keep their results."""
        if len(outs) == 1:
            self._commit(outs[0])
            return
        try:
            with session_scope(self.engine) as session:
                # Every item's rows first, then the moves: the moves append to the
                # audit chain, whose lock is held from the first append to the commit
                # (it serialises writers across runs), so it is taken as late as can be.
                moves = [self._write_outcome(session, out) for out in outs]
                written = [move() for move in moves]
        except st.Conflict:
            for out in outs:
                self._commit(out)
            return
        for out, (feed_id, reason) in zip(outs, written, strict=True):
            self._count(out, feed_id, reason)

    def _commit(self, out: Outcome) -> None:
        try:
            with session_scope(self.engine) as session:
                feed_id, reason = self._write_outcome(session, out)()
        except st.Conflict as exc:
            # Another worker (or machine) finished this item first. Its result
            # stands; the calls this worker made are still written to the ledger.
            log.warning("item %s: %s; this run's result is dropped", out.job.item_id, exc)
            with session_scope(self.engine) as session:
                for call in out.calls:
                    session.add(ModelCall.of(call, item_id=out.job.item_id, run_id=self.run_id))
            return
        self._count(out, feed_id, reason)

    def _write_outcome(
        self, session: Session, out: Outcome
    ) -> Callable[[], tuple[int | None, str | None]]:
        """The item's verdicts and ledger rows, in the caller's transaction, and its
        move to make next (which returns the item's feed and the move's reason).
        Writing it again after a rollback gives the same result."""
        job = out.job
        item = session.get(Item, job.item_id)
        if out.to_status != st.DISCARDED and (out.fingerprint or out.aliases):
            # Another worker or machine may have stored the same story since the
            # worker looked: the database inside this transaction has the last word.
            duplicate = find_duplicate(session, item.id, out.aliases, out.fingerprint)
            if duplicate is not None:
                _duplicate(out, *duplicate)
        if out.fingerprint and out.discard_kind != "duplicate":
            out.changes.content_hash = out.fingerprint
        out.changes.update(claimed_by=None, claim_until=None)  # the claim ends here
        for stage, result in out.verdicts:
            session.add(
                GateVerdict.from_result(result, item_id=item.id, stage=stage, run_id=self.run_id)
            )
        for call in out.calls:
            session.add(ModelCall.of(call, item_id=item.id, run_id=self.run_id))
        failed = [r.gate for _, r in out.verdicts if r.hard_fail]
        flagged = [r.gate for _, r in out.verdicts if r.flagged and not r.not_run]
        reason = out.reason
        if out.to_status == st.DRAFT:
            reason = "all hard gates passed" + (
                f"; flagged: {', '.join(flagged)}" if flagged else ""
            )
            if out.details.get("checks_not_run"):
                reason += f"; model checks {out.details['checks_not_run']}"
        details = dict(out.details)
        if out.to_status == st.DISCARDED and out.discard_kind:
            details["discard_kind"] = out.discard_kind  # for stats, not parsed from text
        if failed or flagged:
            details.update(failed_gates=failed, flagged_gates=flagged)

        def move() -> tuple[int | None, str | None]:
            st.move(
                session,
                item,
                out.to_status,
                actor=self.actor,
                reason=reason,
                expected_version=job.version,
                changes=out.changes,
                details=details or None,
                discard_kind=out.discard_kind if out.to_status == st.DISCARDED else None,
            )
            return item.feed_id, reason

        return move

    def _count(self, out: Outcome, feed_id: int | None, reason: str | None) -> None:
        """A committed outcome in the run's report and log."""
        item_id = out.job.item_id
        report = self._report_for(feed_id)
        if out.draft is not None and out.draft.recorded_reply:
            report.recorded_replies += 1
        check_state = (out.details.get("checks") or {}).get("state")
        report.checks_not_run += check_state == NOT_RUN
        report.checks_failed += check_state == FAILED
        if out.to_status == st.DRAFT:
            report.drafts += 1
        elif out.to_status == st.ERROR:
            report.errors += 1
        else:
            report.discarded[out.discard_kind or "other"] += 1
        log.info(
            "item %s -> %s%s",
            item_id,
            out.to_status,
            f": {reason}" if reason else "",
            extra={"item_id": item_id, "status": out.to_status},
        )

    def _report_for(self, feed_id: int | None) -> FeedReport:
        key = feed_id or 0
        if key not in self.reports:
            with Session(self.engine) as session:
                feed = session.get(Feed, feed_id) if feed_id else None
            name, url = (feed.name, feed.url) if feed else ("(submitted)", "")
            self.reports[key] = FeedReport(name, url)
        return self.reports[key]


# --------------------------------------------------------------------------- helpers


def _write_audit_anchor(engine: Engine, path: Path) -> None:
    """The log's head, outside the database, for `audit --verify` to compare with.
    A file that cannot be written is logged: the run's work is already kept."""
    try:
        audit_chain.write_anchor(path, audit_chain.head(engine))
    except OSError as exc:
        log.error("audit anchor %s not written: %s", path, exc.strerror or exc)


def find_duplicate(
    session: Session, item_id: int, aliases: list[str], fingerprint: str | None
) -> tuple[int, str] | None:
    """The item this one duplicates, with why: an EARLIER item whose URL is one of
    this page's other URLs (earlier only, so two pages that name each other as
    canonical cannot discard each other), else another item with the same text."""
    for alias in aliases:
        _, key = item_keys(None, None, alias)  # the unique, indexed key that URL would have
        found = session.exec(
            select(Item.id).where(Item.dedup_key == key, Item.id < item_id).limit(1)
        ).first()
        if found is not None:
            return found, f"same canonical URL {alias}"
    if fingerprint:
        found = session.exec(
            select(Item.id)
            .where(Item.content_hash == fingerprint, Item.id != item_id)
            .order_by(Item.id)
            .limit(1)
        ).first()
        if found is not None:
            return found, "same text"
    return None


def _record_feed_size(row: Feed, result: FeedResult, report: FeedReport) -> None:
    """How many entries the poll read, and whether the body was cut by its cap: a
    cut feed's later entries were never seen, which the run and `feeds list` say."""
    row.entries_read = report.entries_read = len(result.entries)
    row.truncated = report.truncated = result.truncated
    if result.truncated:
        row.etag = row.last_modified = None  # a 304 next time would hide the cut
        log.warning(
            "feed %s cut off at max_feed_bytes after %d entries: later entries were not read",
            row.name,
            len(result.entries),
        )


def _existing(session: Session, column: Any, values: list[str], *where: Any) -> set[str]:
    """Which of `values` the column already holds, asked in chunks."""
    found: set[str] = set()
    unique = sorted(set(values))
    for start in range(0, len(unique), IN_CHUNK):
        chunk = unique[start : start + IN_CHUNK]
        found.update(session.exec(select(column).where(col(column).in_(chunk), *where)).all())
    return found


def _job(item: Item, feed_url: str | None) -> Job:
    return Job(
        item.id,
        item.version,
        item.dedup_key,
        item.source_url,
        item.title,
        item.source_text is not None,
        item.attempts,
        feed_url,
    )


def _fetch_notes(result: FetchResult) -> dict[str, Any]:
    """What the audit should know about a page fetch beyond its status."""
    notes: dict[str, Any] = {}
    if result.redirects:
        notes["redirects"] = result.redirects
        notes["final_url"] = result.final_url
    if result.truncated:
        notes["truncated"] = True
        notes["kept_bytes"] = len(result.content)
    return notes


def _discard(out: Outcome, results: list[GateResult]) -> Outcome:
    failed = [r for r in results if r.hard_fail]
    out.to_status = st.DISCARDED
    out.reason = "; ".join(f"{r.gate}: {r.verdict.reason}" for r in failed)
    out.discard_kind = failed[0].gate
    return out


def _duplicate(out: Outcome, original: int, why: str) -> Outcome:
    """Discarded as a duplicate, pointing at the item that carries the story. A
    model call already made stays in the ledger; the draft is dropped."""
    out.to_status = st.DISCARDED
    out.reason = f"duplicate of item {original} ({why})"
    out.discard_kind = "duplicate"
    out.details["duplicate_of"] = original
    out.draft = None
    out.changes.unset("headline", "summary", "summariser", "recorded_reply", "next_attempt_at")
    return out


def _failed_permanently(out: Outcome, reason: str, kind: str) -> Outcome:
    out.to_status, out.reason, out.discard_kind = st.DISCARDED, reason, kind
    return out


def sync_config_feeds(session: Session, feeds: list[FeedSettings]) -> None:
    """Feeds declared in config.toml are upserted into the feeds table on every run.
    An INSERT ... ON CONFLICT DO NOTHING: runs starting at once on a fresh database
    all declare the same feeds, and only one row each may come of it."""
    if not feeds:
        return
    dialect = session.get_bind().dialect.name
    insert = {"postgresql": pg_insert, "sqlite": sqlite_insert}[dialect]
    for declared in feeds:
        row = {
            "url": declared.url,
            "name": declared.name or declared.url,
            "enabled": declared.enabled,
            "origin": "config",
        }
        defaults = Feed(**row)  # the model's defaults for every other column
        values = {c: getattr(defaults, c) for c in Feed.__table__.c.keys() if c != "id"}
        session.execute(
            insert(Feed.__table__).values(**values).on_conflict_do_nothing(index_elements=["url"])
        )
    for declared in feeds:
        row = session.exec(select(Feed).where(Feed.url == declared.url)).one()
        # Written only when it changes: a row being polled stays unlocked.
        if row.enabled != declared.enabled:
            row.enabled = declared.enabled
        if declared.name and row.name != declared.name:
            row.name = declared.name
    session.flush()


def add_feed(session: Session, url: str, name: str | None = None) -> Feed:
    existing = session.exec(select(Feed).where(col(Feed.url) == url)).first()
    if existing is not None:
        return existing
    feed = Feed(url=url, name=name or url, origin="cli")
    session.add(feed)
    session.flush()
    return feed
