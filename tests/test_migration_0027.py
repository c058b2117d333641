"""0027_bands_keyed_by_bucket: a database made at the revision before it, holding
signed drafts and their band buckets, comes out with the same bands in a table keyed
by (band, bucket, item) and no second index (SQLite: WITHOUT ROWID, so the bands are
stored once, not once in the table and again in the bucket index); the drafts still
group as before, a draft stored after the upgrade groups with one stored before it,
and signing an item again replaces its bands; on SQLite and PostgreSQL. Downgrading
gives the (item, band) key and the bucket index back, with the same rows."""

from __future__ import annotations

from alembic import command
from sqlalchemy import event, text
from sqlmodel import Session

from store import duplicates
from store.db import alembic_config, make_engine, migrate
from tests.dup_material import ARTICLES, committed_draft
from tests.migration_helpers import sqlite_table_schema

PREVIOUS = "0026_source_text_packed"  # the revision 0027_bands_keyed_by_bucket follows


def _bands(engine) -> set[tuple[int, int, int]]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return set(conn.execute(text("SELECT item_id, band, bucket FROM item_dup_bands")).all())


def _grouped(engine, item_id: int) -> list[int]:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        return [o for o, _ in duplicates.similar_drafts(session, [item_id]).get(item_id, [])]


def _key_and_indexes(engine) -> tuple[list[str], list[str]]:  # type: ignore[no-untyped-def]
    """The table's primary key columns, in order, and its other indexes' names."""
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            _, indexes = sqlite_table_schema(engine, "item_dup_bands")
            info = conn.execute(text("PRAGMA table_info(item_dup_bands)")).all()
            key = [row[1] for row in sorted(info, key=lambda r: r[5]) if row[5]]
            return key, [i for i in indexes if not i.startswith("sqlite_autoindex")]
        key = conn.execute(
            text(
                "SELECT a.attname FROM pg_index i JOIN LATERAL unnest(i.indkey) "
                "WITH ORDINALITY AS k(attnum, n) ON true JOIN pg_attribute a "
                "ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
                "WHERE i.indrelid = 'item_dup_bands'::regclass AND i.indisprimary ORDER BY k.n"
            )
        ).scalars()
        others = conn.execute(
            text(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'item_dup_bands' "
                "AND indexname <> 'item_dup_bands_pkey' ORDER BY 1"
            )
        ).scalars()
        return list(key), list(others)


def test_upgrade_keys_the_bands_by_bucket_and_drops_the_second_index(db_url: str) -> None:
    engine = make_engine(db_url)
    command.upgrade(alembic_config(engine), PREVIOUS)
    ids = {key: committed_draft(engine, key) for key in ("library-a", "library-b", "depot-a")}
    before = _bands(engine)
    assert len(before) == 3 * duplicates.BANDS
    assert _key_and_indexes(engine) == (["item_id", "band"], ["ix_item_dup_bands_bucket"])
    assert _grouped(engine, ids["library-a"]) == [ids["library-b"]]

    migrate(engine)

    assert _key_and_indexes(engine) == (["band", "bucket", "item_id"], [])
    assert _bands(engine) == before
    assert _grouped(engine, ids["library-a"]) == [ids["library-b"]]
    assert _grouped(engine, ids["depot-a"]) == []
    late = committed_draft(engine, "library-u")
    assert ids["library-a"] in _grouped(engine, late)
    assert late in _grouped(engine, ids["library-a"])
    with engine.begin() as conn:  # signed again from another text: its bands replaced
        duplicates.write_signature(conn, late, *ARTICLES["depot-a"])
    depot = duplicates.signature(*ARTICLES["depot-a"])
    assert depot is not None
    assert {(b, k) for i, b, k in _bands(engine) if i == late} == set(
        enumerate(duplicates.buckets(depot))
    )
    assert late not in _grouped(engine, ids["library-a"])  # its old bands are gone
    after = _bands(engine)

    command.downgrade(alembic_config(engine), PREVIOUS)
    assert _key_and_indexes(engine) == (["item_id", "band"], ["ix_item_dup_bands_bucket"])
    assert _bands(engine) == after
    engine.dispose()


def test_the_look_up_searches_the_key_and_walks_no_table(sqlite_url: str, migrated: None) -> None:
    # A look-up that walked the bands would still find the same drafts, only slower
    # as the desk grows: the statement's plan, not a timing, says which it does.
    engine = make_engine(sqlite_url)
    ids = [committed_draft(engine, key) for key in ("library-a", "library-b", "library-u")]
    statements: list[tuple[str, object]] = []

    @event.listens_for(engine, "before_cursor_execute")
    def _keep(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        if "item_dup_bands" in statement:
            statements.append((statement, parameters))

    assert set(_grouped(engine, ids[0])) == {ids[1], ids[2]}
    event.remove(engine, "before_cursor_execute", _keep)
    assert statements
    with engine.connect() as conn:
        for statement, parameters in statements:
            plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).all()
            steps = [row[-1] for row in plan]
            assert any("item_dup_bands USING PRIMARY KEY" in s for s in steps), steps
            assert not any(s.startswith("SCAN item_dup_bands") for s in steps), steps
    engine.dispose()
