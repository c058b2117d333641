"""Publishing and retracting, exactly once per (item, target, kind).

For each item: a delivery row per configured target is written first (pending, with
the payload), then each pending row is claimed (a lease and a claim token, so two
workers never send one at once), sent, and recorded. A crash between sending and
recording leaves the row pending: the next publish sends it again and the target
absorbs the repeat (see publish/targets.py). Recording is a compare-and-set on the
claim token: a worker whose lease ran out and whose row another worker took over
records nothing. The item moves approved -> published, through the status machine,
in the transaction that records its last target.

Crossings, on both backends (tests/test_publish_races.py forces each one):
- an editor's take-back and the preparation or claim of the item's rows take the
  same lock (the item's row on PostgreSQL, the write lock on SQLite: store/locks.py)
  and read after taking it;
- a whole-file target (the Atom feed) is rebuilt from the delivered rows, written
  and recorded in one transaction holding the target's lock, so two publishers
  never write a file that lacks what the other recorded; and every publish, even
  one with nothing to send, leaves the file equal to the database's rows.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select, true, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session, col

from guards.registry import CHECK_GATES, DRAFT_GATES, SOURCE_GATES, GateResult, run_gates
from guards.verdict import Verdict
from publish import evidence
from publish.payload import Attribution, Ids, Publication, retraction, source_digest
from publish.targets import DELIVERED, FAILED, Event, Sent, Target
from store import approvals, audit_chain, deliveries, locks
from store import status as st
from store import verdicts as stored_verdicts
from store.db import session_scope
from store.deliveries import PENDING, PUBLISH, RETRACT, record_retry, still_wanted
from store.installation import installation
from store.models import Delivery, Feed, GateVerdict, Item, ModelCall, utcnow

log = logging.getLogger("copydesk.publish")
LOST = "the claim passed to another worker"
DOWN = "not tried: the target failed earlier in this run"


class NotPublishable(ValueError):
    """The item cannot be published or retracted as asked (one line says why)."""


@dataclass
class PublishReport:
    published: list[int] = field(default_factory=list)
    retracted: list[int] = field(default_factory=list)  # retractions fully delivered
    delivered: list[tuple[int, str, str]] = field(default_factory=list)  # item, target, kind
    pending: list[tuple[int, str, str]] = field(default_factory=list)  # item, target, why
    failed: list[tuple[int, str, str]] = field(default_factory=list)  # item, target, why
    blocked: list[tuple[int, str]] = field(default_factory=list)  # item, why not sent
    held: list[tuple[int, str]] = field(default_factory=list)  # item, inside its Undo window
    lost: list[tuple[int, str, str]] = field(default_factory=list)  # item, target, why

    @property
    def clean(self) -> bool:
        return not (self.pending or self.failed or self.blocked or self.held)


@dataclass(frozen=True)
class GateConfig:
    """The gate settings the deterministic re-check uses (from config.toml)."""

    modes: Mapping[str, str] = field(default_factory=dict)
    min_source_words: int = 150


def installation_ids(session: Session, authority: str = "copydesk") -> Ids:
    """The ids this installation publishes under (see publish.payload.Ids)."""
    made = installation(session)
    return Ids(made.id, authority, made.day)


def _stamp(at: datetime) -> str:
    return at.isoformat(timespec="seconds").replace("+00:00", "Z")


def backoff(attempts: int, base: float, cap: float) -> timedelta:
    """The wait before trying a delivery again after its `attempts`-th passing
    failure: base, doubling each time, never more than cap."""
    return timedelta(seconds=min(base * 2 ** min(attempts - 1, 30), cap))


class Publisher:
    def __init__(
        self,
        engine: Engine,
        targets: Sequence[Target],
        *,
        actor: str,
        gates: GateConfig | None = None,
        lease_seconds: float = 300,
        hold_seconds: float = 0,
        retry_seconds: float = 30,
        retry_max_seconds: float = 3600,
        id_authority: str = "copydesk",
    ):
        """`hold_seconds`: an approval is not published until it is this old (the
        queue's Undo window, [review] undo_seconds): Undo must never find it live.
        `retry_seconds`, `retry_max_seconds`: the backoff after a passing failure.
        `id_authority`: the tag URI authority of published ids ([publish])."""
        self.engine = engine
        self.targets = list(targets)
        self.actor = actor
        self.gates = gates or GateConfig()
        self.lease = timedelta(seconds=lease_seconds)
        self.hold = timedelta(seconds=hold_seconds)
        self.retry = (retry_seconds, retry_max_seconds)
        self.id_authority = id_authority
        self._down: dict[str, str] = {}  # targets that failed for a passing reason this run
        self._ids: Ids | None = None

    @property
    def ids(self) -> Ids:
        """The ids this installation publishes under (read once)."""
        if self._ids is None:
            with Session(self.engine) as session:
                self._ids = installation_ids(session, self.id_authority)
        return self._ids

    def close(self) -> None:
        """Close the targets' connections (a webhook's HTTP client)."""
        for target in self.targets:
            close = getattr(target, "close", None)
            if close:
                close()

    # ----------------------------------------------------------------- publishing

    def publish(self, item_ids: Sequence[int] | None = None) -> PublishReport:
        """Publish approved items (all, or those named) and send pending retractions."""
        report = PublishReport()
        if not self.targets:
            raise NotPublishable("no publish targets are configured ([[publish.targets]])")
        self._written: set[str] = set()  # whole-file targets written by this run
        self._down = {}
        ready = [i for i in self._approved(item_ids, report) if self._prepare(i, report)]
        for target in self.targets:
            if getattr(target, "batch", None):
                self._deliver_together(ready, PUBLISH, target, report)
            else:
                for item_id in ready:
                    self._deliver(item_id, PUBLISH, target, report)
        for item_id in ready:
            self._finish_if_complete(item_id, report)
        self._send_retractions(item_ids, report)
        for target in self.targets:
            if getattr(target, "window", None) and target.name not in self._written:
                self._send_whole(target, [], PUBLISH, report)  # the file = the database
        return report

    def _approved(self, item_ids: Sequence[int] | None, report: PublishReport) -> list[int]:
        with Session(self.engine) as session:
            query = select(Item.id).where(Item.status == st.APPROVED).order_by(Item.decided_at)
            if item_ids is not None:
                query = query.where(col(Item.id).in_(item_ids))
            found = list(session.scalars(query))
            if self.hold:
                found = self._outside_undo_window(session, found, report)
            for item_id in item_ids or ():
                if item_id not in found:
                    item = session.get(Item, item_id)
                    why = f"it is {item.status}, not approved" if item else "no such item"
                    if item is None or item.status not in (st.PUBLISHED, st.RETRACTED):
                        report.blocked.append((item_id, why))
        return [i for i in found if i is not None]

    def _outside_undo_window(
        self, session: Session, item_ids: list[int], report: PublishReport
    ) -> list[int]:
        """The items approved at least `hold_seconds` ago; the others are held."""
        if not item_ids:
            return item_ids
        now = utcnow()
        decided = dict(
            session.execute(
                select(Item.id, Item.decided_at).where(col(Item.id).in_(item_ids))
            ).all()
        )
        ready = []
        for item_id in item_ids:
            at = decided.get(item_id)
            if at is not None and now - at < self.hold:
                wait = (self.hold - (now - at)).total_seconds()
                report.held.append(
                    (item_id, f"inside its Undo window: published in {wait:.0f} s or later")
                )
            else:
                ready.append(item_id)
        return ready

    def _prepare(self, item_id: int, report: PublishReport) -> dict[str, Any] | None:
        """Write the pending delivery rows (once); None when the item may not go out.
        Two workers preparing one item at once: the later one's insert or write lock
        fails, and its second try finds the rows the first one wrote."""
        for attempt in (1, 2):
            try:
                return self._prepare_once(item_id, report)
            except (IntegrityError, OperationalError):
                if attempt == 2:
                    raise
        return None  # pragma: no cover - the loop returns or raises

    def _prepare_once(self, item_id: int, report: PublishReport) -> dict[str, Any] | None:
        """Under the item's lock (as a take-back takes it): the rows are written, and
        a row not tried yet that an earlier approval left gets the current payload."""
        with session_scope(self.engine) as session:
            locks.write_transaction(session)
            item = session.execute(
                select(Item).where(Item.id == item_id).with_for_update()
            ).scalar_one_or_none()
            if item is None or item.status != st.APPROVED:
                return None
            changed = approvals.refusal(session, item_id, item.headline, item.summary)
            if changed:
                report.blocked.append((item_id, changed))
                return None
            results = self.recheck(item)
            failing = [r for r in results if r.hard_fail]
            if failing:
                why = "; ".join(f"{r.gate}: {r.verdict.reason}" for r in failing)
                report.blocked.append((item_id, f"fails a hard gate now: {why}"))
                return None
            payload = self.payload(session, item, results)
            existing = {
                d.target: d
                for d in session.scalars(
                    select(Delivery).where(Delivery.item_id == item_id, Delivery.kind == PUBLISH)
                )
            }
            # A correction's deliveries are new ones: a key of their own (a receiver
            # that keeps seen keys must not drop the corrected text as a repeat).
            fixed = deliveries.correction(session, item_id) if payload.get("correction") else None
            keyed = f"correct-{fixed.revision}" if fixed else PUBLISH
            for target in self.targets:
                row = existing.get(target.name)
                if row is not None and _from_an_earlier_approval(row, payload):
                    row.payload = payload  # untried: built again from the current text
                if target.name not in existing:
                    session.add(
                        Delivery(
                            item_id=item_id,
                            target=target.name,
                            kind=PUBLISH,
                            idempotency_key=self.ids.key(item_id, keyed, target.name),
                            payload=payload,
                        )
                    )
            return payload

    def recheck(self, item: Item) -> list[GateResult]:
        """Every deterministic gate on the approved text, now (their spans are the map)."""
        return run_gates(
            SOURCE_GATES + DRAFT_GATES,
            item.source_text or "",
            item.source_url,
            evidence.draft_text(item.headline, item.summary or ""),
            modes=self.gates.modes,
            min_source_words=self.gates.min_source_words,
            language=item.language,  # as the pipeline, replay and watch read it
        )

    def payload(self, session: Session, item: Item, results: list[GateResult]) -> dict[str, Any]:
        grounded = evidence.groundings(
            results, item.source_text or "", item.headline, item.summary or ""
        )
        latest = self._latest_checks(session, item.id)
        stored = [
            GateResult(Verdict(r.gate, r.passed, r.reason, None), r.mode) for r in latest.values()
        ]
        checks = evidence.checks_passed(results + stored)
        states = {gate: row.check_state for gate, row in sorted(latest.items())}
        return Publication(
            item_id=item.id,
            entry_id=self.ids.entry(item.id),  # type: ignore[arg-type]
            headline=item.headline,
            summary=item.summary or "",
            source_url=item.source_url,
            source_title=item.title,
            source_sha256=source_digest(item.source_text),
            approved_by=item.decided_by,
            approved_at=item.decided_at,
            published_at=utcnow(),
            evidence=[g.to_dict() for g in grounded],
            checks=[c.to_dict() for c in checks],
            audit_head=str(audit_chain.head_in(session)),
            attribution=Attribution(
                source_outlet=session.scalar(select(Feed.name).where(Feed.id == item.feed_id))
                if item.feed_id
                else None,
                source_byline=item.author,
                source_published_at=item.published_at,
                written_by=item.summariser,
                checked_by=sorted(
                    {
                        m
                        for m in session.scalars(
                            select(ModelCall.model).where(
                                ModelCall.item_id == item.id,
                                ModelCall.purpose == "checks",
                                col(ModelCall.ok).is_(True),
                            )
                        )
                        if m
                    }
                ),
                model_checks=states,
            ),
            correction=deliveries.correction(session, item.id),  # type: ignore[arg-type]
        ).to_dict()

    @staticmethod
    def _latest_checks(session: Session, item_id: int | None) -> dict[str, GateVerdict]:
        """The model checks' latest verdicts (they are not re-run at publication)."""
        if item_id is None:
            return {}
        rows = stored_verdicts.of_item(session, item_id)
        return {row.gate: row for row in rows if row.gate in CHECK_GATES}

    # ----------------------------------------------------------------- one delivery

    def _deliver(self, item_id: int, kind: str, target: Target, report: PublishReport) -> None:
        if target.name in self._down:
            # One try per run for a target that is down: the next items wait for the
            # next run instead of costing its timeouts each (their rows stay untried).
            report.pending.append((item_id, target.name, DOWN))
            return
        events = self._claim([item_id], kind, target.name, report)
        if events:
            self._send(target, events, kind, report)

    def _deliver_together(
        self, item_ids: list[int], kind: str, target: Target, report: PublishReport
    ) -> None:
        """A whole-file target (Atom) gets the items of one publish run in one write,
        `target.batch` at a time (so each item is in at least one written file),
        instead of rewriting the file once per item. A batch's delivery rows are
        claimed in one transaction and recorded in one after the write: a crash
        between them leaves the rows pending, and the next publish writes them again
        (the feed is rebuilt whole, so a repeat changes nothing)."""
        for start in range(0, len(item_ids), target.batch):
            batch = item_ids[start : start + target.batch]
            events = self._claim(batch, kind, target.name, report)
            if events:
                self._send(target, events, kind, report)

    def _send(self, target: Target, events: list[Event], kind: str, report: PublishReport) -> None:
        if kind == PUBLISH:
            events = self._approved_text_only(events, target.name, report)
            if not events:
                return
        if getattr(target, "window", None):
            self._send_whole(target, events, kind, report)
            return
        sent = self._try(target, events[-1], [e.payload for e in events])
        if sent.outcome not in (DELIVERED, FAILED):
            self._down[target.name] = sent.detail
        with session_scope(self.engine) as session:
            self._record(session, events, kind, target.name, sent, report)

    def _send_whole(
        self, target: Target, events: list[Event], kind: str, report: PublishReport
    ) -> None:
        """A whole-file target: under its lock, the events this worker still holds
        and every delivered row are written to the file and recorded, in one
        transaction. Another publisher waits for the lock, then reads these rows as
        delivered. With no events the file is rebuilt from the rows alone."""
        with session_scope(self.engine) as session:
            locks.hold(session, f"publish-target:{target.name}")
            held = self._still_held(session, events, kind, target.name, report)
            if events and not held:
                return
            feed = self._feed(session, target, held)
            if held:
                sent = self._try(target, held[-1], feed)
                self._record(session, held, kind, target.name, sent, report)
            else:
                sent = self._try(target, None, feed)
                if sent.outcome != DELIVERED:
                    report.pending.append((0, target.name, f"not rebuilt: {sent.detail}"))
        self._written.add(target.name)

    def _still_held(
        self,
        session: Session,
        events: list[Event],
        kind: str,
        target: str,
        report: PublishReport,
    ) -> list[Event]:
        """The events whose rows still carry this worker's claim (locked till commit)."""
        if not events:
            return []
        rows = session.execute(
            select(Delivery.item_id, Delivery.claim_token)
            .where(
                col(Delivery.item_id).in_([e.item_id for e in events]),
                Delivery.kind == kind,
                Delivery.target == target,
            )
            .with_for_update()
        ).all()
        tokens = dict(rows)
        held = [e for e in events if tokens.get(e.item_id) == e.claim]
        report.lost += [(e.item_id, target, LOST) for e in events if e not in held]
        return held

    @staticmethod
    def _try(target: Target, event: Event | None, feed: list[dict[str, Any]]) -> Sent:
        try:
            return target.send(event, feed)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - one target's bug must not stop the rest
            what = str(event.item_id) if event else "none (a rebuild)"
            log.exception("publish target %s failed on item(s) %s", target.name, what)
            return Sent("retry", f"{type(exc).__name__}: {exc}"[:300])

    def _approved_text_only(
        self, events: list[Event], target: str, report: PublishReport
    ) -> list[Event]:
        """The events whose payload carries the text the editor approved (its hash is
        in the approval's audit event, store/approvals.py); the others are recorded
        as failed, never sent."""
        with Session(self.engine) as session:
            refused = {
                e.item_id: why
                for e in events
                if (
                    why := approvals.refusal(
                        session, e.item_id, e.payload.get("headline"), e.payload.get("summary")
                    )
                )
            }
        if refused:
            with session_scope(self.engine) as session:
                for e in events:
                    if e.item_id in refused:
                        log.error("publish refused: %s", refused[e.item_id])
                        sent = Sent(FAILED, refused[e.item_id])
                        self._record(session, [e], PUBLISH, target, sent, report)
        return [e for e in events if e.item_id not in refused]

    def _claim(
        self, item_ids: list[int], kind: str, target: str, report: PublishReport | None = None
    ) -> list[Event]:
        """Take the items' pending rows for a while (a lease, and a token that the
        record checks), holding the items' row locks so a take-back cannot cross
        it. An item whose row is delivered, failed, or held by another worker is
        left out."""
        now = utcnow()
        token = uuid.uuid4().hex
        wanted = st.APPROVED if kind == PUBLISH else st.RETRACTED
        with session_scope(self.engine) as session:
            locks.write_transaction(session)
            locked = session.execute(
                select(Item.id)
                .where(col(Item.id).in_(item_ids), Item.status == wanted)
                .order_by(Item.id)  # one lock order for every worker
                .with_for_update()
            ).scalars()
            ready = list(locked)
            if not ready:
                return []
            table = Delivery.__table__
            rows = session.connection().execute(
                update(table)
                .where(
                    table.c.item_id.in_(ready),
                    table.c.kind == kind,
                    table.c.target == target,
                    table.c.state == PENDING,
                    (table.c.claimed_until.is_(None)) | (table.c.claimed_until < now),
                    (table.c.next_attempt_at.is_(None)) | (table.c.next_attempt_at <= now),
                )
                .values(
                    claimed_until=now + self.lease,
                    claim_token=token,
                    attempts=table.c.attempts + 1,
                )
                .returning(
                    table.c.item_id, table.c.idempotency_key, table.c.payload, table.c.attempts
                )
            )
            claimed = {row.item_id: row for row in rows}
            if report is not None:
                self._waiting(session, [i for i in ready if i not in claimed], kind, target, report)
        return [
            Event(
                i, kind, claimed[i].idempotency_key, claimed[i].payload, claimed[i].attempts, token
            )
            for i in item_ids
            if i in claimed
        ]

    @staticmethod
    def _waiting(
        session: Session, item_ids: list[int], kind: str, target: str, report: PublishReport
    ) -> None:
        """Rows left unclaimed, pending, with why: their next try is later, or another
        publisher's claim holds them (one that is sending now, or one that died with
        the row in flight: its claim lasts until its lease runs out, issue 26)."""
        if not item_ids:
            return
        now = utcnow()
        rows = session.execute(
            select(
                Delivery.item_id,
                Delivery.next_attempt_at,
                Delivery.last_error,
                Delivery.claimed_until,
                Delivery.attempts,
            ).where(
                col(Delivery.item_id).in_(item_ids),
                Delivery.kind == kind,
                Delivery.target == target,
                Delivery.state == PENDING,
                or_(col(Delivery.next_attempt_at) > now, col(Delivery.claimed_until) > now),
            )
        ).all()
        for item_id, at, error, held_until, attempts in rows:
            if held_until is not None and held_until > now:
                why = (
                    f"in flight (attempt {attempts}): held by another publisher's claim until "
                    f"{_stamp(held_until)} (if that publisher died, the send may or may not "
                    "have reached the target); left alone by this publish, sent again by the "
                    f"first publish after {_stamp(held_until)}, with the same Idempotency-Key"
                )
            else:
                why = f"next try after {_stamp(at)} ({error})"
            report.pending.append((item_id, target, why))

    @staticmethod
    def _feed(session: Session, target: Target, events: list[Event]) -> list[dict[str, Any]]:
        """The entries a whole-file target (Atom) carries: each recent item's newest
        event, and the events being sent. Only the last deliveries are read: the
        feed keeps its newest entries."""
        window: int = target.window  # type: ignore[attr-defined]
        sending = {event.item_id for event in events}
        rows = session.scalars(
            select(Delivery)
            # Delivered rows only: the rows a publish run prepared but has not
            # sent yet must not crowd the feed's entries out of the window.
            .where(Delivery.target == target.name, Delivery.state == DELIVERED)
            .order_by(col(Delivery.id).desc())
            .limit(window)
        ).all()
        rows = list(reversed(rows))
        newest: dict[int, dict[str, Any]] = {}
        for row in rows:
            if row.item_id in sending:
                continue  # the feed carries what was delivered, and these events
            # Oldest first: a correction replaces the entry it corrects (the same
            # id), a retraction replaces either.
            newest[row.item_id] = row.payload
        for event in events:
            newest[event.item_id] = event.payload
        return list(newest.values())

    def _record(
        self,
        session: Session,
        events: list[Event],
        kind: str,
        target: str,
        sent: Sent,
        report: PublishReport,
    ) -> None:
        """What one send did, on every delivery row it carried that still holds this
        worker's claim (a compare-and-set on the token): a worker whose lease ran out
        and whose row was taken over records nothing (`report.lost`)."""
        now = utcnow()
        values: dict[str, Any] = {"claimed_until": None, "claim_token": None, "updated_at": now}
        table = Delivery.__table__
        if sent.outcome == DELIVERED:
            values.update(state=DELIVERED, delivered_at=now, last_error=sent.warning)
            values.update(next_attempt_at=None)
        elif sent.outcome == FAILED:
            values.update(state=FAILED, last_error=sent.detail, next_attempt_at=None)
        else:
            # Tried again by the first publish after the backoff (the row's attempts
            # count every try so far, this one included).
            attempts = max(e.attempt for e in events)
            values.update(
                last_error=sent.detail, next_attempt_at=now + backoff(attempts, *self.retry)
            )
        if sent.warning:
            log.warning("publish target %s: %s", target, sent.warning)
        recorded = set()
        for token in dict.fromkeys(e.claim for e in events):
            ids = [e.item_id for e in events if e.claim == token]
            recorded |= set(
                session.connection()
                .execute(
                    update(table)
                    .where(
                        table.c.item_id.in_(ids),
                        table.c.kind == kind,
                        table.c.target == target,
                        table.c.claim_token == token,
                    )
                    .values(**values)
                    .returning(table.c.item_id)
                )
                .scalars()
            )
        for e in events:
            if e.item_id not in recorded:
                report.lost.append((e.item_id, target, LOST))
            elif sent.outcome == DELIVERED:
                report.delivered.append((e.item_id, target, kind))
            elif sent.outcome == FAILED:
                report.failed.append((e.item_id, target, sent.detail))
            else:
                report.pending.append((e.item_id, target, sent.detail))

    def _finish_if_complete(self, item_id: int, report: PublishReport) -> None:
        """approved -> published once every configured target has the item."""
        try:
            self._finish(item_id, report)
        except st.Conflict as exc:
            if exc.status != st.PUBLISHED:
                raise
            # Another worker recorded the last target and published it: nothing to do.

    def _finish(self, item_id: int, report: PublishReport) -> None:
        names = [t.name for t in self.targets]
        with session_scope(self.engine) as session:
            # Locked: two workers finishing one item at once, only one moves it.
            item = session.execute(
                select(Item).where(Item.id == item_id).with_for_update()
            ).scalar_one_or_none()
            if item is None or item.status != st.APPROVED:
                return
            done = session.scalars(
                select(Delivery.target).where(
                    Delivery.item_id == item_id,
                    Delivery.kind == PUBLISH,
                    Delivery.state == DELIVERED,
                )
            ).all()
            if set(names) - set(done):
                return
            st.move(
                session,
                item,
                st.PUBLISHED,
                actor=self.actor,
                reason=f"published to {', '.join(names)}",
                details={"targets": names},
            )
        report.published.append(item_id)

    # ----------------------------------------------------------------- retracting

    def _send_retractions(self, item_ids: Sequence[int] | None, report: PublishReport) -> None:
        with Session(self.engine) as session:
            query = (
                select(Delivery.item_id)
                .where(Delivery.kind == RETRACT, Delivery.state == PENDING)
                .group_by(Delivery.item_id)
                .order_by(func.min(Delivery.id))
            )
            if item_ids is not None:
                query = query.where(col(Delivery.item_id).in_(item_ids))
            pending = list(session.scalars(query))
        by_name = {t.name: t for t in self.targets}
        for item_id in pending:
            with Session(self.engine) as session:
                names = session.scalars(
                    select(Delivery.target).where(
                        Delivery.item_id == item_id,
                        Delivery.kind == RETRACT,
                        Delivery.state == PENDING,
                    )
                ).all()
            for name in names:
                target = by_name.get(name)
                if target is None:
                    report.pending.append((item_id, name, "target no longer configured"))
                    continue
                self._deliver(item_id, RETRACT, target, report)
            if self._all_retracted(item_id):
                report.retracted.append(item_id)

    def _all_retracted(self, item_id: int) -> bool:
        with Session(self.engine) as session:
            left = session.scalar(
                select(func.count()).where(
                    Delivery.item_id == item_id,
                    Delivery.kind == RETRACT,
                    Delivery.state != DELIVERED,
                )
            )
        return not left


