"""The auditor's two questions, answered from the database alone.

`item_history` says everything that happened to one item: what was fetched, what
the model was sent and cost, every gate verdict and every status move (the read
model itself is `store.history`, shared with the review queue; this module adds
the CLI's URL matching). `discards_report` says what was thrown away and why.
Both return plain dataclasses holding rows; `to_dict` turns them into JSON
documents and `render_history` / `render_discards` print them for a terminal.

Everything shown here (titles, article text, model output, reasons) may come
from an untrusted feed or model, so the renderers build `rich.text.Text` objects
(never markup) and make control characters visible instead of sending them to
the terminal.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text
from sqlalchemy import or_, select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from copydesk import audit_edits
from copydesk.audit_checks import model_checks, render_model_checks
from guards.closest import closest_pairs
from guards.registry import CHECK_GATES
from ingest.urls import canonical_url
from store import history
from store.checks import Unchecked
from store.history import RECORDED_REPLY_LABEL, ItemHistory, iso, no_draft_reason, utc
from store.models import AuditEvent, Feed, GateVerdict, Item, ModelCall

OTHER = "other"  # the discards bucket for items no gate failed (model gave up, link refused...)
_CHUNK = 500  # ids per IN (...) query: well under every backend's parameter limit

# C0/C1 control characters (but tab and newline) and the bidi overrides that can
# make a terminal show something other than what the text says.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


# --- small helpers -------------------------------------------------------------------------


def parse_since(text: str) -> datetime:
    """YYYY-MM-DD (midnight UTC) or an ISO 8601 datetime (UTC when it has no offset).

    Raises ValueError with a message fit for the user."""
    raw = text.strip()
    try:
        if len(raw) == 10:
            day = date.fromisoformat(raw)
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        raise ValueError(
            f"--since {text!r} is not a date: use YYYY-MM-DD or an ISO 8601 datetime"
        ) from None
    return utc(parsed)  # type: ignore[return-value]


def safe(value: Any) -> str:
    """The text with control and bidi characters shown as escapes, so a hostile
    article cannot move the cursor, clear the screen or reverse a line."""
    text = "" if value is None else str(value)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def plain(value: Any, style: str = "") -> Text:
    """Untrusted text as a rich Text: never parsed as markup."""
    return Text(safe(value), style=style)


def heading(console: Console, title: str) -> None:
    """A section heading of `copydesk audit`'s text output (after a blank line),
    shared with copydesk/audit_edits.py. The title is the program's own wording,
    printed as Text (never markup); a count in it is the only data."""
    console.print()
    console.print(Text(title, style="bold underline"))


def item_history(engine: Engine, key: str | int) -> ItemHistory | None:
    """`store.history.item_history`, with URLs matched also by their canonical form."""
    return history.item_history(engine, key, canonical=canonical_url)


# --- discards --------------------------------------------------------------------------------


@dataclass
class Discard:
    """One discarded item: when, by whom, and the failed hard gates (empty: see `reason`)."""

    item_id: int
    title: str | None
    url: str | None
    feed: str | None
    discarded_at: datetime
    actor: str
    reason: str | None
    kind: str | None = None  # items.discard_kind: the first failed gate, or refused, duplicate...
    failed: list[GateVerdict] = field(default_factory=list)

    @property
    def buckets(self) -> list[str]:
        """The gates this discard counts under: each failed gate once, or `other`."""
        gates = list(dict.fromkeys(v.gate for v in self.failed))
        return gates or [OTHER]

    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "title": self.title,
            "url": self.url,
            "feed": self.feed,
            "discarded_at": iso(self.discarded_at),
            "actor": self.actor,
            "reason": self.reason,
            "kind": self.kind,
            "failed_gates": [
                {"stage": v.stage, "gate": v.gate, "reason": v.reason, "evidence": v.evidence}
                for v in self.failed
            ],
        }


@dataclass
class DiscardsReport:
    """Discards newest first, and how many fall under each failed gate."""

    discards: list[Discard]
    counts: dict[str, int]
    since: datetime | None = None
    gate: str | None = None
    feed: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "filters": {"since": iso(self.since), "gate": self.gate, "feed": self.feed},
            "total": len(self.discards),
            "counts": self.counts,
            "discards": [d.to_dict() for d in self.discards],
        }


def discards_report(
    engine: Engine,
    *,
    since: datetime | None = None,
    gate: str | None = None,
    feed: str | None = None,
) -> DiscardsReport:
    """Discarded items (newest first) with their failed hard gates, optionally only
    those discarded since a time, failed by one gate (or `other`), or from one feed
    (by name or URL). Counts are over the items listed."""
    with Session(engine, expire_on_commit=False) as session:
        discards = _discard_rows(session, since=since, feed=feed)
        failed = _failed_hard_verdicts(session, [d.item_id for d in discards])
    for d in discards:
        d.failed = failed.get(d.item_id, [])
    if gate:
        discards = [d for d in discards if gate in d.buckets]
    return DiscardsReport(discards, count_buckets(discards), since=since, gate=gate, feed=feed)


def count_buckets(discards: Iterable[Discard]) -> dict[str, int]:
    """Discards per failed gate (an item two gates failed counts under both), most first."""
    counts = Counter(bucket for d in discards for bucket in d.buckets)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0] == OTHER, kv[0])))


def _discard_rows(session: Session, *, since: datetime | None, feed: str | None) -> list[Discard]:
    statement = (
        select(
            Item.id,
            Item.title,
            Item.source_url,
            Item.original_url,
            Feed.name,
            AuditEvent.at,
            AuditEvent.actor,
            AuditEvent.reason,
            Item.discard_kind,
        )
        .join(AuditEvent, AuditEvent.item_id == Item.id)
        .outerjoin(Feed, Feed.id == Item.feed_id)
        .where(Item.status == "discarded", AuditEvent.to_status == "discarded")
        .order_by(AuditEvent.at.desc(), AuditEvent.id.desc())
    )
    if since is not None:
        # SQLite compares the stored UTC wall-clock text: bind UTC too.
        statement = statement.where(AuditEvent.at >= utc(since))
    if feed:
        statement = statement.where(or_(Feed.name == feed, Feed.url == feed))
    discards: dict[int, Discard] = {}
    for row in session.execute(statement):
        item_id, title, source_url, original_url, feed_name, at, actor, reason, kind = row
        if item_id in discards:  # a discard is final; keep the newest event all the same
            continue
        discards[item_id] = Discard(
            item_id=item_id,
            title=title,
            url=source_url or original_url,
            feed=feed_name,
            discarded_at=utc(at),  # type: ignore[arg-type]
            actor=actor,
            reason=reason,
            kind=kind,
        )
    return list(discards.values())


def _failed_hard_verdicts(
    session: Session, item_ids: Sequence[int]
) -> dict[int, list[GateVerdict]]:
    failed: dict[int, list[GateVerdict]] = {}
    for start in range(0, len(item_ids), _CHUNK):
        chunk = item_ids[start : start + _CHUNK]
        statement = (
            select(GateVerdict)
            .where(
                GateVerdict.item_id.in_(chunk),  # type: ignore[attr-defined]
                GateVerdict.passed.is_(False),  # type: ignore[attr-defined]
                GateVerdict.mode == "discard",
            )
            .order_by(GateVerdict.id)
        )
        for verdict in session.scalars(statement):
            failed.setdefault(verdict.item_id, []).append(verdict)
    return failed


def known_gates(engine: Engine) -> set[str]:
    """Every gate name the registry knows or the database has a verdict from."""
    from guards.registry import ALL_GATES

    with Session(engine) as session:
        recorded = set(session.scalars(select(GateVerdict.gate).distinct()))
    return set(ALL_GATES) | recorded


def feed_exists(engine: Engine, name_or_url: str) -> bool:
    with Session(engine) as session:
        found = session.scalars(
            select(Feed.id).where(or_(Feed.name == name_or_url, Feed.url == name_or_url)).limit(1)
        ).first()
    return found is not None


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


def render_unchecked(console: Console, rows: Sequence[Unchecked], counts: dict[str, int]) -> None:
    """Items whose model checks did not run, one block each, then the counts."""
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


def render_evidence(console: Console, evidence: Any, *, indent: int = 2) -> None:
    """Evidence as readable lines. Gates shape their evidence freely, so this stays
    generic: a dict is `key: value` lines, a list is one line per element, and an
    element that says `"found": false` (a number or quote the source lacks) is
    marked NOT FOUND so it stands out among the ones that were found."""
    pad = " " * indent
    if isinstance(evidence, dict):
        for key, value in evidence.items():
            line = Text(f"{pad}{safe(key)}: ", style="dim")
            line.append(safe(_compact(value)))
            console.print(line)
    elif isinstance(evidence, list):
        for element in evidence:
            missing = isinstance(element, dict) and element.get("found") is False
            line = Text(pad)
            line.append("NOT FOUND " if missing else "- ", style="bold red" if missing else "dim")
            line.append(safe(_compact(element)))
            console.print(line)
    else:
        console.print(Text(pad + safe(_compact(evidence))))


def _render_closest(console: Console, evidence: Any) -> None:
    """Each missing quotation beside what the source says closest to it."""
    for quote, closest, similarity in closest_pairs(evidence):
        console.print(Text("    draft says:  ", style="dim") + plain(f"\u201c{quote}\u201d"))
        if closest is None:
            console.print(Text("    source says: nothing close", style="dim"))
        else:
            line = Text("    source says: ", style="dim") + plain(f"\u201c{closest}\u201d")
            console.print(line + Text(f"  (similarity {similarity:.0f}%)", style="dim"))


def _compact(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


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
    console.print(Text.assemble(f"  call {number}: ", (call.purpose, "bold"), ", ", outcome))
    temperature = _temperature(call)
    tokens = (
        f"{_n(call.input_tokens)} in, {_n(call.output_tokens)} out, cache "
        f"{_n(call.cache_creation_tokens)} written / {_n(call.cache_read_tokens)} read"
    )
    cost = f"${call.cost_usd:.6f}" if call.cost_usd is not None else "-"
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
