"""Recorded model replies, replayed instead of calling a model.

Used by the demo (so it can show the draft gates discarding a reply with an
invented figure or an altered quote, offline) and by tests. Every draft it
returns is marked `recorded_reply`, and its ledger row says "recorded", so no
one can mistake it for a live model call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from summarise.base import Article, CallRecord, Draft, Summariser, SummaryFailed


@dataclass(frozen=True)
class RecordedReply:
    url: str
    headline: str
    summary: str
    kind: str = ""


def load_replies(
    path: str | Path, key: Callable[[str], str] = lambda url: url
) -> dict[str, RecordedReply]:
    """Replies from `{"replies": [{"url", "headline", "summary"}]}`, keyed by
    `key(url)`: it must turn a file's URL into the `Article.key` the summariser
    will receive (the pipeline's dedup key: the canonical URL). The caller knows
    that mapping; the summariser does not re-derive it."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    replies = {}
    for raw in data["replies"]:
        reply = RecordedReply(raw["url"], raw["headline"], raw["summary"], raw.get("kind", ""))
        replies[key(reply.url)] = reply
    return replies


class RecordedSummariser:
    """Replays a recorded reply for the articles that have one; the others go to
    `fallback` (or fail, when there is none)."""

    name = "recorded"

    def __init__(self, replies: dict[str, RecordedReply], fallback: Summariser | None = None):
        self.replies = replies
        self.fallback = fallback

    def summarise(self, article: Article) -> Draft:
        reply = self.replies.get(article.key)
        if reply is None:
            if self.fallback is None:
                raise SummaryFailed("no recorded reply for this article", transient=False)
            return self.fallback.summarise(article)
        call = CallRecord(
            purpose="summary",
            backend="recorded",
            ok=True,
            response_json={
                "recorded_reply": True,
                "kind": reply.kind,
                "headline": reply.headline,
                "summary": reply.summary,
            },
        )
        return Draft(
            headline=reply.headline,
            summary=reply.summary,
            backend="recorded reply (demo)",
            recorded_reply=True,
            calls=[call],
        )


def load_check_replies(
    path: str | Path, key: Callable[[str], str] = lambda url: url
) -> dict[str, Any]:
    """Recorded check replies from the same file's optional
    `"checks": [{"url": ..., "check": <the check tool's input JSON>}]`, keyed by
    `key(url)`: the URL the checker will receive (the canonical URL), as for
    `load_replies`."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {key(raw["url"]): raw["check"] for raw in data.get("checks", [])}
