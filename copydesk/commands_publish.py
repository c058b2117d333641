"""`copydesk publish`, `retract`, `watch` and `replay`: after the editor's decision.

Exit codes: 0 everything went out; 1 something needs a person (a target refused
an item or is still failing, an item fails a gate now); 2 bad usage; 3 could not
work (no targets configured, missing webhook secret, database).
"""

from __future__ import annotations

import json
import os
from typing import Any

import typer
from rich.table import Table

from copydesk import context as cx
from publish.service import GateConfig, NotPublishable, Publisher, PublishReport, retract
from publish.targets import build_targets
from store.db import session_scope
from store.editors import active_role


def register(app: typer.Typer) -> None:
    app.command("publish")(publish_command)
    app.command("retract")(retract_command)


def make_publisher(ctx: cx.Context, actor: str) -> Publisher:
    """The configured targets, or a one-line exit 3 (no targets, no webhook secret)."""
    settings = ctx.settings
    if not settings.publish.targets:
        cx.fail("no publish targets configured: add [[publish.targets]] to config.toml")
    try:
        targets = build_targets(settings.publish.targets, os.environ)
    except ValueError as exc:
        cx.fail(str(exc))
    gates = GateConfig(settings.gates.all_modes(), settings.gates.min_source_words)
    return Publisher(
        ctx.engine,
        targets,
        actor=actor,
        gates=gates,
        lease_seconds=settings.publish.lease_seconds,
    )


def publish_command(
    cli: typer.Context,
    item: list[int] = typer.Option(None, "--item", help="only this item id; repeatable"),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
) -> None:
    """Deliver approved items (and pending retractions) to every configured target.

    Exactly once per target: a target that fails keeps the item pending for it and
    the next publish tries again; the item is published once every target has it."""
    ctx = cx.context(cli)
    run_publish(ctx, "cli:publish", item or None, as_json)


def run_publish(
    ctx: cx.Context, actor: str, items: list[int] | None, as_json: bool
) -> PublishReport:
    publisher = make_publisher(ctx, actor)
    try:
        report = publisher.publish(items)
    except NotPublishable as exc:
        cx.fail(str(exc))
    print_report(report, as_json)
    if not report.clean:
        raise typer.Exit(cx.EXIT_FAILED)
    return report


def report_dict(report: PublishReport) -> dict[str, Any]:
    return {
        "published": report.published,
        "retracted": report.retracted,
        "delivered": [{"item": i, "target": t, "kind": k} for i, t, k in report.delivered],
        "pending": [{"item": i, "target": t, "why": w} for i, t, w in report.pending],
        "failed": [{"item": i, "target": t, "why": w} for i, t, w in report.failed],
        "blocked": [{"item": i, "why": w} for i, w in report.blocked],
    }


def print_report(report: PublishReport, as_json: bool) -> None:
    if as_json:
        cx.out.print(json.dumps(report_dict(report)), markup=False)
        return
    cx.out.print(
        f"published {len(report.published)} item(s), retracted {len(report.retracted)};"
        f" {len(report.delivered)} deliveries made",
        markup=False,
    )
    problems = [(i, t, "pending", w) for i, t, w in report.pending]
    problems += [(i, t, "failed", w) for i, t, w in report.failed]
    problems += [(i, "-", "blocked", w) for i, w in report.blocked]
    if problems:
        table = Table("item", "target", "state", "why")
        for row in problems:
            table.add_row(*(str(v) for v in row))
        cx.out.print(table)


def retract_command(
    cli: typer.Context,
    item_id: int = typer.Argument(..., help="the published item to withdraw"),
    reason: str = typer.Option(..., "--reason", help="why: readers see it"),
    editor: str = typer.Option(..., "--editor", help="the editor withdrawing it (an account)"),
) -> None:
    """Withdraw a published item: every target that has it is told, exactly once."""
    ctx = cx.context(cli)
    with session_scope(ctx.engine) as session:
        role = active_role(session, editor)
    if role != "editor":
        cx.fail(f"{editor!r} is not an enabled editor account", cx.EXIT_USAGE)
    try:
        targets = retract(ctx.engine, item_id, editor=editor, reason=reason)
    except NotPublishable as exc:
        cx.fail(str(exc), cx.EXIT_FAILED)
    cx.note(f"item {item_id} retracted; telling {', '.join(targets) or 'no target'}")
    if targets:
        run_publish(ctx, "cli:retract", [item_id], as_json=False)
