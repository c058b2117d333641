"""Re-checking drafts whose model checks failed for a passing reason.

A check call that failed after its retries because of an outage, a timeout or an
overload (`CheckOutcome.transient`) leaves the draft in the queue with a banner.
A later run (and `copydesk recheck`) asks again, through the same checker as new
drafts (client, ledger, retries), at most `[checks] recheck_attempts` times per
draft. A missing key, a refused request or a reply that broke the schema is not
re-checked: the same request would fail the same way.

Each attempt is one transaction: the new verdicts (stage `check`, the newest of
each gate wins), the ledger rows, and an audit event through the status machine,
which bumps the item's version: `rechecked` (the draft stays a draft), or the
move to `discarded` when the checks now find a verified wrong fact. Either way an
editor who opened the draft before the re-check decided on verdicts that no
longer stand, and is refused until they look again. A draft an editor decided
or edited while the model was answering keeps the editor's work: the attempt is
dropped (its calls stay in the ledger).

A pass is bounded by the run's deadline (`[runs] deadline_seconds` from the run's
start, on `clock`): no re-check starts after it, and the drafts left are counted
as deferred, for the next run. Re-checks that hang (each call up to its timeout
and retries) thus never hold the run, or SQLite's one run slot, for hours.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, fields
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from copydesk.config import Settings
from guards.registry import CHECK_GATES, GateResult, run_checks
from publish.evidence import draft_text
from store import ledger
from store import status as st
from store import verdicts as stored_verdicts
from store.checks import recheck_count, recheck_due
from store.db import session_scope
from store.models import GateVerdict, Item, utcnow
from summarise.base import Article
from summarise.checks import NOT_RUN, RAN, Checker, CheckOutcome, NoChecker

log = logging.getLogger("copydesk.recheck")
clock = time.monotonic  # the runs' deadlines are on this clock (a test sets its own)


@dataclass
class RecheckReport:
    """What one pass over the drafts due for a re-check did."""

    attempted: int = 0
    ran: int = 0  # the checks ran this time (their verdicts now stand)
    failed_again: int = 0
    discarded: int = 0  # a verified wrong fact, found on the re-check
    dropped: int = 0  # an editor or another run moved the draft meanwhile, or no model now
    deferred: int = 0  # due, but the run's deadline passed first: the next run's

    def to_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class _Draft:
    item_id: int
    version: int
    article: Article
    text: str
    attempt: int


def recheck_drafts(
    engine: Engine,
    settings: Settings,
    checker: Checker,
    *,
    actor: str,
    run_id: int | None = None,
    limit: int = 100,
    failed_too: bool = False,
    deadline: float | None = None,
) -> RecheckReport:
    """Re-check up to `limit` drafts that are due (`store.checks.recheck_due`); with
    `failed_too`, also those whose checks failed for a configuration reason. None
    starts at or after `deadline` (on `clock`); those are counted as deferred."""
    report = RecheckReport()
    if isinstance(checker, NoChecker):
        return report  # no model here: nothing to ask
    modes = settings.gates.all_modes()
    if all(modes[gate] == "off" for gate in CHECK_GATES):
        return report  # the model checks are off: nothing to re-check
    attempts = settings.checks.recheck_attempts
    with Session(engine) as session:
        due = recheck_due(session, attempts, run_id=run_id, limit=limit, failed_too=failed_too)
    for n, (item_id, version) in enumerate(due):
        if deadline is not None and clock() >= deadline:
            report.deferred = len(due) - n
            log.warning(
                "the run's deadline passed: %d draft(s) due for a re-check wait for the next run",
                report.deferred,
            )
            break
        draft = _load(engine, item_id, version)
        if draft is None:
            report.dropped += 1
            continue
        report.attempted += 1
        checked = checker.check(draft.article, draft.text)
        _store(engine, settings, draft, checked, actor=actor, run_id=run_id, report=report)
    return report


def _load(engine: Engine, item_id: int, version: int) -> _Draft | None:
    with Session(engine) as session:
        item = session.get(Item, item_id)
        if item is None or item.status != st.DRAFT or item.version != version:
            return None
        article = Article(item.dedup_key, item.title, item.source_url, item.source_text or "")
        text = draft_text(item.headline, item.summary or "")
        return _Draft(item_id, version, article, text, recheck_count(session, item_id) + 1)


def _store(
    engine: Engine,
    settings: Settings,
    draft: _Draft,
    checked: CheckOutcome,
    *,
    actor: str,
    run_id: int | None,
    report: RecheckReport,
) -> None:
    """One attempt's verdicts, ledger rows and audit event, in one transaction."""
    if checked.state == NOT_RUN:  # the checker cannot run this one now: nothing learned
        report.dropped += 1
        return
    results = run_checks(
        draft.article.text,
        draft.text,
        checked.reply,
        modes=settings.gates.all_modes(),
        why_not=checked.reason or "",
        state=checked.state,
        require=settings.checks.require,
        transient=checked.transient,
    )
    details: dict[str, Any] = {
        "attempt": draft.attempt,
        "max_attempts": settings.checks.recheck_attempts,
        "checks": {"state": checked.state, "checker": checked.checker, "reason": checked.reason},
        "verdicts": [_summary(r) for r in results],
    }
    failed = [r for r in results if r.hard_fail]
    try:
        with session_scope(engine) as session:
            item = session.get(Item, draft.item_id)
            now = utcnow()  # one time: the attempt's verdicts are one set (store/verdicts.py)
            rows = [
                GateVerdict.row_of(
                    result, item_id=draft.item_id, stage="check", run_id=run_id, created_at=now
                )
                for result in results
            ]
            stored_verdicts.write(session, rows)
            ledger.add(session, checked.calls, item_id=draft.item_id, run_id=run_id)
            if failed:
                st.move(
                    session,
                    item,
                    st.DISCARDED,
                    actor=actor,
                    reason="; ".join(f"{r.gate}: {r.verdict.reason}" for r in failed)
                    + f" (on re-check {draft.attempt})",
                    expected_version=draft.version,
                    details=details | {"discard_kind": failed[0].gate},
                    discard_kind=failed[0].gate,
                )
            else:
                st.record_recheck(
                    session, item, actor=actor, expected_version=draft.version, details=details
                )
    except st.Conflict as exc:
        log.warning("item %s: %s; the re-check is dropped", draft.item_id, exc)
        report.dropped += 1
        with session_scope(engine) as session:
            ledger.add(session, checked.calls, item_id=draft.item_id, run_id=run_id)
        return
    if failed:
        report.discarded += 1
    elif checked.state == RAN:
        report.ran += 1
    else:
        report.failed_again += 1
    log.info(
        "item %s re-checked (attempt %s): %s",
        draft.item_id,
        draft.attempt,
        "discarded" if failed else checked.state,
        extra={"item_id": draft.item_id},
    )


def _summary(result: GateResult) -> dict[str, Any]:
    v = result.verdict
    return {"gate": v.gate, "passed": v.passed, "ran": v.ran, "mode": result.stored_mode}
