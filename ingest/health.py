"""A feed's health in one word, for `copydesk feeds list` and anyone watching it.

Two things need a person: a feed that has been failing for longer than
`ingest.feed_stale_hours` ("failing"), and a feed that still answers but has
gone quiet for much longer than it usually does ("stale"), which is how a
publisher moving its feed to a new address tends to look.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from statistics import median

# "Silent for longer than its usual interval": three usual gaps without a new
# entry, and never less than this, so an hourly feed's quiet night is not news.
SILENCE_FACTOR = 3
MIN_SILENCE = timedelta(hours=6)
HISTORY = 20  # the most recent entry times used for the usual interval


@dataclass(frozen=True)
class FeedHealth:
    state: str  # "never fetched", "ok", "retrying", "failing", "stale", "disabled"
    needs_attention: bool
    detail: str
    usual_interval: timedelta | None = None


def _aware(when: datetime | None) -> datetime | None:
    if when is None:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def usual_interval(entry_times: Sequence[datetime]) -> timedelta | None:
    """The median gap between a feed's most recent entries, None without history."""
    times = sorted({_aware(t) for t in entry_times if t is not None}, reverse=True)[:HISTORY]
    gaps = [a - b for a, b in zip(times, times[1:], strict=False)]
    gaps = [g for g in gaps if g > timedelta(0)]
    return median(gaps) if len(gaps) >= 2 else None


def _ago(delta: timedelta) -> str:
    hours = delta.total_seconds() / 3600
    return f"{hours / 24:.1f} days" if hours >= 48 else f"{hours:.1f} h"


def feed_health(
    *,
    enabled: bool,
    created_at: datetime,
    last_fetched_at: datetime | None,
    last_success_at: datetime | None,
    consecutive_errors: int,
    entry_times: Sequence[datetime],
    failing_after: timedelta,
    now: datetime,
) -> FeedHealth:
    """`entry_times`: when the feed's items were published (or first seen)."""
    last_success = _aware(last_success_at)
    if not enabled:
        return FeedHealth("disabled", False, "not polled")
    if last_fetched_at is None:
        return FeedHealth("never fetched", False, "not polled yet")
    if consecutive_errors > 0:
        since = last_success or _aware(created_at)
        down = now - since
        if down > failing_after:
            what = "since last success" if last_success else "and never succeeded"
            return FeedHealth(
                "failing", True, f"{consecutive_errors} errors in a row, {_ago(down)} {what}"
            )
        return FeedHealth("retrying", False, f"{consecutive_errors} error(s) in a row")
    interval = usual_interval(entry_times)
    newest = max((_aware(t) for t in entry_times if t is not None), default=None)
    if interval is not None and newest is not None:
        newest = min(newest, now)  # a feed that dates entries in the future is not fresh
        silent = now - newest
        if silent > max(SILENCE_FACTOR * interval, MIN_SILENCE):
            return FeedHealth(
                "stale",
                True,
                f"no new entry for {_ago(silent)}; usually one every {_ago(interval)}",
                interval,
            )
    return FeedHealth("ok", False, "", interval)
