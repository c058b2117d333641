"""Intake: feeds polled, and every entry born as an item (or counted as a duplicate).

Feed fetches run in a thread pool; what each feed brought is written on the
run's thread, one transaction per feed: its fetch record and the items it brings.
An entry already seen (same entry id in its feed, or same canonical URL) is not
a new item: the report counts it under `duplicates`. A URL submitted by hand is
born here too, claimed by the run that will process it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from copydesk.services import feeds as feeds_service
from copydesk.services.pipeline.handoff import compose_source
from copydesk.services.pipeline.state import RunState
from copydesk.services.reports import FeedReport
from guards.source import count_words
from ingest.dedup import item_keys
from ingest.feeds import Entry, FeedResult, fetch_feed, is_due, next_poll_after_failure
from ingest.fetch import Fetcher, FetchResult
from store import claims
from store import status as st
from store.db import session_scope
from store.models import Feed, Item, utcnow

log = logging.getLogger("copydesk.pipeline")

IN_CHUNK = 500  # keys per IN (...) query: far below every database's parameter limit
BIRTH_CHUNK = 200  # entries made items per statement (`_create_items`)
POLLED_ELSEWHERE = "another run is polling it"


class _LostClaim(Exception):
    """This run's claim on a feed was taken over: what it fetched is not written."""


