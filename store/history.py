"""One item's history, read from the store alone: the read model behind
`copydesk audit` and the review queue's audit trail, so both show the same thing.

`item_history` returns an `ItemHistory` of rows (the item, its feed and, oldest
first, its verdicts, model calls and audit events); `to_dict` turns it into the
JSON document both print. Rendering is the caller's: the CLI prints it with rich,
the review UI with text-only widgets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from store import ledger, textdiff
from store import verdicts as stored_verdicts
from store.models import AuditEvent, CallRecord, Feed, GateVerdict, Item, ModelCall, Note

RECORDED_REPLY_LABEL = "recorded reply (demo), not a live model call"


def utc(value: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; everything is stored as UTC, so say so."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def iso(value: datetime | None) -> str | None:
    stamp = utc(value)
    return stamp.isoformat() if stamp else None


# --- one item's history ----------------------------------------------------------------------


@dataclass
class ItemHistory:
    """An item with its feed and, oldest first, its verdicts, model calls and audit events."""

    item: Item
    feed: Feed | None
    verdicts: list[GateVerdict]
    calls: list[ModelCall]
    events: list[AuditEvent]
    notes: list[Note] = field(default_factory=list)

    @property
    def summariser_label(self) -> str:
        return summariser_label(self.item)

    def to_dict(self, *, full: bool = False) -> dict[str, Any]:
        """A JSON document; `full` adds the source text and each call's request and reply."""
        item = self.item
        doc: dict[str, Any] = {
            "item": {
                "id": item.id,
                "status": item.status,
                "version": item.version,
                "title": item.title,
                "author": item.author,
                "source_url": item.source_url,
                "original_url": item.original_url,
                "dedup_key": item.dedup_key,
                "entry_id": item.entry_id,
                "seen_at": iso(item.seen_at),
                "published_at": iso(item.published_at),
                "created_at": iso(item.created_at),
                "updated_at": iso(item.updated_at),
                "decided_by": item.decided_by,
                "decided_at": iso(item.decided_at),
            },
            "feed": feed_dict(self.feed),
            "fetch": {
                "text_origin": item.text_origin,
                "fetch_status": item.fetch_status,
                "fetch_bytes": item.fetch_bytes,
                "word_count": item.word_count,
                "content_hash": item.content_hash,
            },
            "summariser": {
                "name": item.summariser,
                "recorded_reply": item.recorded_reply,
                "label": self.summariser_label,
            },
            "draft": {
                "headline": item.headline,
                "summary": item.summary,
                "not_made": no_draft_reason(item, self.verdicts),
            },
            "retries": {
                "attempts": item.attempts,
                "next_attempt_at": iso(item.next_attempt_at),
                "last_error": item.last_error,
            },
            "verdicts": [verdict_dict(v) for v in self.verdicts],
            "model_calls": [call_dict(c, full=full) for c in self.calls],
            "events": [event_dict(e) for e in self.events],
            "edits": edit_diffs(self.events),
            "notes": [note_dict(n) for n in self.notes],
        }
        if full:
            doc["source_text"] = item.source_text
        return doc


def no_draft_reason(item: Item, verdicts: list[GateVerdict]) -> str | None:
    """Why this item has no draft, when it never got one: a source gate discarded it
    before summarising (or it was discarded for another reason first). None when a
    draft exists, or the item is still on its way to one."""
    if item.headline or item.summary or item.status != "discarded":
        return None
    failed = [v for v in verdicts if v.stage == "source" and not v.passed and v.mode == "discard"]
    if failed:
        gates = "; ".join(f"{v.gate}: {v.reason}" for v in failed)
        return (
            f"No draft was made: the source gate discarded this item before summarising ({gates})."
        )
    return "No draft was made: this item was discarded before it was summarised."


def summariser_label(item: Item) -> str:
    """What produced the draft, said plainly: a recorded demo reply is not a model call."""
    if not item.summariser:
        return "no draft yet"
    if item.recorded_reply:
        if "recorded" in item.summariser:  # e.g. "recorded reply (demo)": say it once
            return RECORDED_REPLY_LABEL
        return f"{item.summariser}: {RECORDED_REPLY_LABEL}"
    if item.summariser.startswith("extractive"):
        return f"{item.summariser}: offline extractive summariser, no model call"
    return item.summariser


def feed_dict(feed: Feed | None) -> dict[str, Any] | None:
    if feed is None:
        return None
    return {"id": feed.id, "name": feed.name, "url": feed.url}


def verdict_dict(v: GateVerdict) -> dict[str, Any]:
    return {
        "at": iso(v.created_at),
        "stage": v.stage,
        "gate": v.gate,
        "mode": v.mode,
        "passed": v.passed,
        "reason": v.reason,
        "evidence": v.evidence,
        "run_id": v.run_id,
    }


# What `copydesk audit` shows of a call: the ledger's fields (but the raw request
# and reply, shown with --full) and the run.
_CALL_FIELDS = (
    *(name for name in CallRecord.model_fields if name not in ("request_json", "response_json")),
    "run_id",
)


