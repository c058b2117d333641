"""The Anthropic summariser: Claude at temperature 0, every HTTP attempt in the ledger.

How temperature 0 is kept with today's SDK: `anthropic` 2.x has no
`temperature` argument and sends API version 2026-10-21, which refuses sampling
parameters. So the request pins `anthropic-version: 2023-06-01` and sends
`temperature` through `extra_body`. Models that refuse sampling parameters on
any API version (generation 5, Opus 4.7 and later) are refused before the run
starts, and an API answer saying the same stops the run: temperature 0 is
never silently dropped.

Failures come back in two kinds. `BackendUnavailable` means no item can be
summarised (bad key, unknown model, temperature refused): the run must stop and
move no item. `SummaryFailed` is about one item; `transient` says whether a
later run should try again.

The SDK retries 429, 529 and 5xx by itself. A client middleware sees each HTTP
attempt, so each one becomes a `CallRecord`: an auditor sees the 529 that
preceded a good reply, not just the reply.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2
from anthropic import Middleware

from summarise import prompt, reply
from summarise.base import Article, BackendUnavailable, CallRecord, Draft, SummaryFailed
from summarise.settings import SummariseSettings

__all__ = ["AnthropicSummariser", "BackendUnavailable", "rejects_sampling_parameters"]
from summarise.pricing import cost_usd, price_for

log = logging.getLogger(__name__)

API_VERSION = "2023-06-01"  # the last API version that accepts sampling parameters
DEFAULT_MAX_RETRIES = 2
MAX_RECORDED_TEXT = 20_000  # a non-JSON response body is kept up to this many characters

# Words an API 400 uses when it refuses a sampling parameter.
_SAMPLING_WORDS = re.compile(r"\b(temperature|top_p|top_k|sampling)\b", re.IGNORECASE)
_BILLING_WORDS = re.compile(r"credit balance|billing|spend limit", re.IGNORECASE)
# Words of a 400/422 that blames the item itself (its length, its content): only
# these discard the item. Any other rejection is about the request's shape (a
# field the API no longer accepts, a malformed tool): every item would fail the
# same way, so the run stops and the backlog waits for a fixed configuration.
_ITEM_WORDS = re.compile(
    r"too long|too large|too many tokens|context (window|length)|maximum context|exceed"
    r"|must be non-empty|content (filter|policy)|blocked|utf-?8|unicode|surrogate",
    re.IGNORECASE,
)
# claude-<family>-<major>[-<minor>] and the older claude-<major>[-<minor>]-<family>.
_MODEL_NAME = re.compile(
    r"claude-(?:(?P<family>[a-z]+)-)?(?P<major>\d+)(?:[-.](?P<minor>\d{1,2})(?!\d))?"
    r"(?:-(?P<family_after>[a-z]+))?",
    re.IGNORECASE,
)


_DEFINITIVE = frozenset({401, 402, 403, 404})  # answers about the key or model, not the load


def _is_billing(error: anthropic.APIStatusError) -> bool:
    _kind, message = reply.error_summary(error.body)
    return error.status_code == 400 and bool(_BILLING_WORDS.search(message or ""))


def rejects_sampling_parameters(model: str) -> bool:
    """The static rule: generation-5 models and Opus 4.7 and later refuse
    `temperature` on every API version. Unknown name shapes are given the benefit
    of the doubt; the API's own 400 then stops the run."""
    match = _MODEL_NAME.search(model)
    if not match:
        return False
    family = (match["family"] or match["family_after"] or "").lower()
    version = (int(match["major"]), int(match["minor"] or 0))
    return version[0] >= 5 or (family == "opus" and version >= (4, 7))


def temperature_refused_message(model: str, temperature: float, api_said: str | None = None) -> str:
    said = f" (the API said: {api_said})" if api_said else ""
    return (
        f"model {model} does not accept temperature {temperature:g}{said}. Either choose a "
        f"model that accepts temperature 0 ([summarise] model in config.toml), or set "
        f'temperature = "model-default" in config.toml to accept the model\'s own sampling '
        f"knowingly."
    )


@dataclass(frozen=True)
class _Attempt:
    """One HTTP attempt as the middleware saw it."""

    status: int | None  # None: no response (timeout, connection failure)
    request_id: str | None
    latency_ms: int
    body: Any  # the response JSON, or its text when it is not JSON
    error: str | None


