"""`copydesk audit`, `discards` and `unchecked` for a terminal: `render_history`,
`render_discards` and `render_unchecked` print what copydesk/services/audit.py
(and `store.history`, `store.checks`) read from the database.

Everything shown here (titles, article text, model output, reasons) may come
from an untrusted feed or model, so the renderers build `rich.text.Text` objects
(never markup) and make control characters visible instead of sending them to
the terminal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from copydesk.render import audit_edits
from copydesk.render.audit_checks import model_checks, render_model_checks
from copydesk.render.text import compact as _compact
from copydesk.render.text import heading, plain, render_evidence, safe
from copydesk.services.audit import Discard, DiscardsReport
from guards.closest import closest_pairs
from guards.registry import CHECK_GATES
from store.checks import Unchecked
from store.history import RECORDED_REPLY_LABEL, ItemHistory, iso, no_draft_reason, utc
from store.models import AuditEvent, Feed, GateVerdict, Item, ModelCall

# --- rendering -------------------------------------------------------------------------------


def render_history(
    console: Console, history: ItemHistory, *, full: bool = False, utc_times: bool = False
) -> None:
    """A readable report of one item's history, oldest first within each part."""
    item = history.item
    console.print(
        Text.assemble(
            (f"Item {item.id}", "bold"), " — ", (item.status, "bold"), f" (version {item.version})"
        )
    )
    _fields(
        console,
        [
            ("title", item.title),
            ("author", item.author),
            ("source URL", item.source_url),
            ("original link", item.original_url),
            ("dedup key", item.dedup_key),
            ("feed", _feed_line(history.feed)),
            ("entry id", item.entry_id),
            ("seen at", iso(item.seen_at)),
            ("published at", iso(item.published_at)),
            ("decided", _decided_line(item)),
        ],
    )

    heading(console, "Fetched and extracted")
    _fields(
        console,
        [
            ("text origin", _origin_label(item.text_origin)),
            ("fetch status", item.fetch_status),
            ("fetch bytes", item.fetch_bytes),
            ("words extracted", item.word_count),
            ("content hash", item.content_hash),
        ],
    )
    if full:
        console.print(Text("source text:", style="dim"))
        console.print(plain(item.source_text or "(none)"))

    heading(console, "Draft")
    not_made = no_draft_reason(item, history.verdicts)
    if not_made:
        console.print(Text("  ") + plain(not_made, style="bold"))
    _fields(console, [("summariser", item.summariser)])
    if item.recorded_reply:
        console.print(Text(f"  note: {RECORDED_REPLY_LABEL}", style="bold yellow"))
    elif history.summariser_label != item.summariser:
        _fields(console, [("kind", history.summariser_label)])
    if not not_made:
        _fields(console, [("headline", item.headline), ("summary", item.summary)])

    if item.attempts or item.next_attempt_at or item.last_error:
        heading(console, "Retries")
        _fields(
            console,
            [
                ("attempts", item.attempts),
                ("next attempt at", iso(item.next_attempt_at)),
                ("last error", item.last_error),
            ],
        )

    heading(console, f"Gate verdicts ({len(history.verdicts)})")
    if history.verdicts:
        console.print(_verdicts_table(history.verdicts, utc_times))
        for v in history.verdicts:
            shown_below = v.gate in CHECK_GATES
            if not v.passed and v.evidence not in (None, {}, []) and not shown_below:
                console.print(Text(f"  {v.stage}/{v.gate} evidence:", style="bold"))
                render_evidence(console, v.evidence, indent=4)
                _render_closest(console, v.evidence)
    else:
        console.print(Text("  none recorded", style="dim"))

    checks = model_checks(history.verdicts)
    heading(console, f"Model checks, as the editor sees them ({len(checks)})")
    render_model_checks(console, checks)

    heading(console, f"Model calls ({len(history.calls)})")
    if history.calls:
        for number, call in enumerate(history.calls, 1):
            _render_call(console, number, call, full=full)
        _render_call_totals(console, history.calls)
    else:
        console.print(Text("  none recorded", style="dim"))

    heading(console, f"Audit events ({len(history.events)})")
    console.print(_events_table(history.events, utc_times))
    audit_edits.render_edits(console, history)
    audit_edits.render_notes(console, history)


def render_discards(console: Console, report: DiscardsReport, *, utc_times: bool = False) -> None:
    """The discards newest first, one block each (a URL is never folded to fit a
    column), then the counts per gate."""
    if not report.discards:
        console.print(plain("No discarded items" + _filters_note(report) + "."))
        return
    console.print(
        plain(f"Discarded items ({len(report.discards)})" + _filters_note(report), style="bold")
    )
    for d in report.discards:
        console.print()
        console.print(
            Text.assemble(
                (_short_time(d.discarded_at, utc_times), "dim"),
                "  ",
                (f"item {d.item_id}", "bold"),
                "  ",
                plain(d.feed or "(no feed)"),
            )
        )
        console.print(Text("  ") + plain(d.title or "(no title)"))
        console.print(Text("  ") + plain(d.url or "(no url)", style="dim"))
        for line in _why(d):
            console.print(Text("  ") + line)
    console.print()
    counts = Table(title=Text("Discards per gate"))
    counts.add_column("gate")
    counts.add_column("items", justify="right")
    for gate, count in report.counts.items():
        counts.add_row(plain(gate), Text(str(count)))
    console.print(counts)


