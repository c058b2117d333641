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

from sqlalchemy import Connection, bindparam, literal, select, union_all
from sqlmodel import Session

from ingest.dedup import item_keys
from store import locks
from store import status as st
from store.models import Item

_KEY, _TEXT = "key", "text"  # which look-up found an item (find_duplicates)
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
    locks.hold_all(session, names)


# Discards that say nothing about the story's content: such an item carries no
# story, so it never makes another copy a duplicate (issue 19).
NOT_CONTENT = ("model", "fetch", "internal", "refused", "robots", "other")


def find_duplicate(
    session: Session | Connection, item_id: int, aliases: list[str], fingerprint: str | None
) -> tuple[int, str] | None:
    """The item this one duplicates, with why: an EARLIER item whose URL is one of
    this page's other URLs (earlier only, so two pages that name each other as
    canonical cannot discard each other), else another item with the same text
    that is live or was discarded for its content (see NOT_CONTENT)."""
    return find_duplicates(session, [(item_id, aliases, fingerprint)]).get(item_id)


# Built once (issue 24): building a SELECT cost the writer more CPU than running it.
# Both look-ups in one statement (issue 24, session 10: a round trip an item less for
# the source stage, a batch less for the writer); `kind` says which matched. Each
# value keeps its own column: a UNION's columns take the types of its first SELECT's,
# and content_hash is stored in binary (its type reads it back as hex).
_items = Item.__table__
_NO_KEY = literal(None, type_=_items.c.dedup_key.type)
_NO_HASH = literal(None, type_=_items.c.content_hash.type)
_BY_KEY = select(
    literal(_KEY).label("kind"), _items.c.dedup_key, _NO_HASH.label("hash"), _items.c.id
).where(_items.c.dedup_key.in_(bindparam("keys", expanding=True)))
_BY_TEXT = (
    select(literal(_TEXT), _NO_KEY, _items.c.content_hash, _items.c.id)
    .where(_items.c.content_hash.in_(bindparam("hashes", expanding=True)))
    .where(
        (_items.c.status != st.DISCARDED)
        | _items.c.discard_kind.is_(None)
        | _items.c.discard_kind.not_in(NOT_CONTENT)
    )
)
_BY_EITHER = union_all(_BY_KEY, _BY_TEXT).order_by("id")


def find_duplicates(
    session: Session | Connection, wanted: Iterable[tuple[int, list[str], str | None]]
) -> dict[int, tuple[int, str]]:
    """`find_duplicate` for many items at once, (item id, its other URLs, its text
    hash) each: at most two queries however many there are (the writer asks for
    a whole batch). Items of the batch do not see each other: their text hashes
    are written after every look-up, as one item at a time did."""
    wanted = list(wanted)
    keys = {
        item_id: [(alias, item_keys(None, None, alias)[1]) for alias in aliases]
        for item_id, aliases, _ in wanted
    }
    all_keys = sorted({key for pairs in keys.values() for _, key in pairs})
    hashes = sorted({fingerprint for _, _, fingerprint in wanted if fingerprint})
    by_key: dict[str, int] = {}  # dedup_key is unique: one item a key
    by_text: dict[str, list[int]] = {}
    if all_keys or hashes:
        rows = session.execute(_BY_EITHER, {"keys": all_keys, "hashes": hashes}).all()
        for kind, key, fingerprint, found in rows:  # in id order
            if kind == _KEY:
                by_key[key] = found
            else:
                by_text.setdefault(fingerprint, []).append(found)
    out: dict[int, tuple[int, str]] = {}
    for item_id, _, fingerprint in wanted:
        for alias, key in keys[item_id]:
            found = by_key.get(key)
            if found is not None and found < item_id:
                out[item_id] = (found, f"same canonical URL {alias}")
                break
        else:
            same = [found for found in by_text.get(fingerprint or "", ()) if found != item_id]
            if same:
                out[item_id] = (same[0], "same text")
    return out
