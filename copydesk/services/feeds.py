"""Feeds added from the command line, changed from it: find by name or URL, rename,
disable, enable, remove. Feeds declared in config.toml are changed there (every
run writes them back from the file), so these refuse them, saying so. Every
change is an audit event with no item (`record`), in the same hash chain."""

from __future__ import annotations

import getpass
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, col, select

from ingest.settings import FeedSettings
from store import audit_chain
from store.models import AuditEvent, Feed, Item
from store.upsert import dialect_insert

FEED_EVENT = "feed "  # to_status of a feed's event: "feed added", "feed renamed", ...
CONFIG_ACTOR = "config"  # the run's sync of config.toml's feeds


def cli_actor() -> str:
    """Who changed a feed from the command line: the system user, when known."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no name for this uid (a container)
        return "cli"


def record(
    session: Session, feed: Feed, change: str, actor: str, before: dict[str, Any] | None = None
) -> AuditEvent:
    """A feed's change as an audit event: no item (migration 0024), `to_status`
    "feed <change>", the feed as it is after it in `details` (and what changed,
    as it was, under "before"). The caller commits."""
    session.flush()  # a new feed's id
    details: dict[str, Any] = {
        "feed_id": feed.id,
        "url": feed.url,
        "name": feed.name,
        "enabled": feed.enabled,
        "origin": feed.origin,
    }
    if before:
        details["before"] = before
    event = AuditEvent(item_id=None, actor=actor, to_status=FEED_EVENT + change, details=details)
    return audit_chain.append(session, event)


class FeedChangeError(Exception):
    """The change cannot be made; the message says why and what to do instead."""


def find_feed(session: Session, name_or_url: str) -> Feed:
    """The feed with this name or URL; FeedChangeError when none, or when a name is
    shared by several (give the URL then)."""
    by_url = session.exec(select(Feed).where(col(Feed.url) == name_or_url)).first()
    if by_url is not None:
        return by_url
    named = list(session.exec(select(Feed).where(col(Feed.name) == name_or_url)))
    if not named:
        raise FeedChangeError(f"no feed named {name_or_url} (see copydesk feeds list)")
    if len(named) > 1:
        urls = ", ".join(f.url for f in named)
        raise FeedChangeError(f"{len(named)} feeds are named {name_or_url}: give the URL ({urls})")
    return named[0]


def changeable(session: Session, name_or_url: str, verb: str) -> Feed:
    feed = find_feed(session, name_or_url)
    if feed.origin == "config":
        raise FeedChangeError(
            f"feed {feed.name} is declared in config.toml: {verb} it there "
            "(every run writes the file's feeds back)"
        )
    return feed


def rename_feed(session: Session, name_or_url: str, new_name: str) -> Feed:
    new_name = new_name.strip()
    if not new_name:
        raise FeedChangeError("a feed's name cannot be empty")
    feed = changeable(session, name_or_url, "rename")
    taken = session.exec(
        select(Feed).where(col(Feed.name) == new_name, col(Feed.id) != feed.id)
    ).first()
    if taken is not None:
        raise FeedChangeError(f"another feed is named {new_name} already <{taken.url}>")
    before = feed.name
    feed.name = new_name
    session.add(feed)
    if before != new_name:
        record(session, feed, "renamed", cli_actor(), {"name": before})
    return feed


def set_enabled(session: Session, name_or_url: str, enabled: bool) -> Feed:
    feed = changeable(session, name_or_url, "enable" if enabled else "disable")
    before = feed.enabled
    feed.enabled = enabled
    session.add(feed)
    if before != enabled:
        record(session, feed, "enabled" if enabled else "disabled", cli_actor())
    return feed


def remove_feed(session: Session, name_or_url: str) -> Feed:
    """Delete a feed that no item came from. One with items keeps its row (the
    items' history names it): disable it instead."""
    feed = changeable(session, name_or_url, "remove")
    items = session.exec(select(func.count()).where(col(Item.feed_id) == feed.id)).one()
    if items:
        raise FeedChangeError(
            f"feed {feed.name} has {items} item(s) whose history names it: stop polling it "
            f"with copydesk feeds disable {feed.name}"
        )
    record(session, feed, "removed", cli_actor())
    session.delete(feed)
    return feed


def sync_config_feeds(session: Session, feeds: list[FeedSettings]) -> None:
    """Feeds declared in config.toml are upserted into the feeds table on every run.
    An INSERT ... ON CONFLICT DO NOTHING: runs starting at once on a fresh database
    all declare the same feeds, and only one row each may come of it. What the sync
    adds or changes is an audit event by "config"."""
    if not feeds:
        return
    dialect = session.get_bind().dialect.name
    insert = dialect_insert(dialect)
    added: set[str] = set()
    for declared in feeds:
        row = {
            "url": declared.url,
            "name": declared.name or declared.url,
            "enabled": declared.enabled,
            "origin": "config",
        }
        defaults = Feed(**row)  # the model's defaults for every other column
        values = {c: getattr(defaults, c) for c in Feed.__table__.c.keys() if c != "id"}
        statement = insert(Feed.__table__).values(**values)
        inserted = session.execute(
            statement.on_conflict_do_nothing(index_elements=["url"]).returning(Feed.__table__.c.id)
        ).first()
        if inserted is not None:  # this run made the row (RETURNING gives no row otherwise)
            added.add(declared.url)
    for declared in feeds:
        row = session.exec(select(Feed).where(Feed.url == declared.url)).one()
        if declared.url in added:
            record(session, row, "added", CONFIG_ACTOR)
            continue
        # Written only when it changes: a row being polled stays unlocked.
        if row.enabled != declared.enabled:
            row.enabled = declared.enabled
            change = "enabled" if declared.enabled else "disabled"
            record(session, row, change, CONFIG_ACTOR)
        if declared.name and row.name != declared.name:
            before = row.name
            row.name = declared.name
            record(session, row, "renamed", CONFIG_ACTOR, {"name": before})
    session.flush()


def add_feed(session: Session, url: str, name: str | None = None) -> Feed:
    existing = session.exec(select(Feed).where(col(Feed.url) == url)).first()
    if existing is not None:
        return existing
    feed = Feed(url=url, name=name or url, origin="cli")
    session.add(feed)
    record(session, feed, "added", cli_actor())
    return feed
