"""`copydesk feeds add`, `list`, `rename`, `disable`, `enable`, `remove`: the feeds a run
polls, and their health."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import typer

from copydesk.cli import context as cx

if TYPE_CHECKING:
    from rich.table import Table
    from sqlmodel import Session

    from ingest.health import FeedHealth
    from store.models import Feed


feeds_app = typer.Typer(help="Feeds polled by `copydesk run`.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(feeds_app, name="feeds")


@feeds_app.command("add")
def feeds_add(
    cli: typer.Context,
    url: str = typer.Argument(..., help="feed URL (http/https) or local file path"),
    name: str = typer.Option(None, "--name", "-n", help="a short name for tables and filters"),
    as_json: bool = typer.Option(False, "--json", help="print the feed as JSON"),
) -> None:
    """Add a feed to poll on every run. A URL already known is left as it is, and
    said so (rename a feed with `copydesk feeds rename`)."""
    from sqlmodel import col, select

    from copydesk.services.feeds import add_feed
    from store.db import session_scope
    from store.models import Feed

    url = _feed_location(url)
    ctx = cx.context(cli)
    with session_scope(ctx.engine) as session:
        known = session.exec(select(Feed).where(col(Feed.url) == url)).first()
        feed = known or add_feed(session, url, name)
        document = _feed_dict(feed) | {"added": known is None}
    if as_json:
        cx.emit_json(document)
    elif known is None:
        cx.out.print(f"feed {feed.id}: {feed.name} <{feed.url}>", markup=False)
    else:
        cx.out.print(
            f"feed {feed.id}: {feed.name} <{feed.url}> is known already; nothing changed"
            + (f" (to rename it: copydesk feeds rename {feed.id} NAME)" if name else ""),
            markup=False,
        )


def _feed_dict(feed: Feed) -> dict[str, Any]:
    return {
        "id": feed.id,
        "name": feed.name,
        "url": feed.url,
        "enabled": feed.enabled,
        "origin": feed.origin,
    }


def _change(
    cli: typer.Context,
    feed_ref: str,
    change: Callable[[Session], Feed],
    said: str,
    as_json: bool,
) -> None:
    """Apply one change to one feed; exit 1 with the reason when it cannot be made."""
    from copydesk.services.feeds import FeedChangeError
    from store.db import session_scope

    ctx = cx.context(cli)
    declared = {f.name for f in ctx.settings.feeds} | {f.url for f in ctx.settings.feeds}
    if feed_ref in declared:
        cx.fail(f"feed {feed_ref} is declared in config.toml: change it there", cx.EXIT_FAILED)
    try:
        with session_scope(ctx.engine) as session:
            feed = change(session)
            document = _feed_dict(feed)
    except FeedChangeError as exc:
        cx.fail(str(exc), cx.EXIT_FAILED)
    if as_json:
        cx.emit_json(document | {"done": said})
    else:
        cx.out.print(
            f"feed {document['id']}: {document['name']} <{document['url']}> {said}", markup=False
        )


FEED = typer.Argument(..., help="the feed's name, id or URL")
JSON = typer.Option(False, "--json", help="print the feed as JSON")


@feeds_app.command("rename")
def feeds_rename(
    cli: typer.Context,
    feed: str = FEED,
    new_name: str = typer.Argument(..., help="its new name"),
    as_json: bool = JSON,
) -> None:
    """Give a feed added here another name (a feed of config.toml is renamed there)."""
    from copydesk.services.feeds import rename_feed

    _change(cli, feed, lambda s: rename_feed(s, _ref(s, feed), new_name), "renamed", as_json)


@feeds_app.command("disable")
def feeds_disable(cli: typer.Context, feed: str = FEED, as_json: bool = JSON) -> None:
    """Stop polling a feed; its items and history stay."""
    from copydesk.services.feeds import set_enabled

    _change(cli, feed, lambda s: set_enabled(s, _ref(s, feed), False), "disabled", as_json)


@feeds_app.command("enable")
def feeds_enable(cli: typer.Context, feed: str = FEED, as_json: bool = JSON) -> None:
    """Poll a disabled feed again, from the next run."""
    from copydesk.services.feeds import set_enabled

    _change(cli, feed, lambda s: set_enabled(s, _ref(s, feed), True), "enabled", as_json)


@feeds_app.command("remove")
def feeds_remove(cli: typer.Context, feed: str = FEED, as_json: bool = JSON) -> None:
    """Delete a feed no item came from (one with items: disable it instead)."""
    from copydesk.services.feeds import remove_feed

    _change(cli, feed, lambda s: remove_feed(s, _ref(s, feed)), "removed", as_json)


def _ref(session: Session, feed: str) -> str:
    """A feed given by id becomes its URL; a name or URL stays as it is."""
    from store.models import Feed

    if feed.isdigit():
        found = session.get(Feed, int(feed))
        if found is not None:
            return found.url
    return feed


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
        help=(
            "exit 1 when a feed is failing, stale, cut by max_feed_bytes, or has pages cut "
            "by max_page_bytes (for monitoring)"
        ),
    ),
) -> None:
    """Every feed with its state: ok, retrying, FAILING (erroring for longer than
    ingest.feed_stale_hours), STALE (silent for much longer than it usually is),
    with its last success, errors in a row, next fetch and last error."""
    from sqlmodel import select

    from copydesk.services.feeds import sync_config_feeds
    from store.db import session_scope
    from store.models import Feed, utcnow

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
        cx.emit_json(rows)
    else:
        cx.out.print(_table(feeds, health))
        attention = [f for f in feeds if health[f.id].needs_attention]
        if attention:
            names = ", ".join(f.name for f in attention)
            cx.out.print(f"needs a person: {names}", markup=False)
    if check and any(h.needs_attention for h in health.values()):
        raise typer.Exit(cx.EXIT_FAILED)


def _health(session: Session, feed: Feed, failing_after: timedelta, now: datetime) -> FeedHealth:
    from sqlmodel import col, select

    from ingest.health import HISTORY, FeedHealth, feed_health
    from store.models import Item

    rows = session.exec(
        select(Item.published_at, Item.seen_at, Item.page_cut_at)
        .where(Item.feed_id == feed.id)
        .order_by(col(Item.id).desc())
        .limit(HISTORY)
    ).all()
    times = [published or seen for published, seen, _ in rows]
    if feed.origin == "sample":  # the demo's bundled feed (cli/run.py SAMPLE_ORIGIN)
        return FeedHealth("sample", False, "the bundled sample: a fixed snapshot, never stale")
    if feed.enabled and feed.truncated:
        return FeedHealth(
            "cut",
            True,
            f"last poll cut off at max_feed_bytes after {feed.entries_read} entries: "
            "later entries were not read (raise [ingest] max_feed_bytes)",
        )
    health = feed_health(
        enabled=feed.enabled,
        created_at=feed.created_at,
        last_fetched_at=feed.last_fetched_at,
        last_success_at=feed.last_success_at,
        consecutive_errors=feed.consecutive_errors,
        entry_times=times,
        failing_after=failing_after,
        now=now,
    )
    cut = [cut_at for _, _, cut_at in rows if cut_at is not None]
    if feed.enabled and cut and not health.needs_attention:
        # A page cut by max_page_bytes among the feed's latest items (issue 26): its
        # draft tells the story only up to the cut. Clears as later pages fit.
        return FeedHealth(
            "pages cut",
            True,
            f"{len(cut)} of its last {len(rows)} pages cut off at max_page_bytes "
            f"({max(cut):,} bytes kept): raise [ingest] max_page_bytes",
            health.usual_interval,
        )
    return health


def _table(feeds: list[Feed], health: dict[Any, FeedHealth]) -> Table:
    """Feed names, errors and bozo messages come from config and from servers:
    cells are plain Text, never markup."""
    from rich.table import Table
    from rich.text import Text

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
