"""`copydesk audit`, `discards` and `unchecked`: the auditor's view, from the database alone.

The queries and the rendering live in `copydesk.render.audit` (the review app reuses
them); this module only turns options into calls and results into exit codes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from copydesk.cli.context import (
    EXIT_FAILED,
    EXIT_USAGE,
    context,
    emit_json,
    err,
    fail,
    out,
)

if TYPE_CHECKING:
    from store import audit_chain


def register(app: typer.Typer) -> None:
    app.command("audit")(audit_command)
    app.command("discards")(discards_command)
    app.command("unchecked")(unchecked_command)


def audit_command(
    cli: typer.Context,
    item: str | None = typer.Argument(
        None, metavar="URL_OR_ID", help="item id, or its URL (canonical or as the feed gave it)"
    ),
    as_json: bool = typer.Option(False, "--json", help="one JSON document instead of a report"),
    full: bool = typer.Option(
        False, "--full", help="also the source text and each model call's request and reply"
    ),
    utc_times: bool = typer.Option(
        False, "--utc", help="times in UTC instead of this machine's time zone"
    ),
    verify: bool = typer.Option(
        False,
        "--verify",
        help="recompute the audit log's hash chain; exit 1 naming the first event that "
        "does not match",
    ),
    head: bool = typer.Option(
        False,
        "--head",
        help="print the last audit event as ID:HASH, an anchor to keep outside the database",
    ),
    against_feed: str | None = typer.Option(
        None,
        "--against-feed",
        metavar="URL_OR_FILE",
        help="with --verify: exit 1 unless the log still holds every audit head this "
        "published Atom feed or JSON Lines file carries (each publication carries one)",
    ),
    expect_head: str | None = typer.Option(
        None,
        "--expect-head",
        metavar="ID:HASH",
        help="with --verify: exit 1 unless the log still holds this event with this hash "
        "(events cut from the end show); default: the [runs] audit_anchor file",
    ),
    feeds: bool = typer.Option(
        False,
        "--feeds",
        help="the feeds' changes instead of an item's: every feed added, removed, "
        "disabled, enabled or renamed, and who did it (a feeds command, config.toml)",
    ),
) -> None:
    """An item's whole history: what was fetched, what the model was sent and said,
    every gate verdict, every status move and who made it. With --verify: check
    that no audit event was changed, removed or inserted since it was written."""
    from copydesk.render import audit_checks
    from copydesk.render.audit import render_history
    from copydesk.services import audit

    if feeds:
        if item is not None or head or verify or expect_head or against_feed:
            fail(
                "--feeds lists the feeds' changes: give it alone (or with --json, --utc)",
                EXIT_USAGE,
            )
        _print_feed_events(cli, as_json, utc_times)
        return
    if head or verify:
        if item is not None:
            fail("--verify and --head concern the whole log: give no item with them", EXIT_USAGE)
        if head and (verify or expect_head):
            fail("--head prints the anchor, --verify checks against one: give one", EXIT_USAGE)
        if head and against_feed:
            fail("--against-feed goes with --verify", EXIT_USAGE)
        if head:
            _print_head(cli, as_json)
        else:
            published = _published_heads(against_feed) if against_feed else None
            _verify_chain(cli, as_json, _anchor_option(expect_head), published)
        return
    if expect_head is not None or against_feed is not None:
        fail("--expect-head and --against-feed go with --verify", EXIT_USAGE)
    if item is None:
        fail("give an item id or URL, or --verify, or --feeds", EXIT_USAGE)
    ctx = context(cli)
    history = audit.item_history(ctx.engine, item)
    if history is None:
        fail(f"no item matches {item!r}", EXIT_FAILED)
    if as_json:
        document = history.to_dict(full=full)
        document["model_checks"] = audit_checks.model_checks(history.verdicts)
        _print_json(document)
    else:
        render_history(out, history, full=full, utc_times=utc_times)


def _print_feed_events(cli: typer.Context, as_json: bool, utc_times: bool) -> None:
    from copydesk.render.audit import render_feed_events
    from copydesk.services import audit
    from store.history import event_dict

    events = audit.feed_events(context(cli).engine)
    if as_json:
        _print_json([{"id": e.id} | event_dict(e) for e in events])
    else:
        render_feed_events(out, events, utc_times)


def discards_command(
    cli: typer.Context,
    since: str | None = typer.Option(
        None, "--since", help="only items discarded since YYYY-MM-DD or an ISO datetime (UTC)"
    ),
    gate: str | None = typer.Option(
        None, "--gate", help="only items this gate failed ('other': no gate failed)"
    ),
    feed: str | None = typer.Option(None, "--feed", help="only items from this feed (name or URL)"),
    as_json: bool = typer.Option(False, "--json", help="one JSON document instead of a table"),
    utc_times: bool = typer.Option(
        False, "--utc", help="times in UTC instead of this machine's time zone"
    ),
) -> None:
    """Discarded items, newest first, with every failed gate's reason, and the
    number of discards per gate."""
    from copydesk.render.audit import render_discards
    from copydesk.services import audit

    try:
        since_at = audit.parse_since(since) if since else None
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    ctx = context(cli)
    if gate and gate != audit.OTHER:
        known = audit.known_gates(ctx.engine)
        if gate not in known:
            fail(f"unknown gate {gate!r}; known: {', '.join(sorted(known))}, other", EXIT_USAGE)
    if feed and not audit.feed_exists(ctx.engine, feed):
        fail(f"no feed named {feed!r} (give its name or URL)", EXIT_USAGE)
    report = audit.discards_report(ctx.engine, since=since_at, gate=gate, feed=feed)
    if as_json:
        _print_json(report.to_dict())
    else:
        render_discards(out, report, utc_times=utc_times)


# --state's words -> the stored states (store.checks FAILED and NOT_RUN)
STATES = ("not-run", "failed")


def unchecked_command(
    cli: typer.Context,
    state: str | None = typer.Option(
        None,
        "--state",
        help="only checks that were not run (no model) or that failed (the model or its "
        "reply failed): not-run or failed",
    ),
    item_status: str | None = typer.Option(
        None, "--status", help="only items in this status (draft, approved, published...)"
    ),
    since: str | None = typer.Option(
        None, "--since", help="only checks recorded since YYYY-MM-DD or an ISO datetime (UTC)"
    ),
    feed: str | None = typer.Option(None, "--feed", help="only items from this feed (name or URL)"),
    as_json: bool = typer.Option(False, "--json", help="one JSON document instead of a table"),
) -> None:
    """Items whose model checks did not run (no model) or failed (an outage, a reply
    that broke the schema...), newest first, with why and how many times a later run
    re-checked them. Such a check is never a pass: the queue shows a banner."""
    from sqlmodel import Session

    from copydesk.render.audit import render_unchecked
    from copydesk.services import audit
    from store import status
    from store.checks import FAILED, NOT_RUN, checks_waiting, unchecked_items

    if state is not None and state not in STATES:
        fail(f"--state must be one of {', '.join(STATES)}, not {state!r}", EXIT_USAGE)
    if item_status is not None and item_status not in status.STATUSES:
        fail(f"--status must be one of {', '.join(status.STATUSES)}", EXIT_USAGE)
    try:
        since_at = audit.parse_since(since) if since else None
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    ctx = context(cli)
    if feed and not audit.feed_exists(ctx.engine, feed):
        fail(f"no feed named {feed!r} (give its name or URL)", EXIT_USAGE)
    with Session(ctx.engine) as session:
        rows = unchecked_items(
            session,
            state={"not-run": NOT_RUN, "failed": FAILED}[state] if state else None,
            status=item_status,
            feed=feed,
            since=since_at,
        )
        waiting = checks_waiting(session, ctx.settings.checks.recheck_attempts)
    counts = {
        s: sum(any(c["state"] == s for c in r.checks) for r in rows) for s in (FAILED, NOT_RUN)
    }
    if as_json:
        _print_json({"items": [r.to_dict() for r in rows], "counts": counts, "waiting": waiting})
    else:
        render_unchecked(out, rows, counts, waiting)


def _anchor_option(expect_head: str | None) -> audit_chain.Anchor | None:
    from store import audit_chain

    if expect_head is None:
        return None
    try:
        return audit_chain.Anchor.parse(expect_head)
    except ValueError as exc:
        fail(f"--expect-head: {exc}", EXIT_USAGE)


def _configured_anchor(cli: typer.Context) -> tuple[audit_chain.Anchor | None, str]:
    """The anchor in the `[runs] audit_anchor` file, and where it came from. Every
    commit with an audit event advances that file, so a missing one, while the log
    holds events, is an alarm: exit 1."""
    from store import audit_chain

    ctx = context(cli)
    path = ctx.settings.runs.audit_anchor
    if not path:
        err.print(
            "note: no audit anchor is kept ([runs] audit_anchor is off): the log's end "
            "is not checked",
            markup=False,
        )
        return None, ""
    try:
        anchor = audit_chain.read_anchor(Path(path))
    except ValueError as exc:
        fail(f"audit anchor file {path}: {exc}", EXIT_FAILED)
    except OSError as exc:
        fail(f"audit anchor file {path} cannot be read: {exc.strerror or exc}", EXIT_FAILED)
    if anchor is None:
        head = audit_chain.head(ctx.engine)
        if head.event_id:
            fail(
                f"audit anchor file {path} is missing, and the log holds events up to "
                f"{head.event_id}: it was deleted, or the events were written without "
                "copydesk (every commit with an audit event writes it)"
                + (f"; {ctx.settings.anchor_elsewhere}" if ctx.settings.anchor_elsewhere else ""),
                EXIT_FAILED,
            )
        err.print(f"note: no audit anchor at {path} yet: the log is empty", markup=False)
    return anchor, path


def _print_head(cli: typer.Context, as_json: bool) -> None:
    from store import audit_chain

    anchor = audit_chain.head(context(cli).engine)
    if as_json:
        _print_json({"head": str(anchor), "event_id": anchor.event_id, "hash": anchor.hash})
    else:
        typer.echo(str(anchor))


def _published_heads(source: str) -> list[audit_chain.Anchor]:
    """The heads in a published Atom feed or JSON Lines file (a path or an http(s)
    URL); one line and exit 1 when it cannot be read or holds none."""
    import httpx

    from publish.targets import published_heads
    from store import audit_chain

    try:
        if source.startswith(("http://", "https://")):
            response = httpx.get(source, timeout=30, follow_redirects=True)
            response.raise_for_status()
            data = response.content
        else:
            data = Path(source).read_bytes()
        heads = [audit_chain.Anchor.parse(h) for h in published_heads(data)]
    except (OSError, httpx.HTTPError, ValueError) as exc:
        fail(f"--against-feed {source}: {getattr(exc, 'strerror', None) or exc}", EXIT_FAILED)
    if not heads:
        fail(f"--against-feed {source}: it carries no audit head", EXIT_FAILED)
    return heads


def _verify_chain(
    cli: typer.Context,
    as_json: bool,
    expect: audit_chain.Anchor | None = None,
    published: list[audit_chain.Anchor] | None = None,
) -> None:
    """The chain, the anchor (the configured file must be the log's head; a head
    given with --expect-head must only still be there), then the records against
    each other (store/approvals.py)."""
    from store import approvals, audit_chain

    source = "--expect-head"
    current = expect is None
    if expect is None:
        expect, source = _configured_anchor(cli)
    engine = context(cli).engine
    report = audit_chain.verify(engine, expect, current=current)
    records = approvals.verify(engine) if report.ok else None
    against = audit_chain.verify_heads(engine, published) if published else []
    if as_json:
        _print_json(
            {
                "ok": report.ok and records is not None and records.ok and not against,
                "events_checked": report.events,
                "head_hash": report.head,
                "anchor": str(expect) if expect else None,
                "bad_event": report.bad_event,
                "problem": report.problem,
                "records": None
                if records is None
                else {
                    "items_checked": records.items,
                    "approvals_without_text_hash": records.unhashed,
                    "problems": [str(p) for p in records.problems],
                },
                "published_heads": None
                if published is None
                else {
                    "checked": len(published),
                    "problems": against,
                },
            }
        )
    if not report.ok:
        fail(f"audit chain broken at event {report.bad_event}: {report.problem}", EXIT_FAILED)
    assert records is not None
    if not records.ok:
        for problem in records.problems[1:]:
            err.print(f"copydesk: record: {problem}", markup=False)
        more = f" (and {len(records.problems) - 1} more above)" if len(records.problems) > 1 else ""
        fail(f"audit records do not match: {records.problems[0]}{more}", EXIT_FAILED)
    if against:
        for problem in against[1:]:
            err.print(f"copydesk: {problem}", markup=False)
        fail(f"audit log does not hold what was published: {against[0]}", EXIT_FAILED)
    if not as_json:
        holds = f"; holds the anchor {expect.event_id} from {source}" if expect else ""
        out.print(
            f"audit chain ok: {report.events} events, head {report.head}{holds}", markup=False
        )
        older = f"; {len(records.unhashed)} approved before text hashes" if records.unhashed else ""
        out.print(
            f"records ok: {records.items} items match their last audit event; every "
            f"approved or published text is the text approved{older}",
            markup=False,
        )
        if published:
            out.print(
                f"published heads ok: the log holds all {len(set(published))} heads "
                "the feed carries",
                markup=False,
            )


def _print_json(document: Any) -> None:
    """JSON straight to stdout: not through rich, which would wrap or highlight it."""
    emit_json(document)
