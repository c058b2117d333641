"""What was approved is what ships, and the record proves it.

An editor's approval (draft -> approved, `store.status.move`) records in its audit
event the SHA-256 of the exact text approved (`text_hash`: headline and summary)
and the item's version after the move. The event is in the hash chain, so the
record of what was approved cannot be changed without `audit --verify` noticing.

- `refusal` is asked by the publisher before a payload goes out: a payload whose
  text is not the text of the item's last approval is refused (a changed summary,
  a forged delivery row).
- `verify` (part of `copydesk audit --verify`) checks the records against each
  other: every item's status is the one its last audit event moved it to (a
  status written by hand has no event), every approved, published or retracted
  item was approved by an editor and still carries the approved text, and every
  delivered publication carried it.

Approvals recorded before the hash existed carry none: they are counted and
named as unhashed, not failed (their text cannot be compared with anything).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from store.models import AuditEvent, Delivery, Item

TEXT_HASH = "approved_text_sha256"  # key in the approval event's details
VERSION = "approved_version"
APPROVED = "approved"
DRAFT = "draft"
DECIDED = ("approved", "published", "retracted")  # statuses an approval stands behind
PUBLISH = "publish"
DELIVERED = "delivered"


def text_hash(headline: str | None, summary: str | None) -> str:
    """SHA-256 over the text as canonical JSON: headline and summary, exactly."""
    canonical = json.dumps(
        {"headline": headline, "summary": summary or ""},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def approval_details(headline: str | None, summary: str | None, version: int) -> dict[str, Any]:
    """What the approval event records about the text it approved."""
    return {TEXT_HASH: text_hash(headline, summary), VERSION: version}


def _approval_query(item_ids: Any = None) -> Any:
    query = select(AuditEvent).where(
        AuditEvent.to_status == APPROVED, AuditEvent.from_status == DRAFT
    )
    if item_ids is not None:
        query = query.where(col(AuditEvent.item_id).in_(item_ids))
    return query.order_by(col(AuditEvent.id))


def latest_approval(session: Session, item_id: int) -> AuditEvent | None:
    """The item's last draft -> approved event, or None."""
    return session.scalars(
        _approval_query([item_id]).order_by(None).order_by(col(AuditEvent.id).desc()).limit(1)
    ).first()


def recorded_hash(approval: AuditEvent) -> str | None:
    """The text hash an approval event recorded (None: it predates the hash)."""
    details = approval.details
    return details.get(TEXT_HASH) if isinstance(details, dict) else None


def refusal(
    session: Session, item_id: int, headline: str | None, summary: str | None
) -> str | None:
    """None when (headline, summary) is the text of the item's last approval (or
    that approval predates text hashes); otherwise one line saying why not."""
    approval = latest_approval(session, item_id)
    if approval is None:
        return f"item {item_id} has no editor's approval in the audit log"
    recorded = recorded_hash(approval)
    if recorded is None:
        return None
    if text_hash(headline, summary) != recorded:
        return (
            f"item {item_id}: the text to publish is not the text {approval.actor} approved "
            f"(audit event {approval.id})"
        )
    return None


@dataclass(frozen=True)
class Problem:
    item_id: int
    problem: str
    event_id: int | None = None

    def __str__(self) -> str:
        where = f" (audit event {self.event_id})" if self.event_id else ""
        return f"item {self.item_id}: {self.problem}{where}"


@dataclass
class RecordsReport:
    """The outcome of `verify`: items looked at, approvals without a text hash
    (older than the hash), and every problem found (at most `limit`)."""

    items: int = 0
    unhashed: list[int] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(engine: Engine, batch: int = 2000, limit: int = 50) -> RecordsReport:
    """Check items, their last audit events, approvals and delivered payloads
    against each other, a batch of items at a time."""
    report = RecordsReport()
    last = 0
    with Session(engine) as session:
        while len(report.problems) < limit:
            items = session.execute(
                select(Item.id, Item.status, Item.headline, Item.summary, Item.decided_by)
                .where(col(Item.id) > last)
                .order_by(col(Item.id))
                .limit(batch)
            ).all()
            if not items:
                break
            last = items[-1].id
            report.items += len(items)
            _check_batch(session, items, report)
            session.expunge_all()
    del report.problems[limit:]
    return report


def _check_batch(session: Session, items: list[Any], report: RecordsReport) -> None:
    ids = [row.id for row in items]
    last_ids = (
        select(func.max(AuditEvent.id))
        .where(col(AuditEvent.item_id).in_(ids))
        .group_by(col(AuditEvent.item_id))
    )
    last_move = {
        row.item_id: row
        for row in session.execute(
            select(AuditEvent.id, AuditEvent.item_id, AuditEvent.to_status).where(
                col(AuditEvent.id).in_(last_ids)
            )
        )
    }
    approvals: dict[int, AuditEvent] = {}
    for event in session.scalars(_approval_query(ids)):
        approvals[event.item_id] = event  # id order: the last one stays
    delivered: dict[int, list[tuple[int, Any]]] = {}
    for row in session.execute(
        select(Delivery.id, Delivery.item_id, Delivery.payload).where(
            col(Delivery.item_id).in_(ids),
            Delivery.kind == PUBLISH,
            Delivery.state == DELIVERED,
        )
    ):
        delivered.setdefault(row.item_id, []).append((row.id, row.payload))
    for item in items:
        report.problems += _item_problems(
            item, last_move.get(item.id), approvals.get(item.id), delivered.get(item.id, [])
        )
        if item.status in DECIDED and item.id in approvals:
            if recorded_hash(approvals[item.id]) is None:
                report.unhashed.append(item.id)


def _item_problems(
    item: Any, last: Any, approval: AuditEvent | None, delivered: list[tuple[int, Any]]
) -> list[Problem]:
    if last is None:
        return [Problem(item.id, f"it is {item.status} but has no audit event")]
    if last.to_status != item.status:
        return [
            Problem(
                item.id,
                f"it is {item.status}, but its last audit event moved it to {last.to_status} "
                "(its status was written without a status move)",
                last.id,
            )
        ]
    if item.status not in DECIDED:
        return []
    if approval is None or not approval.actor.startswith("editor:"):
        return [Problem(item.id, f"it is {item.status} with no editor's approval in the audit log")]
    problems = []
    approver = approval.actor.removeprefix("editor:")
    if item.decided_by != approver:
        problems.append(
            Problem(
                item.id,
                f"it names {item.decided_by!r} as its approver; the audit log says {approver!r}",
                approval.id,
            )
        )
    recorded = recorded_hash(approval)
    if recorded is None:
        return problems
    if text_hash(item.headline, item.summary) != recorded:
        problems.append(
            Problem(item.id, "its text is not the text the editor approved", approval.id)
        )
    for delivery_id, payload in delivered:
        sent = payload if isinstance(payload, dict) else {}
        if text_hash(sent.get("headline"), sent.get("summary")) != recorded:
            problems.append(
                Problem(
                    item.id,
                    f"delivery {delivery_id} published a text the editor did not approve",
                    approval.id,
                )
            )
    return problems
