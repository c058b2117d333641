"""An item's source text is stored packed on SQLite (zlib, store/packing.py
`PackedSourceText`, migration 0026), read back exactly, and still searched: the
full-text index is fed the unpacked text by its triggers, a re-fetched text takes
the old words out of the index and puts the new ones in, and a phrase is still a
phrase. PostgreSQL keeps the text as text (its generated search column reads it,
and TOAST compresses it already)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import text, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from store import status as st
from store.db import open_store, session_scope
from store.models import Item
from store.search import search_clause
from tests.dup_material import add_draft
from tests.migration_helpers import source_text_forms

URL = "https://pellow-cross.example.test/news/tram-depot"
FIRST = (
    "The transport board said on Thursday that the Pellow Cross tram depot will close "
    "on 14 March, after a review of its running costs. Board chair Morwenna Talbot "
    "said the 62 drivers based at the depot would "
    "move to the Harnett Road sheds. The depot opened in 1931 and was rebuilt in 1978. "
    "Residents on Quarry Lane asked the board to keep the old tram shelter as a museum. "
    "The board said a decision on the shelter would follow a survey of its roof."
)
SECOND = (
    "The Pellow Cross tram depot will stay open until the autumn, the transport board "
    "said on Friday, after drivers objected to the move. Union secretary Idris Penhale "
    "said the Harnett Road sheds had room for only 40 drivers. The board will meet again "
    "in June to set a new date for the closure of the depot on Quarry Lane."
)


@pytest.fixture
def stored(db_url: str, migrated: None) -> Iterator[tuple[Engine, int]]:
    engine = open_store(db_url)
    with session_scope(engine) as session:
        item_id = add_draft(session, "tram-depot", "Tram depot to close", FIRST)
    yield engine, item_id
    engine.dispose()


def _found(engine: Engine, typed: str) -> set[int]:
    with Session(engine) as session:
        return set(session.exec(select(Item.id).where(search_clause(typed))).all())  # type: ignore[arg-type]


def test_the_source_text_is_stored_packed_on_sqlite_and_read_back_exactly(stored) -> None:
    engine, item_id = stored
    with Session(engine) as session:
        assert session.get(Item, item_id).source_text == FIRST  # type: ignore[union-attr]
    kind, size = source_text_forms(engine)[item_id]
    if engine.dialect.name == "sqlite":
        assert kind == "blob"
        assert size < 0.75 * len(FIRST.encode())
    else:
        assert kind == "text"
        assert size == len(FIRST.encode())


def test_the_packed_source_text_is_searched_and_a_new_text_replaces_the_old_words(
    stored,
) -> None:
    engine, item_id = stored
    assert _found(engine, "Morwenna Talbot") == {item_id}
    assert _found(engine, '"old tram shelter"') == {item_id}
    assert _found(engine, '"shelter old tram"') == set()  # a phrase is still a phrase
    with engine.begin() as conn:  # the page fetched again gives another text
        conn.execute(update(Item).where(Item.id == item_id).values(source_text=SECOND))
    assert _found(engine, "Idris Penhale") == {item_id}
    assert _found(engine, "Morwenna") == set()  # the old text's words left the index
    assert _found(engine, '"old tram shelter"') == set()
    assert _found(engine, "Quarry Lane") == {item_id}  # in both texts, still found
    with Session(engine) as session:
        assert session.get(Item, item_id).source_text == SECOND  # type: ignore[union-attr]


def test_an_item_without_source_text_stays_null(db_url: str, migrated: None) -> None:
    engine = open_store(db_url)
    try:
        with session_scope(engine) as session:
            item = Item(dedup_key=URL, source_url=URL, original_url=URL, title="No text yet")
            st.create(session, item, actor="cli", reason="submitted")
            item_id = item.id
        with engine.connect() as conn:
            raw = conn.execute(
                text("SELECT source_text FROM items WHERE id = :id"), {"id": item_id}
            ).scalar()
        assert raw is None
        assert _found(engine, "submitted") == set()
        assert _found(engine, '"No text yet"') == {item_id}
    finally:
        engine.dispose()
