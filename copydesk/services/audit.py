"""The auditor's two questions, answered from the database alone.

`item_history` says everything that happened to one item: what was fetched, what
the model was sent and cost, every gate verdict and every status move (the read
model itself is `store.history`, shared with the review queue; this module adds
the CLI's URL matching). `discards_report` says what was thrown away and why.
Both return plain dataclasses holding rows; `to_dict` turns them into JSON
documents, and copydesk/render/audit.py prints them for a terminal. Read only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from ingest.urls import canonical_url
from store import history
from store import verdicts as stored_verdicts
from store.history import ItemHistory, iso, utc
from store.models import AuditEvent, Feed, GateVerdict, Item

OTHER = "other"  # the discards bucket for items no gate failed (model gave up, link refused...)
_CHUNK = 500  # ids per IN (...) query: well under every backend's parameter limit

# --- small helpers -------------------------------------------------------------------------


def parse_since(text: str) -> datetime:
    """YYYY-MM-DD (midnight UTC) or an ISO 8601 datetime (UTC when it has no offset).

    Raises ValueError with a message fit for the user."""
    raw = text.strip()
    try:
        if len(raw) == 10:
            day = date.fromisoformat(raw)
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        raise ValueError(
            f"--since {text!r} is not a date: use YYYY-MM-DD or an ISO 8601 datetime"
        ) from None
    return utc(parsed)  # type: ignore[return-value]


def item_history(engine: Engine, key: str | int) -> ItemHistory | None:
    """`store.history.item_history`, with URLs matched also by their canonical form."""
    return history.item_history(engine, key, canonical=canonical_url)


# --- discards --------------------------------------------------------------------------------


@dataclass
class Discard:
    """One discarded item: when, by whom, and the failed hard gates (empty: see `reason`)."""

    item_id: int
    title: str | None
    url: str | None
    feed: str | None
    discarded_at: datetime
    actor: str
    reason: str | None
    kind: str | None = None  # items.discard_kind: the first failed gate, or refused, duplicate...
    failed: list[GateVerdict] = field(default_factory=list)

    @property
    def buckets(self) -> list[str]:
        """The gates this discard counts under: each failed gate once, or `other`."""
        gates = list(dict.fromkeys(v.gate for v in self.failed))
        return gates or [OTHER]

    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "title": self.title,
            "url": self.url,
            "feed": self.feed,
            "discarded_at": iso(self.discarded_at),
            "actor": self.actor,
            "reason": self.reason,
            "kind": self.kind,
            "failed_gates": [
                {"stage": v.stage, "gate": v.gate, "reason": v.reason, "evidence": v.evidence}
                for v in self.failed
            ],
        }


@dataclass
class DiscardsReport:
    """Discards newest first, and how many fall under each failed gate."""

    discards: list[Discard]
    counts: dict[str, int]
    since: datetime | None = None
    gate: str | None = None
    feed: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "filters": {"since": iso(self.since), "gate": self.gate, "feed": self.feed},
            "total": len(self.discards),
            "counts": self.counts,
            "discards": [d.to_dict() for d in self.discards],
        }


def feed_events(engine: Engine) -> list[AuditEvent]:
    """Every feed's change, oldest first: the audit events with no item (migration
    0024) that the feeds commands and config.toml's sync write."""
    with Session(engine) as session:
        return list(
            session.scalars(
                select(AuditEvent)
                .where(AuditEvent.item_id.is_(None))  # type: ignore[union-attr]
                .order_by(AuditEvent.id)  # type: ignore[arg-type]
            )
        )


def discards_report(
    engine: Engine,
    *,
    since: datetime | None = None,
    gate: str | None = None,
    feed: str | None = None,
) -> DiscardsReport:
    """Discarded items (newest first) with their failed hard gates, optionally only
    those discarded since a time, failed by one gate (or `other`), or from one feed
    (by name or URL). Counts are over the items listed."""
    with Session(engine, expire_on_commit=False) as session:
        discards = _discard_rows(session, since=since, feed=feed)
        failed = _failed_hard_verdicts(session, [d.item_id for d in discards])
    for d in discards:
        d.failed = failed.get(d.item_id, [])
    if gate:
        discards = [d for d in discards if gate in d.buckets]
    return DiscardsReport(discards, count_buckets(discards), since=since, gate=gate, feed=feed)


def count_buckets(discards: Iterable[Discard]) -> dict[str, int]:
    """Discards per failed gate (an item two gates failed counts under both), most first."""
    counts = Counter(bucket for d in discards for bucket in d.buckets)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0] == OTHER, kv[0])))


def _discard_rows(session: Session, *, since: datetime | None, feed: str | None) -> list[Discard]:
    statement = (
        select(
            Item.id,
            Item.title,
            Item.source_url,
            Item.original_url,
            Feed.name,
            AuditEvent.at,
            AuditEvent.actor,
            AuditEvent.reason,
            Item.discard_kind,
        )
        .join(AuditEvent, AuditEvent.item_id == Item.id)
        .outerjoin(Feed, Feed.id == Item.feed_id)
        .where(Item.status == "discarded", AuditEvent.to_status == "discarded")
        .order_by(AuditEvent.at.desc(), AuditEvent.id.desc())
    )
    if since is not None:
        # SQLite compares the stored UTC wall-clock text: bind UTC too.
        statement = statement.where(AuditEvent.at >= utc(since))
    if feed:
        statement = statement.where(or_(Feed.name == feed, Feed.url == feed))
    discards: dict[int, Discard] = {}
    for row in session.execute(statement):
        item_id, title, source_url, original_url, feed_name, at, actor, reason, kind = row
        if item_id in discards:  # a discard is final; keep the newest event all the same
            continue
        discards[item_id] = Discard(
            item_id=item_id,
            title=title,
            url=source_url or original_url,
            feed=feed_name,
            discarded_at=utc(at),  # type: ignore[arg-type]
            actor=actor,
            reason=reason,
            kind=kind,
        )
    return list(discards.values())


def _failed_hard_verdicts(
    session: Session, item_ids: Sequence[int]
) -> dict[int, list[GateVerdict]]:
    failed: dict[int, list[GateVerdict]] = {}
    for start in range(0, len(item_ids), _CHUNK):
        chunk = item_ids[start : start + _CHUNK]
        for item_id, listed in stored_verdicts.of_items(session, chunk, failed_only=True).items():
            hard = [v for v in listed if v.mode == "discard"]
            if hard:
                failed[item_id] = hard
    return failed


def known_gates(engine: Engine) -> set[str]:
    """Every gate name the registry knows or the database has a failed verdict from."""
    from guards.registry import ALL_GATES

    with Session(engine) as session:
        # A gate that failed: one no longer in the registry that only ever passed
        # can have no discards to list, so it need not be known.
        recorded = set(stored_verdicts.failed_gate_names(session))
    return set(ALL_GATES) | recorded


def feed_exists(engine: Engine, name_or_url: str) -> bool:
    with Session(engine) as session:
        found = session.scalars(
            select(Feed.id).where(or_(Feed.name == name_or_url, Feed.url == name_or_url)).limit(1)
        ).first()
    return found is not None