def _from_an_earlier_approval(row: Delivery, payload: dict[str, Any]) -> bool:
    """An untried row built for an earlier approval of the item (taken back since,
    edited, approved again) gets the payload of the current one. A row of this
    approval is left as it is: if its text was changed behind the status machine,
    the approval check refuses it at sending (store/approvals.py)."""
    untried = row.state == PENDING and not row.attempts
    return untried and (row.payload or {}).get("approved_at") != payload.get("approved_at")


def retract(
    engine: Engine,
    item_id: int,
    *,
    editor: str,
    reason: str,
    expected_version: int | None = None,
) -> list[str]:
    """Withdraw an item that is live on any target: published, or approved and
    delivered to some targets (another refused it, or is still failing). The item
    moves to retracted (an editor, a reason) and a pending retraction is written for
    exactly the targets that have it, or may have it (a try whose answer was lost),
    in one transaction; its other deliveries are never sent. Returns those targets;
    the retractions are sent by `Publisher.publish` (the `retract` command calls it).

    `expected_version` is the version an editor's screen showed (the desk): it is
    checked in the same transaction, under the same lock, as the move, so nothing
    can move the item between the check and the retraction (Conflict, naming who
    moved it and when, changes nothing)."""
    if not reason or not reason.strip():
        raise NotPublishable("a retraction needs a reason (--reason)")
    with session_scope(engine) as session:
        locks.write_transaction(session)  # as a publisher's claim: they cannot cross
        item = session.execute(
            select(Item).where(Item.id == item_id).with_for_update()
        ).scalar_one_or_none()
        if item is None:
            raise NotPublishable(f"no item {item_id}")
        st.check_version(session, item, expected_version)
        if item.status not in (st.PUBLISHED, st.APPROVED):
            raise NotPublishable(
                f"item {item_id} is {item.status}: only an item live on a target can be retracted"
            )
        sent = session.scalars(
            select(Delivery).where(
                Delivery.item_id == item_id,
                Delivery.kind == PUBLISH,
                or_(
                    Delivery.state == DELIVERED,
                    (Delivery.state == PENDING) & (col(Delivery.attempts) > 0),
                ),
            )
        ).all()
        if not sent:
            raise NotPublishable(
                f"item {item_id} is approved but on no target yet: take the approval back instead"
            )
        targets = sorted(d.target for d in sent)
        event = st.move(
            session,
            item,
            st.RETRACTED,
            actor=f"editor:{editor}",
            reason=reason.strip(),
            details={"targets": targets},
        )
        made = installation_ids(session)
        head = str(audit_chain.head_in(session))  # the retraction's own event
        for d in sent:
            session.add(
                Delivery(
                    item_id=item_id,
                    target=d.target,
                    kind=RETRACT,
                    idempotency_key=made.key(item_id, RETRACT, d.target),
                    payload=retraction(d.payload, reason.strip(), editor, event.at, head),
                )
            )
        return targets


