"""Feeds added from the command line, changed from it: find by name or URL, rename,
disable, enable, remove. Feeds declared in config.toml are changed there (every
run writes them back from the file), so these refuse them, saying so. Every
change is an audit event with no item (`record`), in the same hash chain."""

from __future__ import annotations

import getpass
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, col, select

from store import audit_chain
from store.models import AuditEvent, Feed, Item

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
