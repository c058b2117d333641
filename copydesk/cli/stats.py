"""`copydesk stats`: what the recent runs did and what their model calls cost."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import typer

from copydesk.cli import context as cx

if TYPE_CHECKING:
    from sqlmodel import Session

    from store.desk_stats import EditorThroughput
    from store.models import GateVerdict, Run


def register(app: typer.Typer) -> None:
    app.command("stats")(stats)


def run_state(run: Run, stale_after: timedelta, now: datetime | None = None) -> str:
    """finished, stopped (exit 3), running (its heartbeat is recent), or did not
    finish: no end and no heartbeat for longer than a lease (killed, machine lost)."""
    from store.models import utcnow

    if run.ended_at is not None:
        return "finished" if not run.exit_status else "stopped"
    beat = run.heartbeat_at or run.started_at
    return "running" if beat > (now or utcnow()) - stale_after else "did not finish"


def run_usage(
    session: Session, limit: int = 20, stale_after: timedelta = timedelta(minutes=5)
) -> list[dict[str, Any]]:
    """One row per recent run: its counts and the tokens and cost of its model calls."""
    from sqlalchemy import case, func
    from sqlmodel import select

    from store.models import ModelCall, Run

    runs = session.exec(select(Run).order_by(Run.id.desc()).limit(limit)).all()
    usage = {
        row[0]: row[1:]
        for row in session.exec(
            select(
                ModelCall.run_id,
                func.count(ModelCall.id),
                func.coalesce(func.sum(ModelCall.input_tokens), 0),
                func.coalesce(func.sum(ModelCall.output_tokens), 0),
                func.coalesce(func.sum(ModelCall.cache_read_tokens), 0),
                func.coalesce(func.sum(ModelCall.cache_creation_tokens), 0),
                func.sum(ModelCall.cost_usd),
                # Answered calls without a price: their cost is unknown, never 0.
                func.coalesce(
                    func.sum(
                        case((ModelCall.cost_usd.is_(None) & ModelCall.ok.is_(True), 1), else_=0)
                    ),
                    0,
                ),
            )
            .where(ModelCall.run_id.in_([r.id for r in runs]))
            .group_by(ModelCall.run_id)
        )
    }
    rows = []
    for run in runs:
        calls, tin, tout, cread, cwrite, cost, unpriced = usage.get(
            run.id, (0, 0, 0, 0, 0, None, 0)
        )
        totals = (run.counts or {}).get("totals", {})
        rows.append(
            {
                "run_id": run.id,
                "command": run.command,
                "started_at": run.started_at.isoformat(timespec="seconds"),
                "ended_at": run.ended_at.isoformat(timespec="seconds") if run.ended_at else None,
                "backend": run.backend,
                "exit_status": run.exit_status,
                "state": run_state(run, stale_after),
                "last_heartbeat": (
                    run.heartbeat_at.isoformat(timespec="seconds") if run.heartbeat_at else None
                ),
                "new": totals.get("new", 0),
                "drafts": totals.get("drafts", 0),
                "discarded": totals.get("discarded", 0),
                "errors": totals.get("errors", 0),
                "model_calls": calls,
                "input_tokens": tin,
                "output_tokens": tout,
                "cache_read_tokens": cread,
                "cache_creation_tokens": cwrite,
                # None when no answered call had a price; the sum of the priced ones
                # otherwise, with how many answered calls have an unknown cost.
                "cost_usd": round(cost, 6) if cost is not None else None,
                "cost_unknown_calls": unpriced,
            }
        )
    return rows


def waiting(session: Session) -> dict[str, Any]:
    """The items that wait in `error` for a retry (an outage never discards them):
    how many, since when (the first failure of the one waiting longest: its first
    move to `error`, as an item in `error` has never been further), the oldest's
    last failure, and the next retry due."""
    from sqlalchemy import func
    from sqlmodel import select

    from store.models import AuditEvent, Item

    count, oldest, due = session.exec(
        select(
            func.count(Item.id), func.min(Item.updated_at), func.min(Item.next_attempt_at)
        ).where(Item.status == "error")
    ).one()
    since = None
    if count:
        since = session.exec(
            select(func.min(AuditEvent.at))
            .join(Item, Item.id == AuditEvent.item_id)
            .where(Item.status == "error", AuditEvent.to_status == "error")
        ).one()
    iso = lambda t: t.isoformat(timespec="seconds") if t else None  # noqa: E731
    return {
        "count": count,
        "since": since.isoformat() if since else None,
        "oldest_failure": iso(oldest),
        "next_retry": iso(due),
    }


def status_counts(session: Session) -> dict[str, int]:
    from sqlalchemy import func
    from sqlmodel import select

    from store.models import Item

    return dict(session.exec(select(Item.status, func.count(Item.id)).group_by(Item.status)).all())


CHECK_STATES = ("passed", "problems found", "not run", "failed to run")


def check_state(verdict: GateVerdict) -> str:
    """What a model check's verdict says: it ran (passed, or found problems), or it
    did not (not run: no model; failed to run: the model or its reply failed)."""
    return describe_state(verdict.check_state, verdict.passed)


def describe_state(state: str, passed: bool) -> str:
    """`check_state`'s words for a check's state ("ran", "not run", "failed")."""
    from guards.checks import FAILED, RAN

    if state == RAN:
        return "passed" if passed else "problems found"
    return "failed to run" if state == FAILED else "not run"


def model_check_counts(session: Session) -> dict[str, dict[str, int]]:
    """Per model check, how many items' current verdicts are in each state (a check
    that did not run is counted as such, never as a pass; one a later run re-checked
    counts as what the re-check found)."""
    from sqlmodel import select

    from store import verdicts
    from store.checks import newest_check
    from store.models import GateVerdict

    counts: dict[str, dict[str, int]] = {}
    rows = session.exec(select(GateVerdict).where(newest_check(GateVerdict)))
    for verdict in rows:
        per_gate = counts.setdefault(verdict.gate, dict.fromkeys(CHECK_STATES, 0))
        per_gate[check_state(verdict)] += 1
    for gate, state, passed in verdicts.checks_now(session):  # items whose verdicts are sets
        per_gate = counts.setdefault(gate, dict.fromkeys(CHECK_STATES, 0))
        per_gate[describe_state(state, passed)] += 1
    return counts


def stats(
    cli: typer.Context,
    runs: int = typer.Option(20, "--runs", help="how many recent runs to show"),
    days: int = typer.Option(
        30, "--days", min=1, help="the period of the per-editor decisions, in days"
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Items by status; per run: items, model calls, tokens and estimated cost; per
    editor: decisions in the last --days days and the median time from draft
    stored to decision."""
    from rich.table import Table
    from sqlmodel import Session

    from copydesk.render.audit import checks_waiting_line
    from store import ledger
    from store.checks import checks_waiting
    from store.desk_stats import editor_throughput

    ctx = cx.context(cli)
    with Session(ctx.engine) as session:
        stale = timedelta(seconds=ctx.settings.runs.lease_seconds)
        rows = run_usage(session, runs, stale)
        counts = status_counts(session)
        waits = waiting(session)
        checks_wait = checks_waiting(session, ctx.settings.checks.recheck_attempts)
        unknown, estimate = ledger.unknown_outcomes(session, stale)
        checks = model_check_counts(session)
        editors = editor_throughput(session, days)
    if as_json:
        document = {
            "items_by_status": counts,
            "waiting": waits,
            "checks_waiting": checks_wait,
            "outcome_unknown": {"calls": unknown, "cost_estimate_usd": estimate},
            "runs": rows,
            "model_checks": checks,
            "editors": {"days": days, "decisions": [e.to_dict() for e in editors]},
        }
        cx.emit_json(document)
        return
    cx.out.print(
        "items: " + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"),
        markup=False,
    )
    if waits["count"]:
        cx.out.print(
            f"waiting for a retry: {waits['count']} item(s), since {waits['since'][:19]}; "
            f"next retry due {waits['next_retry'] or 'now'}",
            markup=False,
        )
    if checks_wait["count"]:
        cx.out.print(checks_waiting_line(checks_wait), markup=False)
    if unknown:
        cx.out.print(ledger.describe_unknown(unknown, estimate), markup=False)
    table = Table(title="recent runs")
    columns = (
        "run",
        "started",
        "state",
        "summariser",
        "new",
        "drafts",
        "discarded",
        "errors",
        "calls",
        "tokens in/out",
        "cache read",
        "cost USD",
    )
    for column in columns:
        left = column in ("started", "state", "summariser")
        table.add_column(column, justify="left" if left else "right")
    for r in rows:
        cost = "—" if r["cost_usd"] is None else f"{r['cost_usd']:.4f}"
        if r["cost_unknown_calls"]:
            unknown = f"unknown for {r['cost_unknown_calls']} calls"
            cost = unknown if r["cost_usd"] is None else f"{cost} + {unknown}"
        table.add_row(
            str(r["run_id"]),
            r["started_at"],
            r["state"],
            r["backend"] or "",
            str(r["new"]),
            str(r["drafts"]),
            str(r["discarded"]),
            str(r["errors"]),
            str(r["model_calls"]),
            f"{r['input_tokens']}/{r['output_tokens']}",
            str(r["cache_read_tokens"]),
            cost,
        )
    cx.out.print(table)
    unfinished = [r for r in rows if r["state"] == "did not finish"]
    for r in unfinished:
        cx.out.print(
            f"run {r['run_id']} did not finish (last heartbeat {r['last_heartbeat'] or 'none'}): "
            f"it made {r['new']} new item(s), {r['drafts']} draft(s), "
            f"{r['discarded']} discard(s); its claims are taken over when their leases pass",
            markup=False,
        )
    _print_editors(editors, days)
    if checks:
        table = Table(title="model checks (verdicts)")
        table.add_column("check", justify="left")
        for state in CHECK_STATES:
            table.add_column(state, justify="right")
        for gate, per_state in sorted(checks.items()):
            table.add_row(gate, *(str(per_state[state]) for state in CHECK_STATES))
        cx.out.print(table)


def _print_editors(editors: list[EditorThroughput], days: int) -> None:
    from rich.table import Table
    from rich.text import Text

    from store.desk_stats import duration_text

    if not editors:
        cx.out.print(f"no editor decisions in the last {days} days", markup=False)
        return
    table = Table(title=f"decisions per editor, last {days} days")
    for column in ("editor", "decisions", "approved", "rejected", "per day", "median wait"):
        table.add_column(column, justify="left" if column == "editor" else "right")
    for e in editors:
        table.add_row(
            Text(e.editor),
            str(e.decisions),
            str(e.approved),
            str(e.rejected),
            f"{e.per_day:.2f}",
            duration_text(e.median_seconds),
        )
    cx.out.print(table)
    cx.out.print(
        "median wait: from the draft stored to the editor's decision", markup=False, style="dim"
    )
