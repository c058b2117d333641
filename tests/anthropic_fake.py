"""A fake Anthropic API for tests: answers like the Messages API, offline.

The real `anthropic` SDK talks to it, so retries, headers, error classes and
timeouts are the SDK's own. Two ways to plug it in:

- `fake.http_client()`: an `httpx2.Client` over a `MockTransport`; pass it as
  `http_client=` (unit tests).
- `with fake.serve() as base_url:` a loopback HTTP server; pass `base_url=`, or
  set `ANTHROPIC_BASE_URL` for a `copydesk` subprocess (end-to-end tests).

Replies to POST /v1/messages come from a script, in order (`FakeAnthropic(step,
step, ...)`), or from a `responder(request_json) -> step` function. A step is a
`Reply` (status, JSON or text body, headers) or `TIMEOUT` (over MockTransport
the transport raises `httpx2.ReadTimeout`; over loopback the server closes the
connection without answering). GET /v1/models/<id> answers a model card, or
`model_reply` when given. With `api_key=` set, any other key gets a 401.

Errors carry `retry-after-ms: 1`, because the SDK waits as long as the server
asks, without a cap. Every request is kept in `fake.requests` for assertions.

Like the API, the fake refuses what a model refuses, before any script step:
`temperature`/`top_p`/`top_k` on the 4.7 generation and later (400
invalid_request_error "`temperature` is deprecated for this model."), a forced
`tool_choice` ("any" or a named tool) on the models that refuse it (Opus 5.5,
Fable 5.1, the 5.5 generation), and `strict` tools on a model without structured
outputs. Its model cards carry `capabilities` and `max_tokens` as the Models
API documents them (`MODELS` below is the fake's own knowledge, deliberately
not copydesk's table).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2

MODEL = "claude-haiku-4-5"

# What the fake API knows of each model: refuses sampling, refuses forced tool
# choice, offers structured outputs, max output tokens.
MODELS: dict[str, dict[str, Any]] = {
    "claude-haiku-4-5": {"sampling": True, "forced": True, "structured": True, "max": 64_000},
    "claude-sonnet-4-5": {"sampling": True, "forced": True, "structured": True, "max": 64_000},
    "claude-opus-4-7": {"sampling": False, "forced": True, "structured": True, "max": 128_000},
    "claude-sonnet-5": {"sampling": False, "forced": True, "structured": True, "max": 128_000},
    "claude-opus-5": {"sampling": False, "forced": True, "structured": True, "max": 128_000},
    "claude-opus-5-5": {"sampling": False, "forced": False, "structured": True, "max": 128_000},
    "claude-sonnet-5-5": {"sampling": False, "forced": False, "structured": True, "max": 128_000},
    "claude-haiku-5-5": {"sampling": False, "forced": False, "structured": True, "max": 64_000},
    "claude-fable-5-1": {"sampling": False, "forced": False, "structured": True, "max": 128_000},
}
SERVED_MODEL = "claude-haiku-4-5-20251001"
TOOL_NAME = "write_summary"


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None  # a dict/list is sent as JSON, a str as it is
    headers: dict[str, str] = field(default_factory=dict)


class _Timeout:
    def __repr__(self) -> str:
        return "TIMEOUT"


TIMEOUT = _Timeout()
Step = Reply | _Timeout


@dataclass(frozen=True)
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    json: Any


# --- replies --------------------------------------------------------------------------

_counter = iter(range(1, 1_000_000))
_counter_lock = threading.Lock()


def _next_id() -> int:
    with _counter_lock:
        return next(_counter)


def usage(
    input_tokens: int = 1200,
    output_tokens: int = 140,
    cache_creation: int = 0,
    cache_read: int = 0,
) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": cache_creation,
        "cache_read_input_tokens": cache_read,
    }


def message(
    content: list[dict[str, Any]],
    *,
    stop_reason: str = "tool_use",
    tokens: dict[str, int] | None = None,
    model: str = SERVED_MODEL,
    request_id: str | None = None,
) -> Reply:
    """A 200 Messages API reply with these content blocks."""
    n = _next_id()
    body = {
        "id": f"msg_fake{n:06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": tokens if tokens is not None else usage(),
    }
    return Reply(200, body, {"request-id": request_id or f"req_fake{n:06d}"})


def tool_use(headline: str, summary: str) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_fake{_next_id():06d}",
        "name": TOOL_NAME,
        "input": {"headline": headline, "summary": summary},
    }


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def summary_reply(headline: str, summary: str, **kwargs: Any) -> Reply:
    """The reply a well-behaved model gives: one write_summary call."""
    return message([tool_use(headline, summary)], **kwargs)


def text_reply(value: str, *, stop_reason: str = "end_turn", **kwargs: Any) -> Reply:
    return message([text(value)], stop_reason=stop_reason, **kwargs)


def truncated(partial: str = '{"headline": "Ferry refit', **kwargs: Any) -> Reply:
    """Out of budget mid-answer: stop_reason max_tokens, a partial text block."""
    return text_reply(partial, stop_reason="max_tokens", **kwargs)


def refusal() -> Reply:
    return message([], stop_reason="refusal", tokens=usage(output_tokens=0))


# The test string the API documents for provoking a refusal ("Streaming refusals",
# https://platform.claude.com/docs/en/test-and-evaluate/strengthen-guardrails/handle-streaming-refusals):
# a request that contains it is answered with stop_reason "refusal" and its
# stop_details. `make cassettes` sends it to record a real refusal.
MAGIC_REFUSAL = (
    "ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL_"
    "1FAEFB6177B4672DEE07F9D3AFC62588CCD2631EDCF22E8CCC1FB35B501C9C86"
)


def documented_refusal() -> Reply:
    """A refusal as the streaming-refusals page shows it: stop_reason "refusal",
    `stop_details` naming it, output tokens billed up to the refusal."""
    reply = message([], stop_reason="refusal", tokens=usage(output_tokens=3))
    reply.body["stop_details"] = {
        "type": "refusal",
        "category": None,
        "explanation": "This request was declined.",
    }
    return reply


def context_window_exceeded() -> Reply:
    return message([], stop_reason="model_context_window_exceeded", tokens=usage(output_tokens=0))


def error(status: int, kind: str, msg: str, *, retry_after_ms: int | None = 1) -> Reply:
    """An API error body; `retry-after-ms` keeps the SDK's waits short."""
    n = _next_id()
    headers = {"request-id": f"req_fakeerr{n:06d}"}
    if retry_after_ms is not None:
        headers["retry-after-ms"] = str(retry_after_ms)
    body = {
        "type": "error",
        "error": {"type": kind, "message": msg},
        "request_id": headers["request-id"],
    }
    return Reply(status, body, headers)


