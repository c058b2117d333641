"""Feeds: fetch (conditionally), parse with feedparser, hand back entries, and
decide when to poll a feed again.

feedparser never downloads anything here: it gets the bytes the safe fetcher
read, with the response headers (content-type for the encoding, content-location
so that relative links resolve against where the feed really lives).
"""

from __future__ import annotations

import calendar
import hashlib
import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urljoin

import feedparser

from ingest.extract import fragment_to_text
from ingest.fetch import Fetcher, FetchResult, is_local, read_local
from ingest.language import first_language

MAX_POLL_BACKOFF = timedelta(days=1)
MAX_ID_BYTES = 1000


@dataclass(frozen=True)
class Entry:
    entry_id: str  # the feed's id/guid, else the link, else a hash of what the entry says
    link: str | None
    title: str | None
    author: str | None
    published: datetime | None
    content_text: str  # plain text of the fullest content the feed carries ("" if none)
    # The language the entry or its feed declares (ingest.language), None when neither does.
    language: str | None = None


@dataclass
class FeedResult:
    fetch: FetchResult
    entries: list[Entry] = field(default_factory=list)
    bozo: str | None = None  # feedparser's complaint about a malformed feed
    title: str | None = None

    @property
    def ok(self) -> bool:
        return self.fetch.ok or self.fetch.not_modified

    @property
    def truncated(self) -> bool:
        """The body was cut by `max_feed_bytes`: entries past the cut were never read."""
        return self.fetch.ok and self.fetch.truncated


def fetch_feed(
    url: str,
    fetcher: Fetcher,
    *,
    etag: str | None = None,
    last_modified: str | None = None,
) -> FeedResult:
    """Fetch and parse one feed. A 304 returns no entries and is not parsed; a
    malformed feed is parsed as far as feedparser can; a failure is returned in
    `fetch.error`, never raised."""
    if is_local(url):
        fetched = read_local(url)
    else:
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        # A configured feed is the operator's word: the allow-list applies to it.
        fetched = fetcher.get(
            url, headers=headers, trusted=True, limit=fetcher.settings.max_feed_bytes
        )
    if not fetched.ok:
        return FeedResult(fetched)
    return parse_feed(fetched)


def feed_headers(fetched: FetchResult) -> dict[str, str]:
    """The response headers feedparser should see. The body is already decoded,
    so content-encoding goes; content-location is absolute, defaulting to the
    final URL after redirects."""
    headers = {k.lower(): v for k, v in fetched.headers.items()}
    headers.pop("content-encoding", None)
    headers.pop("content-length", None)
    location = headers.get("content-location", "").strip()
    try:
        headers["content-location"] = urljoin(fetched.final_url, location) if location else ""
    except ValueError:
        headers["content-location"] = ""
    if not headers["content-location"]:
        headers["content-location"] = fetched.final_url
    return headers


def parse_feed(fetched: FetchResult) -> FeedResult:
    """RSS, Atom, RDF (feedparser) or JSON Feed (which feedparser 6.0 does not read)."""
    if is_json_feed(fetched):
        return parse_json_feed(fetched)
    parsed = feedparser.parse(fetched.content, response_headers=feed_headers(fetched))
    bozo = None
    if parsed.get("bozo"):
        exc = parsed.get("bozo_exception")
        bozo = f"{type(exc).__name__}: {exc}" if exc else "malformed feed"
    raw_entries = parsed.entries
    if fetched.truncated:
        # The last entry before the cut may be cut itself (half a guid or link would
        # make a bogus item): it is left for a poll with a larger cap.
        raw_entries = raw_entries[:-1]
        cut = (
            f"feed larger than max_feed_bytes: cut off after {len(fetched.content)} bytes "
            f"and {len(raw_entries)} whole entries"
        )
        bozo = f"{cut}; {bozo}" if bozo else cut
    # feed.language: RSS <language> / dc:language, Atom feed xml:lang
    # (https://pythonhosted.org/feedparser/reference-feed-language.html).
    language = parsed.feed.get("language") if parsed.get("feed") else None
    entries = [to_entry(raw, language) for raw in raw_entries]
    title = parsed.feed.get("title") if parsed.get("feed") else None
    if not entries and parsed.get("bozo") and not parsed.get("version"):
        fetched.error = f"not a feed: {bozo}"
    return FeedResult(fetched, entries, bozo, title)


# --------------------------------------------------------------------------- JSON Feed


def is_json_feed(fetched: FetchResult) -> bool:
    kind = fetched.headers.get("content-type", "").lower()
    return "json" in kind or fetched.content.lstrip()[:1] == b"{"


