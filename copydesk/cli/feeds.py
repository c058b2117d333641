"""`copydesk feeds add` and `copydesk feeds list`: the feeds a run polls, and their health."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import typer
from rich.table import Table
from rich.text import Text
from sqlmodel import Session, col, select

from copydesk.cli import context as cx
from copydesk.services.pipeline import add_feed, sync_config_feeds
from ingest.health import HISTORY, FeedHealth, feed_health
from store.db import session_scope
from store.models import Feed, Item, utcnow

feeds_app = typer.Typer(help="Feeds polled by `copydesk run`.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(feeds_app, name="feeds")


@feeds_app.command("add")
def feeds_add(
    cli: typer.Context,
    url: str = typer.Argument(..., help="feed URL (http/https) or local file path"),
    name: str = typer.Option(None, "--name", "-n", help="a short name for tables and filters"),
) -> None:
    """Add a feed to poll on every run."""
    url = _feed_location(url)
    ctx = cx.context(cli)
    with session_scope(ctx.engine) as session:
        feed = add_feed(session, url, name)
        if name and feed.name != name:
            feed.name = name  # adding a known feed again renames it
        cx.out.print(f"feed {feed.id}: {feed.name} <{feed.url}>", markup=False)


def _feed_location(url: str) -> str:
    """An http(s) URL, or an existing local file as an absolute path; else a usage error."""
    scheme = urlsplit(url).scheme.lower()
    if scheme in ("http", "https"):
        if not urlsplit(url).hostname:
            cx.fail(f"{url} has no host", cx.EXIT_USAGE)
        return url
    if "://" in url or scheme not in ("", "file") and len(scheme) > 1:
        cx.fail(f"{url}: a feed is an http(s) URL or a local file", cx.EXIT_USAGE)
    path = Path(url.removeprefix("file://")).expanduser()
    if not path.is_file():
        cx.fail(f"no such feed file: {path}", cx.EXIT_USAGE)
    return str(path.resolve())


@feeds_app.command("list")
def feeds_list(
    cli: typer.Context,
    as_json: bool = typer.Option(False, "--json"),
    check: bool = typer.Option(
        False,
        "--check",
        help="exit 1 when a feed is failing, stale or cut by its size cap (for monitoring)",
    ),
) -> None:
    """Every feed with its state: ok, retrying, FAILING (erroring for longer than
    ingest.feed_stale_hours), STALE (silent for much longer than it usually is),
    with its last success, errors in a row, next fetch and last error."""
    ctx = cx.context(cli)
    now = utcnow()
    failing_after = timedelta(hours=ctx.settings.ingest.feed_stale_hours)
    with session_scope(ctx.engine) as session:
        sync_config_feeds(session, ctx.settings.feeds)
        feeds = list(session.exec(select(Feed).order_by(Feed.id)))
        health = {f.id: _health(session, f, failing_after, now) for f in feeds}
    if as_json:
        rows = [
            f.model_dump(mode="json")
            | {
                "state": health[f.id].state,
                "needs_attention": health[f.id].needs_attention,
                "state_detail": health[f.id].detail,
            }
            for f in feeds
        ]
        cx.out.print(json.dumps(rows, indent=2), markup=False)
    else:
        cx.out.print(_table(feeds, health))
        attention = [f for f in feeds if health[f.id].needs_attention]
        if attention:
            names = ", ".join(f.name for f in attention)
            cx.out.print(f"needs a person: {names}", markup=False)
    if check and any(h.needs_attention for h in health.values()):
        raise typer.Exit(cx.EXIT_FAILED)


def _health(session: Session, feed: Feed, failing_after: timedelta, now: datetime) -> FeedHealth:
    rows = session.exec(
        select(Item.published_at, Item.seen_at)
        .where(Item.feed_id == feed.id)
        .order_by(col(Item.id).desc())
        .limit(HISTORY)
    ).all()
    times = [published or seen for published, seen in rows]
    if feed.enabled and feed.truncated:
        return FeedHealth(
            "cut",
            True,
            f"last poll cut off at max_feed_bytes after {feed.entries_read} entries: "
            "later entries were not read (raise [ingest] max_feed_bytes)",
        )
    return feed_health(
        enabled=feed.enabled,
        created_at=feed.created_at,
        last_fetched_at=feed.last_fetched_at,
        last_success_at=feed.last_success_at,
        consecutive_errors=feed.consecutive_errors,
        entry_times=times,
        failing_after=failing_after,
        now=now,
    )


def _table(feeds: list[Feed], health: dict[Any, FeedHealth]) -> Table:
    """Feed names, errors and bozo messages come from config and from servers:
    cells are plain Text, never markup."""
    table = Table()
    columns = (
        "id",
        "name",
        "state",
        "entries read",
        "last success",
        "errors",
        "next fetch",
        "last error",
    )
    for column in columns:
        table.add_column(column)
    for f in feeds:
        h = health[f.id]
        state = h.state.upper() if h.needs_attention else h.state
        state_cell = Text(state + (f"\n{h.detail}" if h.detail else ""))
        if h.needs_attention:
            state_cell.stylize("bold red")
        problem = f.last_error or (f"malformed: {f.bozo_message}" if f.bozo_message else "")
        table.add_row(
            str(f.id),
            Text(f"{f.name}\n{f.url}" if f.name != f.url else f.url),
            state_cell,
            "—" if f.entries_read is None else str(f.entries_read),
            _when(f.last_success_at),
            str(f.consecutive_errors),
            _when(f.next_fetch_at, none="next run"),
            Text(printable(problem)[:300]),
        )
    return table


def printable(text: str) -> str:
    """Text from a server, safe for a terminal: control characters removed."""
    return "".join(c for c in text if c in "\n\t" or c.isprintable())


def _when(value: datetime | None, none: str = "never") -> str:
    return value.isoformat(timespec="seconds") if value else none
