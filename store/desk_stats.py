"""How the desk works: decisions per editor in a period, and how long drafts wait.

Read from the audit log alone (every decision is an event with its editor and
time), so the review app's Stats page and `copydesk stats` give the same numbers.

- A decision is an editor's move of a draft to approved or rejected. One that was
  undone later still counts: it was work done.
- Time to decision runs from the moment the draft was stored (the item's first
  move into `draft`) to that decision.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import aliased
from sqlmodel import Session

from store.models import AuditEvent
from store.status import APPROVED, DRAFT, REJECTED

EDITOR_PREFIX = "editor:"


@dataclass(frozen=True)
class EditorThroughput:
    """One editor's decisions in a period of `days` days."""

    editor: str
    approved: int
    rejected: int
    days: int
    median_seconds: float | None  # from draft stored to decision; None: nothing to measure

    @property
    def decisions(self) -> int:
        return self.approved + self.rejected

    @property
    def per_day(self) -> float:
        return self.decisions / self.days if self.days else float(self.decisions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "editor": self.editor,
            "decisions": self.decisions,
            "approved": self.approved,
            "rejected": self.rejected,
            "days": self.days,
            "decisions_per_day": round(self.per_day, 2),
            "median_seconds_to_decision": (
                None if self.median_seconds is None else round(self.median_seconds, 1)
            ),
        }


def _aware(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def editor_throughput(
    session: Session, days: int, now: datetime | None = None
) -> list[EditorThroughput]:
    """Per editor, decisions made in the last `days` days and the median time from
    draft stored to decision; editors with no decision in the period are left out."""
    since = (now or datetime.now(UTC)) - timedelta(days=days)
    drafted = aliased(AuditEvent)
    stored = (
        select(drafted.item_id, func.min(drafted.at).label("stored_at"))
        .where(drafted.to_status == DRAFT)
        .group_by(drafted.item_id)
        .subquery()
    )
    statement = (
        select(AuditEvent.actor, AuditEvent.to_status, AuditEvent.at, stored.c.stored_at)
        .outerjoin(stored, stored.c.item_id == AuditEvent.item_id)
        .where(
            AuditEvent.from_status == DRAFT,
            AuditEvent.to_status.in_([APPROVED, REJECTED]),  # type: ignore[attr-defined]
            AuditEvent.actor.startswith(EDITOR_PREFIX),  # type: ignore[attr-defined]
            AuditEvent.at >= since,
        )
    )
    counts: dict[str, list[int]] = {}
    waits: dict[str, list[float]] = {}
    for actor, to_status, at, stored_at in session.execute(statement):
        editor = actor.removeprefix(EDITOR_PREFIX)
        slot = counts.setdefault(editor, [0, 0])
        slot[0 if to_status == APPROVED else 1] += 1
        if stored_at is not None:
            seconds = (_aware(at) - _aware(stored_at)).total_seconds()
            waits.setdefault(editor, []).append(max(0.0, seconds))
    return [
        EditorThroughput(
            editor,
            approved,
            rejected,
            days,
            statistics.median(waits[editor]) if waits.get(editor) else None,
        )
        for editor, (approved, rejected) in sorted(counts.items())
    ]


def duration_text(seconds: float | None) -> str:
    """'45 s', '12 min', '3 h 5 min', '2 d 4 h': a wait, for a person; '-' for none."""
    if seconds is None:
        return "-"
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes = whole // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    days, hours = divmod(hours, 24)
    return f"{days} d" + (f" {hours} h" if hours else "")
