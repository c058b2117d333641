"""0011_minhash_own: a database made at the revision before it, holding signed drafts
whose signatures an earlier scheme made (as datasketch did), comes out with every
signature and band made again by store/duplicates.py, so drafts stored before the
upgrade group with each other and with drafts stored after it; items without a
signature keep none, and nothing else about the items changes."""

from __future__ import annotations

import hashlib
import struct
from typing import Any

from sqlalchemy import text
from sqlmodel import Session, select

from store import duplicates
from store.db import migrate
from store.models import DupBand, Item
from tests.dup_material import ARTICLES, add_draft
from tests.migration_helpers import at_previous_revision, insert_article

REVISION = "0011_minhash_own"

# (status, article, signed before the upgrade)
ROWS: list[tuple[str, str, bool]] = [
    ("draft", "library-a", True),
    ("draft", "library-b", True),
    ("draft", "depot-a", True),
    ("approved", "ferry-a", True),
    ("discarded", "strike-a", False),
]


def _earlier_scheme(item_id: int) -> tuple[int, ...]:
    """A signature as another scheme leaves it: 64 values that agree with nothing
    this revision computes (the way a datasketch 1.x signature and a 2.0 one of the
    same text agreed on none)."""
    raw = b"".join(
        hashlib.blake2b(f"earlier/{item_id}/{part}".encode()).digest() for part in range(4)
    )
    return struct.unpack("<64I", raw)


def _sign_the_old_way(conn: Any, item_id: int) -> None:
    values = _earlier_scheme(item_id)
    conn.execute(
        text("UPDATE items SET dup_signature = :raw WHERE id = :id"),
        {"raw": struct.pack("<64I", *values), "id": item_id},
    )
    for band, bucket in enumerate(duplicates.buckets(values)):
        conn.execute(
            text("INSERT INTO item_dup_bands (item_id, band, bucket) VALUES (:i, :band, :b)"),
            {"i": item_id, "band": band, "b": bucket},
        )


def _grouped(session: Session, item_id: int) -> list[int]:
    return [other for other, _ in duplicates.similar_drafts(session, [item_id]).get(item_id, [])]


def test_upgrade_signs_stored_items_again(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    ids: dict[str, int] = {}
    with engine.begin() as conn:
        for n, (status, key, signed) in enumerate(ROWS):
            url = f"https://harrowby.example.test/news/{key}"
            ids[key] = insert_article(conn, n, status, *ARTICLES[key], url)
            if signed:
                _sign_the_old_way(conn, ids[key])
    with Session(engine) as session:
        # Before: the two library stories, one event, do not group (the fault).
        assert _grouped(session, ids["library-a"]) == []
        # In SQL: the Item model carries later revisions' columns (0014's page_cut_at).
        rows = session.execute(text("SELECT id, status, version, headline FROM items"))
        before = {r.id: (r.status, r.version, r.headline) for r in rows}

    migrate(engine)

    with Session(engine) as session:
        items = {i.id: i for i in session.exec(select(Item))}
        assert {i.id: (i.status, i.version, i.headline) for i in items.values()} == before
        for _status, key, signed in ROWS:
            item = items[ids[key]]
            bands = session.exec(
                select(DupBand).where(DupBand.item_id == item.id).order_by(DupBand.band)
            ).all()
            if not signed:
                assert item.dup_signature is None and bands == []
                continue
            expected = duplicates.signature(*ARTICLES[key])
            assert expected is not None
            assert duplicates.from_bytes(item.dup_signature) == expected, key
            assert [b.bucket for b in bands] == duplicates.buckets(expected), key
        assert _grouped(session, ids["library-a"]) == [ids["library-b"]]
        assert _grouped(session, ids["depot-a"]) == []
    # A draft stored after the upgrade groups with one stored before it.
    with Session(engine) as session:
        late = add_draft(session, "library-u", *ARTICLES["library-u"])
        session.commit()
        assert ids["library-a"] in _grouped(session, late)
    engine.dispose()