def checks_waiting_line(waiting: dict[str, Any]) -> str:
    """One line for `store.checks.checks_waiting`: how many drafts wait for their
    checks, since when (UTC, to the second), and what will re-check them."""
    line = (
        f"drafts waiting for their checks: {waiting['count']}, since "
        f"{(waiting['since'] or '')[:19]} UTC; a later run re-checks "
        f"{waiting['rechecked_by_next_run']}"
    )
    if waiting["need_recheck_failed"]:
        line += f", {waiting['need_recheck_failed']} only with `copydesk recheck --failed`"
    return line


def render_unchecked(
    console: Console,
    rows: Sequence[Unchecked],
    counts: dict[str, int],
    waiting: dict[str, Any] | None = None,
) -> None:
    """Items whose model checks did not run, one block each, then the counts and the
    drafts that wait for their checks."""
    if not rows:
        console.print(plain("No items whose model checks did not run."))
        return
    console.print(plain(f"Items whose model checks did not run ({len(rows)})", style="bold"))
    for row in rows:
        console.print()
        console.print(
            Text.assemble(
                (_short_time(row.checked_at, True), "dim"),
                "  ",
                (f"item {row.item_id}", "bold"),
                "  ",
                plain(row.status),
                "  ",
                plain(row.feed or "(no feed)"),
            )
        )
        console.print(Text("  ") + plain(row.title or "(no title)"))
        console.print(Text("  ") + plain(row.url or "(no url)", style="dim"))
        for check in row.checks:
            again = " (a later run re-checks it)" if check["transient"] else ""
            console.print(
                Text("  ") + plain(f"{check['gate']}: {check['state']}: {check['why']}{again}")
            )
        if row.rechecks:
            console.print(Text("  ") + plain(f"re-checked {row.rechecks} time(s)", style="dim"))
    console.print()
    console.print(plain(", ".join(f"{state}: {n}" for state, n in counts.items())))
    if waiting and waiting["count"]:
        console.print(plain(checks_waiting_line(waiting)))


def _render_closest(console: Console, evidence: Any) -> None:
    """Each missing quotation beside what the source says closest to it."""
    for quote, closest, similarity in closest_pairs(evidence):
        console.print(Text("    draft says:  ", style="dim") + plain(f"\u201c{quote}\u201d"))
        if closest is None:
            console.print(Text("    source says: nothing close", style="dim"))
        else:
            line = Text("    source says: ", style="dim") + plain(f"\u201c{closest}\u201d")
            console.print(line + Text(f"  (similarity {similarity:.0f}%)", style="dim"))


def _fields(console: Console, rows: Iterable[tuple[str, Any]]) -> None:
    for label, value in rows:
        line = Text(f"  {label}: ", style="dim")
        line.append_text(plain("-" if value is None or value == "" else value))
        console.print(line)


def _feed_line(feed: Feed | None) -> str | None:
    return f"{feed.name} <{feed.url}>" if feed else None


def _decided_line(item: Item) -> str | None:
    if not item.decided_by:
        return None
    return f"{item.decided_by} at {iso(item.decided_at)}"


def _origin_label(origin: str | None) -> str | None:
    labels = {
        "feed_content": "feed_content (the feed carried the full text)",
        "page": "page (fetched and extracted from the article page)",
    }
    return labels.get(origin or "", origin)


def _result(passed: bool, mode: str) -> Text:
    if passed:
        return Text("passed", style="green")
    if mode == "discard":
        return Text("FAILED", style="bold red")
    return Text(f"failed ({mode})", style="yellow")


def _verdicts_table(verdicts: Sequence[GateVerdict], utc_times: bool = False) -> Table:
    table = Table()
    table.add_column(_time_column(utc_times), no_wrap=True)
    table.add_column("stage")
    table.add_column("gate")
    table.add_column("mode")
    table.add_column("result")
    table.add_column("reason", overflow="fold")
    for v in verdicts:
        table.add_row(
            Text(_short_time(v.created_at, utc_times)),
            plain(v.stage),
            plain(v.gate),
            plain(v.mode),
            _result(v.passed, v.mode),
            plain(v.reason),
        )
    return table


def render_feed_events(
    console: Console, events: Sequence[AuditEvent], utc_times: bool = False
) -> None:
    """`copydesk audit --feeds`: each feed's change, who made it and what it was."""
    if not events:
        console.print(Text("no feed changes in the audit log"))
        return
    table = Table()
    for name, options in (
        ("event", {"justify": "right"}),
        (_time_column(utc_times), {"no_wrap": True}),
        ("actor", {}),
        ("change", {}),
        ("feed", {"overflow": "fold"}),
        ("before", {"overflow": "fold"}),
    ):
        table.add_column(name, **options)  # type: ignore[arg-type]
    for e in events:
        details = e.details or {}
        table.add_row(
            Text(str(e.id)),
            Text(_short_time(e.at, utc_times)),
            plain(e.actor),
            plain(e.to_status),
            plain(f"{details.get('feed_id')}: {details.get('name')} <{details.get('url')}>"),
            plain(_compact(details["before"]) if details.get("before") else ""),
        )
    console.print(table)


