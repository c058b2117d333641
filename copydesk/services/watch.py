"""`copydesk watch`: re-read the sources of recently published items and flag the
ones whose summary no longer stands on the new text.

It fetches each source with the same guarded fetcher as ingestion (conditional GET,
robots.txt, per-host limits), extracts the text the same way, and when the text
changed re-runs every deterministic gate on the stored summary against the new
text. A summary that no longer passes (a gate in mode `discard` fails it; a
flag-mode warning is not a failure) is flagged (a `SourceCheck` row, state
"open") with the before and after passages for an editor. Nothing about the item
changes: watch never edits, retracts or re-publishes.
"""

from __future__ import annotations

import difflib
import hashlib
import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from guards.registry import DRAFT_GATES, SOURCE_GATES, GateResult, run_gates
from ingest.extract import extract_page
from ingest.fetch import Fetcher
from publish.evidence import draft_text
from store import status as st
from store.db import session_scope
from store.models import Feed, Item, SourceCheck, utcnow

log = logging.getLogger("copydesk.watch")

SEEN = "seen"  # the row that remembers the validators for the next conditional GET
OPEN, OK = "open", "ok"
CONTEXT = 120  # characters of unchanged text shown around a changed passage
MAX_PASSAGES = 6


@dataclass
class WatchReport:
    checked: int = 0
    unchanged: int = 0
    changed_still_pass: list[int] = field(default_factory=list)
    flagged: list[int] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def compose(title: str | None, body: str) -> str:
    # The same composition the pipeline stores (its title, then the text).
    from copydesk.services.pipeline import compose_source

    return compose_source(title, body)


def watch(
    engine: Engine,
    fetcher: Fetcher,
    *,
    days: float,
    modes: dict[str, str],
    min_source_words: int,
) -> WatchReport:
    report = WatchReport()
    since = utcnow() - timedelta(days=days)
    with Session(engine) as session:
        items = session.scalars(
            select(Item)
            .where(Item.status == st.PUBLISHED, col(Item.updated_at) >= since)
            .order_by(Item.id)
        ).all()
        feeds = {f.id: f.url for f in session.scalars(select(Feed))}
    for item in items:
        if not item.source_url:
            continue
        report.checked += 1
        trusted = item.feed_id is None or fetcher.vouches_for(feeds.get(item.feed_id, ""))
        try:
            _check_one(engine, fetcher, item, trusted, modes, min_source_words, report)
        except Exception as exc:  # noqa: BLE001 - one odd page must not stop the watch
            log.debug("watch item %s", item.id, exc_info=True)
            report.errors.append((item.id, f"{type(exc).__name__}: {exc}"[:200]))
    return report


def _check_one(
    engine: Engine,
    fetcher: Fetcher,
    item: Item,
    trusted: bool,
    modes: dict[str, str],
    min_source_words: int,
    report: WatchReport,
) -> None:
    with Session(engine) as session:
        seen = _seen_row(session, item.id)
        headers = {}
        if seen and seen.etag:
            headers["If-None-Match"] = seen.etag
        if seen and seen.last_modified:
            headers["If-Modified-Since"] = seen.last_modified
    result = fetcher.get(
        item.source_url, headers, robots=fetcher.settings.respect_robots, trusted=trusted
    )
    if result.not_modified:
        report.unchanged += 1
        return
    if not result.ok:
        report.errors.append((item.id, result.error or f"HTTP {result.status}"))
        return
    # The source as it reads now: its current headline too, so a figure corrected in
    # the headline and the body is not still "grounded" by the stored headline.
    page = extract_page(result.content, result.final_url)
    new_text = compose(page.title or item.title, page.text)
    old_text = item.source_text or ""
    validators = (result.headers.get("etag"), result.headers.get("last-modified"))
    if text_hash(new_text) == text_hash(old_text):
        _remember(engine, item.id, validators, None)
        report.unchanged += 1
        return
    results = run_gates(
        SOURCE_GATES + DRAFT_GATES,
        new_text,
        item.source_url,
        draft_text(item.headline, item.summary or ""),
        modes=modes,
        min_source_words=min_source_words,
        language=page.language or item.language,
    )
    # What would discard the summary now: a flag-mode gate (a heuristic warning the
    # editor saw and accepted at review) is not a failure.
    failing = [r for r in results if r.hard_fail]
    check = SourceCheck(
        item_id=item.id,
        state=OPEN if failing else OK,
        old_hash=text_hash(old_text),
        new_hash=text_hash(new_text),
        new_text=new_text,
        failing=[_failure(r) for r in failing],
        passages=changed_passages(old_text, new_text),
        etag=validators[0],
        last_modified=validators[1],
    )
    if _remember(engine, item.id, validators, check):
        (report.flagged if failing else report.changed_still_pass).append(item.id)
    else:
        report.unchanged += 1  # the same change was recorded by an earlier watch


def _failure(result: GateResult) -> dict[str, Any]:
    return {"gate": result.gate, "reason": result.verdict.reason, "mode": result.mode}


def _seen_row(session: Session, item_id: int | None) -> SourceCheck | None:
    return session.scalars(
        select(SourceCheck).where(SourceCheck.item_id == item_id, SourceCheck.state == SEEN)
    ).first()


def _remember(
    engine: Engine,
    item_id: int | None,
    validators: tuple[str | None, str | None],
    check: SourceCheck | None,
) -> bool:
    """Keep the validators for the next conditional GET, and record `check` unless the
    same new text was recorded already. Returns whether `check` was recorded."""
    with session_scope(engine) as session:
        seen = _seen_row(session, item_id) or SourceCheck(item_id=item_id, state=SEEN)
        seen.etag, seen.last_modified = validators
        seen.checked_at = utcnow()
        session.add(seen)
        if check is None:
            return False
        known = session.scalars(
            select(SourceCheck.id).where(
                SourceCheck.item_id == item_id,
                SourceCheck.new_hash == check.new_hash,
                SourceCheck.state != SEEN,
            )
        ).first()
        if known is not None:
            return False
        session.add(check)
        return True


def changed_passages(old: str, new: str) -> list[dict[str, str]]:
    """The changed places, each with some unchanged text around it, before and after.
    difflib (standard library) finds them; a word-level diff keeps a changed figure
    whole ("2,310" -> "3,210" is one change, not three digits)."""
    old_words, new_words = _words(old), _words(new)
    matcher = difflib.SequenceMatcher(
        a=[w for w, _ in old_words], b=[w for w, _ in new_words], autojunk=False
    )
    passages = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        before = _around(old, old_words, i1, i2)
        after = _around(new, new_words, j1, j2)
        passages.append({"before": before, "after": after})
        if len(passages) == MAX_PASSAGES:
            break
    return passages


def _words(text: str) -> list[tuple[str, int]]:
    words, start = [], None
    for i, ch in enumerate(text + " "):
        if ch.isspace():
            if start is not None:
                words.append((text[start:i], start))
                start = None
        elif start is None:
            start = i
    return words


def _around(text: str, words: list[tuple[str, int]], i1: int, i2: int) -> str:
    start = words[i1][1] if i1 < len(words) else len(text)
    end = words[i2 - 1][1] + len(words[i2 - 1][0]) if i2 > i1 else start
    return text[max(0, start - CONTEXT) : min(len(text), end + CONTEXT)].strip()
