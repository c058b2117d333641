"""What the queue does after approval: publish now, take an approval back, read each
item's deliveries and the sources that changed under a published summary.

Every action re-reads the editor's role in its own transaction (viewers only look),
and every status change goes through `store.status` (via `publish.service`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from publish import worker
from publish.build import configured_publisher
from publish.service import Publisher, PublishReport, retract, retry_failed
from review_ui.desk.decisions import Reviewer, decide, reopen, require_editor
from review_ui.desk.queries import utc
from review_ui.settings import ReviewAppSettings
from store.deliveries import DELIVERED, target_states, troubles
from store.models import Delivery, Item, SourceCheck, utcnow


def publish_now(
    engine: Engine,
    settings: ReviewAppSettings,
    reviewer: Reviewer,
    item_ids: Sequence[int] | None = None,
) -> PublishReport:
    """Deliver the approved items named (every approved item when None) now, as this
    editor. Raises NotAllowed for a viewer, ValueError when no target is configured
    or a secret is missing."""
    with Session(engine) as session:
        require_editor(session, reviewer)
    if not settings.publish.targets:
        raise ValueError("no publish targets are configured in config.toml")
    publisher = _publisher_for(engine, settings, reviewer)
    try:
        return publisher.publish(None if item_ids is None else list(item_ids))
    finally:
        publisher.close()  # the webhook's HTTP client


def _publisher_for(engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer) -> Publisher:
    return configured_publisher(
        engine,
        settings.publish,
        settings.gates,
        actor=reviewer.actor,
        env=os.environ,
        hold_seconds=settings.review.undo_seconds,
    )


def _job_key(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)


def publish_in_background(
    engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer, item_ids: Sequence[int]
) -> worker.Job:
    """Publish now: the items are published by a worker thread, as this editor, and
    this returns at once with the running job (publish/worker.py). Raises
    NotAllowed for a viewer, ValueError when no target is configured or a secret is
    missing, worker.AlreadyRunning while a publish of this database runs."""
    with Session(engine) as session:
        require_editor(session, reviewer)
    if not settings.publish.targets:
        raise ValueError("no publish targets are configured in config.toml")
    return worker.start(
        _job_key(engine),
        lambda: _publisher_for(engine, settings, reviewer),
        item_ids,
        reviewer.name,
    )


def current_job(engine: Engine) -> worker.Job | None:
    """The running background publish of this database, or the last one to end."""
    return worker.current(_job_key(engine))


def job_progress(session: Session, job: worker.Job, settings: ReviewAppSettings) -> tuple[int, int]:
    """(deliveries made, deliveries to make) of the job's items to the configured
    targets, read from the delivery rows (true even for a job that died)."""
    names = [t.name for t in settings.publish.targets]
    states = target_states(session, job.item_ids, names)
    made = sum(s.state == DELIVERED for item in states.values() for s in item.values())
    return made, len(job.item_ids) * len(names)


@dataclass(frozen=True)
class ToPublish:
    """An approved item as the Publish now confirmation lists it."""

    item_id: int
    version: int
    headline: str
    decided_at: datetime | None
    in_undo_window: bool  # approved less than `[review] undo_seconds` ago: not yet


def approved_items(session: Session, undo_seconds: float) -> list[ToPublish]:
    """Every approved item, oldest approval first; one approved within the Undo
    window is marked: the editor may still take it back with one click."""
    now = utcnow()
    rows = session.scalars(
        select(Item).where(Item.status == "approved").order_by(col(Item.decided_at))
    ).all()
    out = []
    for item in rows:
        at = utc(item.decided_at)
        recent = at is not None and (now - at).total_seconds() < undo_seconds
        headline = item.headline or item.title or f"item {item.id}"
        out.append(ToPublish(item.id, item.version, headline, at, recent))  # type: ignore[arg-type]
    return out


def retract_now(
    engine: Engine,
    settings: ReviewAppSettings,
    reviewer: Reviewer,
    item_id: int,
    version: int,
    reason: str,
) -> PublishReport | None:
    """published -> retracted from the desk (an editor, a reason, the version the
    list showed), then the retractions are sent to every target that has it.
    Raises NotAllowed, NotPublishable (no reason, not published) or Conflict: the
    version is checked in the retraction's own transaction (`retract`)."""
    with Session(engine) as session:
        require_editor(session, reviewer)
    retract(engine, item_id, editor=reviewer.name, reason=reason, expected_version=version)
    if not settings.publish.targets:
        return None
    return publish_now(engine, settings, reviewer, [item_id])  # its retractions, now


