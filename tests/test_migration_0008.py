"""0008_search: a database made at the revision before it, with items in it, comes
out searchable (source text, URL, item number) on both backends, with the
near-duplicate signatures of its drafts filled in, and nobody assigned."""

from __future__ import annotations

from sqlmodel import Session, select

from review_ui.desk.queries import (
    DiscardFilter,
    QueueFilter,
    decided_page,
    discard_page,
    queue_page,
)
from store import duplicates
from store.db import migrate
from store.models import Item
from tests.dup_material import ARTICLES
from tests.migration_helpers import at_previous_revision, insert_article

REVISION = "0008_search"

# (status, title, source text, url)
ROWS: list[tuple[str, str, str, str]] = [
    ("draft", *ARTICLES["library-a"], "https://harrowby.example.test/news/library-a"),
    ("draft", *ARTICLES["library-b"], "https://crier.example.test/2026/crane-street"),
    ("draft", *ARTICLES["depot-a"], "https://harrowby.example.test/news/depot"),
    ("approved", *ARTICLES["ferry-a"], "https://dunmore.example.test/ferry-cancelled"),
    ("discarded", *ARTICLES["strike-a"], "https://kestrel.example.test/strike"),
]


def test_upgrade_indexes_what_is_there(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        ids = [insert_article(conn, n, *row) for n, row in enumerate(ROWS)]
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
        late = insert_article(
            conn, 99, "draft", "Late story", "Quillon harbour reopens.", "https://x.test/q"
        )
    with Session(engine) as session:
        assert [r.id for r in queue_page(session, QueueFilter(search="Quillon"))] == [late]
    engine.dispose()
