"""`copydesk feeds add` and `copydesk feeds list`: the feeds a run polls, and their health."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table
from sqlmodel import select

from copydesk import context as cx
from copydesk.pipeline import add_feed, sync_config_feeds
from store.db import session_scope
from store.models import Feed

feeds_app = typer.Typer(help="Feeds polled by `copydesk run`.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(feeds_app, name="feeds")


@feeds_app.command("add")
def feeds_add(
    url: str = typer.Argument(..., help="feed URL (http/https) or local file path"),
    name: str = typer.Option(None, "--name", "-n", help="a short name for tables and filters"),
) -> None:
    """Add a feed to poll on every run."""
    ctx = cx.context()
    if "://" not in url:
        url = str(Path(url).resolve())
    with session_scope(ctx.engine) as session:
        feed = add_feed(session, url, name)
        cx.out.print(f"feed {feed.id}: {feed.name} <{feed.url}>", markup=False)


@feeds_app.command("list")
def feeds_list(as_json: bool = typer.Option(False, "--json")) -> None:
    """Every feed with its state: last success, last error, errors in a row."""
    ctx = cx.context()
    with session_scope(ctx.engine) as session:
        sync_config_feeds(session, ctx.settings.feeds)
        feeds = list(session.exec(select(Feed).order_by(Feed.id)))
    if as_json:
        rows = [f.model_dump(mode="json") for f in feeds]
        cx.out.print(json.dumps(rows, indent=2), markup=False)
        return
    table = Table()
    for column in ("id", "name", "url", "enabled", "from", "last success", "errors", "last error"):
        table.add_column(column)
    for f in feeds:
        table.add_row(
            str(f.id),
            f.name,
            f.url,
            "yes" if f.enabled else "no",
            f.origin,
            _when(f.last_success_at),
            str(f.consecutive_errors),
            f.last_error or "",
        )
    cx.out.print(table)


def _when(value: object) -> str:
    return value.isoformat(timespec="seconds") if value else "never"
