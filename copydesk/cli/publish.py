"""`copydesk publish`, `retract`, `watch` and `replay`: after the editor's decision.

Exit codes: 0 everything went out; 1 something needs a person (a target refused
an item or is still failing, an item fails a gate now); 2 bad usage; 3 could not
work (no targets configured, missing webhook secret, database).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import typer

from copydesk.cli import context as cx

if TYPE_CHECKING:
    from copydesk.services.compose import Desk
    from publish.service import PublishReport


def register(app: typer.Typer) -> None:
    app.command("publish")(publish_command)
    app.command("retract")(retract_command)
    app.command("watch")(watch_command)
    app.command("replay")(replay_command)


def publish_command(
    cli: typer.Context,
    item: list[int] = typer.Option(None, "--item", help="only this item id; repeatable"),
    retry_failed_: bool = typer.Option(
        False,
        "--retry-failed",
        help="send again the deliveries a target refused (of --item, or all), and those"
        " waiting for their next try",
    ),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
) -> None:
    """Deliver approved items (and pending retractions) to every configured target.

    Exactly once per target: a target that fails for a passing reason keeps the item
    pending for it, and a later publish tries again after a backoff; one that
    refuses it (a 4xx, a 301) marks it failed until --retry-failed. The item is
    published once every target has it. Exit 1 while anything is pending, failed,
    held in its Undo window or blocked."""
    from publish.service import retry_failed

    ctx = cx.context(cli)
    if retry_failed_:
        again = retry_failed(ctx.engine, item or None)
        if not as_json:
            cx.note(f"{len(again)} failed delivery(ies) to try again")
    report = deliver(ctx, "cli:publish", item or None)
    if as_json:
        cx.emit_json(report_dict(report))
    else:
        print_report(report)
    finish(report)


def deliver(ctx: Desk, actor: str, items: list[int] | None) -> PublishReport:
    """Publish (all approved items, or `items`); exit 3 when publishing cannot start."""
    from publish.service import NotPublishable

    publisher = cx.publisher(ctx, actor)
    try:
        return publisher.publish(items)
    except NotPublishable as exc:
        cx.fail(str(exc))
    finally:
        publisher.close()


def finish(report: PublishReport) -> None:
    """Exit 1 when a delivery is pending, failed, held or blocked: a person should know."""
    if not report.clean:
        raise typer.Exit(cx.EXIT_FAILED)


def report_dict(report: PublishReport) -> dict[str, Any]:
    return {
        "published": report.published,
        "retracted": report.retracted,
        "delivered": [{"item": i, "target": t, "kind": k} for i, t, k in report.delivered],
        "pending": [{"item": i, "target": t, "why": w} for i, t, w in report.pending],
        "failed": [{"item": i, "target": t, "why": w} for i, t, w in report.failed],
        "blocked": [{"item": i, "why": w} for i, w in report.blocked],
        "held": [{"item": i, "why": w} for i, w in report.held],
        "lost": [{"item": i, "target": t, "why": w} for i, t, w in report.lost],
    }


def print_report(report: PublishReport) -> None:
    from rich.table import Table
    from rich.text import Text

    cx.out.print(
        f"published {len(report.published)} item(s), retracted {len(report.retracted)};"
        f" {len(report.delivered)} deliveries made",
        markup=False,
    )
    problems = [(i, t, "pending", w) for i, t, w in report.pending]
    problems += [(i, t, "failed", w) for i, t, w in report.failed]
    problems += [(i, "-", "blocked", w) for i, w in report.blocked]
    problems += [(i, "-", "held", w) for i, w in report.held]
    problems += [(i, t, "another worker's", w) for i, t, w in report.lost]
    if problems:
        table = Table("item", "target", "state", "why")
        for row in problems:
            table.add_row(*(Text(str(v)) for v in row))  # untrusted text: no markup
        cx.out.print(table)


def retract_command(
    cli: typer.Context,
    item_id: int = typer.Argument(..., help="the item to withdraw (live on some target)"),
    reason: str = typer.Option(..., "--reason", help="why: readers see it"),
    editor: str = typer.Option(..., "--editor", help="the editor withdrawing it (an account)"),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
) -> None:
    """Withdraw an item live on any target (published, or delivered to some targets
    while another refused it): exactly the targets that have it are told, once."""
    from publish.service import NotPublishable, retract
    from store.db import session_scope
    from store.editors import active_role

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
    report = deliver(ctx, "cli:retract", [item_id]) if targets else None
    if as_json:
        told = report_dict(report) if report else None
        cx.emit_json({"item": item_id, "retracted": True, "targets": targets, "publish": told})
    elif report:
        print_report(report)
    if report:
        finish(report)


def watch_command(
    cli: typer.Context,
    days: float = typer.Option(
        None, "--days", help="sources of items published this many days back (default: config)"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
) -> None:
    """Re-read the sources of recently published items; flag summaries that no longer
    pass the gates against the changed text (shown in the queue's "Source changed").

    Never changes an item. Schedule it on its own line, beside `run`. Exit 1 when an item
    was flagged or a source could not be read."""
    from copydesk.services.watch import watch
    from ingest.fetch import Fetcher

    ctx = cx.context(cli)
    settings = ctx.settings
    with Fetcher(settings.ingest) as fetcher:
        report = watch(
            ctx.engine,
            fetcher,
            days=days if days is not None else settings.publish.watch_days,
            modes=settings.gates.all_modes(),
            min_source_words=settings.gates.min_source_words,
        )
    summary = {
        "checked": report.checked,
        "unchanged": report.unchanged,
        "changed_still_pass": report.changed_still_pass,
        "flagged": report.flagged,
        "errors": [{"item": i, "why": w} for i, w in report.errors],
    }
    if as_json:
        cx.emit_json(summary)
    else:
        cx.out.print(
            f"checked {report.checked} source(s): {report.unchanged} unchanged,"
            f" {len(report.changed_still_pass)} changed but the summary still passes,"
            f" {len(report.flagged)} flagged for an editor",
            markup=False,
        )
        for item_id in report.flagged:
            cx.out.print(
                f"  item {item_id}: source changed, summary no longer passes", markup=False
            )
        for item_id, why in report.errors:
            cx.out.print(f"  item {item_id}: could not re-read the source: {why}", markup=False)
    if report.flagged or report.errors:
        raise typer.Exit(cx.EXIT_FAILED)


def replay_command(
    cli: typer.Context,
    since: datetime = typer.Option(
        None, "--since", formats=["%Y-%m-%d"], help="only items created on or after this date"
    ),
    gate: str = typer.Option(None, "--gate", help="only this gate"),
    apply_to_drafts: bool = typer.Option(
        False, "--apply-to-drafts", help="discard pending drafts that now fail a hard gate"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
) -> None:
    """Re-run today's deterministic gates over past items and list whose outcome flips.

    Changes nothing unless --apply-to-drafts; approved and published items are only
    listed for an editor. Exit 0 with no flips, 1 with some."""
    from rich.table import Table
    from rich.text import Text

    from copydesk.services.replay import replay
    from guards.registry import DRAFT_GATES, SOURCE_GATES

    if gate is not None and gate not in SOURCE_GATES + DRAFT_GATES:
        known = ", ".join(SOURCE_GATES + DRAFT_GATES)
        cx.fail(f"--gate {gate}: not a deterministic gate (one of {known})", cx.EXIT_USAGE)
    ctx = cx.context(cli)
    report = replay(
        ctx.engine,
        modes=ctx.settings.gates.all_modes(),
        min_source_words=ctx.settings.gates.min_source_words,
        since=since.replace(tzinfo=UTC) if since else None,
        gate=gate,
        apply_to_drafts=apply_to_drafts,
    )
    if as_json:
        data = {
            "examined": report.examined,
            "flips": [f.to_dict() for f in report.flips],
            "discarded": report.discarded,
        }
        cx.emit_json(data)
    else:
        cx.out.print(
            f"replayed {report.examined} item(s): {len(report.flips)} would flip",
            markup=False,
        )
        if report.flips:
            table = Table("item", "status", "would now", "gates", "why")
            for f in report.flips:
                cells = (str(f.item_id), f.status, f.now, ", ".join(f.gates), "; ".join(f.reasons))
                table.add_row(*(Text(c) for c in cells))  # untrusted text: no markup
            cx.out.print(table)
        if report.discarded:
            cx.out.print(f"discarded {len(report.discarded)} draft(s)", markup=False)
    if report.flips:
        raise typer.Exit(cx.EXIT_FAILED)