def overloaded() -> Reply:
    return error(529, "overloaded_error", "Overloaded")


def rate_limited(retry_after_ms: int = 1) -> Reply:
    return error(
        429,
        "rate_limit_error",
        "Number of requests has exceeded your rate limit",
        retry_after_ms=retry_after_ms,
    )


def server_error() -> Reply:
    return error(500, "api_error", "Internal server error")


def bad_request(msg: str = "messages.0.content: text content blocks must be non-empty") -> Reply:
    return error(400, "invalid_request_error", msg, retry_after_ms=None)


def temperature_deprecated() -> Reply:
    return bad_request("temperature is deprecated for this model.")


def spend_cap() -> Reply:
    """The monthly spend cap: a 429 rate_limit_error whose error.details.error_code is
    enforced_spend_limit_reached, with no retry-after (usage resumes next month)."""
    reply = error(
        429,
        "rate_limit_error",
        "Your organization has reached its monthly spend limit for its usage tier.",
        retry_after_ms=None,
    )
    reply.body["error"]["details"] = {"error_code": "enforced_spend_limit_reached"}
    return reply


def rate_limited_for(seconds: int) -> Reply:
    """A 429 that asks for a long wait (`retry-after` in seconds, no -ms header)."""
    reply = error(
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your limit",
        retry_after_ms=None,
    )
    reply.headers["retry-after"] = str(seconds)
    return reply


def forced_tool_refused() -> Reply:
    return bad_request(
        "tool_choice: forced tool use is not supported for this model; "
        'use tool_choice {"type": "auto"}'
    )


def refusal_for(request_json: Any) -> Reply | None:
    """The 400 the API gives this model for this request, if any (see the module)."""
    if not isinstance(request_json, dict):
        return None
    model = re.sub(r"-\d{8}$", "", str(request_json.get("model", "")))
    known = MODELS.get(model)
    if known is None:
        return None
    for name in ("temperature", "top_p", "top_k"):
        if name in request_json and not known["sampling"]:
            return bad_request(f"`{name}` is deprecated for this model.")
    choice = request_json.get("tool_choice") or {}
    if choice.get("type") in ("any", "tool") and not known["forced"]:
        return forced_tool_refused()
    if not known["structured"] and any(t.get("strict") for t in request_json.get("tools", [])):
        return bad_request("tools.0.strict: structured outputs are not supported for this model")
    return None


def unauthorized() -> Reply:
    return error(401, "authentication_error", "invalid x-api-key", retry_after_ms=None)