def retry_failed(
    engine: Engine, item_ids: Sequence[int] | None, *, editor: str | None = None
) -> list[tuple[int, str]]:
    """The way back from a refused delivery (`copydesk publish --retry-failed`, the
    queue's Retry): failed deliveries of items still to be published (approved) or
    retracted become pending, to be sent by the next publish. Deliveries waiting for
    their backoff are due at once. Returns the (item, target) pairs made pending.
    `editor`: the queue's Retry names the editor who asked, in an audit event per
    item (store/deliveries.py `record_retry`) written in the same transaction; a
    Retry that finds nothing to retry records nothing."""
    now = utcnow()
    table = Delivery.__table__
    scope = table.c.item_id.in_(item_ids) if item_ids is not None else true()
    with session_scope(engine) as session:
        locks.write_transaction(session)
        revived = (
            session.connection()
            .execute(
                update(table)
                .where(table.c.state == FAILED, still_wanted(), scope)
                .values(state=PENDING, next_attempt_at=None, updated_at=now)
                .returning(table.c.item_id, table.c.target)
            )
            .all()
        )
        due = (
            session.connection()
            .execute(
                update(table)
                .where(
                    table.c.state == PENDING,
                    table.c.next_attempt_at.is_not(None),
                    still_wanted(),
                    scope,
                )
                .values(next_attempt_at=None)
                .returning(table.c.item_id, table.c.target)
            )
            .all()
        )
        if editor is not None:
            asked: dict[int, list[str]] = {}
            for item_id, target in [*revived, *due]:
                asked.setdefault(int(item_id), []).append(str(target))
            for item_id, targets in sorted(asked.items()):
                record_retry(session, item_id, actor=f"editor:{editor}", targets=targets)
    for item_id, target in revived:
        log.info("delivery of item %s to %s will be tried again", item_id, target)
    return sorted((int(i), str(t)) for i, t in revived)
