"""Whether an item's story is already in the store: asked read-only by the source
stage (so no model call is spent on a known story) and again by the writer,
inside the transaction that writes the item (the database has the last word).

The writer's look-up and the write of the item's text hash are one atomic step
across workers and machines (issue 26): `hold_stories` is taken first in the
writing transaction, before anything is read, and held until it commits. Without
it, two workers holding one story at once (two links, one text) each looked,
found nothing the other had committed yet, and both became drafts (PostgreSQL's
READ COMMITTED sees only committed rows; on SQLite the look-up ran outside the
write transaction). With it the second waits, then looks once the first has
committed, and finds it: tests/test_duplicate_race.py forces that interleaving.
One lock a story (its text hash), not one for every story: a single lock made
every worker's writer queue behind every other's (issue 24: with 3 workers on
PostgreSQL, 223 ms an article waiting for it, 0.92x one worker's rate). Only two
copies of one text can race in this look-up (the URL look-up reads earlier items,
committed at intake), so a lock per text hash is enough. A batch takes its
stories' locks at once, in sorted order, so two batches never take two locks in
opposite orders (a deadlock). On SQLite every name is the one write lock.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlmodel import Session, select

from ingest.dedup import item_keys
from store import locks
from store import status as st
from store.models import Item

STORIES = "stories"  # lock names start so (store/locks.py): PostgreSQL advisory, SQLite write lock


def story_lock(fingerprint: str) -> str:
    """The lock name of one story (its text hash)."""
    return f"{STORIES}:{fingerprint}"


def hold_stories(session: Session, fingerprints: Iterable[str]) -> None:
    """Serialise the rest of the transaction with every other writer's duplicate
    look-up and commit of the same stories. First in the transaction: on SQLite
    it is the write lock, which a transaction that has read already cannot take
    for its reads. Sorted, so that two batches wait in one order, never crosswise."""
    names = sorted({story_lock(f) for f in fingerprints if f})
    if not names:  # an item found by its URL only: still the write lock on SQLite
        locks.write_transaction(session)
    for name in names:
        locks.hold(session, name)


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
