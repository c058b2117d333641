"""The one interface every summariser backend implements.

A backend turns an article's own text into a headline and a short summary. It
never decides whether the draft is good (that is `guards/`), and it never
touches the database: the calls it made come back as `CallRecord`s, which the
pipeline writes to the ledger.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from store.models import CallRecord  # the ledger's one definition of a call

__all__ = [
    "CALL_JOURNAL",
    "CONFIG",
    "CallJournal",
    "LeaseLost",
    "CONTENT",
    "REJECTED",
    "SPEND_CAP",
    "TRANSIENT",
    "Article",
    "BackendUnavailable",
    "CallRecord",
    "Draft",
    "Summariser",
    "SummaryFailed",
]


class LeaseLost(Exception):
    """The worker no longer holds the item's claim: no request was sent. Carries the
    calls made for the item before (their rows are in flight until recorded)."""

    def __init__(self, reason: str, calls: list[CallRecord] | None = None):
        super().__init__(reason)
        self.calls: list[CallRecord] = calls or []
        self.item_id: int | None = None  # set by the pipeline


class CallJournal(Protocol):
    """Where a backend announces a call before it sends it (issue 26: every paid call
    is in the ledger, even when the process dies before the reply is recorded)."""

    def begin(self, call: CallRecord) -> int | None:
        """Write the call's row as in flight and return its id; raise `LeaseLost`
        when the item is no longer this worker's (then nothing is sent)."""
        ...


# Set by the pipeline around one item's model calls, on the worker's thread; the
# backend's HTTP middleware, which runs on that thread, reads it before each attempt.
CALL_JOURNAL: ContextVar[CallJournal | None] = ContextVar("copydesk_call_journal", default=None)


def __getattr__(name: str) -> Any:
    """`CallRecord` (store.models), imported when first asked for: it is an SQLModel,
    and loading the settings (`copydesk check`, `--help`) must not import the store
    (https://peps.python.org/pep-0562/: `from summarise.base import CallRecord` works)."""
    if name == "CallRecord":
        from store.models import CallRecord

        return CallRecord
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


# What a failure is about, from the API's status, error type and documented
# fields (never from the words of its message): see summarise.anthropic_backend.
TRANSIENT = "transient"  # an outage, a timeout, a rate limit: wait and retry, never discard
CONTENT = "content"  # this article's reply is unusable (refusal, truncation, no summary)
REJECTED = "rejected"  # the API refused this request (400/413/422): the item, or every item?
CONFIG = "config"  # key, model, billing, settings: no item can work until it is fixed
SPEND_CAP = "spend_cap"  # the organisation's monthly spend cap: stop at once


class SummaryFailed(Exception):
    """No draft. `transient` failures (timeouts, overload) are retried on a later
    run; the others discard the item with `reason`. `kind` says what the failure
    is about (the constants above); `retry_after` is the wait in seconds the API
    asked for, when it asked for one."""

    def __init__(
        self,
        reason: str,
        *,
        transient: bool,
        calls: list[CallRecord] | None = None,
        kind: str | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(reason)
        self.reason = reason
        self.transient = transient
        self.calls = calls or []
        self.kind = kind or (TRANSIENT if transient else CONTENT)
        self.retry_after = retry_after


class BackendUnavailable(RuntimeError):
    """No item can be summarised with this backend as configured (key refused,
    unknown model, temperature 0 rejected): the run stops without moving any item.
    `calls` holds the failed call(s), which still belong in the ledger."""

    def __init__(self, message: str, *, calls: list[CallRecord] | None = None, kind: str = CONFIG):
        super().__init__(message)
        self.calls = calls or []
        self.kind = kind  # CONFIG, SPEND_CAP or REJECTED (a request shape every item shares)


class Summariser(Protocol):
    name: str

    def summarise(self, article: Article) -> Draft:
        """Return a draft or raise SummaryFailed. Must be safe to call from threads."""
        ...