def _decode_body(response: httpx2.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text[:MAX_RECORDED_TEXT]


def _describe_status(status: int, body: Any) -> str:
    kind, message = reply.error_summary(body)
    if kind or message:
        return f"{status} {kind or 'error'}: {message or ''}".rstrip(": ")
    text = body.strip()[:200] if isinstance(body, str) and body.strip() else ""
    return f"{status} {text}".strip()


class _AttemptRecorder(Middleware):
    """Client middleware: runs once per HTTP attempt, inside the SDK's retry loop.

    Attempts go to the list of the `collect()` block open on the calling thread,
    so one client can serve many threads and each call gets its own attempts.
    """

    def __init__(self) -> None:
        self._local = threading.local()

    @contextmanager
    def collect(self) -> Iterator[list[_Attempt]]:
        attempts: list[_Attempt] = []
        self._local.attempts = attempts
        try:
            yield attempts
        finally:
            self._local.attempts = None

    def handle(self, request: Any, call_next: Any) -> Any:
        sink = getattr(self._local, "attempts", None)
        started = time.perf_counter()
        try:
            response = call_next(request)
        except anthropic.APIConnectionError as exc:
            if sink is not None:
                kind = "timeout" if isinstance(exc, anthropic.APITimeoutError) else "connection"
                cause = type(exc.__cause__).__name__ if exc.__cause__ else type(exc).__name__
                sink.append(_Attempt(None, None, _ms_since(started), None, f"{kind}: {cause}"))
            raise
        if sink is not None:
            http = response.http_response
            body = _decode_body(http)
            error = None if http.is_success else f"HTTP {_describe_status(http.status_code, body)}"
            request_id = http.headers.get("request-id")
            if request_id is None and isinstance(body, dict):
                request_id = body.get("request_id") or body.get("id")
            sink.append(_Attempt(http.status_code, request_id, _ms_since(started), body, error))
        return response


def _ms_since(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)


class AnthropicSummariser:
    """Summarises one article per Messages API call; safe to share across threads."""

    def __init__(
        self,
        settings: SummariseSettings,
        *,
        api_key: str,
        http_client: httpx2.Client | None = None,
        base_url: str | None = None,
        max_retries: int | None = None,
    ):
        self.settings = settings
        self.model = settings.model
        self.name = f"anthropic:{settings.model}"
        self.temperature: float | None = (
            None if settings.temperature == "model-default" else float(settings.temperature)
        )
        self.purpose = self.base_purpose()
        self.prompt_hash = prompt.prompt_hash(self.purpose)
        self.model_max_tokens: int | None = None  # learnt in preflight, caps the retry budget
        self._api_key = (api_key or "").strip()
        if max_retries is None:
            max_retries = getattr(settings, "max_retries", DEFAULT_MAX_RETRIES)
        self.max_retries = max_retries
        self._recorder = _AttemptRecorder()
        self._client: anthropic.Anthropic | None = None
        if self._api_key:
            self._client = anthropic.Anthropic(
                api_key=self._api_key,
                base_url=base_url,
                http_client=http_client,
                timeout=settings.timeout_seconds,
                max_retries=max_retries,
                default_headers={"anthropic-version": API_VERSION},
                middleware=[self._recorder],
            )

    def base_purpose(self) -> prompt.Purpose:
        """The purpose recorded on this backend's ledger rows (its hash is fixed)."""
        return prompt.summary_purpose(self.settings.summary_sentences)

    @property
    def temperature_in_force(self) -> bool:
        return self.temperature is not None

    # -- before the run ---------------------------------------------------

    def preflight(self) -> None:
        """Check, before any item is touched, that this backend can work at all.

        Raises `BackendUnavailable` with a one-line message: no key, a refused key,
        an unknown or retired model, or a model that refuses temperature 0.
        """
        client = self._require_client()
        if self.temperature_in_force and rejects_sampling_parameters(self.model):
            raise BackendUnavailable(temperature_refused_message(self.model, self.temperature))
        try:
            raw = client.models.with_raw_response.retrieve(self.model)
        except anthropic.APIStatusError as exc:
            if exc.status_code in _DEFINITIVE or _is_billing(exc):
                raise self._unavailable_from_status(exc) from None
            # An outage (429, 5xx, 529) is not a verdict on the configuration: the run
            # goes on, feeds are still polled, and items wait in `error` for a retry.
            log.warning("model check inconclusive (%s); going on", exc.status_code)
            return
        except anthropic.APIConnectionError as exc:
            log.warning(
                "could not reach the Anthropic API at %s (%s); going on, items will be retried",
                client.base_url,
                type(exc).__name__,
            )
            return
        info = _decode_body(raw.http_response)
        if not isinstance(info, dict):
            return
        if info.get("lifecycle") == "retired":
            raise BackendUnavailable(
                f"model {self.model} is retired: choose another [summarise] model in config.toml"
            )
        limit = info.get("max_tokens")
        if isinstance(limit, int) and limit > 0:
            self.model_max_tokens = limit
            if self.settings.max_tokens > limit:
                raise BackendUnavailable(
                    f"max_tokens = {self.settings.max_tokens} is more than model {self.model} "
                    f"can write ({limit}): lower [summarise] max_tokens in config.toml"
                )

    # -- one article --------------------------------------------------------

    def summarise(self, article: Article) -> Draft:
        """A draft from the article's own text, or `SummaryFailed` with every call made.

        A `max_tokens` stop is retried once with twice the budget (a model that
        thinks first can spend a small budget before writing a word).
        """
        calls: list[CallRecord] = []
        budget = self.settings.max_tokens
        for round_ in (1, 2):
            body = self.request_body(article, budget)
            response, error, tries = self._send(body, calls)
            if error is not None:
                raise self._failure(error, tries, calls)
            stop = reply.stop_reason(response)
            if stop == "max_tokens":
                larger = min(budget * 2, self.model_max_tokens or budget * 2)
                if round_ == 1 and larger > budget:
                    _mark_failed(calls, f"stop_reason max_tokens at {budget}: retrying at {larger}")
                    budget = larger
                    continue
                reason = (
                    "model reply truncated (max_tokens) twice"
                    if round_ == 2
                    else f"model reply truncated (max_tokens) at the model's limit of {budget}"
                )
                raise self._item_failed(reason, False, calls)
            if stop == "refusal":
                raise self._item_failed(
                    "model refused to summarise (stop_reason refusal)", False, calls
                )
            if stop == "model_context_window_exceeded":
                reason = (
                    "article too long for the model (stop_reason model_context_window_exceeded)"
                )
                raise self._item_failed(reason, False, calls)
            try:
                parsed = reply.parse_summary(response, tool=self.purpose.tool)
            except reply.NoUsableSummary as exc:
                reason = f"model reply had no usable summary: {exc}"
                raise self._item_failed(reason, True, calls) from None
            return Draft(
                headline=parsed.headline, summary=parsed.summary, backend=self.name, calls=calls
            )
        raise AssertionError("unreachable: the second round always returns or raises")

    def request_body(self, article: Article, max_tokens: int) -> dict[str, Any]:
        """Exactly what goes to POST /v1/messages (the key travels in a header, never
        here). Built by `prompt.request_for`, so it shares its cached prefix (tools,
        system, article block) with every other purpose's request for this item."""
        return prompt.request_for(
            self.purpose,
            article,
            model=self.model,
            max_tokens=max_tokens,
            temperature=self.temperature,
        )

    # -- the call -----------------------------------------------------------

    def _send(
        self, body: dict[str, Any], calls: list[CallRecord]
    ) -> tuple[Any, anthropic.APIError | None, int]:
        """One logical call (the SDK may make several attempts); each attempt is
        appended to `calls`. Returns the reply JSON or the error the SDK gave up
        with, and the number of HTTP attempts."""
        client = self._require_client()
        params = dict(body)
        extra_body = {"temperature": params.pop("temperature")} if "temperature" in params else None
        error: anthropic.APIError | None = None
        response: Any = None
        with self._recorder.collect() as attempts:
            try:
                raw = client.messages.with_raw_response.create(**params, extra_body=extra_body)
                response = _decode_body(raw.http_response)
            except anthropic.APIError as exc:
                error = exc
        if not attempts:  # the SDK failed before sending anything
            attempts = [_Attempt(None, None, 0, None, f"{type(error).__name__}: no HTTP attempt")]
        calls.extend(self._record(body, attempt) for attempt in attempts)
        return response, error, len(attempts)

    def _record(self, body: dict[str, Any], attempt: _Attempt) -> CallRecord:
        ok = attempt.status is not None and 200 <= attempt.status < 300
        answered = attempt.body if isinstance(attempt.body, dict) else {}
        served_model = (
            answered.get("model") if ok and isinstance(answered.get("model"), str) else None
        )
        used = reply.usage(attempt.body) if ok else reply.Usage()
        price = price_for(self.settings.prices, self.model, served_model)
        record = CallRecord(
            purpose=self.purpose.name,
            backend=self.name,
            model=served_model or self.model,
            api_version=API_VERSION,
            temperature=self.temperature,
            temperature_in_force=self.temperature_in_force,
            prompt_version=self.purpose.version,
            prompt_hash=self.prompt_hash,
            request_id=attempt.request_id,
            input_tokens=used.input_tokens,
            output_tokens=used.output_tokens,
            cache_creation_tokens=used.cache_creation_tokens,
            cache_read_tokens=used.cache_read_tokens,
            latency_ms=attempt.latency_ms,
            stop_reason=reply.stop_reason(attempt.body) if ok else None,
            cost_usd=cost_usd(used, price) if ok else None,
            ok=ok,
            error=self._scrub(attempt.error) if attempt.error else None,
            request_json=json.loads(json.dumps(body)),
            response_json=attempt.body,
        )
        log.debug(
            "model call %s: status %s, %s ms, stop %s",
            record.request_id,
            attempt.status,
            record.latency_ms,
            record.stop_reason,
        )
        return record

    # -- failures -----------------------------------------------------------

    def _failure(
        self, error: anthropic.APIError, tries: int, calls: list[CallRecord]
    ) -> BackendUnavailable | SummaryFailed:
        """What the SDK's final error (after `tries` HTTP attempts) means: for the
        whole run, or for this item only. When in doubt, transient: a wrong
        "transient" costs a retry, a wrong "permanent" loses an item."""
        if isinstance(error, anthropic.APIStatusError):
            status = error.status_code
            kind, message = reply.error_summary(error.body)
            if (
                status == 400
                and self.temperature_in_force
                and _SAMPLING_WORDS.search(message or "")
            ):
                return BackendUnavailable(
                    temperature_refused_message(self.model, self.temperature or 0.0, message),
                    calls=calls,
                )
            if status in (401, 402, 403, 404) or (
                status == 400 and _BILLING_WORDS.search(message or "")
            ):
                unavailable = self._unavailable_from_status(error)
                unavailable.calls = calls
                return unavailable
            detail = _describe_status(status, error.body)
            if status == 413 or (status in (400, 422) and _ITEM_WORDS.search(message or "")):
                return self._item_failed(f"model API rejected the request ({detail})", False, calls)
            if status in (400, 422):
                return BackendUnavailable(
                    self._scrub(
                        f"the model API rejects the shape of copydesk's requests ({detail}); "
                        "every item would fail the same way, so none was discarded: check "
                        "[summarise] in config.toml or upgrade copydesk"
                    ),
                    calls=calls,
                )
            return self._item_failed(
                f"model API failed after {tries} attempt(s) ({detail})", True, calls
            )
        if isinstance(error, anthropic.APITimeoutError):
            reason = (
                f"model API timed out after {tries} attempt(s) "
                f"({self.settings.timeout_seconds:g} s each)"
            )
            return self._item_failed(reason, True, calls)
        if isinstance(error, anthropic.APIConnectionError):
            cause = type(error.__cause__).__name__ if error.__cause__ else "connection error"
            return self._item_failed(
                f"could not reach the model API after {tries} attempt(s) ({cause})", True, calls
            )
        return self._item_failed(f"model API error ({type(error).__name__})", True, calls)

    def _unavailable_from_status(self, error: anthropic.APIStatusError) -> BackendUnavailable:
        status = error.status_code
        kind, message = reply.error_summary(error.body)
        if status in (401, 403):
            text = f"ANTHROPIC_API_KEY was refused by the API ({status}): check the key"
        elif status == 404:
            text = (
                f"model {self.model} is unknown to the API (404): "
                "check [summarise] model in config.toml"
            )
        elif status == 402 or _BILLING_WORDS.search(message or ""):
            text = (
                f"the API will not bill this key ({status}: {message or kind}): check the account"
            )
        else:
            detail = _describe_status(status, error.body)
            text = f"the Anthropic API is not usable right now ({detail})"
        return BackendUnavailable(self._scrub(text))

    def _item_failed(self, reason: str, transient: bool, calls: list[CallRecord]) -> SummaryFailed:
        reason = self._scrub(reason)
        _mark_failed(calls, reason)
        return SummaryFailed(reason, transient=transient, calls=calls)

    # -- helpers ------------------------------------------------------------

    def _require_client(self) -> anthropic.Anthropic:
        if self._client is None:
            raise BackendUnavailable(
                'ANTHROPIC_API_KEY is not set: set it, or choose backend = "extractive" '
                "in config.toml"
            )
        return self._client

    def _scrub(self, text: str) -> str:
        """Belt and braces: no message we produce may carry the key."""
        return text.replace(self._api_key, "[redacted]") if self._api_key else text


def _mark_failed(calls: list[CallRecord], reason: str) -> None:
    """The last call answered but its reply is not a draft: say so on its ledger row."""
    if calls and calls[-1].ok:
        calls[-1].ok = False
        calls[-1].error = reason
