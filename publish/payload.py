"""What every target receives: one JSON object per event (published or retracted).

The shape is fixed by `publish/payload.schema.json` (shipped with the package, and
a test validates real payloads against it). Times are ISO 8601 in UTC.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

SCHEMA_PATH = Path(__file__).with_name("payload.schema.json")
SCHEMA_ID = "copydesk.publication/1"


@dataclass(frozen=True)
class Ids:
    """The ids an installation publishes under. Item numbers restart in every
    database, so each id carries the installation's own id (made with its schema):
    two newsrooms, or one moved to a new database, never send the same id or key
    for different stories. Ids are tag URIs (RFC 4151, "tag:" authority "," date
    ":" specific): the authority a domain the newsroom owns ([publish]
    id_authority), the date the installation's first day."""

    installation: str
    authority: str = "copydesk"
    date: str = "2026-01-01"

    def entry(self, item_id: int) -> str:
        """The item's stable id in every target (the Atom entry id too)."""
        return f"tag:{self.authority},{self.date}:{self.installation}/item/{item_id}"

    def key(self, item_id: int, kind: str, target: str) -> str:
        """The webhook's Idempotency-Key: the same on every attempt of one delivery."""
        return f"copydesk-{self.installation}-item-{item_id}-{kind}-{target}"


def iso(value: datetime | None) -> str | None:
    return value.isoformat(timespec="seconds").replace("+00:00", "Z") if value else None


def source_digest(text: str | None) -> str:
    return hashlib.sha256((text or "").encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Attribution:
    """Whose story it is and how the summary was made: the source outlet (the feed's
    name), its byline and date as extracted at ingest, the summariser that wrote the
    summary, the models that ran its checks, and each model check's state ("ran",
    "not run", "failed"; empty: no model check is configured)."""

    source_outlet: str | None = None
    source_byline: str | None = None
    source_published_at: datetime | None = None
    written_by: str | None = None
    checked_by: list[str] = field(default_factory=list)
    model_checks: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source_outlet": self.source_outlet,
            "source_byline": self.source_byline,
            "source_published_at": iso(self.source_published_at),
            "written_by": self.written_by,
            "checked_by": self.checked_by,
            "model_checks": self.model_checks,
            "model_checks_ran": bool(self.model_checks)
            and all(state == "ran" for state in self.model_checks.values()),
        }


@dataclass(frozen=True)
class Publication:
    """One item as published. `evidence` and `checks` are the evidence map."""

    item_id: int
    entry_id: str
    headline: str | None
    summary: str
    source_url: str | None
    source_title: str | None
    source_sha256: str
    approved_by: str | None
    approved_at: datetime | None
    published_at: datetime
    evidence: list[dict[str, Any]] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)
    # The audit log's head (ID:HASH) when this was prepared: every reader keeps a copy
    # of the chain's head (`copydesk audit --verify --against-feed`).
    audit_head: str | None = None
    attribution: Attribution = field(default_factory=Attribution)
    # A corrected item (store.deliveries.Correction): republished under the same id
    # as event "corrected", with the editor's note, the correction's number and the
    # first publication's time (RFC 4287 4.2.6: an entry's id never changes; 4.2.15:
    # `updated` is when it last changed in a way the publisher considers significant).
    correction: Any = None

    def to_dict(self) -> dict[str, Any]:
        fixed = self.correction
        corrected = (
            {
                "correction": {
                    "note": fixed.note,
                    "revision": fixed.revision,
                    "reopened_at": iso(fixed.at),
                },
                "first_published_at": fixed.first_published_at,
            }
            if fixed is not None
            else {}
        )
        return (
            corrected
            | {
                "schema": SCHEMA_ID,
                "event": "corrected" if fixed is not None else "published",
                "id": self.entry_id,
                "item_id": self.item_id,
                "headline": self.headline,
                "summary": self.summary,
                "source_url": self.source_url,
                "source_title": self.source_title,
                "source_sha256": self.source_sha256,
                "approved_by": self.approved_by,
                "approved_at": iso(self.approved_at),
                "published_at": iso(self.published_at),
                "evidence": self.evidence,
                "checks": self.checks,
                **self.attribution.to_dict(),
            }
            | ({"audit_head": self.audit_head} if self.audit_head else {})
        )


def retraction(
    published: dict[str, Any], reason: str, by: str, at: datetime, audit_head: str | None = None
) -> dict[str, Any]:
    """The retraction event for an item published with `published` (its payload).
    `audit_head`: the log's head with the retraction recorded (its own event), as
    every publication carries one (issue 26)."""
    keep = ("id", "item_id", "headline", "source_url", "approved_by", "published_at")
    return {
        "schema": SCHEMA_ID,
        "event": "retracted",
        **{key: published.get(key) for key in keep},
        "reason": reason,
        "retracted_by": by,
        "retracted_at": iso(at),
    } | ({"audit_head": audit_head} if audit_head else {})


def to_bytes(payload: dict[str, Any]) -> bytes:
    """The exact bytes sent and signed: compact, keys in a fixed order, UTF-8."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode(
        "utf-8"
    )