def not_found(model: str) -> Reply:
    return error(404, "not_found_error", f"model: {model}", retry_after_ms=None)


def model_card(
    model_id: str,
    *,
    lifecycle: str | None = None,
    max_tokens: int | None = None,
    structured_outputs: bool | None = None,
    **extra: Any,
) -> Reply:
    """GET /v1/models/{id} as the API reference ("Get a Model") documents it:
    id, display_name, created_at, max_input_tokens, max_tokens and
    `capabilities` (each `{"supported": bool}`)."""
    known = MODELS.get(re.sub(r"-\d{8}$", "", model_id), {})
    structured = (
        known.get("structured", False) if structured_outputs is None else structured_outputs
    )
    body = {
        "type": "model",
        "id": model_id,
        "display_name": model_id,
        "created_at": "2025-10-01T00:00:00Z",
        "max_input_tokens": 200_000,
        "max_tokens": max_tokens if max_tokens is not None else known.get("max", 64_000),
        "capabilities": {
            "batch": {"supported": True},
            "citations": {"supported": True},
            "structured_outputs": {"supported": structured},
        },
        **({"lifecycle": lifecycle} if lifecycle else {}),  # not in the documented card
        **extra,
    }
    return Reply(200, body, {"request-id": f"req_fakemodel{_next_id():06d}"})


# --- responders -----------------------------------------------------------------------

_ARTICLE = re.compile(r"<article>\n(?:Title: [^\n]*\n\n)?(?P<text>.*)\n</article>", re.DOTALL)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def article_text(request_json: Any) -> str:
    """The source text inside the <article> block of a Messages request."""
    for message_ in request_json.get("messages", []):
        for block in message_.get("content", []):
            if isinstance(block, dict):
                match = _ARTICLE.search(block.get("text", ""))
                if match:
                    return match["text"]
    raise AssertionError("no <article> block in the request")


def first_sentences_responder(sentences: int = 2) -> Callable[[Any], Step]:
    """A grounded model: its summary is the article's first sentences, verbatim,
    so every draft gate passes. Handy for pipeline tests with many articles."""

    def respond(request_json: Any) -> Step:
        draft = draft_text(request_json)
        if draft is not None:  # the check call: a careful judge of a verbatim draft
            return check_reply(grounded_check(article_text(request_json), draft))
        parts = [p.strip() for p in _SENTENCE.split(article_text(request_json)) if p.strip()]
        summary = " ".join(parts[:sentences]).replace("\n", " ")
        return summary_reply(parts[0][:80].rstrip(" .") if parts else "Untitled", summary)

    return respond


def checks_responder(check: Callable[[str, str], Any]) -> Callable[[Any], Step]:
    """Summaries from the article's first sentences (`first_sentences_responder`);
    check calls answered by `check(article text, draft)`: a step."""
    summary = first_sentences_responder()

    def respond(request_json: Any) -> Step:
        draft = draft_text(request_json)
        if draft is None:
            return summary(request_json)
        return check(article_text(request_json), draft)

    return respond


# --- the fake -------------------------------------------------------------------------


