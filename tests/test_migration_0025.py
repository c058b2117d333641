"""0025_bands_32bit: a database made at the revision before it, holding signed drafts
whose band buckets are signed 64-bit hashes, comes out with every bucket made again
as a signed 32-bit hash of the same band (SQLite stores it in 4 bytes, not 8, in the
table and in its index), the drafts still group as before, a draft stored after the
upgrade groups with one stored before it, and an item without a signature has no
bands; on SQLite and PostgreSQL. Downgrading gives the 64-bit buckets back."""

from __future__ import annotations

import hashlib

from alembic import command
from sqlalchemy import text
from sqlmodel import Session

from store import duplicates
from store.db import alembic_config, migrate
from tests.dup_material import ARTICLES, committed_draft
from tests.migration_helpers import at_previous_revision, insert_article

REVISION = "0025_bands_32bit"
KEYS = ("library-a", "library-b", "depot-a")


def _buckets_64(values: tuple[int, ...]) -> list[int]:
    """The buckets as the revisions before this one made them (BLAKE2b, 8 bytes)."""
    raw = duplicates.to_bytes(values)
    width = duplicates.ROWS * 4
    return [
        int.from_bytes(
            hashlib.blake2b(
                band.to_bytes(2, "little") + raw[band * width : (band + 1) * width],
                digest_size=8,
            ).digest(),
            "little",
            signed=True,
        )
        for band in range(duplicates.BANDS)
    ]


def _bands(engine) -> dict[int, list[int]]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT item_id, bucket FROM item_dup_bands ORDER BY item_id, band")
        ).all()
    out: dict[int, list[int]] = {}
    for item_id, bucket in rows:
        out.setdefault(item_id, []).append(bucket)
    return out


def _grouped(engine, item_id: int) -> list[int]:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        return [o for o, _ in duplicates.similar_drafts(session, [item_id]).get(item_id, [])]


def test_upgrade_makes_every_bucket_again_in_32_bits(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    ids: dict[str, int] = {}
    signatures = {}
    with engine.begin() as conn:
        for n, key in enumerate(KEYS):
            url = f"https://harrowby.example.test/news/{key}"
            ids[key] = insert_article(conn, n, "draft", *ARTICLES[key], url)
            values = duplicates.signature(*ARTICLES[key])
            assert values is not None
            signatures[ids[key]] = values
            conn.execute(
                text("UPDATE items SET dup_signature = :raw WHERE id = :id"),
                {"raw": duplicates.to_bytes(values), "id": ids[key]},
            )
            for band, bucket in enumerate(_buckets_64(values)):
                conn.execute(
                    text("INSERT INTO item_dup_bands (item_id, band, bucket) VALUES (:i, :b, :k)"),
                    {"i": ids[key], "b": band, "k": bucket},
                )
        unsigned = insert_article(
            conn, 9, "draft", "Short", "Too short to sign.", "https://h.test/s"
        )
    # (No look-up before the upgrade: since 0027 the look-up computes an item's own
    # buckets from its signature, with this scheme, so 64-bit rows match nothing.)

    migrate(engine)

    stored = _bands(engine)
    assert set(stored) == set(signatures) and unsigned not in stored
    for item_id, values in signatures.items():
        assert stored[item_id] == duplicates.buckets(values)
        assert all(-(2**31) <= b < 2**31 for b in stored[item_id])
    assert _grouped(engine, ids["library-a"]) == [ids["library-b"]]
    assert _grouped(engine, ids["depot-a"]) == []
    late = committed_draft(engine, "library-u")
    assert ids["library-a"] in _grouped(engine, late)
    late_values = duplicates.signature(*ARTICLES["library-u"])
    assert late_values is not None
    signatures[late] = late_values

    command.downgrade(alembic_config(engine), "0024_feed_audit_events")
    assert _bands(engine) == {i: _buckets_64(v) for i, v in signatures.items()}
    engine.dispose()
