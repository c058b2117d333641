"""The Anthropic summariser: Claude at temperature 0, every HTTP attempt in the ledger.

How temperature 0 is kept with today's SDK: `anthropic` 2.x has no
`temperature` argument and sends API version 2026-10-21, which refuses sampling
parameters. So the request pins `anthropic-version: 2023-06-01` and sends
`temperature` through `extra_body`. Models that refuse sampling parameters on
any API version (generation 5, Opus 4.7 and later) are refused before the run
starts, and an API answer saying the same stops the run: temperature 0 is
never silently dropped.

Failures come back in two kinds. `BackendUnavailable` means no item can be
summarised (bad key, unknown model, temperature refused, the spend cap): the run
must stop and move no item. `SummaryFailed` is about one item; `transient` says
whether a later run should try again, `kind` what the failure is about.

Errors are classified by HTTP status, the documented `error.type` and
`error.details.error_code`, never by the words of the message (docs: "Errors":
400 invalid_request_error, 401 authentication_error, 402 billing_error, 403
permission_error, 404 not_found_error, 413 request_too_large, 429
rate_limit_error, 500 api_error, 529 overloaded_error; the monthly spend cap is a
429 rate_limit_error whose `error.details.error_code` is
`enforced_spend_limit_reached`, with no retry-after, and retrying fails until the
next month). A 400/413/422 is `REJECTED`: whether it is this article's fault or
every request's is for the caller to tell (other items succeeding, or not).

The SDK retries 429, 529 and 5xx by itself. A client middleware sees each HTTP
attempt, so each one becomes a `CallRecord`: an auditor sees the 529 that
preceded a good reply, not just the reply.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2
from anthropic import Middleware

from summarise import prompt, reply
from summarise.base import (
    CALL_JOURNAL,
    CONFIG,
    CONTENT,
    REJECTED,
    SPEND_CAP,
    TRANSIENT,
    Article,
    BackendUnavailable,
    CallRecord,
    Draft,
    LeaseLost,
    SummaryFailed,
)
from summarise.capabilities import (
    ModelCapabilities,
    Price,
    capabilities,
    cost_usd,
    rejects_sampling_parameters,
)
from summarise.settings import SummariseSettings

__all__ = ["AnthropicSummariser", "BackendUnavailable", "rejects_sampling_parameters"]

log = logging.getLogger(__name__)

API_VERSION = "2023-06-01"  # the last API version that accepts sampling parameters
DEFAULT_MAX_RETRIES = 2
MAX_RECORDED_TEXT = 20_000  # a non-JSON response body is kept up to this many characters

SPEND_CAP_CODE = "enforced_spend_limit_reached"  # error.details.error_code of the 429
DEFAULT_RETRY_AFTER_CAP = 60.0  # seconds: a longer retry-after releases the item instead
_DEFINITIVE = frozenset({401, 402, 403, 404})  # answers about the key or model, not the load
_TRANSIENT_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def error_code(body: Any) -> str | None:
    """`error.details.error_code` of an API error body, when it has one."""
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    code = details.get("error_code") if isinstance(details, dict) else None
    return code if isinstance(code, str) else None


def is_spend_cap(status: int | None, body: Any) -> bool:
    return status == 429 and error_code(body) == SPEND_CAP_CODE


def retry_after_seconds(headers: Any) -> float | None:
    """The wait the API asked for: `retry-after-ms`, else `retry-after` in seconds
    (docs: "Rate limits": a 429 carries retry-after, seconds to wait)."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / scale)
        except (TypeError, ValueError):
            continue
    return None


