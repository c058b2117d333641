"""0021_bands_without_rowid: a database made at the revision before it, holding signed
drafts and their band buckets, comes out with the same bands in a table keyed by
(item, band) alone (SQLite: WITHOUT ROWID, so the key is the table and the second
copy of it, its automatic index, is gone), the drafts still group by their shared
buckets, the key still refuses a second row for one band, and a draft stored after
the upgrade groups with one stored before it; on SQLite and PostgreSQL.
Downgrading gives the rowid table back with the same rows."""

from __future__ import annotations

from alembic import command
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from store import duplicates
from store.db import alembic_config
from tests.dup_material import ARTICLES, committed_draft
from tests.migration_helpers import at_previous_revision, insert_article, sqlite_table_schema

REVISION = "0021_bands_without_rowid"
KEYS = ("library-a", "library-b", "depot-a")


def _bands(engine) -> list[tuple[int, int, int]]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT item_id, band, bucket FROM item_dup_bands"))
        return sorted((r.item_id, r.band, r.bucket) for r in rows)


def _grouped(engine, item_id: int) -> list[int]:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        found = duplicates.similar_drafts(session, [item_id]).get(item_id, [])
        return [other for other, _ in found]


def test_upgrade_keeps_every_band_keyed_by_item_and_band(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    ids: dict[str, int] = {}
    with engine.begin() as conn:
        for n, key in enumerate(KEYS):
            url = f"https://harrowby.example.test/news/{key}"
            ids[key] = insert_article(conn, n, "draft", *ARTICLES[key], url)
            duplicates.write_signature(conn, ids[key], *ARTICLES[key])
    before = _bands(engine)
    assert len(before) == len(KEYS) * duplicates.BANDS

    # Up to this revision only: 0027 keys the bands by (band, bucket, item) instead.
    command.upgrade(alembic_config(engine), REVISION)

    assert _bands(engine) == before
    sqlite = engine.dialect.name == "sqlite"
    if sqlite:
        sql, indexes = sqlite_table_schema(engine, "item_dup_bands")
        assert "WITHOUT ROWID" in sql.upper()
        assert indexes == ["ix_item_dup_bands_bucket"]  # no automatic copy of the key
    assert _grouped(engine, ids["library-a"]) == [ids["library-b"]]
    assert _grouped(engine, ids["depot-a"]) == []
    # The key still refuses a second row for one item's band.
    item_id, band, bucket = before[0]
    try:
        with engine.begin() as conn:
            conn.execute(
                text("INSERT INTO item_dup_bands (item_id, band, bucket) VALUES (:i, :b, :k)"),
                {"i": item_id, "b": band, "k": bucket + 1},
            )
    except IntegrityError:
        pass
    else:
        raise AssertionError("a second row for one band was accepted")
    # A draft stored after the upgrade groups with one stored before it, and
    # signing an item again replaces its bands.
    late = committed_draft(engine, "library-u")
    assert ids["library-a"] in _grouped(engine, late)
    with engine.begin() as conn:
        duplicates.write_signature(conn, ids["depot-a"], *ARTICLES["depot-a"])
    assert len(_bands(engine)) == (len(KEYS) + 1) * duplicates.BANDS

    after = _bands(engine)
    command.downgrade(alembic_config(engine), "0020_review_sessions")
    assert _bands(engine) == after
    if sqlite:
        sql, indexes = sqlite_table_schema(engine, "item_dup_bands")
        assert "WITHOUT ROWID" not in sql.upper()
        assert indexes == ["ix_item_dup_bands_bucket", "sqlite_autoindex_item_dup_bands_1"]
    engine.dispose()
