"""Feeds: fetch (conditionally), parse with feedparser, and hand back entries."""

from __future__ import annotations

import calendar
import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import feedparser

from ingest.extract import fragment_to_text
from ingest.fetch import Fetcher, FetchResult, is_local, read_local


@dataclass(frozen=True)
class Entry:
    entry_id: str  # the feed's id/guid, else the link, else a hash of what the entry says
    link: str | None
    title: str | None
    author: str | None
    published: datetime | None
    content_text: str  # plain text of the fullest content the feed carries ("" if none)


@dataclass
class FeedResult:
    fetch: FetchResult
    entries: list[Entry] = field(default_factory=list)
    bozo: str | None = None  # feedparser's complaint about a malformed feed
    title: str | None = None

    @property
    def ok(self) -> bool:
        return self.fetch.ok or self.fetch.not_modified


def fetch_feed(
    url: str,
    fetcher: Fetcher,
    *,
    etag: str | None = None,
    last_modified: str | None = None,
) -> FeedResult:
    """Fetch and parse one feed. A malformed feed is parsed as far as feedparser
    can; a failure is returned in `fetch.error`, never raised."""
    if is_local(url):
        fetched = read_local(url)
    else:
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        fetched = fetcher.get(url, headers=headers)
    if not fetched.ok:
        return FeedResult(fetched)
    return parse_feed(fetched)


def parse_feed(fetched: FetchResult) -> FeedResult:
    response_headers = {k.lower(): v for k, v in fetched.headers.items()}
    response_headers.setdefault("content-location", fetched.final_url)
    response_headers.pop("content-encoding", None)  # httpx already decoded the body
    parsed = feedparser.parse(fetched.content, response_headers=response_headers)
    bozo = None
    if parsed.get("bozo"):
        exc = parsed.get("bozo_exception")
        bozo = f"{type(exc).__name__}: {exc}" if exc else "malformed feed"
    entries = [to_entry(raw) for raw in parsed.entries]
    title = parsed.feed.get("title") if parsed.get("feed") else None
    if not entries and bozo and not parsed.get("version"):
        fetched.error = f"not a feed: {bozo}"
    return FeedResult(fetched, entries, bozo, title)


def _text(value: Any) -> str | None:
    if not value:
        return None
    text = fragment_to_text(str(value)).strip()
    return text or None


def _published(raw: Any) -> datetime | None:
    for key in ("published_parsed", "updated_parsed", "created_parsed"):
        value = raw.get(key)
        if value:
            try:
                return datetime.fromtimestamp(calendar.timegm(value), UTC)
            except (OverflowError, ValueError, TypeError):
                continue
    return None


def _content(raw: Any) -> str:
    """The longest text the entry carries: content:encoded / atom content, else summary."""
    candidates = [c.get("value", "") for c in raw.get("content", []) or []]
    candidates.append(raw.get("summary", "") or "")
    texts = [fragment_to_text(c) for c in candidates if c]
    return max(texts, key=len, default="")


def to_entry(raw: Any) -> Entry:
    link = (raw.get("link") or "").strip() or None
    content = _content(raw)
    entry_id = (raw.get("id") or "").strip() or link
    if not entry_id:
        digest = hashlib.sha256(f"{raw.get('title', '')}\n{content}".encode()).hexdigest()
        entry_id = f"sha256:{digest[:32]}"
    return Entry(
        entry_id=entry_id[:2000],
        link=link,
        title=_text(raw.get("title")),
        author=_text(raw.get("author")),
        published=_published(raw),
        content_text=content,
    )
