"""Keys for the three layers of deduplication, as pure functions.

1. the entry id within its feed (a feed repeating an entry);
2. the canonical URL (one article linked with and without tracking parameters,
   from two feeds, or through a redirecting link or a page whose rel=canonical
   names another URL);
3. a fingerprint of the extracted text (the same story syndicated under two
   URLs), computed only for texts long enough to be articles: two teasers that
   both say "Read more on our website" are not one story.

The pipeline applies them; this module only says what the keys are.
"""

from __future__ import annotations

import hashlib

from guards.text import word_runs
from ingest.urls import canonical_url

MAX_KEY_BYTES = 1000  # a PostgreSQL btree index entry must stay well under 2.7 kB


def is_web_link(link: str | None) -> bool:
    return bool(link) and link.strip().lower().startswith(("http://", "https://"))


def _bounded(key: str, prefix: str) -> str:
    if len(key.encode("utf-8", errors="replace")) <= MAX_KEY_BYTES:
        return key
    return f"{prefix}sha256:" + hashlib.sha256(key.encode("utf-8", errors="replace")).hexdigest()


def item_keys(
    feed_id: int | None, entry_id: str | None, link: str | None
) -> tuple[str | None, str]:
    """(source_url, dedup_key) for an entry or a submitted link.

    An http(s) link is keyed by its canonical URL, shared by every feed. Anything
    else (no link, `file:`, `javascript:`...) is keyed by the entry itself, so
    each such entry is an item of its own and is discarded with its reason; the
    link is kept as given for that reason to quote."""
    if link and is_web_link(link):
        source_url = canonical_url(link)
        return source_url, _bounded(source_url, "url:")
    source_url = link.strip() if link else None
    scope = f"feed {feed_id}" if feed_id is not None else "submitted"
    return source_url, _bounded(f"entry:{feed_id or 0}:{entry_id or link}", f"{scope}:")


def url_aliases(source_url: str | None, *urls: str | None) -> list[str]:
    """Other canonical URLs the same article answers to (the final URL after
    redirects, the page's rel=canonical), without the item's own."""
    seen: list[str] = []
    for url in urls:
        if not url or not is_web_link(url):
            continue
        alias = canonical_url(url)
        if alias != source_url and alias not in seen:
            seen.append(alias)
    return seen


def text_fingerprint(text: str, *titles: str | None) -> str:
    """sha256 of the article body's words, lower-cased, with any of the given
    headlines in front removed (the feed's and the page's own may differ): the
    same story under two headlines or two layouts is one key."""
    body = text.strip()
    stripped = True
    while stripped:
        stripped = False
        for title in titles:
            if title and title.strip() and body.startswith(title.strip()):
                body = body[len(title.strip()) :].lstrip()
                stripped = True
    words = " ".join(word_runs(body.lower()))  # the words `\w+` finds
    return hashlib.sha256(words.encode("utf-8")).hexdigest()
