"""The check call: one model call per draft, never one per claim.

After a draft passes the deterministic gates, the checking model is asked,
through the `record_checks` tool (its schema is in `summarise.prompt`), for the
draft's claims with their supporting passages and a judgement of every draft
sentence on seven kinds of error. The request shares the summary's cached
prefix (tools, system prompt, article block) byte for byte, so the article is
re-read at the cached price. The call goes through the summariser's client,
ledger rows, retries and error handling (`AnthropicChecker` is an
`AnthropicSummariser` with another purpose).

This module only asks and parses; what a reply means is decided by the pure
gates in `guards.checks`. A check never raises: it returns a `CheckOutcome`
whose `state` is "ran" (with a typed `CheckReply`), "not run" (no model) or
"failed" (the model failed after its retries, the reply did not parse or broke
the schema, a systematic API error), with the reason. A check that did not run
is never a pass.

Scripted replies (tests, the demo, evaluation) use the check tool's input JSON,
exactly what the model sends:

    {"claims": [{"claim": str, "passage": str | null, "supports": bool}, ...],
     "sentences": [{"sentence": str, "errors": [kind, ...], "wrong_fact": bool,
                    "rewrite": str, "reader_draft": str, "reader_rewrite": str,
                    "material": bool, "passage": str | null}, ...]}

with kinds from "factual", "attribution", "relation", "modality", "scope",
"time", "framing". `parse_check_input(value)` turns it into a `CheckReply`
(or raises `CheckReplyError`), `RecordedChecker` replays such replies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from guards.checks import (
    FAILED,
    NOT_RUN,
    RAN,
    CheckReply,
    Claim,
    SentenceJudgement,
    single_call,
)
from summarise import prompt, reply
from summarise.base import Article, BackendUnavailable

if TYPE_CHECKING:
    from summarise.base import CallRecord


class CheckSettings(BaseModel):
    """`[checks]` in config.toml: the checking model and its own settings (the
    judge need not be the writer), and whether a draft needs its checks to have
    run before an editor may approve it."""

    model_config = ConfigDict(extra="forbid")

    # auto: the model checks run when ANTHROPIC_API_KEY is set; off: never.
    backend: Literal["auto", "anthropic", "off"] = "auto"
    model: str = "claude-haiku-4-5"
    temperature: Literal[0, "model-default"] = 0
    max_tokens: int = Field(default=8192, gt=0)
    max_retries: int = Field(default=2, ge=0, le=10)
    timeout_seconds: float = Field(default=120, gt=0)
    retry_after_cap_seconds: float = Field(default=60, ge=0)  # longer waits: retried later
    # true: a draft whose checks did not run cannot be approved; false (default):
    # the editor may approve it and sees a warning, because a person is reading it.
    require: bool = False
    # How many times later runs re-check a draft whose checks failed for a passing
    # reason (an outage, a timeout, an overload); 0: never.
    recheck_attempts: int = Field(default=3, ge=0, le=20)
    # USD per million tokens per model; empty means those of [summarise.prices].
    prices: dict[str, dict[str, float]] = Field(default_factory=dict)


# --------------------------------------------------------------------------- the reply


class CheckReplyError(ValueError):
    """The reply holds no usable check: `kind` is "unparsed" (nothing to read) or
    "schema" (the tool input breaks the schema); the message says what."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


class _ClaimIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    claim: StrictStr
    passage: StrictStr | None
    supports: StrictBool


class _SentenceIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sentence: StrictStr
    errors: list[
        Literal["factual", "attribution", "relation", "modality", "scope", "time", "framing"]
    ]
    wrong_fact: StrictBool
    rewrite: StrictStr
    reader_draft: StrictStr
    reader_rewrite: StrictStr
    material: StrictBool
    passage: StrictStr | None


class _CheckIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    claims: list[_ClaimIn]
    sentences: list[_SentenceIn]


def parse_check_input(value: Any) -> CheckReply:
    """The check tool's input (a dict, or its JSON text) as a typed `CheckReply`."""
    try:
        checked = _CheckIn.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "input"
        raise CheckReplyError(
            f"the {prompt.CHECK_TOOL_NAME} input breaks the schema at {where}: {first['msg']}",
            "schema",
        ) from None
    return CheckReply(
        claims=tuple(Claim(c.claim, c.passage, c.supports) for c in checked.claims),
        sentences=tuple(
            SentenceJudgement(
                s.sentence,
                tuple(s.errors),
                s.wrong_fact,
                s.rewrite,
                s.reader_draft,
                s.reader_rewrite,
                s.material,
                s.passage,
            )
            for s in checked.sentences
        ),
    )


