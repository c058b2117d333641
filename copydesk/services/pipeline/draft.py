"""The draft stage (a model thread): the article becomes the model's draft, through
the draft gates and the model checks, and the `Outcome` says where it goes.

The model request itself is in summarise/ (the `Summariser` and the `Checker`);
a gate's verdict in guards/. A summariser that cannot work at all raises
`BackendFailure`, which stops the run (see run.py).
"""

from __future__ import annotations

from copydesk.services.pipeline.handoff import BackendFailure, Outcome, discard, failed
from copydesk.services.pipeline.state import RunState
from guards.registry import CHECK_GATES, DRAFT_GATES, run_checks, run_gates
from summarise.base import Article, BackendUnavailable, Draft, Summariser, SummaryFailed
from summarise.checks import RAN, Checker


class DraftStage:
    def __init__(self, run: RunState, summariser: Summariser, checker: Checker):
        self.settings = run.settings
        self.summariser = summariser
        self.checker = checker

    def prepare(self, out: Outcome, article: Article) -> Outcome:
        """The model's draft of the article, through the draft gates and the checks."""
        job, text = out.job, article.text
        modes = self.settings.gates.all_modes()
        out.changes.summariser = self.summariser.name  # recorded whatever the outcome
        try:
            draft = self.summariser.summarise(article)
        except SummaryFailed as exc:
            out.calls += exc.calls
            return failed(
                out,
                f"summariser failed: {exc.reason}",
                exc.transient,
                "model",
                limits=self.settings.summarise,
            )
        except BackendUnavailable as exc:
            raise BackendFailure(str(exc), item_id=job.item_id, calls=exc.calls) from None
        out.calls += draft.calls
        out.draft = draft
        out.changes.update(
            headline=draft.headline,
            summary=draft.summary,
            summariser=draft.backend,
            recorded_reply=draft.recorded_reply,
        )
        checks = run_gates(DRAFT_GATES, text, job.source_url, draft.text, modes=modes)
        out.verdicts += [("draft", r) for r in checks]
        if any(r.hard_fail for r in checks):
            return discard(out, checks)
        return self._model_checks(out, article, draft)

    def _model_checks(self, out: Outcome, article: Article, draft: Draft) -> Outcome:
        """The second line of defence, after the draft gates passed: one check call,
        judged by the pure gates. A check that did not run is recorded as such
        (never a pass); a verified wrong fact discards the item."""
        modes = self.settings.gates.all_modes()
        if all(modes[gate] == "off" for gate in CHECK_GATES):
            return out
        checked = self.checker.check(article, draft.text)
        out.calls += checked.calls
        ran = checked.state == RAN
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