def retry_now(
    engine: Engine, settings: ReviewAppSettings, reviewer: Reviewer, item_id: int
) -> tuple[list[tuple[int, str]], PublishReport | None]:
    """The Delivery failed view's Retry: the item's refused deliveries (and those
    waiting for their next try) are made due, in an audit event naming the editor
    (publish.service.retry_failed), then sent. Returns the deliveries made pending
    again and what the publish did (None when nothing was left to retry: another
    editor's Retry, or a publish, came first). Raises NotAllowed for a viewer."""
    with Session(engine) as session:
        require_editor(session, reviewer)
        if not troubles(session, [item_id]):
            return [], None
    again = retry_failed(engine, [item_id], editor=reviewer.name)
    return again, publish_now(engine, settings, reviewer, [item_id])


def reopen_as_correction(
    engine: Engine, reviewer: Reviewer, item_id: int, expected_version: int, note: str
) -> Item:
    """published -> draft, as a correction: `note` (required) is the correction note
    the republished item carries. The item stays live on its targets as it was until
    its corrected text is approved and published (under the same id)."""
    return decide(
        engine,
        lambda s: reopen(s, reviewer, item_id, expected_version, note, details={"reopened": True}),
    )


def take_back(
    engine: Engine, reviewer: Reviewer, item_id: int, expected_version: int, reason: str
) -> Item:
    """approved -> draft before publication, with a reason (the status machine refuses
    once a target has, or may have, the item). The same move as Undo and reopen
    (`decisions.reopen`); raises ReasonRequired (a ValueError) without a reason."""
    return decide(
        engine,
        lambda s: reopen(
            s, reviewer, item_id, expected_version, reason, details={"taken_back": True}
        ),
    )


@dataclass(frozen=True)
class DeliveryRow:
    target: str
    kind: str
    state: str
    attempts: int
    delivered_at: datetime | None
    last_error: str | None


def deliveries(session: Session, item_id: int) -> list[DeliveryRow]:
    rows = session.scalars(
        select(Delivery).where(Delivery.item_id == item_id).order_by(Delivery.id)
    ).all()
    return [
        DeliveryRow(r.target, r.kind, r.state, r.attempts, r.delivered_at, r.last_error)
        for r in rows
    ]


def delivery_summaries(session: Session, item_ids: list[int]) -> dict[int, str]:
    """ "atom ✓ · jsonl ✓ · webhook ✗ (failed)" per item, for a list's column."""
    marks = {"delivered": "✓", "pending": "…", "failed": "✗"}
    rows = session.scalars(
        select(Delivery).where(col(Delivery.item_id).in_(item_ids)).order_by(Delivery.id)
    ).all()
    out: dict[int, list[str]] = {}
    for r in rows:
        label = f"{r.target} {marks.get(r.state, r.state)}"
        if r.kind != "publish":
            label = f"{r.kind} {label}"
        out.setdefault(r.item_id, []).append(label)
    return {item_id: " · ".join(parts) for item_id, parts in out.items()}


@dataclass(frozen=True)
class ChangedSource:
    check_id: int
    item_id: int
    version: int  # the item's, when the list was read (a retraction checks it)
    headline: str
    source_url: str | None
    checked_at: datetime
    failing: list[dict[str, Any]]
    passages: list[dict[str, str]]


def open_source_changes(session: Session) -> list[ChangedSource]:
    rows = session.exec(
        select(SourceCheck, Item)
        .join(Item, Item.id == SourceCheck.item_id)  # type: ignore[arg-type]
        .where(SourceCheck.state == "open", Item.status != "retracted")  # retracted: dealt with
        .order_by(col(SourceCheck.checked_at).desc())
    ).all()
    return [
        ChangedSource(
            c.id,
            i.id,
            i.version,
            i.headline or i.title or f"item {i.id}",
            i.source_url,
            c.checked_at,
            c.failing or [],
            c.passages or [],
        )
        for c, i in rows
    ]


def resolve_source_change(engine: Engine, reviewer: Reviewer, check_id: int) -> None:
    """An editor has looked at it (and retracted, or decided the summary stands)."""

    def action(session: Session) -> None:
        require_editor(session, reviewer)
        check = session.get(SourceCheck, check_id)
        if check is not None and check.state == "open":
            check.state = "resolved"
            check.resolved_by = reviewer.name
            check.checked_at = utcnow()
            session.add(check)

    decide(engine, action)