def parse_check(response: Any) -> CheckReply:
    """The check in a Messages API reply: its one `record_checks` call, else the
    last JSON object in the text that has claims and sentences. Two calls of the
    tool fail closed (`guards.checks.single_call`): which answer counts is not
    the model's to choose."""
    blocks = reply.content_blocks(response)
    tool = prompt.CHECK_TOOL_NAME
    calls = [str(b.get("name")) for b in blocks if b.get("type") == "tool_use"]
    twice = single_call(calls, tool)
    if twice:
        raise CheckReplyError(twice, "schema")
    inputs = [
        b.get("input") for b in blocks if b.get("type") == "tool_use" and b.get("name") == tool
    ]
    if not inputs:
        text = "".join(
            b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
        )
        inputs = [
            v
            for v in reply.json_values(text)
            if isinstance(v, dict) and ("claims" in v or "sentences" in v)
        ]
    if not inputs:
        raise CheckReplyError(f"the reply has no {tool} call and no check in its text", "unparsed")
    if len(inputs) > 1:
        raise CheckReplyError(
            f"the text holds {len(inputs)} checks; exactly one is accepted", "schema"
        )
    return parse_check_input(inputs[0])


# --------------------------------------------------------------------------- checkers


@dataclass
class CheckOutcome:
    """What one check produced. `reply` is set only when `state` is "ran"."""

    state: str  # RAN, NOT_RUN or FAILED
    reason: str | None = None
    reply: CheckReply | None = None
    checker: str = ""
    recorded_reply: bool = False
    calls: list[CallRecord] = field(default_factory=list)
    # A failure a later run may try again (an outage, a timeout, an overload); not a
    # missing key, a refused request or a reply that broke the schema, which would
    # fail the same way again.
    transient: bool = False
    # What the failure is about (summarise.base: TRANSIENT, SPEND_CAP, CONFIG...).
    kind: str | None = None


class Checker(Protocol):
    name: str

    def check(self, article: Article, draft: str) -> CheckOutcome:
        """Never raises; safe to call from threads."""
        ...


class NoChecker:
    """The model checks cannot run here; every outcome says why."""

    local = True  # no network call (pipeline/run.py `drafts_here`)

    def __init__(self, why: str = "no model"):
        self.name = "none"
        self.why = why

    def check(self, article: Article, draft: str) -> CheckOutcome:
        return CheckOutcome(NOT_RUN, self.why, checker=self.name)


class RecordedChecker:
    """Replays recorded check replies (the check tool's input JSON) by the
    article's URL as the pipeline hands it over (already canonical: the caller
    that builds `replies` canonicalises its keys the same way); other articles go
    to `fallback`, or are "not run (no model)"."""

    name = "recorded"

    def __init__(self, replies: Mapping[str, Any], fallback: Checker | None = None):
        self.replies = dict(replies)
        self.fallback = fallback or NoChecker()

    def check(self, article: Article, draft: str) -> CheckOutcome:
        raw = self.replies.get(article.url) if article.url else None
        if raw is None:
            return self.fallback.check(article, draft)
        from summarise.base import CallRecord  # the store, only when a check is made

        call = CallRecord(
            purpose="checks",
            backend="recorded",
            ok=True,
            response_json={"recorded_reply": True, "input": raw},
        )
        try:
            parsed = parse_check_input(raw)
        except CheckReplyError as exc:
            call.ok, call.error = False, str(exc)
            return CheckOutcome(FAILED, str(exc), checker="recorded reply (demo)", calls=[call])
        return CheckOutcome(
            RAN, None, parsed, checker="recorded reply (demo)", recorded_reply=True, calls=[call]
        )


__all__ = [
    "FAILED",
    "NOT_RUN",
    "RAN",
    "BackendUnavailable",
    "CheckOutcome",
    "CheckReplyError",
    "CheckSettings",
    "Checker",
    "NoChecker",
    "RecordedChecker",
    "parse_check",
    "parse_check_input",
]
