"""The committing writer: every `Outcome` becomes database rows here, on the run's
thread, and nowhere else in the pipeline.

Outcomes that finish together are committed together (up to COMMIT_BATCH per
transaction: no item waits for a batch to fill, and a busy writer batches more).
Each item's verdicts and ledger rows are written first, then its status move
through store/status.py, which appends to the audit chain. Nothing is counted
in the run's report before its commit, so a crash loses only unreported work.

The cost of a run's writes is decided here (`commit_batch`, `write_outcome`):
the place to make the writer cheaper.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from sqlmodel import Session

from copydesk.services.pipeline.duplicates import find_duplicate, hold_stories
from copydesk.services.pipeline.handoff import Outcome, duplicate
from copydesk.services.pipeline.state import RunState
from store import ledger
from store import status as st
from store.db import session_scope
from store.models import GateVerdict, Item
from summarise.base import CallRecord
from summarise.checks import FAILED, NOT_RUN

log = logging.getLogger("copydesk.pipeline")

# Outcomes that finish together are committed together, up to this many per
# transaction: no item waits for a batch to fill, and a busy writer batches more.
COMMIT_BATCH = 32


class Writer:
    def __init__(self, run: RunState):
        self.run = run

    def commit_batch(self, outs: list[Outcome]) -> None:
        """The outcomes that finished together, in one transaction (one commit, one
        flush to disk for all of them: the writer thread keeps up with more workers).
        Nothing is counted or reported before the commit, so a crash loses only what
        was never reported, and those items are still `new` under this run's claim
        (another run takes them over when it runs out). A `Conflict` on one of them
        rolls the transaction back; they are then committed one at a time, so the
        other items keep their results."""
        if len(outs) == 1:
            self.commit(outs[0])
            return
        try:
            with session_scope(self.run.engine) as session:
                # Every item's rows first, then the moves: the moves append to the
                # audit chain, whose lock is held from the first append to the commit
                # (it serialises writers across runs), so it is taken as late as can be.
                moves = [self.write_outcome(session, out) for out in outs]
                written = [move() for move in moves]
        except st.Conflict:
            for out in outs:
                self.commit(out)
            return
        for out, (feed_id, reason) in zip(outs, written, strict=True):
            self._count(out, feed_id, reason)

    def commit(self, out: Outcome) -> None:
        try:
            with session_scope(self.run.engine) as session:
                feed_id, reason = self.write_outcome(session, out)()
        except st.Conflict as exc:
            # Another worker (or machine) finished this item first. Its result
            # stands; the calls this worker made are still written to the ledger.
            log.warning("item %s: %s; this run's result is dropped", out.job.item_id, exc)
            self.record_calls(out.job.item_id, out.calls)
            return
        self._count(out, feed_id, reason)

    def record_calls(self, item_id: int | None, calls: list[CallRecord]) -> None:
        """Ledger rows for calls whose item was not committed: every call is a row."""
        if not calls:
            return
        with session_scope(self.run.engine) as session:
            ledger.add(session, calls, item_id=item_id, run_id=self.run.run_id)

    def write_outcome(
        self, session: Session, out: Outcome
    ) -> Callable[[], tuple[int | None, str | None]]:
        """The item's verdicts and ledger rows, in the caller's transaction, and its
        move to make next (which returns the item's feed and the move's reason).
        Writing it again after a rollback gives the same result."""
        job, run_id = out.job, self.run.run_id
        looks = out.to_status != st.DISCARDED and bool(out.fingerprint or out.aliases)
        if looks:
            hold_stories(session)  # the look-up and the write, one step (duplicates.py)
        item = session.get(Item, job.item_id)
        if looks:
            # Another worker or machine may have stored the same story since the
            # worker looked: the database inside this transaction has the last word.
            found = find_duplicate(session, item.id, out.aliases, out.fingerprint)
            if found is not None:
                duplicate(out, *found)
        if out.fingerprint and out.discard_kind != "duplicate":
            out.changes.content_hash = out.fingerprint
        out.changes.update(claimed_by=None, claim_until=None)  # the claim ends here
        for stage, result in out.verdicts:
            session.add(
                GateVerdict.from_result(result, item_id=item.id, stage=stage, run_id=run_id)
            )
        ledger.add(session, out.calls, item_id=item.id, run_id=run_id)
        failed = [r.gate for _, r in out.verdicts if r.hard_fail]
        flagged = [r.gate for _, r in out.verdicts if r.flagged and not r.not_run]
        reason = out.reason
        if out.to_status == st.DRAFT:
            reason = "all hard gates passed" + (
                f"; flagged: {', '.join(flagged)}" if flagged else ""
            )
            if out.details.get("checks_not_run"):
                reason += f"; model checks {out.details['checks_not_run']}"
        details = dict(out.details)
        if out.to_status == st.DISCARDED and out.discard_kind:
            details["discard_kind"] = out.discard_kind  # for stats, not parsed from text
        if failed or flagged:
            details.update(failed_gates=failed, flagged_gates=flagged)

        def move() -> tuple[int | None, str | None]:
            st.move(
                session,
                item,
                out.to_status,
                actor=self.run.actor,
                reason=reason,
                expected_version=job.version,
                changes=out.changes,
                details=details or None,
                discard_kind=out.discard_kind if out.to_status == st.DISCARDED else None,
            )
            return item.feed_id, reason

        return move

    def _count(self, out: Outcome, feed_id: int | None, reason: str | None) -> None:
        """A committed outcome in the run's report and log."""
        item_id = out.job.item_id
        report = self.run.report_for(feed_id)
        if out.draft is not None and out.draft.recorded_reply:
            report.recorded_replies += 1
        check_state = (out.details.get("checks") or {}).get("state")
        report.checks_not_run += check_state == NOT_RUN
        report.checks_failed += check_state == FAILED
        report.pages_cut += out.changes.get("page_cut_at") is not None
        if out.to_status == st.DRAFT:
            report.drafts += 1
        elif out.to_status == st.ERROR:
            report.errors += 1
        else:
            report.discarded[out.discard_kind or "other"] += 1
        log.info(
            "item %s -> %s%s",
            item_id,
            out.to_status,
            f": {reason}" if reason else "",
            extra={"item_id": item_id, "status": out.to_status},
        )