def parse_json_feed(fetched: FetchResult) -> FeedResult:
    """JSON Feed 1.0 and 1.1 (jsonfeed.org): the same Entry as an RSS item. A body
    that is not a JSON Feed is "not a feed", like unparsable XML."""
    try:
        data = json.loads(fetched.content.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        fetched.error = f"not a feed: {type(exc).__name__}: {exc}"
        return FeedResult(fetched, bozo=fetched.error)
    version = data.get("version", "") if isinstance(data, dict) else ""
    if not str(version).startswith("https://jsonfeed.org/version/"):
        fetched.error = "not a feed: JSON without a jsonfeed.org version"
        return FeedResult(fetched)
    base = fetched.final_url
    raw_items = data.get("items")
    items = [i for i in raw_items if isinstance(i, dict)] if isinstance(raw_items, list) else []
    bozo = None if isinstance(raw_items, list) else "JSON Feed without an items list"
    if fetched.truncated:
        bozo = f"feed larger than the size cap: cut off after {len(fetched.content)} bytes"
    # JSON Feed 1.1: "language" on the feed and on an item (https://jsonfeed.org/version/1.1).
    entries = [_json_entry(item, base, data.get("language")) for item in items]
    title = data.get("title") if isinstance(data.get("title"), str) else None
    return FeedResult(fetched, entries, bozo, title)


def _json_entry(item: dict[str, Any], base: str, feed_language: Any = None) -> Entry:
    link = item.get("url") or item.get("external_url")
    link = urljoin(base, link.strip()) if isinstance(link, str) and link.strip() else None
    texts = [fragment_to_text(item.get("content_html") or "")]
    texts += [str(item.get(k) or "") for k in ("content_text", "summary")]
    content = max((t.strip() for t in texts), key=len, default="")
    title = _text(item.get("title")) if isinstance(item.get("title"), str) else None
    authors = item.get("authors") or ([item["author"]] if item.get("author") else [])
    names = [a.get("name") for a in authors if isinstance(a, dict) and a.get("name")]
    entry_id = str(item.get("id") or "").strip() or link
    if not entry_id:
        entry_id = "sha256:" + hashlib.sha256(f"{title}\n{content}".encode()).hexdigest()[:32]
    return Entry(
        entry_id=_bounded_id(entry_id),
        link=link,
        title=title,
        author=", ".join(str(n) for n in names) or None,
        published=_iso_date(item.get("date_published") or item.get("date_modified")),
        content_text=content,
        language=first_language(item.get("language"), feed_language),
    )


def _iso_date(value: Any) -> datetime | None:
    """RFC 3339 as the spec says, or RFC 822 as some publishers write anyway."""
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        try:
            when = parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


# --------------------------------------------------------------------------- RSS, Atom, RDF


def _text(value: Any) -> str | None:
    if not value:
        return None
    text = fragment_to_text(str(value)).strip()
    return text or None


def _published(raw: Any) -> datetime | None:
    for key in ("published_parsed", "updated_parsed", "created_parsed"):
        # dict.get: the keys as parsed, without feedparser's deprecated key aliasing
        value = dict.get(raw, key)
        if value:
            try:
                return datetime.fromtimestamp(calendar.timegm(value), UTC)
            except (OverflowError, ValueError, TypeError, OSError):
                continue
    return None


def _content(raw: Any) -> str:
    """The longest text the entry carries: content:encoded / atom content, else summary."""
    candidates = [c.get("value", "") for c in raw.get("content", []) or []]
    candidates.append(raw.get("summary", "") or "")
    texts = [fragment_to_text(c) for c in candidates if isinstance(c, str) and c]
    return max(texts, key=len, default="")


def _link(raw: Any) -> str | None:
    """The entry's article link: `link`, else the first rel=alternate link."""
    link = raw.get("link")
    if not link:
        for candidate in raw.get("links", []) or []:
            if candidate.get("rel", "alternate") == "alternate" and candidate.get("href"):
                link = candidate["href"]
                break
    link = (link or "").strip()
    return link or None


def _bounded_id(entry_id: str) -> str:
    """Ids stay indexable (a PostgreSQL btree entry must stay under ~2.7 kB) and unique."""
    if len(entry_id.encode("utf-8", errors="replace")) <= MAX_ID_BYTES:
        return entry_id
    return "sha256:" + hashlib.sha256(entry_id.encode("utf-8", errors="replace")).hexdigest()


def _entry_language(raw: Any) -> Any:
    """The language an entry's own text declares: its content's, summary's or
    title's (Atom xml:lang, inherited from a parent element; feedparser's
    entries[i].content[j].language and *_detail.language)."""
    details = [c for c in raw.get("content", []) or [] if isinstance(c, dict)]
    details += [raw.get(k) for k in ("summary_detail", "title_detail")]
    return next((d.get("language") for d in details if d and d.get("language")), None)


def to_entry(raw: Any, feed_language: Any = None) -> Entry:
    link = _link(raw)
    content = _content(raw)
    entry_id = str(raw.get("id") or "").strip() or link
    if not entry_id:
        digest = hashlib.sha256(f"{raw.get('title', '')}\n{content}".encode()).hexdigest()
        entry_id = f"sha256:{digest[:32]}"
    return Entry(
        entry_id=_bounded_id(entry_id),
        link=link,
        title=_text(raw.get("title")),
        author=_text(raw.get("author")),
        published=_published(raw),
        content_text=content,
        language=first_language(_entry_language(raw), feed_language),
    )


# --------------------------------------------------------------------------- polling schedule


def next_poll_after_failure(
    consecutive_errors: int,
    now: datetime,
    *,
    base_seconds: float,
    retry_after: float | None = None,
    rng: random.Random | None = None,
) -> datetime:
    """When to try a failing feed again: base x 2^(errors-1), capped at a day (a
    feed that has been down for a month is still polled daily, never dropped),
    then up to 20% taken off at random. The jitter comes after the cap, so that
    feeds failing for a long time do not all retry at the same moment, 24 hours
    on. Never before the server's Retry-After (itself capped at a day)."""
    cap = MAX_POLL_BACKOFF.total_seconds()
    errors = max(1, consecutive_errors)
    delay = min(base_seconds * 2 ** min(errors - 1, 30), cap)
    delay *= (rng or random).uniform(0.8, 1.0)
    if retry_after is not None:
        delay = max(delay, min(retry_after, cap))
    return now + timedelta(seconds=delay)


def is_due(next_fetch_at: datetime | None, now: datetime) -> bool:
    if next_fetch_at is None:
        return True
    if next_fetch_at.tzinfo is None:
        next_fetch_at = next_fetch_at.replace(tzinfo=UTC)
    return next_fetch_at <= now