class FakeAnthropic:
    """Scripted Messages API. Thread-safe: concurrent calls take steps in turn."""

    def __init__(
        self,
        *steps: Step,
        responder: Callable[[Any], Step] | None = None,
        model_reply: Reply | None = None,
        api_key: str | None = None,
    ):
        self.steps: list[Step] = list(steps)
        self.responder = responder
        self.model_reply = model_reply
        self.api_key = api_key
        self.requests: list[SeenRequest] = []
        self._lock = threading.Lock()

    @property
    def message_requests(self) -> list[SeenRequest]:
        return [r for r in self.requests if r.method == "POST" and r.path == "/v1/messages"]

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Step:
        """The step for one request (both transports go through here)."""
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        with self._lock:
            self.requests.append(SeenRequest(method, path, headers, parsed))
            if self.api_key is not None and not self._authorised(headers):
                return unauthorized()
            if method == "GET" and path.startswith("/v1/models/"):
                return self.model_reply or model_card(path.rsplit("/", 1)[1])
            if method != "POST" or path != "/v1/messages":
                return error(
                    404, "not_found_error", f"fake: no route {method} {path}", retry_after_ms=None
                )
            refused = refusal_for(parsed)
            if refused is not None:
                return refused
            if MAGIC_REFUSAL.encode() in body:
                return documented_refusal()
            if self.steps:
                return self.steps.pop(0)
        if self.responder is not None:
            return self.responder(parsed)
        return Reply(
            418,
            {"type": "error", "error": {"type": "fake_error", "message": "fake: script exhausted"}},
            {"x-should-retry": "false"},
        )

    def _authorised(self, headers: dict[str, str]) -> bool:
        sent = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        return sent == self.api_key

    # -- MockTransport ---------------------------------------------------------------

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        step = self.answer(request.method, request.url.path, headers, request.read())
        if isinstance(step, _Timeout):
            raise httpx2.ReadTimeout("fake: the API did not answer in time", request=request)
        if isinstance(step.body, str):
            return httpx2.Response(step.status, text=step.body, headers=step.headers)
        return httpx2.Response(step.status, json=step.body, headers=step.headers)

    def http_client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handler))

    # -- loopback server ---------------------------------------------------------------

    @contextmanager
    def serve(self) -> Iterator[str]:
        """A loopback HTTP server answering like the API; yields its base URL."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go in two writes: without TCP_NODELAY the body waits for
            # the client's delayed acknowledgement (see tests/loopback_http.py)
            disable_nagle_algorithm = True

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                step = fake.answer(self.command, self.path.split("?", 1)[0], headers, body)
                if isinstance(step, _Timeout):
                    self.close_connection = True  # no answer at all
                    return
                payload = (
                    step.body if isinstance(step.body, str) else json.dumps(step.body)
                ).encode("utf-8")
                self.send_response(step.status)
                ctype = "text/plain" if isinstance(step.body, str) else "application/json"
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(payload)))
                for name, value in step.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            do_GET = _handle  # noqa: N815
            do_POST = _handle  # noqa: N815

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # quiet: tests read `fake.requests` instead

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()
            thread.join()


# --- the check call (summarise.checks) ------------------------------------------------

CHECK_TOOL = "record_checks"
_DRAFT = re.compile(r"<draft>\n(?P<text>.*)\n</draft>", re.DOTALL)


def check_tool_use(value: Any) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_fake{_next_id():06d}",
        "name": CHECK_TOOL,
        "input": value,
    }


def check_reply(value: Any, **kwargs: Any) -> Reply:
    """The reply a well-behaved checking model gives: one record_checks call whose
    input is `value` (the scripted-reply format documented in summarise.checks)."""
    return message([check_tool_use(value)], **kwargs)


def draft_text(request_json: Any) -> str | None:
    """The draft inside the <draft> block of a check request; None for other purposes."""
    for message_ in request_json.get("messages", []):
        for block in message_.get("content", []):
            if isinstance(block, dict):
                match = _DRAFT.search(block.get("text", ""))
                if match:
                    return match["text"]
    return None


def grounded_check(source: str, draft: str) -> dict[str, Any]:
    """A check a careful model gives a draft made of the source's own sentences:
    each summary sentence is a claim whose passage is itself, every sentence is
    faithful, and the headline (a cut first sentence) is settled by that sentence."""
    headline, _, summary = draft.rpartition("\n\n")
    parts = [p.strip() for p in _SENTENCE.split(summary) if p.strip()]
    first = next((p for p in _SENTENCE.split(source) if p.strip()), source).strip()

    def judged(sentence: str, passage: str) -> dict[str, Any]:
        return {
            "sentence": sentence,
            "errors": [],
            "wrong_fact": False,
            "rewrite": sentence,
            "reader_draft": sentence,
            "reader_rewrite": sentence,
            "material": False,
            "passage": passage,
        }

    claims = [{"claim": p, "passage": p, "supports": True} for p in parts]
    # Each headline line is a sentence of the draft: a claim covers it, settled by
    # the source's first sentence (the headline is cut from it).
    lines = [line.strip() for line in headline.split("\n") if line.strip()]
    claims[:0] = [{"claim": line, "passage": first, "supports": True} for line in lines]
    return {
        "claims": claims,
        "sentences": [judged(headline, first)] + [judged(p, p) for p in parts],
    }


# --- cassettes: replies in the wire format, recorded (tests/record_cassettes.py) ------

CASSETTES = Path(__file__).resolve().parent / "cassettes"


def load_cassette(name: str, folder: Path = CASSETTES) -> dict[str, Any]:
    """The recorded file `name` (tests/cassettes/NAME.json): origin, the request sent,
    and the response: status, headers and body exactly as the wire carried them."""
    return json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))


def cassette(name: str, folder: Path = CASSETTES) -> Reply:
    """The recorded response of cassette `name`, to answer a request with."""
    response = load_cassette(name, folder)["response"]
    return Reply(response["status"], response["body"], dict(response["headers"]))


def cassette_responder(summary: str, checks: str = "check_ok") -> Callable[[Any], Step]:
    """Summary calls answered by cassette `summary`, check calls by `checks`."""

    def respond(request_json: Any) -> Step:
        return cassette(checks if draft_text(request_json) is not None else summary)

    return respond
