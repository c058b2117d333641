"""Whether an item's story is already in the store: asked read-only by the source
stage (so no model call is spent on a known story) and again by the writer,
inside the transaction that writes the item (the database has the last word)."""

from __future__ import annotations

from sqlmodel import Session, select

from ingest.dedup import item_keys
from store import status as st
from store.models import Item

# Discards that say nothing about the story's content: such an item carries no
# story, so it never makes another copy a duplicate (issue 19).
NOT_CONTENT = ("model", "fetch", "internal", "refused", "robots", "other")


def find_duplicate(
    session: Session, item_id: int, aliases: list[str], fingerprint: str | None
) -> tuple[int, str] | None:
    """The item this one duplicates, with why: an EARLIER item whose URL is one of
    this page's other URLs (earlier only, so two pages that name each other as
    canonical cannot discard each other), else another item with the same text
    that is live or was discarded for its content (see NOT_CONTENT)."""
    for alias in aliases:
        _, key = item_keys(None, None, alias)  # the unique, indexed key that URL would have
        found = session.exec(
            select(Item.id).where(Item.dedup_key == key, Item.id < item_id).limit(1)
        ).first()
        if found is not None:
            return found, f"same canonical URL {alias}"
    if fingerprint:
        found = session.exec(
            select(Item.id)
            .where(Item.content_hash == fingerprint, Item.id != item_id)
            .where(
                (Item.status != st.DISCARDED)
                | Item.discard_kind.is_(None)
                | Item.discard_kind.not_in(NOT_CONTENT)
            )
            .order_by(Item.id)
            .limit(1)
        ).first()
        if found is not None:
            return found, "same text"
    return None
