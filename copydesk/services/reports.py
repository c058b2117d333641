"""What a run reports: per feed, what came in and what became of it.

The same numbers go to the closing table, to `--json` for job runners, and to
the run's row in the database (`runs.counts`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


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
    checks_not_run: int = 0  # items whose model checks did not run (no model, off)
    checks_failed: int = 0  # items whose model checks failed (outage, bad reply, schema)
    fetch_error: str | None = None
    not_modified: bool = False
    bozo: str | None = None
    skipped: str | None = None  # why the feed was not fetched this run ("not due until ...")
    next_fetch_at: str | None = None  # when a failing feed will be tried again
    entries_read: int | None = None  # entries the poll read from the feed's body
    truncated: bool = False  # the body was cut by max_feed_bytes: later entries unseen
    pages_cut: int = 0  # items committed whose page was cut by max_page_bytes

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
            "checks_not_run": self.checks_not_run,
            "checks_failed": self.checks_failed,
            "fetch_error": self.fetch_error,
            "not_modified": self.not_modified,
            "bozo": self.bozo,
            "skipped": self.skipped,
            "next_fetch_at": self.next_fetch_at,
            "entries_read": self.entries_read,
            "truncated": self.truncated,
            "pages_cut": self.pages_cut,
        }


@dataclass
class RunReport:
    run_id: int
    backend: str
    feeds: list[FeedReport] = field(default_factory=list)
    fatal: str | None = None
    # What re-checking earlier drafts did (copydesk/services/recheck.py); None when nothing was due.
    rechecks: dict[str, int] | None = None

    @property
    def exit_status(self) -> int:
        return 0 if self.fatal is None else 3

    def totals(self) -> dict[str, int]:
        keys = (
            "seen",
            "new",
            "duplicates",
            "drafts",
            "discarded",
            "errors",
            "retried",
            "checks_not_run",
            "checks_failed",
            "pages_cut",
        )
        rows = [f.to_dict() for f in self.feeds]
        return {k: sum(r[k] for r in rows) for k in keys}

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "backend": self.backend,
            "feeds": [f.to_dict() for f in self.feeds],
            "totals": self.totals(),
            "skipped_feeds": sum(1 for f in self.feeds if f.skipped),
            "fatal": self.fatal,
            "exit_status": self.exit_status,
        } | ({"rechecks": self.rechecks} if self.rechecks else {})
