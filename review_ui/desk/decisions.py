"""What an editor can do to a draft: approve, reject with a reason, edit.

Every function here checks, inside the caller's transaction, that the person is
a signed-in, enabled account with the `editor` role (a viewer is refused here
too, not only by hiding buttons), then changes the item only through
`store.status`. Decisions are compare-and-set on the version the editor saw:
when someone else decided or edited first, `Conflict` says who and when, and
nothing is written. The caller commits.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError
from sqlmodel import Session

from guards.registry import CHECK_GATES, DEFAULT_MODES, DRAFT_GATES, GateResult, run_gates
from review_ui.desk.queries import current_verdicts, first_edit, is_hard_failure, last_event, stamp
from store import status
from store import verdicts as stored_verdicts
from store.db import session_scope
from store.editors import get_editor
from store.models import GateVerdict, Item, utcnow
from store.status import Conflict, IllegalMove

T = TypeVar("T")


class NotAllowed(PermissionError):
    """This person may not decide (viewer, disabled or unknown account)."""


class Blocked(ValueError):
    """A hard gate fails on the current text: the draft cannot be approved."""

    def __init__(self, failures: list[tuple[str, str]]):
        self.failures = failures
        names = ", ".join(gate for gate, _ in failures)
        super().__init__(f"cannot approve while a hard gate fails: {names}")


class ReasonRequired(ValueError):
    """A rejection without a reason."""


@dataclass(frozen=True)
class Reviewer:
    """Who is signed in. The role is re-read from the database before every decision."""

    name: str
    role: str

    @property
    def actor(self) -> str:
        return f"editor:{self.name}"

    @property
    def can_decide(self) -> bool:
        return self.role == "editor"


@dataclass(frozen=True)
class EditOutcome:
    results: list[GateResult]
    version: int  # the item's version after the edit

    @property
    def hard_failures(self) -> list[GateResult]:
        return [r for r in self.results if r.hard_fail]

    @property
    def flagged(self) -> list[GateResult]:
        return [r for r in self.results if r.flagged]


def decide(engine: Engine, action: Callable[[Session], T], *, attempts: int = 2) -> T:
    """Run one decision in a transaction of its own and commit it.

    On SQLite, when two editors write at the same moment, the later one's
    transaction read the item before the other committed, and SQLite refuses
    its write with "database is locked" instead of waiting. Running the action
    again reads the item afresh, so the later editor gets the `Conflict` that
    says who decided first. (PostgreSQL waits on the row lock and the
    compare-and-set itself reports the conflict.)"""
    for attempt in range(1, attempts + 1):
        try:
            with session_scope(engine) as session:
                return action(session)
        except OperationalError as exc:
            if attempt == attempts or "locked" not in str(exc.orig).lower():
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def require_editor(session: Session, reviewer: Reviewer) -> None:
    account = get_editor(session, reviewer.name)
    if account is None or not account.enabled:
        raise NotAllowed(f"{reviewer.name} is not an enabled account: sign in again")
    if account.role != "editor":
        raise NotAllowed(f"{reviewer.name} is a {account.role}: viewers cannot decide")


def _load(session: Session, item_id: int, expected_version: int) -> Item:
    """The item as the editor saw it, or Conflict naming who changed it since."""
    item = session.get(Item, item_id, populate_existing=True)
    if item is None:
        raise LookupError(f"item {item_id} does not exist")
    if item.status != status.DRAFT or item.version != expected_version:
        event = last_event(session, item_id)
        raise Conflict(
            item_id, item.status, event.actor if event else None, event.at if event else None
        )
    return item


def gates_off(modes: Mapping[str, str]) -> frozenset[str]:
    """Gates switched off in config.toml (e.g. `settings.gates.all_modes()`): their
    stored verdicts are shown as such and no longer block or flag a draft."""
    return frozenset(gate for gate, mode in modes.items() if mode == "off")


def hard_failures(
    session: Session, item_id: int, off: Collection[str] = (), *, require_checks: bool = False
) -> list[tuple[str, str]]:
    """(gate, reason) of every verdict on the current text (`current_verdicts`)
    that fails a gate in `discard` mode, leaving out gates now `off`. With
    `require_checks` (`[checks] require`), a model check with no verdict on the
    current text (it judged the pipeline's draft before an edit) blocks too."""
    verdicts = current_verdicts(session, item_id)
    failures = [
        (v.gate, v.reason)
        for v in verdicts.source + verdicts.draft
        if is_hard_failure(v) and v.gate not in off
    ]
    if require_checks:
        judged = {v.gate for v in verdicts.draft}
        failures += [
            (gate, "not run on the current text, and [checks] require = true")
            for gate in CHECK_GATES
            if gate not in off and gate not in judged
        ]
    return failures


def approve(
    session: Session,
    reviewer: Reviewer,
    item_id: int,
    expected_version: int,
    *,
    off: Collection[str] = (),
    require_checks: bool = False,
) -> Item:
    require_editor(session, reviewer)
    item = _load(session, item_id, expected_version)
    failures = hard_failures(session, item_id, off, require_checks=require_checks)
    if failures:
        raise Blocked(failures)
    status.move(
        session,
        item,
        status.APPROVED,
        actor=reviewer.actor,
        reason="approved",
        expected_version=expected_version,
    )
    return item


def _get(session: Session, item_id: int, expected_version: int) -> Item:
    """The item whatever its status (the status move checks the version)."""
    item = session.get(Item, item_id, populate_existing=True)
    if item is None:
        raise LookupError(f"item {item_id} does not exist")
    return item


@dataclass(frozen=True)
class ReasonedMove:
    """A decision an editor must give a reason for, called as
    `move(session, reviewer, item_id, expected_version, reason, details=...)`:
    the editor's right, the reason, the item as `load` finds it, one status move."""

    to: str
    no_reason: str  # the ReasonRequired message
    load: Callable[[Session, int, int], Item]
    empty_details: dict[str, Any] | None  # what an event without details stores

    def __call__(
        self,
        session: Session,
        reviewer: Reviewer,
        item_id: int,
        expected_version: int,
        reason: str,
        *,
        details: Mapping[str, Any] | None = None,
    ) -> Item:
        require_editor(session, reviewer)
        if not reason or not reason.strip():
            raise ReasonRequired(self.no_reason)
        item = self.load(session, item_id, expected_version)
        status.move(
            session,
            item,
            self.to,
            actor=reviewer.actor,
            reason=reason.strip(),
            expected_version=expected_version,
            details=dict(details) if details else self.empty_details,
        )
        return item


# A draft, at the version the editor saw, rejected.
reject = ReasonedMove(status.REJECTED, "a rejection needs a reason", _load, None)
# An approved (not yet published) or rejected item back to the queue as a draft:
# Undo, "reopen" and "take back" are all this move, with a reason.
reopen = ReasonedMove(status.DRAFT, "taking a decision back needs a reason", _get, {})


def item_label(session: Session, item_id: int, width: int = 60) -> str:
    """'#8 Vell Valley council…': how messages name an item."""
    item = session.get(Item, item_id)
    headline = " ".join((item.headline or "").split()) if item else ""
    if len(headline) > width:
        headline = headline[: width - 1].rstrip() + "…"
    return f"#{item_id} {headline}".rstrip()


def check_text(
    source: str | None,
    url: str | None,
    headline: str,
    summary: str,
    gate_modes: Mapping[str, str],
    min_source_words: int,
    language: str | None = None,
) -> list[GateResult]:
    """Every deterministic draft gate on a proposed text, at once, without saving;
    `language` is the one the article's feed or page declared (None: detected)."""
    modes = {gate: gate_modes.get(gate, DEFAULT_MODES[gate]) for gate in DRAFT_GATES}
    return run_gates(
        DRAFT_GATES,
        source or "",
        url,
        f"{headline}\n\n{summary}",
        modes=modes,
        min_source_words=min_source_words,
        language=language,
    )


def edit(
    session: Session,
    reviewer: Reviewer,
    item_id: int,
    expected_version: int,
    headline: str,
    summary: str,
    *,
    gate_modes: Mapping[str, str],
    min_source_words: int,
    note: Mapping[str, Any] | None = None,
) -> EditOutcome:
    """Save an editor's text and its gate verdicts (stage `edit`) in one transaction.

    The edit is kept even when a hard gate fails, so the audit shows what was
    tried; `approve` then refuses until a later edit passes (or someone rejects)."""
    require_editor(session, reviewer)
    headline, summary = headline.strip(), summary.strip()
    if not headline or not summary:
        raise IllegalMove("an edit needs both a headline and a summary")
    item = _load(session, item_id, expected_version)
    if headline == (item.headline or "") and summary == (item.summary or ""):
        raise IllegalMove("the text is unchanged: nothing to save")
    results = check_text(
        item.source_text,
        item.source_url,
        headline,
        summary,
        gate_modes,
        min_source_words,
        item.language,
    )
    original = pipeline_draft(session, item_id)
    event = status.record_edit(
        session,
        item,
        actor=reviewer.actor,
        headline=headline,
        summary=summary,
        expected_version=expected_version,
        details={**(note or {}), "gates": [_gate_summary(r) for r in results]},
        reverted=original is not None and (headline, summary) == tuple(t.strip() for t in original),
    )
    at = event.at or utcnow()
    rows = [GateVerdict.row_of(r, item_id=item_id, stage="edit", created_at=at) for r in results]
    stored_verdicts.write(session, rows)  # one set, with the item's state after the edit
    session.flush()
    return EditOutcome(results, item.version)


def pipeline_draft(session: Session, item_id: int) -> tuple[str, str] | None:
    """(headline, summary) the pipeline wrote, from the first edit's audit event;
    None when nobody has edited the draft."""
    event = first_edit(session, item_id)
    before = (event.details or {}).get("before") if event else None
    if not isinstance(before, dict):
        return None
    return before.get("headline") or "", before.get("summary") or ""


def revert(
    session: Session,
    reviewer: Reviewer,
    item_id: int,
    expected_version: int,
    *,
    gate_modes: Mapping[str, str],
    min_source_words: int,
) -> EditOutcome:
    """Put the pipeline's own draft back after edits, as one more edit: the gates
    run on it again and the audit keeps every text, the reverted ones included.

    The pipeline's model checks (claims, faithfulness) judged this same text, but
    they still do not count after a revert: only the gates run here do."""
    original = pipeline_draft(session, item_id)
    if original is None:
        raise IllegalMove("this draft was never edited: there is nothing to revert")
    return edit(
        session,
        reviewer,
        item_id,
        expected_version,
        *original,
        gate_modes=gate_modes,
        min_source_words=min_source_words,
        note={"reverted_to": "pipeline draft"},
    )


def _gate_summary(result: GateResult) -> dict[str, Any]:
    return {"gate": result.gate, "passed": result.verdict.passed, "mode": result.mode}


def who_and_when(conflict: Conflict) -> str:
    """'bob at 2026-11-30 14:02 UTC' from a Conflict, for people."""
    who = (conflict.actor or "someone").removeprefix("editor:")
    return f"{who} at {stamp(conflict.at)}"


def conflict_message(conflict: Conflict, label: str | None = None) -> str:
    """Tell the slower editor what happened instead of what they asked for,
    naming the item (`label`, from `item_label`)."""
    who = who_and_when(conflict)
    name = label or f"#{conflict.item_id}"
    if conflict.status == status.DRAFT and (conflict.actor or "").startswith("run:"):
        return (
            f"Not saved: the model checks of {name} were re-run by {who} after you opened "
            "it. The new verdicts are shown now; check them and decide again."
        )
    if conflict.status == status.DRAFT:
        return (
            f"Not saved: {name} was changed by {who} after you opened it. "
            "The new text is shown now; check it and decide again."
        )
    return f"Not saved: {name}: already {conflict.status} by {who}."
