"""The source stage: a `Job` becomes the article's text, fetched on a page-reader
thread (`fetch`: the link's gate, the stored text or the page), then extracted (or
the feed's own text) through the source gates with other pages fetched, back to
back on the run's thread (`read`), then looked up with them (`look_up`: is the
story known already?), or an `Outcome` that ends the item here.

The stage may read the database (the stored text, duplicate look-ups), never write it.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from sqlalchemy import null
from sqlmodel import Session, select

from copydesk.services.pipeline.duplicates import find_duplicate, find_duplicates
from copydesk.services.pipeline.handoff import (
    Job,
    Outcome,
    compose_source,
    discard,
    duplicate,
    failed,
    failed_permanently,
    fetch_notes,
)
from copydesk.services.pipeline.state import RunState
from guards.registry import run_gates
from guards.source import count_words
from ingest.dedup import text_fingerprint, url_aliases
from ingest.extract import extract_page
from ingest.fetch import Fetcher, FetchResult
from store import status as st
from store.models import Item
from summarise.base import Article

log = logging.getLogger("copydesk.pipeline")

PAGE_TYPES = ("html", "xml", "text/")  # content types a page's article can be read from


@dataclass
class Fetched:
    """A job as `SourceStage.fetch` leaves it for `read`: its outcome so far, and its
    stored text or its page (neither when page fetching is off); `ended` when the
    outcome is final already (a refused link)."""

    out: Outcome
    text: str | None = None
    page: FetchResult | None = None
    ended: bool = False


class SourceStage:
    def __init__(self, run: RunState, fetcher: Fetcher, *, fetch_pages: bool):
        self.run = run
        self.settings = run.settings
        self.fetcher = fetcher
        self.fetch_pages = fetch_pages
        # Texts claimed by an item of this run: two workers holding the same story
        # at once must not both summarise it.
        self._claims: dict[str, int] = {}
        self._claims_lock = threading.Lock()

    def prepare(self, job: Job) -> tuple[Outcome, Article | None]:
        """The article's text: fetched, extracted, through the source gates and the
        duplicate look-ups. (outcome, None) when the item ends here."""
        read = self.read(job)
        return read if read[1] is None else self.look_up([read])[0]

    def fetch(self, job: Job) -> Fetched:
        """The part of `read` that waits on the network, for a page-reader thread: the
        link's gate, the stored text, and the page when there is none. `read` does the
        rest (extraction, the source gates), for many pages back to back on the run's
        thread (issue 24, session 16: each page's CPU work cost more interleaved with
        the other stages' than back to back)."""
        out = Outcome(job, st.DRAFT)
        modes = self.settings.gates.all_modes()
        # No request is made for a link that is not an absolute http(s) URL.
        url_result = run_gates(("source_url",), "", job.source_url, "", modes=modes)
        out.verdicts += [("source", r) for r in url_result]
        if any(r.hard_fail for r in url_result):
            return Fetched(discard(out, url_result), ended=True)
        text, out.language = self.stored(job)
        if text is None and self.fetch_pages:
            page = self.fetcher.get_page(job.source_url, trusted=self._trusted(job))
            return Fetched(out, page=page)
        return Fetched(out, text=text)

    def read(self, job: Job, fetched: Fetched | None = None) -> tuple[Outcome, Article | None]:
        """`prepare` but for the look-up of the story in the store and in this run,
        which `look_up` makes for many pages at once (the run loop gathers them); the
        network's part done already when `fetched` (`fetch`) is given."""
        got = fetched or self.fetch(job)
        out, text = got.out, got.text
        if got.ended:
            return out, None
        if text is None:
            text = self._page_text(job, out, got.page)
            if text is None:
                return out, None
        gates = self.settings.gates
        modes = gates.all_modes()
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
            return discard(out, length), None
        out.fingerprint = text_fingerprint(text, job.title, *out.titles)
        article = Article(job.dedup_key, out.changes.get("title", job.title), job.source_url, text)
        return out, article

    def look_up(self, reads: list[tuple[Outcome, Article]]) -> list[tuple[Outcome, Article | None]]:
        """Whether the stories of pages read (`read`) are known already, in the store
        or to an earlier item of this run: one read-only statement for all of them
        (issue 24: one a page, with the pool's pre-ping, BEGIN and ROLLBACK around it,
        cost 0.72 ms of CPU an article on PostgreSQL). Each page as `prepare` gives
        it: a known story is a duplicate, with no article, so no model call is spent
        on it; the writer asks the database again inside the writing transaction."""
        with self.run.engine.connect() as connection:
            stored = find_duplicates(
                connection, [(out.job.item_id, out.aliases, out.fingerprint) for out, _ in reads]
            )
        looked: list[tuple[Outcome, Article | None]] = []
        for out, article in reads:
            found = stored.get(out.job.item_id) or self._claim(out)
            looked.append((out, article) if found is None else (duplicate(out, *found), None))
        return looked

    def _page_text(self, job: Job, out: Outcome, result: FetchResult | None) -> str | None:
        """The article text from its page (`fetch`'s), or None with the outcome set:
        refused, disallowed by robots.txt, failed (transient or not), or not a web page."""
        if result is None:
            failed_permanently(out, "the feed carries no text and page fetching is off", "fetch")
            return None
        out.changes.update(fetch_status=result.status, fetch_bytes=len(result.content))
        if result.truncated:  # said out loud, as a feed cut by max_feed_bytes is (issue 26)
            out.changes.page_cut_at = len(result.content)
            log.warning(
                "item %s: page %s cut off at max_page_bytes (%d bytes kept): its draft "
                "tells the story only up to the cut (raise [ingest] max_page_bytes)",
                job.item_id,
                job.source_url,
                len(result.content),
                extra={"item_id": job.item_id},
            )
        notes = fetch_notes(result)
        if notes:
            out.details["fetch"] = notes
        if result.error:
            if result.disallowed:
                failed_permanently(out, result.error, "robots")
            elif result.refused:  # the error reads "refused: <why>"
                failed_permanently(out, f"link {result.error}", "refused")
            else:
                failed(
                    out,
                    f"page fetch failed: {result.error}",
                    result.transient,
                    "fetch",
                    limits=self.settings.summarise,
                    retry_after=result.retry_after,
                )
            return None
        content_type = result.headers.get("content-type", "").lower()
        if content_type and not any(kind in content_type for kind in PAGE_TYPES):
            failed_permanently(
                out, f"the link is {content_type.split(';')[0]}, not a page", "fetch"
            )
            return None
        try:
            extracted = extract_page(
                result.content, result.final_url, max_bytes=self.settings.ingest.max_extract_bytes
            )
        except Exception as exc:  # noqa: BLE001 - one odd page must not stop the run
            log.exception("item %s: extraction failed", job.item_id)
            failed_permanently(out, f"text extraction failed: {type(exc).__name__}", "fetch")
            return None
        if extracted.cut:
            out.details.setdefault("fetch", {})["extract_cut_at_bytes"] = (
                self.settings.ingest.max_extract_bytes
            )
        title = job.title or extracted.title
        text = compose_source(title, extracted.text)
        if extracted.language:  # the page's own word over its feed's
            out.language = out.changes.language = extracted.language
        out.titles = [t for t in (extracted.title,) if t]
        out.aliases = url_aliases(job.source_url, result.final_url, extracted.canonical_url)
        out.changes.update(
            source_text=text,
            word_count=count_words(text),
            text_origin="page",
            title=title,
        )
        if out.aliases:
            found = self._duplicate_in_store(out)
            if found is not None:
                duplicate(out, *found)
                return None
        return text

    def stored_text(self, job: Job) -> str | None:
        """The item's source text, read by the worker when it starts on the item (a
        read-only look-up): memory holds the texts of the window in flight only."""
        return self.stored(job)[0]

    def stored(self, job: Job) -> tuple[str | None, str | None]:
        """(the item's stored source text, None when it has none; its declared language)."""
        if not job.has_text and job.language_read:  # (issue 24: a read an article less)
            return None, job.language
        with Session(self.run.engine) as session:
            column = Item.source_text if job.has_text else null()
            query = select(column, Item.language).where(Item.id == job.item_id)
            row = session.exec(query).first()
        return (row[0], row[1]) if row else (None, None)

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
        known story; the writer repeats it inside the writing transaction. One Core
        SELECT on a plain connection: an ORM session built, begun and closed for it
        cost about half as much CPU again (issue 24, session 12)."""
        with self.run.engine.connect() as connection:
            return find_duplicate(connection, out.job.item_id, out.aliases, out.fingerprint)
