"""The run loop: a run's row from start to end, the feeds polled (intake.py), then
every waiting item through the two worker stages (source.py, then draft.py) and
the writer (writer.py), and the re-checks of earlier drafts.

Network and model work runs in thread pools: page fetching in one, model calls in
another (`max_concurrency`), so pages are fetched while earlier articles are with
the model. The CPU work runs on the run's thread, a batch at a time, back to back:
the pages fetched are extracted together before their look-up, and a summariser
that makes no network call (`drafts_here`) drafts them together after it (issue
24, session 16: interleaved with the other stages' work, page by page, the same
work cost 17-28% more CPU). Every database write happens on the run's thread, in
short transactions. A summariser that cannot work at all (`BackendFailure`)
stops the run in `_process`: the place that decides when the model is given up
on for this run.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import Any

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import defer
from sqlmodel import Session, select

from copydesk.config import Settings
from copydesk.services import recheck
from copydesk.services.heartbeat import Heartbeat, start_run_row, take_sqlite_slot
from copydesk.services.pipeline import writer
from copydesk.services.pipeline.draft import DraftStage
from copydesk.services.pipeline.handoff import BackendFailure, Job, Outcome, failed, job_of
from copydesk.services.pipeline.intake import Intake
from copydesk.services.pipeline.source import Fetched, SourceStage
from copydesk.services.pipeline.state import RunState
from copydesk.services.reports import FeedReport, RunReport
from ingest.fetch import Fetcher
from store import audit_chain, claims, ledger, search
from store import status as st
from store.db import describe_error, session_scope
from store.models import Feed, Item, Run, utcnow
from summarise.base import Article, LeaseLost, Summariser
from summarise.checks import Checker, NoChecker

log = logging.getLogger("copydesk.pipeline")

PAGE_READERS = 4  # threads fetching and extracting pages while the model works
# Pages read are looked up in the store (is their story known already?) together, up
# to this many in one statement, and never more than half the run's window; a page
# waits at most LOOKUP_LINGER seconds for others to join its look-up, and none waits
# once no other page is being read (issue 24: one statement a page cost 0.72 ms of
# CPU an article on PostgreSQL, in SQLAlchemy's and the driver's machinery).
LOOKUP_BATCH = 16
LOOKUP_LINGER = 0.2
# Waiting items are claimed this many at a time, or the run's window when smaller (issue
# 24, session 14: `max_concurrency` at a time, 4 for the extractive backend, cost it 0.2 ms
# of CPU an article in claims; a window at a time, 64 at concurrency 16, made the model
# path's runs on PostgreSQL 0.3-0.5 s slower in four same-run rounds of four, unexplained).
CLAIM_BATCH = 16
Progress = Callable[[str, int, int], None]  # (phase, done, total)


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
        self.progress = progress or (lambda phase, done, total: None)
        self.state = RunState(settings, engine, command)
        self.intake = Intake(
            self.state,
            fetcher,
            fetch_pages=fetch_pages,
            workers=self.workers,
            progress=self.progress,
        )
        self.source = SourceStage(self.state, fetcher, fetch_pages=fetch_pages)
        self.drafts = DraftStage(self.state, summariser, self.checker)
        self.writer = writer.Writer(self.state, counts=self._counts_so_far)
        # A summariser and a checker that make no network call (`local`: the extractive
        # one, no model checks) draft on this thread, back to back after their pages'
        # look-up (`_process`): on model threads their CPU work only interleaved with
        # the pages' (issue 24, session 16).
        self.drafts_here = bool(
            getattr(summariser, "local", False) and getattr(self.checker, "local", False)
        )
        self._backend_stopped = threading.Event()  # set by the model call that stops the run
        self._started = recheck.clock()  # set again when the run starts (its deadline)

    @property
    def run_id(self) -> int | None:
        return self.state.run_id

    @run_id.setter
    def run_id(self, value: int | None) -> None:
        self.state.run_id = value

    @property
    def reports(self) -> dict[int, FeedReport]:
        return self.state.reports

    @property
    def actor(self) -> str:
        return self.state.actor

    @property
    def workers(self) -> int:
        return self.settings.summarise.max_concurrency

    @property
    def window(self) -> int:
        """The most items the run has in flight at once (`_process`): memory stays flat
        however many are waiting."""
        return self.workers * 4

    # ------------------------------------------------------------------ the run

    def run(self, only_feeds: Iterable[str] | None = None, *, force: bool = False) -> RunReport:
        """Poll the feeds that are due (all of them with `force`), then work through
        every `new` item and every `error` item whose retry time has come."""
        with self._recorded_run() as report:
            feeds = self.intake.feeds(only_feeds)
            due = self.intake.due_feeds(feeds, force)
            self.intake.ingest_feeds(due)
            self.intake.wait_for_other_polls()
            total = self._pending_jobs()
            self._process(self._claimed_jobs(), total)
            self.recheck(report)
        return report

    def recheck_only(self, *, failed_too: bool = False) -> RunReport:
        """A run that only re-checks (`copydesk recheck [--failed]`)."""
        with self._recorded_run() as report:
            self.recheck(report, failed_too=failed_too)
        return report

    def recheck(self, report: RunReport, *, failed_too: bool = False) -> None:
        """Re-check the drafts whose model checks failed for a passing reason (with
        `failed_too`, for any reason: copydesk/services/recheck.py); what it did
        goes in the run's report."""
        done = recheck.recheck_drafts(
            self.engine,
            self.settings,
            self.checker,
            actor=self.actor,
            run_id=self.run_id,
            failed_too=failed_too,
            deadline=self._started + self.settings.runs.deadline_seconds,
        )
        if done.attempted or done.dropped or done.deferred:
            report.rechecks = done.to_dict()

    def submit(self, url: str) -> tuple[RunReport, int, bool]:
        """One article by hand (an editor's tip), through the same path as a feed
        entry: (report, item id, whether the item is new). A URL already known is
        not processed again."""
        item_id, created = 0, False
        with self._recorded_run() as report:
            item_id, created = self.intake.create_submitted(url)
            if created:
                with Session(self.engine) as session:
                    self._process([job_of(session.get(Item, item_id), None)], 1)
        return report, item_id, created

    @contextmanager
    def _recorded_run(self) -> Iterator[RunReport]:
        """A run row from start to end, whatever happens. A stopped backend is
        recorded and the run returns; anything else (the database went away, a
        bug; an item's own failure never gets here) is recorded and re-raised,
        for the caller to report in one line."""
        report = self._start_run()
        heartbeat = Heartbeat(self.engine, self.run_id, self.state.lease, self._counts_so_far)
        try:
            with heartbeat:
                yield report
        except BackendFailure as exc:
            report.fatal = str(exc)
            if exc.count_waiting:
                report.fatal += f"; {self._waiting()} items wait"
            log.error("run %s stopped: %s", self.run_id, report.fatal)
        except Exception as exc:
            report.fatal = f"run crashed: {describe_error(exc)}"  # no SQL, no parameters
            raise
        finally:
            self._finish_run(report)

    def _waiting(self) -> int:
        """Items waiting for the model: `new`, or in `error` for a retry."""
        with Session(self.engine) as session:
            waiting = select(func.count(Item.id)).where(Item.status.in_((st.NEW, st.ERROR)))
            return session.exec(waiting).one()

    def _start_run(self) -> RunReport:
        """The run's row. On SQLite a `run` first waits for its turn (one at a time);
        `AnotherRunInProgress` says when the wait ran out."""
        name = self.summariser.name
        self._started = recheck.clock()  # the run's deadline counts from here
        if self.command == "run" and self.engine.dialect.name == "sqlite":
            wait = self.settings.runs.wait_seconds
            self.run_id = take_sqlite_slot(
                self.engine, self.command, name, lease=self.state.lease, wait=wait
            )
        else:
            self.run_id = start_run_row(self.engine, self.command, name)
        log.info("run %s started with summariser %s", self.run_id, name)
        self._settle_calls_in_flight()
        return RunReport(self.run_id, name)

    def _settle_calls_in_flight(self) -> None:
        """Ledger rows a dead run left in flight become "outcome unknown", said once."""
        with session_scope(self.engine) as session:
            settled, estimate = ledger.settle_unknown(session, self.state.lease)
        if settled:
            log.warning("%s", ledger.describe_unknown(settled, estimate))

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
        self._merge_search_index()
        if self.settings.runs.audit_anchor:
            _write_audit_anchor(self.engine, Path(self.settings.runs.audit_anchor))

    def _merge_search_index(self) -> None:
        """The full-text index merged after the run's commits (store/search.py
        `merge_index`); a failure is said, and the run stands as recorded."""
        try:
            search.merge_index(self.engine)
        except SQLAlchemyError as exc:
            log.warning(
                "search index not merged after run %s: %s", self.run_id, describe_error(exc)
            )

    # ------------------------------------------------------------------ items

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
                self.state.report_for(item.feed_id).retried += 1
            waiting = select(func.count(Item.id)).where(Item.status == st.NEW)
            return session.exec(waiting).one()

    def _claimed_jobs(self) -> Iterator[Job]:
        """Waiting items, claimed CLAIM_BATCH at a time (or the run's window, when
        smaller) as the workers need them, so runs working at once share the backlog
        instead of each taking all of it."""
        batch = max(1, min(CLAIM_BATCH, self.window))
        feed_urls: dict[int, str] = {}
        while True:
            with session_scope(self.engine) as session:
                claimed = claims.claim_items(session, self.run_id, batch, self.state.lease)
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
                    c.language,
                    True,
                )

    def _process(self, jobs: Iterable[Job], total: int) -> None:
        """A bounded two-stage pipeline: page fetching in one pool (the pages then
        read here, back to back), model calls in another (`max_concurrency`; here,
        back to back, when the summariser waits on nothing), so pages are fetched
        while earlier articles are with the model and a run takes as long as the slower of the two,
        not their sum. Between the two, the pages read wait to be looked up in the
        store together (`_look_up`). At most `window` items are in flight (memory
        stays flat however many are waiting); every outcome is committed here, on
        this thread, by the writer. A `BackendFailure` from the model stage stops the
        run: nothing new starts, what is running finishes and is kept."""
        self.progress("items", 0, total)
        queue: Iterator[Job] = iter(jobs)
        window = self.window
        readers = min(self.workers, PAGE_READERS)
        pending: dict[Future[Any], str] = {}  # future -> "source" or "model"
        # Each future puts itself here when it finishes or is cancelled (`_watch`): the
        # loop hears of one finished stage at a time, where `concurrent.futures.wait`
        # installed and removed a waiter on every pending future at every call (issue
        # 24, session 14: 0.28 ms of CPU an article at concurrency 16, 64 in flight).
        finishing: SimpleQueue[Future[Any]] = SimpleQueue()
        stop: BackendFailure | None = None
        done = 0
        # Pages fetched, waiting to be read back to back (`_read_safely`), then pages
        # read, waiting for their look-up together, and when the first was fetched.
        fetched: list[Fetched] = []
        held: list[tuple[Outcome, Article]] = []
        held_since = 0.0
        look_up_at = max(1, min(LOOKUP_BATCH, window // 2))
        # With a model, new items are let in once that many places of the window are
        # free, together, so that their pages are fetched together, read back to back
        # and looked up in one statement, as at the run's start. Let in a place at a
        # time, as each item finished, they came one to four at a time once the model
        # threads had drifted out of step (issue 24, session 17: after the first 40 s
        # of a 3,200-article model run, look-ups of 3-4 pages, not 15, and each page
        # read 15% dearer; a 320-article run ends about then). The model threads keep
        # their work: at least half the window, twice their number, stays in flight.
        # Drafted here (`drafts_here`), items finish in the run's own batches already,
        # and a place is filled as soon as it is free, as before.
        let_in_at = 1 if self.drafts_here else look_up_at
        # Outcomes waiting for their commit, and when the first of them finished: they
        # are committed together once COMMIT_LINGER has passed since (writer.py).
        ready: list[Outcome] = []
        since = 0.0
        with (
            ThreadPoolExecutor(max_workers=readers, thread_name_prefix="pages") as pages,
            ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="model") as model,
        ):
            while True:
                # The window refilled once `let_in_at` places are free (see above).
                in_flight = len(pending) + len(fetched) + len(held)
                if stop is None and window - in_flight >= let_in_at:
                    for job in itertools.islice(queue, window - in_flight):
                        _watch(pending, finishing, pages.submit(self._fetch_safely, job), "source")
                looked_up = (
                    (fetched or held)
                    and stop is None
                    and (
                        len(fetched) + len(held) >= look_up_at
                        or "source" not in pending.values()  # no other page is coming
                        or time.monotonic() - held_since >= LOOKUP_LINGER
                    )
                )
                if looked_up:
                    # The pages fetched, read back to back (extraction, source gates).
                    for read in [self._read_safely(page) for page in fetched]:
                        if read[1] is None:  # the item ends here
                            since = since if ready else time.monotonic()
                            ready.append(read[0])
                        else:
                            held.append(read)
                    fetched = []
                    for out, article in self._look_up(held) if held else []:
                        if article is None:  # a known story: a duplicate, ready to commit
                            since = since if ready else time.monotonic()
                            ready.append(out)
                        else:  # back to back too, on this thread, when they do not wait
                            drafting = (
                                _done_here(self._draft_safely, out, article)
                                if self.drafts_here
                                else model.submit(self._draft_safely, out, article)
                            )
                            _watch(pending, finishing, drafting, "model")
                    held = []
                if not pending and not ready:  # (pages held after a stop wait for a later run)
                    break
                # Outcomes or pages waiting: wait for more only until the first lingered.
                now, lingers = time.monotonic(), []
                if ready:
                    lingers.append(since + writer.COMMIT_LINGER - now)
                if (fetched or held) and stop is None:
                    lingers.append(held_since + LOOKUP_LINGER - now)
                timeout = max(0.0, min(lingers)) if lingers else None
                finished = _finished(finishing, timeout) if pending else []
                for future in finished:
                    stage = pending.pop(future, None)
                    if stage is None or future.cancelled():  # (popped when cancelled)
                        continue
                    try:
                        result = future.result()
                    except BackendFailure as exc:
                        self.writer.record_calls(exc.item_id, exc.calls)
                        stop = stop or exc
                        result = None
                    except LeaseLost as exc:  # the item is another run's now: no outcome
                        log.warning("%s", exc)
                        self.writer.record_calls(exc.item_id, exc.calls)
                        result = None
                    if stage == "source":
                        if stop is None:  # on to be read and looked up with others
                            held_since = held_since if fetched or held else time.monotonic()
                            fetched.append(result)
                            continue
                        result = self._read_safely(result)
                        if result[1] is not None:  # after a stop the item waits
                            continue
                    if stage == "model" and result is not None and result.stop is not None:
                        stop = stop or result.stop
                    if result is not None:
                        since = since if ready else time.monotonic()
                        ready.append(result[0] if stage == "source" else result)
                    else:
                        done += 1
                if ready and (
                    stop is not None
                    or not (pending or fetched or held)  # nothing else in flight
                    or len(ready) >= writer.COMMIT_BATCH
                    or time.monotonic() - since >= writer.COMMIT_LINGER
                ):
                    for start in range(0, len(ready), writer.COMMIT_BATCH):
                        self.writer.commit_batch(ready[start : start + writer.COMMIT_BATCH])
                    done += len(ready)
                    ready = []
                if finished or looked_up:
                    self.progress("items", done, max(done, total))
                if stop is not None:
                    # Start nothing new; what is already running finishes and is kept: the
                    # pages fetched are read, those that end here committed, the others
                    # wait for a later run.
                    for future in [f for f in pending if f.cancel()]:
                        pending.pop(future)
                    for out, article in [self._read_safely(page) for page in fetched]:
                        if article is None:
                            since = since if ready else time.monotonic()
                            ready.append(out)
                    fetched = []
        if stop is not None:
            raise stop

    def _fetch_safely(self, job: Job) -> Fetched:
        """The source stage's network part (`SourceStage.fetch`), on a page-reader
        thread, with a bug or a surprise confined to its item: the item goes to
        `error` with the reason (retried, then discarded), the run goes on."""
        try:
            return self.source.fetch(job)
        except Exception as exc:
            return Fetched(self._unexpected(Outcome(job, st.ERROR), exc), ended=True)

    def _read_safely(self, fetched: Fetched) -> tuple[Outcome, Article | None]:
        """The rest of the source stage but for its look-up in the store (`_look_up`):
        the page's extraction and the source gates, on the run's thread; a failure
        confined to its item as in `_fetch_safely`."""
        job = fetched.out.job
        try:
            return self.source.read(job, fetched)
        except Exception as exc:
            return self._unexpected(Outcome(job, st.ERROR), exc), None

    def _look_up(
        self, reads: list[tuple[Outcome, Article]]
    ) -> list[tuple[Outcome, Article | None]]:
        """The pages' look-up in the store, together (`SourceStage.look_up`); if it
        fails, each of them fails as `_read_safely` fails one item."""
        try:
            return self.source.look_up(reads)
        except Exception as exc:
            return [(self._unexpected(Outcome(out.job, st.ERROR), exc), None) for out, _ in reads]

    def _draft_safely(self, out: Outcome, article: Article) -> Outcome | None:
        """The draft stage, likewise; a stopped backend stops the run. Once one model
        call has stopped it, a queued item makes no call (None: it stays `new`), even
        before the run's thread gets round to cancelling it (a busy machine)."""
        if self._backend_stopped.is_set():
            return None
        try:
            done = self.drafts.prepare(out, article)
            if done.stop is not None:
                self._backend_stopped.set()
            return done
        except BackendFailure:
            self._backend_stopped.set()
            raise
        except LeaseLost:
            raise
        except Exception as exc:
            return self._unexpected(Outcome(out.job, st.ERROR, calls=out.calls), exc)

    def _unexpected(self, out: Outcome, exc: Exception) -> Outcome:
        log.error("item %s: unexpected error", out.job.item_id, exc_info=exc)
        reason = f"unexpected error: {type(exc).__name__}: {exc}"
        return failed(out, reason, True, "internal", limits=self.settings.summarise)


def _watch(
    pending: dict[Future[Any], str],
    finishing: SimpleQueue[Future[Any]],
    future: Future[Any],
    stage: str,
) -> None:
    """`future` pending for `stage`, put in `finishing` when it finishes or is cancelled
    (a done callback runs then, or at once if it is done already, in the thread that
    finished it: https://docs.python.org/3/library/concurrent.futures.html#concurrent.futures.Future.add_done_callback)."""
    pending[future] = stage
    future.add_done_callback(finishing.put)


def _done_here(call: Callable[..., Any], *args: Any) -> Future[Any]:
    """`call(*args)` made on this thread, as a finished future: the run loop takes its
    result (or its exception) as it takes a pool's."""
    future: Future[Any] = Future()
    try:
        future.set_result(call(*args))
    except Exception as exc:  # noqa: BLE001 - handed to the loop, as a pool would
        future.set_exception(exc)
    return future


def _finished(finishing: SimpleQueue[Future[Any]], timeout: float | None) -> list[Future[Any]]:
    """The futures finished since the last call, in the order they finished, waiting up
    to `timeout` seconds (None: for ever) for the first; none if none finished by then."""
    try:
        finished = [finishing.get(timeout=timeout)]
    except Empty:
        return []
    while not finishing.empty():
        finished.append(finishing.get_nowait())
    return finished


def _write_audit_anchor(engine: Engine, path: Path) -> None:
    """The log's head, outside the database, for `audit --verify` to compare with.
    A file that cannot be written is logged: the run's work is already kept."""
    try:
        audit_chain.advance_anchor(
            path, audit_chain.head(engine), audit_chain.database_of(engine.url)
        )
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or exc  # a ValueError has none
        log.error("audit anchor %s not written: %s", path, reason)
