"""`make cassettes`: record real Messages API replies into tests/cassettes/.

    ANTHROPIC_API_KEY=... make cassettes        # or: python -m tests.record_cassettes [DIR]

Each cassette is one JSON file: where it came from (`origin`), the request as
sent, and the response exactly as the wire carried it (status, the headers the
SDK reads, body). The tests replay them through the real `anthropic` SDK over
the loopback server (tests/anthropic_fake.py `cassette`), so the day a key
exists, real replies replace the hand-written ones by running this once.

What is recorded, with copydesk's own request builders where copydesk sends the
request (so the request is exactly what a run sends):
- summary_ok, check_ok: the doctor's bundled article (copydesk/cli/doctor.py)
  summarised and checked with the default models;
- summary_structured: the same summary on a model with structured outputs and no
  forced tool choice (strict tools, `tool_choice: auto`, no temperature);
- refusal: the documented test string that makes the API refuse (stop_reason
  "refusal": "Streaming refusals", platform.claude.com/docs/en/test-and-evaluate/
  strengthen-guardrails/handle-streaming-refusals);
- sampling_400, forced_tool_400: a temperature and a forced tool choice sent to a
  model that refuses them (400 invalid_request_error, platform.claude.com/docs/en/
  api/errors).
Derived from the recorded replies (the same wire format, content made wrong, as
no model can be asked to misbehave): DERIVED below. Kept as they are, because
they cannot be provoked on demand: KEPT (429 with retry-after, 529, 500), written
after the errors and rate-limits pages (platform.claude.com/docs/en/api/errors,
platform.claude.com/docs/en/api/rate-limits).

Without ANTHROPIC_API_KEY it records nothing, says so in one line and exits 3
(EXIT_NO_KEY); the files are left as they are. ANTHROPIC_BASE_URL points it at
another server (the tests point it at the loopback stand-in).
"""

from __future__ import annotations

import copy
import json
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2

from tests.anthropic_fake import MAGIC_REFUSAL

EXIT_NO_KEY = 3
FOLDER = Path(__file__).resolve().parent / "cassettes"
STRUCTURED_MODEL = "claude-haiku-5-5"  # structured outputs, no sampling, no forced tool

# Headers the SDK reads (request-id, retries) and the rate-limit headers the docs
# list; nothing that names the account (organization id) or the connection.
KEEP_HEADERS = ("request-id", "retry-after", "retry-after-ms", "x-should-retry")
KEEP_PREFIX = "anthropic-ratelimit-"
KEPT = ("rate_limited_429", "overloaded_529", "server_error_500")


class Tape(httpx2.BaseTransport):
    """An httpx2 transport that passes each request on and keeps what came back."""

    def __init__(self) -> None:
        self._inner = httpx2.HTTPTransport()
        self.seen: list[dict[str, Any]] = []

    def handle_request(self, request: Any) -> Any:
        response = self._inner.handle_request(request)
        body = response.read()
        if request.url.path.endswith("/v1/messages"):
            headers = {
                k.lower(): v
                for k, v in response.headers.items()
                if k.lower() in KEEP_HEADERS or k.lower().startswith(KEEP_PREFIX)
            }
            self.seen.append(
                {
                    "request": json.loads(request.read() or b"null"),
                    "response": {
                        "status": response.status_code,
                        "headers": headers,
                        "body": json.loads(body) if body else None,
                    },
                }
            )
        plain = {
            k: v
            for k, v in response.headers.items()
            if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
        }
        return httpx2.Response(response.status_code, headers=plain, content=body, request=request)

    def close(self) -> None:
        self._inner.close()


def _client(tape: Tape) -> httpx2.Client:
    return httpx2.Client(transport=tape)


def _save(folder: Path, name: str, tape: Tape, about: str) -> dict[str, Any]:
    if not tape.seen:
        raise SystemExit(f"make cassettes: {name}: no Messages API exchange was recorded")
    exchange = tape.seen[-1]
    document = {
        "name": name,
        "origin": f"recorded {datetime.now(UTC).date().isoformat()} by make cassettes",
        "about": about,
        **exchange,
    }
    _write(folder, name, document)
    return document


def _write(folder: Path, name: str, document: dict[str, Any]) -> None:
    text = json.dumps(document, indent=1, ensure_ascii=False, sort_keys=False) + "\n"
    (folder / f"{name}.json").write_text(text, encoding="utf-8")


def _record_copydesk_calls(folder: Path, key: str, base_url: str | None) -> None:
    """summary_ok, check_ok, summary_structured and refusal: copydesk's own calls."""
    from copydesk.cli.doctor import ARTICLE
    from summarise.anthropic_backend import AnthropicSummariser
    from summarise.anthropic_checker import AnthropicChecker
    from summarise.base import Article, SummaryFailed
    from summarise.checks import CheckSettings
    from summarise.settings import SummariseSettings

    article = Article(**ARTICLE)

    def summariser(tape: Tape, **settings: Any) -> AnthropicSummariser:
        options = SummariseSettings(max_retries=0, **settings)
        return AnthropicSummariser(
            options, api_key=key, http_client=_client(tape), base_url=base_url, max_retries=0
        )

    tape = Tape()
    draft = summariser(tape).summarise(article)
    _save(folder, "summary_ok", tape, "the doctor's article summarised (default model)")
    tape = Tape()
    checker = AnthropicChecker(
        CheckSettings(max_retries=0),
        api_key=key,
        http_client=_client(tape),
        base_url=base_url,
        max_retries=0,
    )
    checker.check(article, draft.text)
    _save(folder, "check_ok", tape, "the check of that summary (default model)")
    tape = Tape()
    summariser(tape, model=STRUCTURED_MODEL, temperature="model-default").summarise(article)
    _save(
        folder, "summary_structured", tape, f"strict tools, tool_choice auto ({STRUCTURED_MODEL})"
    )
    tape = Tape()
    refused = Article(**{**ARTICLE, "text": ARTICLE["text"] + "\n\n" + MAGIC_REFUSAL})
    try:
        summariser(tape).summarise(refused)
    except SummaryFailed:
        pass  # the refusal: what is recorded
    _save(folder, "refusal", tape, "stop_reason refusal (the documented test string)")