def _events_table(events: Sequence[AuditEvent], utc_times: bool = False) -> Table:
    table = Table()
    table.add_column(_time_column(utc_times), no_wrap=True)
    table.add_column("actor")
    table.add_column("move")
    table.add_column("reason", overflow="fold")
    table.add_column("details", overflow="fold")
    for e in events:
        table.add_row(
            Text(_short_time(e.at, utc_times)),
            plain(e.actor),
            plain(f"{e.from_status or '(born)'} -> {e.to_status}"),
            plain(e.reason or ""),
            plain(_compact(e.details) if e.details else ""),
        )
    return table


def _render_call(console: Console, number: int, call: ModelCall, *, full: bool) -> None:
    outcome = Text("ok", style="green") if call.ok else Text("ERROR", style="bold red")
    if call.state != "done":  # written before it was sent; no outcome recorded
        label = "in flight" if call.state == "in_flight" else "OUTCOME UNKNOWN"
        outcome = Text(label, style="bold yellow")
    console.print(Text.assemble(f"  call {number}: ", (call.purpose, "bold"), ", ", outcome))
    temperature = _temperature(call)
    tokens = (
        f"{_n(call.input_tokens)} in, {_n(call.output_tokens)} out, cache "
        f"{_n(call.cache_creation_tokens)} written / {_n(call.cache_read_tokens)} read"
    )
    cost = f"${call.cost_usd:.6f}" if call.cost_usd is not None else "-"
    if call.cost_usd is None and call.cost_estimate_usd is not None:
        cost = f"unknown (up to ${call.cost_estimate_usd:.6f})"
    latency = f"{call.latency_ms} ms" if call.latency_ms is not None else "-"
    rows: list[tuple[str, Any]] = [
        ("at", iso(call.created_at)),
        ("backend", call.backend),
        ("model", call.model),
        ("api version", call.api_version),
        ("temperature", temperature),
        ("prompt version", call.prompt_version),
        ("prompt hash", call.prompt_hash),
        ("request id", call.request_id),
        ("tokens", tokens),
        ("latency", latency),
        ("stop reason", call.stop_reason),
        ("cost", cost),
    ]
    if not call.ok:
        rows.append(("error", call.error))
    if full:
        rows += [
            ("request", _compact(call.request_json)),
            ("response", _compact(call.response_json)),
        ]
    _fields(console, [(f"  {label}", value) for label, value in rows])


def _temperature(call: ModelCall) -> str:
    """The temperature the ledger says was sent, and whether the model applied it."""
    if call.temperature is None:
        return "none sent (the model's own default)"
    applied = "in force" if call.temperature_in_force else "sent but not in force"
    return f"{call.temperature:g} ({applied})"


def _render_call_totals(console: Console, calls: Sequence[ModelCall]) -> None:
    cost = sum(c.cost_usd or 0 for c in calls)
    tokens_in = sum(c.input_tokens or 0 for c in calls)
    tokens_out = sum(c.output_tokens or 0 for c in calls)
    failed = sum(1 for c in calls if not c.ok)
    console.print(
        Text(
            f"  total: {len(calls)} call(s), {failed} failed, {tokens_in} tokens in, "
            f"{tokens_out} out, ${cost:.6f}",
            style="bold",
        )
    )


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)


def _short_time(value: datetime | None, utc_times: bool = False) -> str:
    """A stored time in this machine's time zone with its offset ("2026-03-02
    14:05:09 +01:00"), or in UTC with --utc; "-" for none."""
    stamp = utc(value)
    if stamp is None:
        return "-"
    if utc_times:
        return stamp.strftime("%Y-%m-%d %H:%M:%S UTC")
    local = stamp.astimezone()
    offset = local.strftime("%z")
    return local.strftime("%Y-%m-%d %H:%M:%S ") + f"{offset[:3]}:{offset[3:]}"


def _time_column(utc_times: bool) -> str:
    return "at (UTC)" if utc_times else "at (local time)"


def _why(d: Discard) -> list[Text]:
    """One line per failed hard gate, or the discard's own reason when none failed."""
    if not d.failed:
        return [plain(d.reason or "(no reason recorded)")]
    return [Text.assemble((safe(v.gate), "bold red"), ": ", safe(v.reason)) for v in d.failed]


def _filters_note(report: DiscardsReport) -> str:
    parts = []
    if report.since:
        parts.append(f"since {iso(report.since)}")
    if report.gate:
        parts.append(f"gate {report.gate}")
    if report.feed:
        parts.append(f"feed {report.feed}")
    return (" (" + ", ".join(parts) + ")") if parts else ""
