"""The one interface every summariser backend implements.

A backend turns an article's own text into a headline and a short summary. It
never decides whether the draft is good (that is `guards/`), and it never
touches the database: the calls it made come back as `CallRecord`s, which the
pipeline writes to the ledger.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from store.models import CallRecord  # the ledger's one definition of a call

__all__ = ["Article", "BackendUnavailable", "CallRecord", "Draft", "Summariser", "SummaryFailed"]


@dataclass(frozen=True)
class Article:
    """What a summariser may see: the article's own text, and nothing else."""

    key: str  # the item's dedup key, stable across runs (used by recorded replies)
    title: str | None
    url: str | None
    text: str


@dataclass
class Draft:
    headline: str
    summary: str
    backend: str  # recorded on the item, e.g. "extractive" or "anthropic:claude-haiku-4-5"
    recorded_reply: bool = False  # a recorded (scripted) model reply, not a live call
    calls: list[CallRecord] = field(default_factory=list)

    @property
    def text(self) -> str:
        """What the draft gates check: headline and summary together."""
        return f"{self.headline}\n\n{self.summary}" if self.headline else self.summary


class SummaryFailed(Exception):
    """No draft. `transient` failures (timeouts, overload) are retried on a later
    run; the others discard the item with `reason`."""

    def __init__(self, reason: str, *, transient: bool, calls: list[CallRecord] | None = None):
        super().__init__(reason)
        self.reason = reason
        self.transient = transient
        self.calls = calls or []


class BackendUnavailable(RuntimeError):
    """No item can be summarised with this backend as configured (key refused,
    unknown model, temperature 0 rejected): the run stops without moving any item.
    `calls` holds the failed call(s), which still belong in the ledger."""

    def __init__(self, message: str, *, calls: list[CallRecord] | None = None):
        super().__init__(message)
        self.calls = calls or []


class Summariser(Protocol):
    name: str

    def summarise(self, article: Article) -> Draft:
        """Return a draft or raise SummaryFailed. Must be safe to call from threads."""
        ...