def _record_refused_requests(folder: Path, key: str, base_url: str | None) -> None:
    """sampling_400 and forced_tool_400: requests copydesk never sends (its plan
    leaves them out), sent by hand to a model that refuses them."""
    import anthropic

    for name, extra in (
        ("sampling_400", {"temperature": 0}),
        ("forced_tool_400", {"tool_choice": {"type": "any"}}),
    ):
        tape = Tape()
        client = anthropic.Anthropic(
            api_key=key, base_url=base_url, http_client=_client(tape), max_retries=0
        )
        tools = [
            {
                "name": "write_summary",
                "description": "Record the summary.",
                "input_schema": {"type": "object", "properties": {"summary": {"type": "string"}}},
            }
        ]
        try:
            client.messages.create(
                model=STRUCTURED_MODEL,
                max_tokens=64,
                messages=[{"role": "user", "content": "Summarise: the ferry runs at 6.10am."}],
                tools=tools,  # type: ignore[arg-type]
                extra_body=extra,  # as copydesk sends its request body
            )
        except anthropic.BadRequestError:
            pass  # the refusal: what is recorded
        _save(folder, name, tape, f"{', '.join(extra)} sent to {STRUCTURED_MODEL}")


# --- derived: the recorded wire format with content no model can be asked for ----------


def _tool_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["content"] if b.get("type") == "tool_use"]


def _two_calls(body: dict[str, Any]) -> None:
    """Two calls of the tool in one reply, the second saying something else."""
    first = _tool_blocks(body)[0]
    second = copy.deepcopy(first)
    second["id"] = first["id"] + "b"
    for key, value in second["input"].items():
        if isinstance(value, str):
            second["input"][key] = value + " The council rejected it."
        elif isinstance(value, list):
            second["input"][key] = value[:1]
    body["content"].append(second)


def _wrong_shape(body: dict[str, Any]) -> None:
    """A write_summary call whose input has no summary (the schema broken)."""
    _tool_blocks(body)[0]["input"] = {"headline": _tool_blocks(body)[0]["input"].get("headline")}


def _whole_article(article: str) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        """Every claim and judgement cites the whole article as its passage."""
        value = _tool_blocks(body)[0]["input"]
        for row in value.get("claims", []) + value.get("sentences", []):
            row["passage"] = article

    return change


def _one_word(body: dict[str, Any]) -> None:
    """Every passage is one word ("the")."""
    value = _tool_blocks(body)[0]["input"]
    for row in value.get("claims", []) + value.get("sentences", []):
        row["passage"] = "the"


def derived() -> dict[str, tuple[str, Callable[[dict[str, Any]], None], str]]:
    """name -> (the recorded cassette it is made from, the change, what it is)."""
    from copydesk.cli.doctor import ARTICLE

    return {
        "summary_two_calls": ("summary_ok", _two_calls, "two write_summary calls in one reply"),
        "summary_wrong_shape": ("summary_ok", _wrong_shape, "write_summary without a summary"),
        "check_two_calls": ("check_ok", _two_calls, "two record_checks calls in one reply"),
        "check_whole_article": (
            "check_ok",
            _whole_article(ARTICLE["text"]),
            "every passage is the whole article",
        ),
        "check_one_word": ("check_ok", _one_word, 'every passage is one word ("the")'),
    }


def write_derived(folder: Path) -> None:
    for name, (base, change, about) in derived().items():
        document = load(base, folder)
        document["response"] = copy.deepcopy(document["response"])
        change(document["response"]["body"])
        document |= {
            "name": name,
            "origin": f"derived from {base} ({document['origin']}) by make cassettes",
            "about": about,
        }
        _write(folder, name, document)


def load(name: str, folder: Path = FOLDER) -> dict[str, Any]:
    return json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))


def record(folder: Path, key: str, base_url: str | None = None) -> list[str]:
    """Record every cassette into `folder` (KEPT ones are copied there from
    tests/cassettes when absent); the names written."""
    folder.mkdir(parents=True, exist_ok=True)
    _record_copydesk_calls(folder, key, base_url)
    _record_refused_requests(folder, key, base_url)
    write_derived(folder)
    for name in KEPT:
        if not (folder / f"{name}.json").exists():
            _write(folder, name, load(name))
    return sorted(p.stem for p in folder.glob("*.json"))


def main(argv: list[str]) -> int:
    key = (os.environ.get("ANTHROPIC_API_KEY") or "").strip()
    if not key:
        print(
            "make cassettes: ANTHROPIC_API_KEY is not set: nothing recorded, "
            "tests/cassettes/ left as it is (exit 3)",
            file=sys.stderr,
        )
        return EXIT_NO_KEY
    folder = Path(argv[0]) if argv else FOLDER
    names = record(folder, key, os.environ.get("ANTHROPIC_BASE_URL") or None)
    print(f"make cassettes: {len(names)} cassettes in {folder}: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
