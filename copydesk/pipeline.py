"""The pipeline: walks every item through ingest -> source gates -> summarise ->
draft gates -> store, and accounts for every entry it sees.

Network and model work (page fetches, summaries) runs in a thread pool; every
database write happens on the calling thread, one short transaction per item,
so a crash loses at most the item in flight, and that item is still `new` in
the database and is picked up by the next run.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from copydesk.config import FeedSettings, Settings
from guards.registry import DRAFT_GATES, GateResult, run_gates
from guards.source import count_words
from ingest.extract import extract_page
from ingest.feeds import Entry, FeedResult, fetch_feed
from ingest.fetch import Fetcher
from ingest.urls import canonical_url
from store import status as st
from store.db import session_scope
from store.models import Feed, GateVerdict, Item, ModelCall, Run, utcnow
from summarise.base import Article, CallRecord, Draft, Summariser, SummaryFailed

log = logging.getLogger("copydesk.pipeline")

MAX_BACKOFF = timedelta(days=1)
Progress = Callable[[str, int, int], None]  # (phase, done, total)


class BackendFailure(RuntimeError):
    """The summariser cannot work at all (key refused, model rejects temperature 0):
    the run stops and untouched items stay `new` for the next run."""


# --------------------------------------------------------------------------- reports


@dataclass
class FeedReport:
    name: str
    url: str
    seen: int = 0
    new: int = 0
    duplicates: int = 0
    drafts: int = 0
    discarded: Counter[str] = field(default_factory=Counter)  # by gate or reason kind
    errors: int = 0
    retried: int = 0
    recorded_replies: int = 0
    fetch_error: str | None = None
    not_modified: bool = False
    bozo: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "url": self.url,
            "seen": self.seen,
            "new": self.new,
            "duplicates": self.duplicates,
            "drafts": self.drafts,
            "discarded": sum(self.discarded.values()),
            "discarded_by": dict(sorted(self.discarded.items())),
            "errors": self.errors,
            "retried": self.retried,
            "recorded_replies": self.recorded_replies,
            "fetch_error": self.fetch_error,
            "not_modified": self.not_modified,
            "bozo": self.bozo,
        }


@dataclass
class RunReport:
    run_id: int
    backend: str
    feeds: list[FeedReport] = field(default_factory=list)
    fatal: str | None = None

    @property
    def exit_status(self) -> int:
        return 0 if self.fatal is None else 3

    def totals(self) -> dict[str, int]:
        keys = ("seen", "new", "duplicates", "drafts", "discarded", "errors", "retried")
        rows = [f.to_dict() for f in self.feeds]
        return {k: sum(r[k] for r in rows) for k in keys}

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "backend": self.backend,
            "feeds": [f.to_dict() for f in self.feeds],
            "totals": self.totals(),
            "fatal": self.fatal,
            "exit_status": self.exit_status,
        }


# --------------------------------------------------------------------------- work units


@dataclass(frozen=True)
class Job:
    """What a worker thread needs to know about an item: a snapshot, not an ORM row."""

    item_id: int
    version: int
    dedup_key: str
    source_url: str | None
    title: str | None
    source_text: str | None
    attempts: int


@dataclass
class Outcome:
    """What a worker found; the calling thread turns it into one transaction."""

    job: Job
    to_status: str  # draft, discarded or error
    reason: str | None = None
    changes: dict[str, Any] = field(default_factory=dict)
    verdicts: list[tuple[str, GateResult]] = field(default_factory=list)  # (stage, result)
    calls: list[CallRecord] = field(default_factory=list)
    draft: Draft | None = None
    discard_kind: str | None = None  # the gate, or "fetch", "model"...


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
    ):
        self.settings = settings
        self.engine = engine
        self.summariser = summariser
        self.fetcher = fetcher
        self.command = command
        self.fetch_pages = fetch_pages
        self.progress = progress or (lambda phase, done, total: None)
        self.run_id: int | None = None
        self.reports: dict[int, FeedReport] = {}

    @property
    def actor(self) -> str:
        return f"run:{self.run_id}"

    # ------------------------------------------------------------------ the run

    def run(self, only_feeds: Iterable[str] | None = None) -> RunReport:
        with session_scope(self.engine) as session:
            run = Run(command=self.command, backend=self.summariser.name)
            session.add(run)
            session.flush()
            self.run_id = run.id
        report = RunReport(self.run_id, self.summariser.name)
        log.info("run %s started with summariser %s", self.run_id, self.summariser.name)
        try:
            feeds = self._feeds(only_feeds)
            for i, feed in enumerate(feeds):
                self.progress("feeds", i, len(feeds))
                self.reports[feed.id] = self._ingest_feed(feed)
            self.progress("feeds", len(feeds), len(feeds))
            jobs = self._pending_jobs()
            self._process(jobs)
        except BackendFailure as exc:
            report.fatal = str(exc)
            log.error("run %s stopped: %s", self.run_id, exc)
        finally:
            report.feeds = list(self.reports.values())
            with session_scope(self.engine) as session:
                run = session.get(Run, self.run_id)
                run.ended_at = utcnow()
                run.counts = report.to_dict()
                run.exit_status = report.exit_status
                run.error = report.fatal
        return report

    def _feeds(self, only: Iterable[str] | None) -> list[Feed]:
        with session_scope(self.engine) as session:
            sync_config_feeds(session, self.settings.feeds)
            query = select(Feed).where(Feed.enabled == True).order_by(Feed.id)  # noqa: E712
            feeds = list(session.exec(query))
        if only is not None:
            wanted = set(only)
            feeds = [f for f in feeds if f.name in wanted or f.url in wanted]
        return feeds

    # ------------------------------------------------------------------ ingest

    def _ingest_feed(self, feed: Feed) -> FeedReport:
        report = FeedReport(feed.name, feed.url)
        result = fetch_feed(
            feed.url, self.fetcher, etag=feed.etag, last_modified=feed.last_modified
        )
        self._record_feed_fetch(feed, result, report)
        if not result.fetch.ok:
            return report
        for entry in result.entries:
            report.seen += 1
            created = self._create_item(feed, entry)
            if created:
                report.new += 1
            else:
                report.duplicates += 1
        log.info("feed %s: %d entries, %d new", feed.name, report.seen, report.new)
        return report

    def _record_feed_fetch(self, feed: Feed, result: FeedResult, report: FeedReport) -> None:
        fetched = result.fetch
        now = utcnow()
        with session_scope(self.engine) as session:
            row = session.get(Feed, feed.id)
            row.last_fetched_at = now
            row.bozo_message = result.bozo
            report.bozo = result.bozo
            if fetched.ok or fetched.not_modified:
                report.not_modified = fetched.not_modified
                row.last_success_at = now
                row.consecutive_errors = 0
                row.last_error = None
                row.etag = fetched.headers.get("etag", row.etag)
                row.last_modified = fetched.headers.get("last-modified", row.last_modified)
            else:
                report.fetch_error = fetched.error
                row.consecutive_errors += 1
                row.last_error = fetched.error
                log.warning("feed %s failed: %s", feed.name, fetched.error)

    def _create_item(self, feed: Feed, entry: Entry) -> bool:
        """A new item for an entry not seen before; False for a duplicate."""
        source_url = canonical_url(entry.link) if entry.link else None
        dedup_key = source_url or f"entry:{feed.id}:{entry.entry_id}"
        with session_scope(self.engine) as session:
            if self._seen(session, feed.id, entry.entry_id, dedup_key):
                return False
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

    @staticmethod
    def _seen(session: Session, feed_id: int, entry_id: str, dedup_key: str) -> bool:
        by_entry = select(Item.id).where(Item.feed_id == feed_id, Item.entry_id == entry_id)
        by_key = select(Item.id).where(Item.dedup_key == dedup_key)
        return (session.exec(by_entry).first() or session.exec(by_key).first()) is not None

    # ------------------------------------------------------------------ processing

    def _pending_jobs(self) -> list[Job]:
        """Items to work on: every `new` item (this run's, or one a crashed run left)
        and every `error` item whose retry time has come (moved back to `new`)."""
        now = utcnow()
        with session_scope(self.engine) as session:
            due = session.exec(select(Item).where(Item.status == st.ERROR).order_by(Item.id)).all()
            for item in due:
                if item.next_attempt_at and _aware(item.next_attempt_at) > now:
                    continue
                st.move(
                    session,
                    item,
                    st.NEW,
                    actor=self.actor,
                    reason=f"retry after {item.attempts} failed attempt(s)",
                )
                self._report_for(item.feed_id).retried += 1
            items = session.exec(select(Item).where(Item.status == st.NEW).order_by(Item.id)).all()
            return [
                Job(i.id, i.version, i.dedup_key, i.source_url, i.title, i.source_text, i.attempts)
                for i in items
            ]

    def _process(self, jobs: list[Job]) -> None:
        total = len(jobs)
        self.progress("items", 0, total)
        if not jobs:
            return
        workers = self.settings.summarise.max_concurrency
        done = 0
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="copydesk") as pool:
            pending: set[Future[Outcome]] = {pool.submit(self.prepare, job) for job in jobs}
            try:
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        self._commit(future.result())
                        done += 1
                        self.progress("items", done, total)
            except BackendFailure:
                for future in pending:
                    future.cancel()
                raise

    def prepare(self, job: Job) -> Outcome:
        """Everything but the database: fetch, gates, summary. Runs in a worker."""
        out = Outcome(job, st.DRAFT)
        gates = self.settings.gates
        modes = gates.all_modes()
        url_result = run_gates(("source_url",), "", job.source_url, "", modes=modes)
        out.verdicts += [("source", r) for r in url_result]
        if any(r.hard_fail for r in url_result):
            return _discard(out, url_result)
        text = job.source_text
        if text is None:
            text = self._fetch_page(job, out)
            if text is None:
                return out
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
            return _discard(out, length)
        article = Article(job.dedup_key, job.title, job.source_url, text)
        try:
            draft = self.summariser.summarise(article)
        except SummaryFailed as exc:
            out.calls += exc.calls
            return self._failed(out, f"summariser failed: {exc.reason}", exc.transient, "model")
        except Exception as exc:
            if type(exc).__name__ == "BackendUnavailable":
                raise BackendFailure(str(exc)) from None
            raise
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
        return out

    def _fetch_page(self, job: Job, out: Outcome) -> str | None:
        if not self.fetch_pages:
            _failed_permanently(out, "the feed carries no text and page fetching is off", "fetch")
            return None
        result = self.fetcher.get(job.source_url)
        out.changes.update(fetch_status=result.status, fetch_bytes=len(result.content))
        if result.error:
            if result.refused:
                _failed_permanently(out, f"link refused: {result.error}", "fetch")
                return None
            self._failed(out, f"page fetch failed: {result.error}", result.transient, "fetch")
            return None
        extracted = extract_page(result.content, result.final_url)
        text = compose_source(job.title or extracted.title, extracted.text)
        out.changes.update(
            source_text=text,
            word_count=count_words(text),
            text_origin="page",
            title=job.title or extracted.title,
        )
        return text

    def _failed(self, out: Outcome, reason: str, transient: bool, kind: str) -> Outcome:
        """A transient failure goes to `error` for a later retry, until the attempts
        run out; anything else discards the item with the reason."""
        if not transient:
            return _failed_permanently(out, reason, kind)
        attempts = out.job.attempts + 1
        limit = self.settings.summarise.max_attempts
        out.changes.update(attempts=attempts, last_error=reason)
        if attempts >= limit:
            what = "model" if kind == "model" else "fetch"
            return _failed_permanently(out, f"{what} failed {attempts} times: {reason}", kind)
        base = self.settings.summarise.retry_base_seconds
        delay = min(timedelta(seconds=base * 2 ** (attempts - 1)), MAX_BACKOFF)
        delay *= random.uniform(0.8, 1.2)
        out.changes["next_attempt_at"] = utcnow() + delay
        out.to_status, out.reason = st.ERROR, reason
        return out

    def _commit(self, out: Outcome) -> None:
        job = out.job
        with session_scope(self.engine) as session:
            item = session.get(Item, job.item_id)
            for stage, result in out.verdicts:
                d = result.to_dict()
                session.add(
                    GateVerdict(
                        item_id=item.id,
                        run_id=self.run_id,
                        stage=stage,
                        gate=d["gate"],
                        passed=d["passed"],
                        mode=d["mode"],
                        reason=d["reason"],
                        evidence=d["evidence"],
                    )
                )
            for call in out.calls:
                session.add(ModelCall(item_id=item.id, run_id=self.run_id, **vars(call)))
            failed = [r.gate for _, r in out.verdicts if r.hard_fail]
            flagged = [r.gate for _, r in out.verdicts if r.flagged]
            reason = out.reason
            if out.to_status == st.DRAFT:
                reason = "all hard gates passed" + (
                    f"; flagged: {', '.join(flagged)}" if flagged else ""
                )
            st.move(
                session,
                item,
                out.to_status,
                actor=self.actor,
                reason=reason,
                expected_version=job.version,
                changes=out.changes,
                details={"failed_gates": failed, "flagged_gates": flagged}
                if (failed or flagged)
                else None,
            )
        report = self._report_for(item.feed_id)
        if out.draft is not None and out.draft.recorded_reply:
            report.recorded_replies += 1
        if out.to_status == st.DRAFT:
            report.drafts += 1
        elif out.to_status == st.ERROR:
            report.errors += 1
        else:
            report.discarded[out.discard_kind or "other"] += 1
        log.info(
            "item %s -> %s%s",
            item.id,
            out.to_status,
            f": {reason}" if reason else "",
            extra={"item_id": item.id, "status": out.to_status},
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


def _discard(out: Outcome, results: list[GateResult]) -> Outcome:
    failed = [r for r in results if r.hard_fail]
    out.to_status = st.DISCARDED
    out.reason = "; ".join(f"{r.gate}: {r.verdict.reason}" for r in failed)
    out.discard_kind = failed[0].gate
    return out


def _failed_permanently(out: Outcome, reason: str, kind: str) -> Outcome:
    out.to_status, out.reason, out.discard_kind = st.DISCARDED, reason, kind
    return out


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def sync_config_feeds(session: Session, feeds: list[FeedSettings]) -> None:
    """Feeds declared in config.toml are upserted into the feeds table on every run."""
    for declared in feeds:
        row = session.exec(select(Feed).where(Feed.url == declared.url)).first()
        if row is None:
            session.add(
                Feed(
                    url=declared.url,
                    name=declared.name or declared.url,
                    enabled=declared.enabled,
                    origin="config",
                )
            )
        else:
            row.enabled = declared.enabled
            if declared.name:
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
