"""`copydesk stats`: what the recent runs did and what their model calls cost."""

from __future__ import annotations

import json
from typing import Any

import typer
from rich.table import Table
from sqlalchemy import func
from sqlmodel import Session, select

from copydesk import context as cx
from store.models import Item, ModelCall, Run


def register(app: typer.Typer) -> None:
    app.command("stats")(stats)


def run_usage(session: Session, limit: int = 20) -> list[dict[str, Any]]:
    """One row per recent run: its counts and the tokens and cost of its model calls."""
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
            )
            .where(ModelCall.run_id.in_([r.id for r in runs]))
            .group_by(ModelCall.run_id)
        )
    }
    rows = []
    for run in runs:
        calls, tin, tout, cread, cwrite, cost = usage.get(run.id, (0, 0, 0, 0, 0, None))
        totals = (run.counts or {}).get("totals", {})
        rows.append(
            {
                "run_id": run.id,
                "command": run.command,
                "started_at": run.started_at.isoformat(timespec="seconds"),
                "ended_at": run.ended_at.isoformat(timespec="seconds") if run.ended_at else None,
                "backend": run.backend,
                "exit_status": run.exit_status,
                "new": totals.get("new", 0),
                "drafts": totals.get("drafts", 0),
                "discarded": totals.get("discarded", 0),
                "errors": totals.get("errors", 0),
                "model_calls": calls,
                "input_tokens": tin,
                "output_tokens": tout,
                "cache_read_tokens": cread,
                "cache_creation_tokens": cwrite,
                "cost_usd": round(cost, 6) if cost is not None else None,
            }
        )
    return rows


def status_counts(session: Session) -> dict[str, int]:
    return dict(session.exec(select(Item.status, func.count(Item.id)).group_by(Item.status)).all())


def stats(
    cli: typer.Context,
    runs: int = typer.Option(20, "--runs", help="how many recent runs to show"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Items by status, and per run: items, model calls, tokens and estimated cost."""
    ctx = cx.context(cli)
    with Session(ctx.engine) as session:
        rows = run_usage(session, runs)
        counts = status_counts(session)
    if as_json:
        cx.out.print(json.dumps({"items_by_status": counts, "runs": rows}, indent=2), markup=False)
        return
    cx.out.print(
        "items: " + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"),
        markup=False,
    )
    table = Table(title="recent runs")
    columns = (
        "run",
        "started",
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
        table.add_column(column, justify="left" if column in ("started", "summariser") else "right")
    for r in rows:
        cost = "—" if r["cost_usd"] is None else f"{r['cost_usd']:.4f}"
        table.add_row(
            str(r["run_id"]),
            r["started_at"],
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
