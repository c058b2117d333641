"""What the stages of a run hand each other, and how an item's outcome is set.

    run loop --Job--> source stage --(Outcome, Article)--> draft stage --Outcome--> writer

A `Job` is a small snapshot of a waiting item (never an ORM row); an `Outcome` is
what the workers found: the status to move the item to, with its reason,
verdicts, ledger rows and column changes. Only the writer turns an outcome into
database rows. The helpers below set an outcome's ending (discarded by a gate,
a duplicate, failed for now or for good) the same way whichever stage ends it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from guards.registry import GateResult
from ingest.fetch import FetchResult
from store import status as st
from store.changes import ItemChanges
from store.models import Item, utcnow
from summarise.base import CallRecord, Draft
from summarise.settings import SummariseSettings

MAX_BACKOFF = timedelta(days=1)


class BackendFailure(RuntimeError):
    """The summariser cannot work at all (key refused, model rejects temperature 0):
    the run stops and untouched items stay `new` for the next run. The calls that
    found it out still go to the ledger."""

    def __init__(
        self,
        message: str,
        *,
        item_id: int | None = None,
        calls: list[CallRecord] | None = None,
        count_waiting: bool = False,
    ):
        super().__init__(message)
        self.item_id = item_id
        self.calls = calls or []
        self.count_waiting = count_waiting  # the run's last line says how many items wait


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
    # The item's declared language, when it was read with the job (`language_read`):
    # then an item without a text needs no read of the store before its page is fetched.
    language: str | None = None
    language_read: bool = False


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
    # The model stage's breaker opened on this item's check call: the outcome is
    # committed (the draft keeps its checks waiting) and the run then stops.
    stop: BackendFailure | None = None
    language: str | None = None  # the article's declared language, for the draft gates


def compose_source(title: str | None, body: str) -> str:
    """The article as the gates and the model see it: its headline, then its text."""
    body = body.strip()
    if title and not body.startswith(title.strip()):
        return f"{title.strip()}\n\n{body}"
    return body


def job_of(item: Item, feed_url: str | None) -> Job:
    return Job(
        item.id,
        item.version,
        item.dedup_key,
        item.source_url,
        item.title,
        item.source_text is not None,
        item.attempts,
        feed_url,
        item.language,
        True,
    )


def fetch_notes(result: FetchResult) -> dict[str, Any]:
    """What the audit should know about a page fetch beyond its status."""
    notes: dict[str, Any] = {}
    if result.redirects:
        notes["redirects"] = result.redirects
        notes["final_url"] = result.final_url
    if result.truncated:
        notes["truncated"] = True
        notes["kept_bytes"] = len(result.content)
    return notes


# --------------------------------------------------------------------------- endings


def discard(out: Outcome, results: list[GateResult]) -> Outcome:
    failed = [r for r in results if r.hard_fail]
    out.to_status = st.DISCARDED
    out.reason = "; ".join(f"{r.gate}: {r.verdict.reason}" for r in failed)
    out.discard_kind = failed[0].gate
    return out


def duplicate(out: Outcome, original: int, why: str) -> Outcome:
    """Discarded as a duplicate, pointing at the item that carries the story. A
    model call already made stays in the ledger; the draft is dropped."""
    out.to_status = st.DISCARDED
    out.reason = f"duplicate of item {original} ({why})"
    out.discard_kind = "duplicate"
    out.details["duplicate_of"] = original
    out.draft = None
    out.changes.unset("headline", "summary", "summariser", "recorded_reply", "next_attempt_at")
    return out


def failed_permanently(out: Outcome, reason: str, kind: str) -> Outcome:
    out.to_status, out.reason, out.discard_kind = st.DISCARDED, reason, kind
    return out


def failed(
    out: Outcome,
    reason: str,
    transient: bool,
    kind: str,
    *,
    limits: SummariseSettings,
    retry_after: float | None = None,
) -> Outcome:
    """A transient failure goes to `error` for a later retry, until the attempts
    run out (`limits.max_attempts`); anything else discards the item with the reason.
    A transient *model* failure never runs out: an outage is never the story's
    fault, so the item waits, with backoff capped at MAX_BACKOFF, indefinitely."""
    if not transient:
        return failed_permanently(out, reason, kind)
    attempts = out.job.attempts + 1
    out.changes.update(attempts=attempts, last_error=reason)
    if attempts >= limits.max_attempts and kind != "model":
        what = {"model": "model", "fetch": "fetch"}.get(kind, "processing")
        out.changes.next_attempt_at = None
        return failed_permanently(out, f"{what} failed {attempts} times: {reason}", kind)
    base = limits.retry_base_seconds
    delay = min(timedelta(seconds=base * 2 ** (attempts - 1)), MAX_BACKOFF)
    delay *= random.uniform(0.8, 1.0)  # after the cap, so items do not all wake at once
    if retry_after is not None:  # the server said when; never sooner than that
        delay = max(delay, timedelta(seconds=min(retry_after, MAX_BACKOFF.total_seconds())))
    out.changes.next_attempt_at = utcnow() + delay
    out.to_status, out.reason = st.ERROR, reason
    return out
