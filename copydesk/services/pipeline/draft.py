"""The draft stage (a model thread): the article becomes the model's draft, through
the draft gates and the model checks, and the `Outcome` says where it goes.

The model request itself is in summarise/ (the `Summariser` and the `Checker`);
a gate's verdict in guards/. A summariser that cannot work at all raises
`BackendFailure`, which stops the run (see run.py).
"""

from __future__ import annotations

import re
import threading
from datetime import datetime, timedelta

from sqlmodel import Session, select

from copydesk.services.pipeline.handoff import (
    BackendFailure,
    Job,
    Outcome,
    discard,
    failed,
    failed_permanently,
)
from copydesk.services.pipeline.state import RunState
from guards.registry import CHECK_GATES, DRAFT_GATES, run_checks, run_gates
from store import claims, ledger
from store.db import one_statement
from store.models import CallRecord, ModelCall, utcnow
from summarise.base import (
    CALL_JOURNAL,
    REJECTED,
    SPEND_CAP,
    TRANSIENT,
    Article,
    BackendUnavailable,
    Draft,
    LeaseLost,
    Summariser,
    SummaryFailed,
)
from summarise.checks import RAN, Checker

# A 400 one article provokes is that article's when the API answered other
# summaries of this model within this window (issue 19: quarantine, not a stopped
# cron run); with no success to compare, two rejections in a row stop the run.
QUARANTINE_WINDOW = timedelta(days=1)
REJECTIONS_TO_STOP = 2
_DETAIL = re.compile(r"\(([^()]*)\)\s*$")


class ModelHealth:
    """The circuit breaker, shared by a run's model threads: K transient failures in
    a row, across items, open it (issue 19: the run stops taking model work).
    Summary calls and check calls keep separate streaks, each closed only by an
    answer to its own kind of call: a check comes only after an answered summary,
    so one shared streak would be reset by every summary and a check-model outage
    would never open it. It also remembers whether the API answered a summary this
    run, and rejections in a row."""

    def __init__(self, breaker: int):
        self.breaker = breaker
        self._lock = threading.Lock()
        self.streaks: dict[str, int] = {}
        self.since: dict[str, datetime] = {}
        self.last: str | None = None
        self.answered = False
        self.rejections = 0

    @property
    def streak(self) -> int:
        return self.streaks.get("summary", 0)

    def ok(self, purpose: str = "summary") -> None:
        with self._lock:
            self.streaks[purpose] = 0
            self.since.pop(purpose, None)
            if purpose == "summary":
                self.answered, self.rejections = True, 0

    def transient(self, reason: str, purpose: str = "summary") -> str | None:
        """Count a transient failure; the run's stop line when the breaker opens."""
        with self._lock:
            self.streaks[purpose] = self.streaks.get(purpose, 0) + 1
            since = self.since.setdefault(purpose, utcnow())
            found = _DETAIL.search(reason)
            self.last = (found.group(1) if found else reason).split(":")[0].strip()
            if self.streaks[purpose] < self.breaker:
                return None
            calls = "" if purpose == "summary" else " (check calls)"
            return f"Anthropic API unavailable since {since:%H:%M} UTC{calls}: {self.last}"

    def rejected(self) -> bool:
        """Count a rejection no success explains; True when the run should stop."""
        with self._lock:
            self.rejections += 1
            return self.rejections >= REJECTIONS_TO_STOP


class InFlight:
    """One item's call journal (`summarise.base.CallJournal`): before each model
    request, the claim is checked and the call's ledger row written as in flight,
    in one short transaction; the writer completes the row with the outcome. A
    claim this worker no longer holds raises `LeaseLost`: no request is sent. The
    first call on an item with a stored text reads the claim and the text (its parts
    are packed against it) in one SELECT; a later call reuses the text and puts the
    claim's test in its row's INSERT (issue 24, session 12: one statement fewer), as
    every call on an item with no stored text does (session 15). One transaction of a
    plain connection: Core statements only, no ORM session (issue 24, session 13); a
    fenced call's is its one statement (`store.db.one_statement`: on PostgreSQL no
    BEGIN and COMMIT round trips, session 16)."""

    def __init__(self, run: RunState, job: Job):
        self.run, self.job = run, job
        # An item claimed with no stored text (a page to fetch) has none until its
        # outcome is committed, after its calls (the claim keeps other writers away):
        # nothing to read, so its first call is fenced in its INSERT too (issue 24,
        # session 15: a SELECT an article less).
        self.source: str | None | ledger.Unread = ledger.UNREAD if job.has_text else None

    def begin(self, call: CallRecord) -> int | None:
        job, run_id = self.job, self.run.run_id
        if isinstance(self.source, ledger.Unread):
            with self.run.engine.begin() as connection:
                hold = claims.check_hold(connection, job.item_id, run_id, job.version)
                row_id = None
                if hold.held:
                    self.source = hold.source_text
                    row_id = ledger.begin(
                        connection, call, item_id=job.item_id, run_id=run_id, source=self.source
                    )
        else:
            # The row and its new parts are one statement, fenced in itself: on
            # PostgreSQL no BEGIN and COMMIT round trips around it (session 16).
            with one_statement(self.run.engine) as connection:
                fence = claims.fence(job.item_id, run_id, job.version)
                row_id = ledger.begin(
                    connection,
                    call,
                    item_id=job.item_id,
                    run_id=run_id,
                    source=self.source,
                    fence=fence,
                )
        if row_id is None:
            raise LeaseLost(
                f"item {job.item_id}: this run no longer holds its claim (the lease ran "
                "out or another run took it over); no model call was sent"
            )
        return row_id


