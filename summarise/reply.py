"""Reading a Messages API reply defensively: pure functions, no SDK types.

The model is asked to answer through the `write_summary` tool, but a reply can
still arrive as prose, as JSON in a text block, as two JSON values, through
another tool of the shared tool list (every purpose offers them all, see
`summarise.prompt`), or as nothing usable at all. The rule: take the summary
tool's input when it is valid; else the one JSON object in the text that has a
headline and a summary; else the reply is a failed call, never an empty summary.
Two calls of the tool, or two summaries in the text, fail closed: which answer
counts is not the model's to choose.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from guards.checks import single_call
from summarise.prompt import TOOL_NAME

_DECODER = json.JSONDecoder()


class NoUsableSummary(ValueError):
    """The reply holds no headline and summary we can use; the message says why."""


@dataclass(frozen=True)
class ParsedSummary:
    headline: str
    summary: str
    source: str  # "tool_use" or "text": where in the reply it was found


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_tokens: int | None = None
    cache_read_tokens: int | None = None


def _as_summary(value: Any) -> tuple[str, str] | None:
    """(headline, summary) when `value` is an object with both as non-blank strings."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, dict):
        return None
    headline, summary = value.get("headline"), value.get("summary")
    if not isinstance(headline, str) or not isinstance(summary, str):
        return None
    if not headline.strip() or not summary.strip():
        return None
    return headline.strip(), summary.strip()


def json_values(text: str) -> list[Any]:
    """Every JSON object embedded in `text`, in order (prose and code fences around
    them are skipped). Objects nested inside a found object are not listed again."""
    values: list[Any] = []
    pos = text.find("{")
    while pos != -1:
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except ValueError:
            pos = text.find("{", pos + 1)
            continue
        values.append(value)
        pos = text.find("{", end)
    return values


def content_blocks(response: Any) -> list[dict[str, Any]]:
    if not isinstance(response, dict) or not isinstance(response.get("content"), list):
        return []
    return [block for block in response["content"] if isinstance(block, dict)]


def parse_summary(response: Any, tool: str = TOOL_NAME) -> ParsedSummary:
    """The headline and summary in a Messages API reply (its JSON as a dict), from
    a call of `tool` or, failing that, from JSON in the text.

    Raises `NoUsableSummary` when there is none: the caller turns that into a
    failed call, so an empty or garbled reply never becomes a draft.
    """
    blocks = content_blocks(response)
    if not blocks:
        raise NoUsableSummary("the reply has no content blocks")
    calls = [b for b in blocks if b.get("type") == "tool_use"]
    twice = single_call([str(b.get("name")) for b in calls], tool)
    if twice:  # the last call silently winning would let the model choose
        raise NoUsableSummary(twice)
    tool_inputs = [b.get("input") for b in calls if b.get("name") == tool]
    for candidate in reversed(tool_inputs):
        found = _as_summary(candidate)
        if found:
            return ParsedSummary(*found, source="tool_use")
    text = "".join(
        b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    )
    answers = [found for found in map(_as_summary, json_values(text)) if found]
    if len(answers) > 1:  # two answers in text are two answers, as two calls are
        raise NoUsableSummary(f"the text holds {len(answers)} summaries; exactly one is accepted")
    if answers:
        return ParsedSummary(*answers[0], source="text")
    if tool_inputs:
        raise NoUsableSummary(f"the {tool} input lacks a non-empty headline and summary")
    others = sorted({str(b.get("name")) for b in calls})
    if others:
        raise NoUsableSummary(f"no {tool} call; the model called {', '.join(others)} instead")
    if text.strip():
        what = "JSON without a headline and summary" if json_values(text) else "no JSON"
        raise NoUsableSummary(f"no {tool} call, and the text holds {what}")
    raise NoUsableSummary(f"no {tool} call and no text")


def stop_reason(response: Any) -> str | None:
    value = response.get("stop_reason") if isinstance(response, dict) else None
    return value if isinstance(value, str) else None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usage(response: Any) -> Usage:
    raw = response.get("usage") if isinstance(response, dict) else None
    if not isinstance(raw, dict):
        return Usage()
    return Usage(
        input_tokens=_int_or_none(raw.get("input_tokens")),
        output_tokens=_int_or_none(raw.get("output_tokens")),
        cache_creation_tokens=_int_or_none(raw.get("cache_creation_input_tokens")),
        cache_read_tokens=_int_or_none(raw.get("cache_read_input_tokens")),
    )


def error_summary(body: Any) -> tuple[str | None, str | None]:
    """(error type, message) from an API error body, when it has the usual shape."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None, None
    kind, message = error.get("type"), error.get("message")
    return (kind if isinstance(kind, str) else None, message if isinstance(message, str) else None)
