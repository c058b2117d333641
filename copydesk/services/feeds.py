"""Feeds added from the command line, changed from it: find by name or URL, rename,
disable, enable, remove. Feeds declared in config.toml are changed there (every
run writes them back from the file), so these refuse them, saying so."""

from __future__ import annotations

from sqlalchemy import func
from sqlmodel import Session, col, select

from store.models import Feed, Item


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
    feed.name = new_name
    session.add(feed)
    return feed


def set_enabled(session: Session, name_or_url: str, enabled: bool) -> Feed:
    feed = changeable(session, name_or_url, "enable" if enabled else "disable")
    feed.enabled = enabled
    session.add(feed)
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
    session.delete(feed)
    return feed
