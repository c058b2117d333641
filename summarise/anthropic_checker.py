"""The check call over the Anthropic API: the summariser's client, ledger rows,
retries and error handling, with the check purpose (see `summarise.checks`)."""

from __future__ import annotations

from typing import Any

from summarise import prompt, reply
from summarise.anthropic_backend import AnthropicSummariser, _mark_failed
from summarise.base import Article, BackendUnavailable, CallRecord, SummaryFailed
from summarise.checks import FAILED, RAN, CheckOutcome, CheckReplyError, CheckSettings, parse_check


class AnthropicChecker(AnthropicSummariser):
    """One `record_checks` call per draft; `check` never raises."""

    def __init__(self, settings: CheckSettings, *, api_key: str, **client_options: Any):
        super().__init__(settings, api_key=api_key, **client_options)  # type: ignore[arg-type]

    section = "checks"

    def base_purpose(self) -> prompt.Purpose:
        return prompt.check_purpose("")  # the template: the same hash for every draft

    def check(self, article: Article, draft: str) -> CheckOutcome:
        """One check call; a `max_tokens` stop is retried once at twice the budget
        (a long draft has many claims), as the summary call does."""
        calls: list[CallRecord] = []
        budget = self.settings.max_tokens
        for round_ in (1, 2):
            body = self.build_request(prompt.check_purpose(draft), article, budget)
            try:
                response, error, tries = self._send(body, calls)
            except BackendUnavailable as exc:  # no client: cannot happen with a key
                return self._outcome(FAILED, str(exc), calls)
            if error is not None:
                failure = self._failure(error, tries, calls)
                transient = isinstance(failure, SummaryFailed) and failure.transient
                outcome = self._outcome(FAILED, str(failure), calls, transient=transient)
                outcome.kind = failure.kind
                return outcome
            if round_ == 1 and reply.stop_reason(response) == "max_tokens":
                _mark_failed(calls, f"stop_reason max_tokens at {budget}: retrying at {budget * 2}")
                budget *= 2
                continue
            return self._judge(response, calls)
        raise AssertionError("unreachable: the second round always returns")

    def _judge(self, response: Any, calls: list[CallRecord]) -> CheckOutcome:
        """The outcome of an answered check call: parsed, or failed with why."""
        stop = reply.stop_reason(response)
        if stop in ("max_tokens", "refusal", "model_context_window_exceeded"):
            reason = f"the check reply stopped early (stop_reason {stop})"
            _mark_failed(calls, reason)
            return self._outcome(FAILED, reason, calls)
        try:
            parsed = parse_check(response)
        except CheckReplyError as exc:
            reason = f"the check reply is not usable: {exc}"
            _mark_failed(calls, reason)
            return self._outcome(FAILED, reason, calls)
        return CheckOutcome(RAN, None, parsed, checker=self.name, calls=calls)

    def _outcome(
        self, state: str, reason: str, calls: list[CallRecord], *, transient: bool = False
    ) -> CheckOutcome:
        return CheckOutcome(
            state, self._scrub(reason), checker=self.name, calls=calls, transient=transient
        )