def call_dict(c: ModelCall, *, full: bool = False) -> dict[str, Any]:
    doc = {"at": iso(c.created_at)} | {name: getattr(c, name) for name in _CALL_FIELDS}
    if full:
        doc |= {"request_json": c.request_json, "response_json": c.response_json}
    return doc


def event_dict(e: AuditEvent) -> dict[str, Any]:
    return {
        "at": iso(e.at),
        "actor": e.actor,
        "from_status": e.from_status,
        "to_status": e.to_status,
        "reason": e.reason,
        "details": e.details,
    }


def note_dict(n: Note) -> dict[str, Any]:
    return {"at": iso(n.created_at), "author": n.author, "note": n.body}


def edits(events: list[AuditEvent]) -> list[AuditEvent]:
    """An editor's edits (draft -> draft with both texts kept), oldest first."""
    return [
        e
        for e in events
        if e.from_status == e.to_status == "draft"
        and isinstance((e.details or {}).get("before"), dict)
        and isinstance((e.details or {}).get("after"), dict)
    ]


def edit_diffs(events: list[AuditEvent]) -> list[dict[str, Any]]:
    """Every edit as a word diff against the pipeline's draft (the text before the
    first edit), so each one reads as "what the editor changed in the model's text"
    and a revert reads as no change at all."""
    found = edits(events)
    if not found:
        return []
    first = found[0].details["before"]  # type: ignore[index]
    original = textdiff.draft_text(first.get("headline"), first.get("summary"))
    out = []
    for e in found:
        after = e.details["after"]  # type: ignore[index]
        segments = textdiff.word_diff(
            original, textdiff.draft_text(after.get("headline"), after.get("summary"))
        )
        deleted, inserted = textdiff.counts(segments)
        out.append(
            {
                "at": iso(e.at),
                "actor": e.actor,
                "reason": e.reason,
                "words_deleted": deleted,
                "words_inserted": inserted,
                "word_diff": textdiff.as_text(segments),
                "diff": textdiff.as_json(segments),
            }
        )
    return out


def find_item(
    session: Session, key: str | int, canonical: Callable[[str], str | None] | None = None
) -> Item | None:
    """An item by id (an integer), or by URL, dedup key or the feed's entry id.

    A URL matches the canonical `source_url` (and the dedup key, which is the
    canonical URL) or the link exactly as the feed gave it (`original_url`); an
    entry without a link is found by its guid. `canonical` is how the caller turns
    a URL into its canonical form (the store does not know how ingestion does it);
    it may return None or raise for text that is not a URL."""
    if isinstance(key, int) or key.strip().isdigit():
        return session.get(Item, int(key))
    raw = key.strip()
    candidates = [raw]
    canonical_key = _canonical(canonical, raw)
    if canonical_key and canonical_key != raw:
        candidates.insert(0, canonical_key)
    for column in (Item.dedup_key, Item.source_url, Item.original_url, Item.entry_id):
        for candidate in candidates:
            found = session.scalars(
                select(Item).where(column == candidate).order_by(Item.id).limit(1)
            ).first()
            if found is not None:
                return found
    return None


def _canonical(canonical: Callable[[str], str | None] | None, url: str) -> str | None:
    if canonical is None:
        return None
    try:
        return canonical(url)
    except Exception:  # noqa: BLE001 - not a URL we can canonicalise: match it as given
        return None


def item_history(
    engine: Engine, key: str | int, canonical: Callable[[str], str | None] | None = None
) -> ItemHistory | None:
    """Everything the database knows about one item, or None when no item matches
    (`key` and `canonical` as for `find_item`)."""
    with Session(engine, expire_on_commit=False) as session:
        item = find_item(session, key, canonical)
        if item is None:
            return None
        feed = session.get(Feed, item.feed_id) if item.feed_id is not None else None
        verdicts = stored_verdicts.of_item(session, item.id)
        calls = _rows(
            session, select(ModelCall).where(ModelCall.item_id == item.id).order_by(ModelCall.id)
        )
        # Each request as it was sent (its repeated parts put back) and each reply as
        # it came (unpacked against those parts): on copies, so nothing is written
        # back to the ledger.
        sent, said = ledger.requests(session, calls), ledger.replies(session, calls)
        for call in calls:
            session.expunge(call)
        calls = [
            c.model_copy(update={"request_json": r, "response_json": a})
            for c, r, a in zip(calls, sent, said, strict=True)
        ]
        events = _rows(
            session, select(AuditEvent).where(AuditEvent.item_id == item.id).order_by(AuditEvent.id)
        )
        notes = _rows(session, select(Note).where(Note.item_id == item.id).order_by(Note.id))
        return ItemHistory(item, feed, verdicts, calls, events, notes)


def _rows(session: Session, statement: Any) -> list[Any]:
    return list(session.scalars(statement))