class DraftStage:
    def __init__(self, run: RunState, summariser: Summariser, checker: Checker):
        self.run = run
        self.settings = run.settings
        self.engine = run.engine
        self.summariser = summariser
        self.checker = checker
        self.health = ModelHealth(run.settings.summarise.breaker_failures)

    def prepare(self, out: Outcome, article: Article) -> Outcome:
        """The model's draft of the article, through the draft gates and the checks.
        Each model call's ledger row is written before it is sent (`InFlight`); a
        lost claim raises `LeaseLost` with the item's calls so far."""
        token = CALL_JOURNAL.set(InFlight(self.run, out.job))
        try:
            return self._prepare(out, article)
        except LeaseLost as exc:
            exc.item_id, exc.calls = out.job.item_id, [*out.calls, *exc.calls]
            raise
        finally:
            CALL_JOURNAL.reset(token)

    def _prepare(self, out: Outcome, article: Article) -> Outcome:
        job, text = out.job, article.text
        modes = self.settings.gates.all_modes()
        out.changes.summariser = self.summariser.name  # recorded whatever the outcome
        try:
            draft = self.summariser.summarise(article)
        except SummaryFailed as exc:
            out.calls += exc.calls
            if exc.kind == TRANSIENT:
                stop = self.health.transient(exc.reason)
                if stop is not None:  # the item stays `new`; its calls go to the ledger
                    raise BackendFailure(
                        stop, item_id=job.item_id, calls=exc.calls, count_waiting=True
                    ) from None
            else:
                self.health.ok()  # the API answered; the reply was unusable
            return failed(
                out,
                f"summariser failed: {exc.reason}",
                exc.transient,
                "model",
                limits=self.settings.summarise,
                retry_after=exc.retry_after,
            )
        except BackendUnavailable as exc:
            if exc.kind == REJECTED:
                return self._rejected(out, exc)
            raise BackendFailure(str(exc), item_id=job.item_id, calls=exc.calls) from None
        self.health.ok()
        out.calls += draft.calls
        out.draft = draft
        out.changes.update(
            headline=draft.headline,
            summary=draft.summary,
            summariser=draft.backend,
            recorded_reply=draft.recorded_reply,
        )
        checks = run_gates(
            DRAFT_GATES, text, job.source_url, draft.text, modes=modes, language=out.language
        )
        out.verdicts += [("draft", r) for r in checks]
        if any(r.hard_fail for r in checks):
            return discard(out, checks)
        return self._model_checks(out, article, draft)

    def _rejected(self, out: Outcome, exc: BackendUnavailable) -> Outcome:
        """A 400/413/422: this article's fault when the API answers other summaries
        (quarantined: discarded with the API's message), else every request's (two
        in a row stop the run; a first one waits in `error`, never discarded)."""
        out.calls += exc.calls
        if self.health.answered or self._answered_lately():
            return failed_permanently(out, f"quarantined: {exc}", "model")
        if self.health.rejected():
            out.calls.clear()
            raise BackendFailure(str(exc), item_id=out.job.item_id, calls=exc.calls) from None
        return failed(out, str(exc), True, "model", limits=self.settings.summarise)

    def _answered_lately(self) -> bool:
        """Whether the ledger holds an answered summary call of this summariser
        within QUARANTINE_WINDOW (read only)."""
        since = utcnow() - QUARANTINE_WINDOW
        with Session(self.engine) as session:
            found = session.exec(
                select(ModelCall.id)
                .where(
                    ModelCall.backend == self.summariser.name,
                    ModelCall.purpose == "summary",
                    ModelCall.ok.is_(True),  # type: ignore[union-attr]
                    ModelCall.created_at >= since,
                )
                .limit(1)
            ).first()
        return found is not None

    def _model_checks(self, out: Outcome, article: Article, draft: Draft) -> Outcome:
        """The second line of defence, after the draft gates passed: one check call,
        judged by the pure gates. A check that did not run is recorded as such
        (never a pass); a verified wrong fact discards the item."""
        modes = self.settings.gates.all_modes()
        if all(modes[gate] == "off" for gate in CHECK_GATES):
            return out
        checked = self.checker.check(article, draft.text)
        out.calls += checked.calls
        if checked.kind == SPEND_CAP:  # stops at once; the item waits for the next month
            raise BackendFailure(
                checked.reason or "spend cap", item_id=out.job.item_id, calls=checked.calls
            )
        ran = checked.state == RAN
        if ran:
            self.health.ok("checks")
        elif checked.transient:
            line = self.health.transient(checked.reason or "check failed", "checks")
            if line is not None:  # the draft is kept (its checks wait); nothing new starts
                out.stop = BackendFailure(line, item_id=out.job.item_id, count_waiting=True)
        results = run_checks(
            article.text,
            draft.text,
            checked.reply,
            modes=modes,
            why_not=checked.reason or "",
            state=checked.state,
            require=self.settings.checks.require,
            transient=checked.transient,
        )
        out.verdicts += [("check", r) for r in results]
        out.details["checks"] = {
            "state": checked.state,
            "checker": checked.checker or self.checker.name,
            "reason": checked.reason,
            "recorded_reply": checked.recorded_reply,
        }
        if not ran:
            out.details["checks_not_run"] = f"{checked.state} ({checked.reason})"
        if any(r.hard_fail for r in results):
            return discard(out, results)
        return out