class Intake:
    def __init__(
        self,
        run: RunState,
        fetcher: Fetcher,
        *,
        fetch_pages: bool,
        workers: int,
        progress: Callable[[str, int, int], None],
    ):
        self.run = run
        self.settings = run.settings
        self.fetcher = fetcher
        self.fetch_pages = fetch_pages
        self.workers = workers
        self.progress = progress
        self._feed_tokens: dict[int, int] = {}  # feed id -> this run's claim token

    def feeds(self, only: Iterable[str] | None) -> list[Feed]:
        with session_scope(self.run.engine) as session:
            feeds_service.sync_config_feeds(session, self.settings.feeds)
            query = select(Feed).where(Feed.enabled == True).order_by(Feed.id)  # noqa: E712
            feeds = list(session.exec(query))
        if only is not None:
            wanted = set(only)
            feeds = [f for f in feeds if f.name in wanted or f.url in wanted]
        return feeds

    def due_feeds(self, feeds: list[Feed], force: bool) -> list[Feed]:
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
            self.run.reports[feed.id] = report
            log.info("feed %s skipped: backing off until %s", feed.name, when)
        return due

    # ------------------------------------------------------------------ feeds

    def ingest_feeds(self, feeds: list[Feed]) -> None:
        """Fetch and parse the feeds in the pool (each host at most N at a time, by
        the fetcher), and write what each brought on this thread, in feed order."""
        self.progress("feeds", 0, len(feeds))
        feeds = self._claim_feeds(feeds)
        if not feeds:
            return
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="feeds") as pool:
            results = pool.map(self._fetch_feed, feeds)
            for i, (feed, result) in enumerate(zip(feeds, results, strict=True)):
                self.run.reports[feed.id] = self._ingest_feed(feed, result)
                self.progress("feeds", i + 1, len(feeds))

    def _claim_feeds(self, feeds: list[Feed]) -> list[Feed]:
        """The feeds this run may poll: one another live run is polling is left to it."""
        mine = []
        for feed in feeds:
            with session_scope(self.run.engine) as session:
                token = claims.claim_feed(session, feed.id, self.run.run_id, self.run.lease)
            if token is None:
                report = FeedReport(feed.name, feed.url, skipped=POLLED_ELSEWHERE)
                self.run.reports[feed.id] = report
                log.info("feed %s skipped: another run is polling it", feed.name)
                continue
            self._feed_tokens[feed.id] = token
            mine.append(feed)
        return mine

    def wait_for_other_polls(self) -> None:
        """A feed skipped because another run is polling it brings its items when
        that poll is written: wait for it (never past a lease), so that runs started
        together share those items instead of the later ones finding nothing to do."""
        busy = [fid for fid, r in self.run.reports.items() if r.skipped == POLLED_ELSEWHERE]
        deadline = utcnow() + self.run.lease
        while busy and utcnow() < deadline:
            with Session(self.run.engine) as session:
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
            with session_scope(self.run.engine) as session:
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

    # ------------------------------------------------------------------ births

    def _create_items(
        self, session: Session, feed: Feed, entries: list[Entry], report: FeedReport
    ) -> None:
        """An entry seen before (same entry id in this feed, or same canonical URL
        anywhere) is counted as a duplicate; every other entry becomes a `new` item
        with its audit event: BIRTH_CHUNK of them in a few statements
        (`st.create_many`, issue 24), or, when one was created by another worker
        meanwhile (the chunk's savepoint rolls back), one savepoint each."""
        if not entries:
            return
        keyed = [(entry, *item_keys(feed.id, entry.entry_id, entry.link)) for entry in entries]
        known_ids = _existing(
            session, Item.entry_id, [e.entry_id for e, _, _ in keyed], Item.feed_id == feed.id
        )
        known_keys = _existing(session, Item.dedup_key, [k for _, _, k in keyed])
        fresh = []
        for entry, source_url, dedup_key in keyed:
            report.seen += 1
            if entry.entry_id in known_ids or dedup_key in known_keys:
                report.duplicates += 1
                continue
            known_ids.add(entry.entry_id)
            known_keys.add(dedup_key)
            fresh.append((entry, source_url, dedup_key))
        # A chunk at a time (issue 24): a chunk's items, events and rows are let go
        # before the next is built, so a feed of 3,200 entries does not hold them all
        # at once (the process keeps such a high-water mark for the rest of the run).
        for start in range(0, len(fresh), BIRTH_CHUNK):
            self._create_chunk(session, feed, fresh[start : start + BIRTH_CHUNK], report)

    def _create_chunk(
        self,
        session: Session,
        feed: Feed,
        fresh: list[tuple[Entry, str | None, str]],
        report: FeedReport,
    ) -> None:
        try:
            with session.begin_nested():
                st.create_many(session, [self._born(feed, *f) for f in fresh], actor=self.run.actor)
            report.new += len(fresh)
            return
        except IntegrityError:  # another worker created one of them a moment ago
            pass
        for entry, source_url, dedup_key in fresh:
            values, reason, details = self._born(feed, entry, source_url, dedup_key)
            try:
                with session.begin_nested():
                    st.create(
                        session,
                        Item(**values),
                        actor=self.run.actor,
                        reason=reason,
                        details=details,
                    )
            except IntegrityError:  # this one
                report.duplicates += 1
                continue
            report.new += 1

    def _born(
        self, feed: Feed, entry: Entry, source_url: str | None, dedup_key: str
    ) -> tuple[dict[str, Any], str, dict[str, Any]]:
        """An entry's item as column values (`st.item_row`: no ORM object an entry,
        issue 24), with the reason and details of its birth event."""
        text = entry.content_text
        enough = count_words(text) >= self.settings.gates.min_source_words
        use_feed_text = bool(text) and (enough or not self.fetch_pages or not entry.link)
        values: dict[str, Any] = {
            "dedup_key": dedup_key,
            "feed_id": feed.id,
            "entry_id": entry.entry_id,
            "source_url": source_url,
            "original_url": entry.link,
            "title": entry.title,
            "author": entry.author,
            "published_at": entry.published,
            "language": entry.language,
        }
        if use_feed_text:
            source_text = compose_source(entry.title, text)
            values.update(
                source_text=source_text,
                word_count=count_words(source_text),
                text_origin="feed_content",
            )
        details = {
            "feed": feed.name,
            "feed_url": feed.url,
            "entry_id": entry.entry_id,
            "link": entry.link,
        }
        return values, f"seen in feed {feed.name}", details

    def create_submitted(self, url: str) -> tuple[int, bool]:
        """The item for a submitted URL: (id, True) when new, the known item's id
        and False when the canonical URL was seen before."""
        link = url.strip()
        report = self.run.report_for(None)
        report.seen += 1
        source_url, dedup_key = item_keys(None, None, link)
        with session_scope(self.run.engine) as session:
            existing = session.exec(select(Item.id).where(Item.dedup_key == dedup_key)).first()
            if existing is not None:
                report.duplicates += 1
                return existing, False
            item = Item(
                dedup_key=dedup_key,
                source_url=source_url,
                original_url=link,
                claimed_by=self.run.run_id,  # born claimed: no other run starts on it
                claim_until=utcnow() + self.run.lease,
            )
            st.create(
                session,
                item,
                actor=self.run.actor,
                reason="submitted by hand",
                details={"link": link, "command": self.run.command},
            )
            report.new += 1
            return item.id, True


# --------------------------------------------------------------------------- feeds table


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
