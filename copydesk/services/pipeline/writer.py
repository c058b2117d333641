"""The committing writer: every `Outcome` becomes database rows here, on the run's
thread, and nowhere else in the pipeline.

Outcomes that finish together, or within COMMIT_LINGER of the first of them, are
committed together (up to COMMIT_BATCH per transaction: no item waits for a batch to
fill, and a busy writer batches more).
Each item's verdicts and ledger rows are written first (the batch's verdicts in
one INSERT, no ORM object per row), then its status move through store/status.py,
which appends to the audit chain, then the run's counts on its row. The report
counts an item only once its transaction commits (a rollback puts the counts back),
so a crash loses only unreported work, and a dead run's row shows what it committed.

The cost of a run's writes is decided here (`commit_batch`, `write_outcome`):
the place to make the writer cheaper.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy import select, update
from sqlmodel import Session

from copydesk.services.pipeline.duplicates import find_duplicates, hold_stories
from copydesk.services.pipeline.handoff import Outcome, duplicate
from copydesk.services.pipeline.state import RunState
from copydesk.services.reports import FeedReport
from store import ledger
from store import status as st
from store import verdicts as stored_verdicts
from store.db import session_scope
from store.models import GateVerdict, Item, Run, utcnow
from summarise.base import CallRecord
from summarise.checks import FAILED, NOT_RUN

log = logging.getLogger("copydesk.pipeline")

# Outcomes that finish together are committed together, up to this many per
# transaction: no item waits for a batch to fill, and a busy writer batches more.
COMMIT_BATCH = 32
# ... and an outcome waits at most this long (seconds) for others to join its
# transaction (issue 24): outcomes that finish a few milliseconds apart, as a model's
# replies do, were committed one by one, each commit with its fixed cost (the batch's
# reads, the stories' locks, the audit chain's head and lock, the run's counts, the
# flushes to disk: 3.8 ms of CPU an item one a commit, 2.2 eight a commit, on SQLite).
# The run keeps handing pages to the model meanwhile; nothing waits for a full batch:
# when nothing else is in flight, or the run stops, what is ready is committed at once.
# 0.6 s, not 0.2 (issue 24, session 17): at concurrency 16 and 0.4 s a call a run's
# first replies come in step, 16 at a time, but after about a minute its model
# threads have drifted apart and replies come one by one, about 20 a second: 0.2 s
# then gathered 5-6 a commit (2.4-2.7 ms of the run thread's CPU an item in the
# writer, against 1.4-1.9 in 16s), so a long run cost more an article than a short
# one; 0.6 s gathers 13-16 (1.5-1.7 ms).
COMMIT_LINGER = 0.6


class Writer:
    def __init__(self, run: RunState, counts: Callable[[], dict[str, Any]] | None = None):
        self.run = run
        # The run's counts so far (the heartbeat's too): written on the run's row in
        # every transaction that commits items (issue 26: a run that dies shows
        # what it committed, not "0 drafts").
        self.counts = counts

    def commit_batch(self, outs: list[Outcome]) -> None:
        """The outcomes that finished together, in one transaction (one commit, one
        flush to disk for all of them: the writer thread keeps up with more workers).
        Nothing is counted or reported before the commit, so a crash loses only what
        was never reported, and those items are still `new` under this run's claim
        (another run takes them over when it runs out). A `Conflict` on one of them
        rolls the transaction back; they are then committed one at a time, so the
        other items keep their results."""
        try:
            self._commit(outs)
        except st.Conflict as exc:
            if len(outs) > 1:
                for out in outs:
                    self.commit_batch([out])
                return
            # Another worker (or machine) finished this item first. Its result
            # stands; the calls this worker made are still written to the ledger.
            log.warning("item %s: %s; this run's result is dropped", outs[0].job.item_id, exc)
            self.record_calls(outs[0].job.item_id, outs[0].calls)

    def commit(self, out: Outcome) -> None:
        self.commit_batch([out])

    def _commit(self, outs: list[Outcome]) -> None:
        """One transaction: every item's rows first, then the run's counts, then the
        moves (`st.move_many`: every item's compare-and-set, then their audit events
        together: the chain's lock, held from the first append to the commit,
        serialises writers across runs, so it is taken as late as can be). Reports
        and logs change only once the commit succeeded."""
        before: dict[int, FeedReport | None] = {}
        try:
            with session_scope(self.run.engine) as session:
                looking = [out for out in outs if _looks_up(out)]
                if looking:  # first in the transaction
                    _hold_stories_once(session, [out.fingerprint for out in looking])
                ids = [out.job.item_id for out in outs]
                # One SELECT for the batch's items, kept referenced until the commit:
                # the session holds loaded rows weakly, and `session.get` below would
                # read each one again (issue 24: one SELECT an item for nothing).
                items = session.scalars(select(Item).where(Item.id.in_(ids))).all()  # type: ignore[attr-defined]
                # The batch's duplicate look-ups, at most two queries for all of it.
                looked = find_duplicates(session, [_wanted(out) for out in looking])
                verdicts: list[dict[str, Any]] = []
                calls: list[tuple[int | None, list[CallRecord]]] = []
                moves = [self.write_outcome(session, out, verdicts, looked, calls) for out in outs]
                if verdicts:  # one set an item, one executemany for the batch (store/verdicts.py)
                    stored_verdicts.write(session, verdicts)
                # Every item's calls: their completions, one UPDATE for the batch.
                ledger.add_many(session, calls, run_id=self.run.run_id)
                batch: list[tuple[Item, str, dict[str, Any]]] = []
                written = [move(batch) for move in moves]
                # Only the reports this batch counts into are kept for a rollback: a
                # copy of every feed's report cost a run of many feeds more than its
                # commits, and putting it back undid the intake thread's work meanwhile.
                before = {
                    key: copy.deepcopy(self.run.reports.get(key))
                    for key in {feed_id or 0 for feed_id, _ in written}
                }
                for out, (feed_id, _) in zip(outs, written, strict=True):
                    self._count(out, feed_id)
                if self.counts is not None and self.run.run_id is not None:
                    session.execute(
                        update(Run.__table__)  # type: ignore[arg-type]
                        .where(Run.__table__.c.id == self.run.run_id)  # type: ignore[attr-defined]
                        .values(counts=self.counts(), heartbeat_at=utcnow())
                    )
                # The moves together, last: the chain's lock is held from their
                # appends to the commit (st.move_many).
                st.move_many(session, batch)
                del items
        except BaseException:
            for key, report in before.items():
                if report is None:
                    self.run.reports.pop(key, None)
                else:
                    self.run.reports[key] = report
            raise
        for out, (_, reason) in zip(outs, written, strict=True):
            _log(out, reason)

    def record_calls(self, item_id: int | None, calls: list[CallRecord]) -> None:
        """Ledger rows for calls whose item was not committed: every call is a row."""
        if not calls:
            return
        with session_scope(self.run.engine) as session:
            ledger.add(session, calls, item_id=item_id, run_id=self.run.run_id)

    def write_outcome(
        self,
        session: Session,
        out: Outcome,
        verdicts: list[dict[str, Any]] | None = None,
        looked: dict[int, tuple[int, str]] | None = None,
        calls: list[tuple[int | None, list[CallRecord]]] | None = None,
    ) -> Callable[..., tuple[int | None, str | None]]:
        """The item's verdicts and ledger rows, in the caller's transaction, and its
        move to make next (which returns the item's feed and the move's reason; given
        a list, it adds the move to it for `st.move_many` instead of making it).
        With `verdicts`, the verdict rows are added to it for the caller to insert
        with the rest of its batch; with `looked`, the caller made the duplicate
        look-up for its batch (`find_duplicates`, under the stories' locks); with
        `calls`, the item's model calls are added to it for the caller to write with
        the rest of its batch (`ledger.add_many`). Writing it again after a rollback
        gives the same result."""
        job, run_id = out.job, self.run.run_id
        looks = _looks_up(out)
        if looks and looked is None:  # the look-up and the write, one step (duplicates.py)
            _hold_stories_once(session, [out.fingerprint])
            looked = find_duplicates(session, [_wanted(out)])
        item = session.get(Item, job.item_id)
        if looks:
            # Another worker or machine may have stored the same story since the
            # worker looked: the database inside this transaction has the last word.
            found = (looked or {}).get(job.item_id)
            if found is not None:
                duplicate(out, *found)
        if out.fingerprint and out.discard_kind != "duplicate":
            out.changes.content_hash = out.fingerprint
        out.changes.update(claimed_by=None, claim_until=None)  # the claim ends here
        now = utcnow()
        rows = [
            GateVerdict.row_of(result, item_id=item.id, stage=stage, run_id=run_id, created_at=now)
            for stage, result in out.verdicts
        ]
        if verdicts is not None:
            verdicts.extend(rows)
        elif rows:
            stored_verdicts.write(session, rows)
        if calls is not None:
            calls.append((item.id, out.calls))
        else:
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

        def move(batch: list[tuple[Item, str, dict[str, Any]]] | None = None) -> tuple[Any, Any]:
            arguments = {
                "actor": self.run.actor,
                "reason": reason,
                "expected_version": job.version,
                "changes": out.changes,
                "details": details or None,
                "discard_kind": out.discard_kind if out.to_status == st.DISCARDED else None,
            }
            if batch is None:
                st.move(session, item, out.to_status, **arguments)
            else:
                batch.append((item, out.to_status, arguments))
            return item.feed_id, reason

        return move

    def _count(self, out: Outcome, feed_id: int | None) -> None:
        """An outcome in the run's report (undone by `_commit` if it rolls back)."""
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


_STORIES_HELD = "copydesk.writer.stories_held"  # (transaction, the stories it holds)


def _hold_stories_once(session: Session, fingerprints: list[str | None]) -> None:
    """`hold_stories` for the stories this transaction does not hold yet (a lock
    lasts until the transaction ends): a batch takes its stories' locks once, all
    together and sorted, not once an item (a round trip each on PostgreSQL)."""
    entry = session.info.get(_STORIES_HELD)
    held = entry[1] if entry is not None and entry[0] is session.get_transaction() else None
    wanted = {f for f in fingerprints if f}
    if held is not None and wanted <= held:
        return
    hold_stories(session, wanted - (held or frozenset()))  # begins the transaction if none has
    session.info[_STORIES_HELD] = (session.get_transaction(), (held or frozenset()) | wanted)


def _wanted(out: Outcome) -> tuple[int, list[str], str | None]:
    """What the duplicate look-up asks of an outcome (`find_duplicates`)."""
    return out.job.item_id, out.aliases, out.fingerprint


def _looks_up(out: Outcome) -> bool:
    """Whether the writer asks the database if the item's story is already there."""
    return out.to_status != st.DISCARDED and bool(out.fingerprint or out.aliases)


def _log(out: Outcome, reason: str | None) -> None:
    """A committed outcome in the run's log."""
    item_id = out.job.item_id
    log.info(
        "item %s -> %s%s",
        item_id,
        out.to_status,
        f": {reason}" if reason else "",
        extra={"item_id": item_id, "status": out.to_status},
    )
