"""0008_search: a database made at the revision before it, with items in it, comes
out searchable (source text, URL, item number) on both backends, with the
near-duplicate signatures of its drafts filled in, and nobody assigned."""

from __future__ import annotations

from typing import Any

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlmodel import Session, select

from review_ui.desk.queries import (
    DiscardFilter,
    QueueFilter,
    decided_page,
    discard_page,
    queue_page,
)
from store import duplicates
from store.db import alembic_config, make_engine, migrate
from store.models import Item
from tests.dup_material import ARTICLES

REVISION = "0008_search"

# (status, title, source text, url)
ROWS: list[tuple[str, str, str, str]] = [
    ("draft", *ARTICLES["library-a"], "https://harrowby.example.test/news/library-a"),
    ("draft", *ARTICLES["library-b"], "https://crier.example.test/2026/crane-street"),
    ("draft", *ARTICLES["depot-a"], "https://harrowby.example.test/news/depot"),
    ("approved", *ARTICLES["ferry-a"], "https://dunmore.example.test/ferry-cancelled"),
    ("discarded", *ARTICLES["strike-a"], "https://kestrel.example.test/strike"),
]


def _add(conn: Any, n: int, status: str, title: str, source: str, url: str) -> int:
    return conn.execute(
        text(
            "INSERT INTO items (dedup_key, source_url, original_url, title, source_text, "
            "headline, summary, status, version, attempts, recorded_reply, seen_at, "
            "created_at, updated_at) VALUES (:url, :url, :url, :title, :source, :title, "
            ":summary, :status, 1, 0, false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, "
            "CURRENT_TIMESTAMP) RETURNING id"
        ),
        {
            "url": url,
            "title": title,
            "source": source,
            "summary": f"Summary {n}.",
            "status": status,
        },
    ).scalar_one()


def test_upgrade_indexes_what_is_there(db_url: str) -> None:
    engine = make_engine(db_url)
    config = alembic_config(engine)
    previous = ScriptDirectory.from_config(config).get_revision(REVISION).down_revision
    assert isinstance(previous, str)
    command.upgrade(config, previous)
    with engine.begin() as conn:
        ids = [_add(conn, n, *row) for n, row in enumerate(ROWS)]
    migrate(engine)
    library_a, library_b, depot, ferry, strike = ids
    with Session(engine) as session:

        def queue(typed: str) -> list[int]:
            return [r.id for r in queue_page(session, QueueFilter(search=typed))]

        assert queue("Edda Marsh") == [library_a, library_b]  # source text
        assert queue("Pell Lane") == [depot]
        assert queue("crier.example.test/2026") == [library_b]  # a piece of the URL
        assert queue(f"#{depot}") == [depot]
        assert [r.id for r in decided_page(session, "approved", search="Skerra")] == [ferry]
        assert [r.id for r in discard_page(session, DiscardFilter(search="porters"))] == [strike]
        items = {i.id: i for i in session.exec(select(Item))}
        assert all(i.assigned_to is None for i in items.values())
        # Drafts and decided items got signatures; the two library stories group.
        assert items[library_a].dup_signature is not None
        assert items[ferry].dup_signature is not None
        assert items[strike].dup_signature is None
        similar = duplicates.similar_drafts(session, [library_a, depot])
        assert [other for other, _ in similar.get(library_a, [])] == [library_b]
        assert depot not in similar
    # New rows after the upgrade are indexed by the triggers / generated column.
    with engine.begin() as conn:
        late = _add(conn, 99, "draft", "Late story", "Quillon harbour reopens.", "https://x.test/q")
    with Session(engine) as session:
        assert [r.id for r in queue_page(session, QueueFilter(search="Quillon"))] == [late]
    engine.dispose()
