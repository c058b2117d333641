"""0032_fewer_index_pages: a database made at the revision before it comes out without
`ix_items_status` (the story-order index, which starts with the status, answers every
query by status: issue 19 §4 asks for no index no query plan needs) and, on SQLite,
with a search index that keeps no per-row column sizes (FTS5 `columnsize=0`: they
serve only ranking, which search never asks for). Queries by status still search an
index, search finds what it found. Downgrade gives both back. Both backends."""

from __future__ import annotations

from alembic import command
from sqlalchemy import inspect, text
from sqlmodel import Session, select

from store.db import alembic_config, migrate
from store.models import Item
from store.search import search_clause
from tests.migration_helpers import at_previous_revision, insert_article

REVISION = "0032_fewer_index_pages"
ARTICLES = (
    (
        "draft",
        "Marrow Bay lifeboat",
        "The Marrow Bay lifeboat was launched 41 times in 2026, "
        "coxswain Idris Penhale said on Sunday.",
        "https://marrow.example.test/lifeboat",
    ),
    (
        "new",
        "Esk Holme quay",
        "Repairs to the Esk Holme quay will cost 88,000 pounds, the harbour board said.",
        "https://esk.example.test/quay",
    ),
)


def _found(engine, typed: str) -> set[int]:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        return set(session.exec(select(Item.id).where(search_clause(typed))).all())  # type: ignore[arg-type]


def _indexes(engine) -> set[str]:  # type: ignore[no-untyped-def]
    return {i["name"] for i in inspect(engine).get_indexes("items") if i["name"]}


def _plan(engine) -> str:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        rows = conn.execute(text("EXPLAIN QUERY PLAN SELECT id FROM items WHERE status = 'draft'"))
        return " ".join(str(r[-1]) for r in rows)


def test_upgrade_drops_the_pages_no_query_needs(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        ids = [insert_article(conn, n, *a) for n, a in enumerate(ARTICLES, 1)]
    assert "ix_items_status" in _indexes(engine)

    migrate(engine)

    sqlite = engine.dialect.name == "sqlite"
    assert "ix_items_status" not in _indexes(engine)
    if sqlite:
        assert "INDEX ix_items_story_order (status=?)" in _plan(engine), _plan(engine)
        with engine.connect() as conn:
            sql = conn.execute(
                text("SELECT sql FROM sqlite_master WHERE name = 'items_fts'")
            ).scalar()
            tables = set(conn.execute(text("SELECT name FROM sqlite_master")).scalars())
        assert "columnsize=0" in sql.replace(" ", "") and "items_fts_docsize" not in tables
    assert _found(engine, '"Idris Penhale"') == {ids[0]}
    assert _found(engine, "quay 88,000") == {ids[1]}
    with engine.begin() as conn:  # an edit still re-indexes
        conn.execute(
            text("UPDATE items SET summary = 'Coxswain Wenna Trask retires.' WHERE id = :i"),
            {"i": ids[0]},
        )
    assert _found(engine, "Trask") == {ids[0]}

    command.downgrade(alembic_config(engine), "0031_audit_hashes_as_bytes")
    assert "ix_items_status" in _indexes(engine)
    if sqlite:
        with engine.connect() as conn:
            tables = set(conn.execute(text("SELECT name FROM sqlite_master")).scalars())
        assert "items_fts_docsize" in tables
    assert _found(engine, "Trask") == {ids[0]}
    engine.dispose()