def temperature_refused_message(
    model: str, temperature: float, api_said: str | None = None, section: str = "summarise"
) -> str:
    said = f" (the API said: {api_said})" if api_said else ""
    return (
        f"model {model} does not accept temperature {temperature:g}{said}. Either choose a "
        f"model that accepts temperature 0 ([{section}] model in config.toml), or set "
        f'temperature = "model-default" in [{section}] to accept the model\'s own sampling '
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
    row_id: int | None = None  # the ledger row written before it was sent


@dataclass(frozen=True)
class _Body:
    """One call's request body and its JSON text, made once a call (issue 24, session
    15: the in-flight row's estimate and each ledger record's copy made three texts
    of it and read two back). `copy` is the body as JSON gives it back, apart from
    the dict the SDK is handed: every record of the call (the one begun in flight and
    one an attempt) holds it, and nothing changes it (store/ledger.py `split` copies
    before it replaces parts)."""

    request: dict[str, Any]
    text: str
    copy: Any

    @classmethod
    def of(cls, request: dict[str, Any]) -> _Body:
        text = json.dumps(request)
        return cls(request, text, json.loads(text))


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

    def __init__(self, retry_after_cap: float = DEFAULT_RETRY_AFTER_CAP) -> None:
        self._local = threading.local()
        self.retry_after_cap = retry_after_cap

    @contextmanager
    def collect(self, begin: Callable[[], int | None] | None = None) -> Iterator[list[_Attempt]]:
        """Attempts made on this thread inside the block; `begin`, when given, runs
        before each attempt is sent (it writes the in-flight ledger row, and raises
        `LeaseLost` to send nothing: the SDK lets a middleware's exception through
        as it is, without a retry)."""
        attempts: list[_Attempt] = []
        self._local.attempts = attempts
        self._local.begin = begin
        try:
            yield attempts
        finally:
            self._local.attempts = None
            self._local.begin = None

    def handle(self, request: Any, call_next: Any) -> Any:
        sink = getattr(self._local, "attempts", None)
        begin = getattr(self._local, "begin", None)
        row_id = begin() if begin is not None else None
        started = time.perf_counter()
        try:
            response = call_next(request)
        except anthropic.APIConnectionError as exc:
            if sink is not None:
                kind = "timeout" if isinstance(exc, anthropic.APITimeoutError) else "connection"
                cause = type(exc.__cause__).__name__ if exc.__cause__ else type(exc).__name__
                error = f"{kind}: {cause}"
                sink.append(_Attempt(None, None, _ms_since(started), None, error, row_id))
            raise
        http = response.http_response
        if not http.is_success:
            self._stop_futile_retries(http)
        if sink is not None:
            body = _decode_body(http)
            error = None if http.is_success else f"HTTP {_describe_status(http.status_code, body)}"
            request_id = http.headers.get("request-id")
            if request_id is None and isinstance(body, dict):
                request_id = body.get("request_id") or body.get("id")
            attempt = _Attempt(
                http.status_code, request_id, _ms_since(started), body, error, row_id
            )
            sink.append(attempt)
        return response

    def _stop_futile_retries(self, http: httpx2.Response) -> None:
        """Tell the SDK not to retry (its documented `x-should-retry: false`) when
        a retry cannot help or would hold a worker too long: the spend cap (usage
        stops until next month), or a retry-after longer than the cap (the SDK
        would otherwise sleep as long as the server asks). The item goes back to
        the queue with the wait recorded instead."""
        try:
            body = http.json()
        except ValueError:
            body = None
        wait = retry_after_seconds(http.headers)
        if is_spend_cap(http.status_code, body) or (
            wait is not None and wait > self.retry_after_cap
        ):
            http.headers["x-should-retry"] = "false"


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
        self.caps: ModelCapabilities = capabilities(settings.model, config_prices=settings.prices)
        self.purpose = self.base_purpose()
        self.prompt_hash = prompt.prompt_hash(
            self.purpose,
            forced_tool=self.caps.forced_tool_choice,
            strict=self.caps.structured_outputs,
        )
        self.model_max_tokens: int | None = None  # learnt in preflight, caps the retry budget
        self.retry_after_cap = float(
            getattr(settings, "retry_after_cap_seconds", DEFAULT_RETRY_AFTER_CAP)
        )
        self._api_key = (api_key or "").strip()
        if max_retries is None:
            max_retries = getattr(settings, "max_retries", DEFAULT_MAX_RETRIES)
        self.max_retries = max_retries
        self._recorder = _AttemptRecorder(self.retry_after_cap)
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

    section = "summarise"  # the config.toml section that configures this backend

    def base_purpose(self) -> prompt.Purpose:
        """The purpose recorded on this backend's ledger rows (its hash is fixed)."""
        return prompt.summary_purpose(self.settings.summary_sentences)

    def temperature_note(self) -> str:
        """What this backend does with temperature, in words (doctor, models, audit)."""
        if self.temperature_in_force:
            return f"temperature {self.temperature:g} sent"
        why = (
            "the model refuses sampling parameters"
            if not self.caps.sampling
            else "accepted knowingly in config.toml"
        )
        return f'not sent: temperature = "model-default" ({why})'

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
        if self.temperature_in_force and not self.caps.sampling:
            raise BackendUnavailable(
                temperature_refused_message(
                    self.model, self.temperature or 0.0, section=self.section
                )
            )
        try:
            raw = client.models.with_raw_response.retrieve(self.model)
        except anthropic.APIStatusError as exc:
            if exc.status_code in _DEFINITIVE or is_spend_cap(exc.status_code, exc.body):
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
        self.learn(info)
        if self.caps.lifecycle == "retired":
            raise BackendUnavailable(
                f"model {self.model} is retired: choose another [{self.section}] model "
                "in config.toml"
            )
        limit = self.caps.max_output_tokens if "max_tokens" in info else None
        if isinstance(limit, int) and limit > 0:
            self.model_max_tokens = limit
            if self.settings.max_tokens > limit:
                raise BackendUnavailable(
                    f"max_tokens = {self.settings.max_tokens} is more than model {self.model} "
                    f"can write ({limit}): lower [{self.section}] max_tokens in config.toml"
                )

    def learn(self, models_api: dict[str, Any]) -> None:
        """Take what the Models API reported for this model into its capabilities."""
        self.caps = capabilities(
            self.model, models_api=models_api, config_prices=self.settings.prices
        )
        self.prompt_hash = prompt.prompt_hash(
            self.purpose,
            forced_tool=self.caps.forced_tool_choice,
            strict=self.caps.structured_outputs,
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
        return self.build_request(self.purpose, article, max_tokens)

    def build_request(
        self, purpose: prompt.Purpose, article: Article, max_tokens: int
    ) -> dict[str, Any]:
        """A request for `purpose` built from the model's capabilities: temperature
        only where accepted (never silently dropped: refused in preflight unless
        "model-default"), the forced tool choice where accepted, strict tool
        schemas where the model offers structured outputs, and a cache breakpoint
        only where the prefix can reach the model's minimum."""
        return prompt.request_for(
            purpose,
            article,
            model=self.model,
            max_tokens=max_tokens,
            # Sent whenever configured: preflight refuses a model that refuses it, and
            # the API's own 400 stops the run; it is never dropped silently.
            temperature=self.temperature,
            forced_tool=self.caps.forced_tool_choice,
            strict=self.caps.structured_outputs,
            cache=prompt.wants_cache(article, self.caps.min_cacheable_tokens),
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
        lost: LeaseLost | None = None
        made = _Body.of(body)
        journal = CALL_JOURNAL.get()
        begin = (lambda: journal.begin(self._in_flight(made))) if journal is not None else None
        with self._recorder.collect(begin) as attempts:
            try:
                client.messages.with_raw_response.create(**params, extra_body=extra_body)
                # The reply the SDK returned is its last attempt's, which the middleware
                # decoded for its record: not parsed again (issue 24, session 15).
                response = attempts[-1].body
            except anthropic.APIError as exc:
                error = exc
            except LeaseLost as exc:  # raised before the attempt was sent
                lost = exc
        if lost is not None:
            calls.extend(self._record(made, attempt) for attempt in attempts)
            raise LeaseLost(str(lost), calls)
        if not attempts:  # the SDK failed before sending anything
            attempts = [_Attempt(None, None, 0, None, f"{type(error).__name__}: no HTTP attempt")]
        calls.extend(self._record(made, attempt) for attempt in attempts)
        return response, error, len(attempts)

    def _in_flight(self, body: _Body) -> CallRecord:
        """The row of an attempt about to be sent: what goes out, and an upper estimate
        of its cost (about 3 bytes a token for the prompt, the whole output budget)."""
        estimate = cost_usd(
            reply.Usage(
                input_tokens=len(body.text) // 3 + 1,
                output_tokens=int(body.request.get("max_tokens") or 0),
            ),
            self.caps.price,
        )
        return self._call_record(
            body, ok=False, error="in flight", state="in_flight", cost_estimate_usd=estimate
        )

    def _call_record(self, body: _Body, **fields: Any) -> CallRecord:
        """A ledger record of `body` for this backend and purpose, with `fields`."""
        return CallRecord(
            purpose=self.purpose.name,
            backend=self.name,
            model=self.model,
            api_version=API_VERSION,
            temperature=body.request.get("temperature"),
            temperature_in_force="temperature" in body.request,
            prompt_version=self.purpose.version,
            prompt_hash=self.prompt_hash,
            request_json=body.copy,
            **fields,
        )

    def _record(self, body: _Body, attempt: _Attempt) -> CallRecord:
        ok = attempt.status is not None and 200 <= attempt.status < 300
        answered = attempt.body if isinstance(attempt.body, dict) else {}
        served_model = (
            answered.get("model") if ok and isinstance(answered.get("model"), str) else None
        )
        used = reply.usage(attempt.body) if ok else reply.Usage()
        price = self._price(served_model)
        record = self._call_record(
            body,
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
            response_json=attempt.body,
        )
        record.model = served_model or self.model
        record._row_id = attempt.row_id
        log.debug(
            "model call %s: status %s, %s ms, stop %s",
            record.request_id,
            attempt.status,
            record.latency_ms,
            record.stop_reason,
        )
        return record

    def _price(self, served_model: str | None) -> Price | None:
        """The price of this call: config.toml's for the exact id the API served,
        else this model's (config, then the shipped table); None when unknown."""
        if served_model and served_model in self.settings.prices:
            exact = Price.from_mapping(self.settings.prices[served_model])
            if exact is not None:
                return exact
        return self.caps.price

    # -- failures -----------------------------------------------------------

    def _failure(
        self, error: anthropic.APIError, tries: int, calls: list[CallRecord]
    ) -> BackendUnavailable | SummaryFailed:
        """What the SDK's final error (after `tries` HTTP attempts) means, read
        from the status, `error.type` and `error.details.error_code` only (see the
        module). When in doubt, transient: a wrong "transient" costs a retry, a
        wrong "permanent" loses an item."""
        if isinstance(error, anthropic.APIStatusError):
            status = error.status_code
            detail = _describe_status(status, error.body)
            if is_spend_cap(status, error.body) or status in _DEFINITIVE:
                unavailable = self._unavailable_from_status(error)
                unavailable.calls = calls
                return unavailable
            wait = retry_after_seconds(getattr(error.response, "headers", None))
            if status in _TRANSIENT_STATUS or status >= 500:
                failed = self._item_failed(
                    f"model API failed after {tries} attempt(s) ({detail})",
                    True,
                    calls,
                    kind=TRANSIENT,
                )
                failed.retry_after = wait
                return failed
            # 400, 413, 422 and any other 4xx: the API refused this request. Whether
            # the article provoked it or every request would is the caller's to tell.
            hint = ""
            if self.temperature_in_force:
                hint = (
                    f"; if the model refuses temperature, set temperature = "
                    f'"model-default" in [{self.section}]'
                )
            # Until the caller can tell, the run stops and nothing is discarded: one
            # discarded backlog for a request shape every item shares is worse than a
            # stopped cron run.
            return BackendUnavailable(
                self._scrub(
                    f"model API rejected the request ({detail}){hint}; nothing was "
                    f"discarded: check [{self.section}] in config.toml"
                ),
                calls=calls,
                kind=REJECTED,
            )
        if isinstance(error, anthropic.APITimeoutError):
            reason = (
                f"model API timed out after {tries} attempt(s) "
                f"({self.settings.timeout_seconds:g} s each)"
            )
            return self._item_failed(reason, True, calls, kind=TRANSIENT)
        if isinstance(error, anthropic.APIConnectionError):
            cause = type(error.__cause__).__name__ if error.__cause__ else "connection error"
            return self._item_failed(
                f"could not reach the model API after {tries} attempt(s) ({cause})",
                True,
                calls,
                kind=TRANSIENT,
            )
        return self._item_failed(
            f"model API error ({type(error).__name__})", True, calls, kind=TRANSIENT
        )

    def _unavailable_from_status(self, error: anthropic.APIStatusError) -> BackendUnavailable:
        status = error.status_code
        kind, message = reply.error_summary(error.body)
        if is_spend_cap(status, error.body):
            return BackendUnavailable(
                self._scrub(
                    f"the Anthropic spend cap is reached (429 {SPEND_CAP_CODE}): API usage "
                    "stops until the cap resets (the first of next month) or the tier is "
                    "raised; nothing was discarded"
                ),
                kind=SPEND_CAP,
            )
        if status in (401, 403):
            text = f"ANTHROPIC_API_KEY was refused by the API ({status}): check the key"
        elif status == 404:
            text = (
                f"model {self.model} is unknown to the API (404): "
                f"check [{self.section}] model in config.toml"
            )
        elif status == 402:
            text = (
                f"the API will not bill this key ({status}: {message or kind}): check the account"
            )
        else:
            detail = _describe_status(status, error.body)
            text = f"the Anthropic API is not usable right now ({detail})"
        return BackendUnavailable(self._scrub(text), kind=CONFIG)

    def _item_failed(
        self, reason: str, transient: bool, calls: list[CallRecord], *, kind: str | None = None
    ) -> SummaryFailed:
        reason = self._scrub(reason)
        _mark_failed(calls, reason)
        kind = kind or (TRANSIENT if transient else CONTENT)
        return SummaryFailed(reason, transient=transient, calls=calls, kind=kind)

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
