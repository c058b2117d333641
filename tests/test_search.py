"""Search (store/search.py) on SQLite (FTS5) and PostgreSQL (tsvector): source text,
item number and URL as well as headline and draft, in every view, kept in step
with edits, and typed text that is never query syntax."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui.desk.queries import (
    DiscardFilter,
    QueueFilter,
    decided_count,
    decided_page,
    discard_count,
    discard_page,
    queue_count,
    queue_page,
)
from store import status as st
from store.db import open_store, session_scope
from store.models import Item
from store.search import parse, search_clause

SOURCES = {
    "bridge": (
        "https://www.tarrow-post.example.test/news/2026/kellan-bridge-reopens?utm=feed",
        "Kellan bridge reopens after repairs",
        "The Kellan bridge in Tarrow reopened on Monday after eight months of repairs costing "
        "£3.1 million. Engineer Priya Okafor said the steel deck had been replaced. "
        "Ferries that ran during the closure will stop on Friday.",
        "Kellan bridge open again",
        "Tarrow's Kellan bridge reopened after £3.1m of repairs.",
    ),
    "library": (
        "https://harrowby.example.test/council/library-vote",
        "Council backs library rebuild",
        "Harrowby council voted 31 to 9 to rebuild the Crane Street library. Councillor Edda "
        "Marsh said the new Zürich-style reading room would open in 2028.",
        "Library to be rebuilt",
        "Councillors approved the rebuild by 31 votes to 9.",
    ),
    "ferry": (
        "https://dunmore.example.test/ferry/skerra-storm",
        "Storm halts Skerra ferry",
        "All ferry sailings between Dunmore and Skerra were cancelled as gales hit the coast. "
        "Harbour master Iain Rudd said the loading ramp was damaged.",
        "Ferries cancelled",
        "Gales stopped the Skerra crossings.",
    ),
}
EDITOR = "editor:ann"


def add(session: Session, key: str, to: str = st.DRAFT) -> int:
    url, title, source, headline, summary = SOURCES[key]
    item = Item(dedup_key=url, source_url=url, original_url=url, title=title)
    st.create(session, item, actor="cli", reason="submitted")
    if to == st.DISCARDED:
        st.move(
            session,
            item,
            st.DISCARDED,
            actor="run:1",
            reason="source too short",
            changes={"source_text": source},
            discard_kind="source_length",
        )
        return item.id  # type: ignore[return-value]
    st.move(
        session,
        item,
        st.DRAFT,
        actor="run:1",
        changes={"source_text": source, "headline": headline, "summary": summary},
    )
    if to == st.APPROVED:
        st.move(session, item, st.APPROVED, actor=EDITOR, reason="approved")
    elif to == st.REJECTED:
        st.move(session, item, st.REJECTED, actor=EDITOR, reason="dull")
    return item.id  # type: ignore[return-value]


@pytest.fixture
def desk(db_url: str, migrated: None) -> Iterator[tuple[Engine, dict[str, int]]]:
    engine = open_store(db_url)
    with session_scope(engine) as session:
        ids = {key: add(session, key) for key in SOURCES}
    yield engine, ids
    engine.dispose()


def found(engine: Engine, typed: str) -> set[int]:
    with Session(engine) as session:
        return {r.id for r in queue_page(session, QueueFilter(search=typed), size=100)}


def test_search_reads_source_text_headline_draft_and_title(desk) -> None:
    engine, ids = desk
    assert found(engine, "steel deck") == {ids["bridge"]}  # the source text only
    assert found(engine, "open again") == {ids["bridge"]}  # the edited headline
    assert found(engine, "crossings") == {ids["ferry"]}  # the draft
    assert found(engine, "Storm halts") == {ids["ferry"]}  # the feed's title
    assert found(engine, "KELLAN tarrow") == {ids["bridge"]}  # any case, words in any order
    assert found(engine, "Okafor Skerra") == set()  # every word must be there
    assert found(engine, "nowhere") == set()


def test_search_by_item_number(desk) -> None:
    engine, ids = desk
    bridge = ids["bridge"]
    assert found(engine, f"#{bridge}") == {bridge}
    assert found(engine, f"# {bridge}") == {bridge}
    assert bridge in found(engine, str(bridge))
    # A bare number is also text: "31" is in the library story.
    assert ids["library"] in found(engine, "31")
    assert found(engine, "#999999") == set()


def test_search_by_url_or_a_piece_of_it(desk) -> None:
    engine, ids = desk
    url = SOURCES["bridge"][0]
    assert found(engine, url) == {ids["bridge"]}
    assert found(engine, "tarrow-post.example.test") == {ids["bridge"]}
    assert found(engine, "news/2026/kellan-bridge") == {ids["bridge"]}
    assert found(engine, "kellan-bridge-reopens") == {ids["bridge"]}
    assert found(engine, "harrowby.example.test/council") == {ids["library"]}
    assert found(engine, "example.test") == set(ids.values())


def test_phrases_and_a_prefix_for_the_last_word(desk) -> None:
    engine, ids = desk
    assert found(engine, '"loading ramp"') == {ids["ferry"]}
    assert found(engine, '"ramp loading"') == set()  # a quoted phrase keeps its order
    assert found(engine, "counc") == {ids["library"]}  # councillors, council
    assert found(engine, '"counc"') == set()  # quoted: the whole word
    assert found(engine, "3.1") == {ids["bridge"]}


HOSTILE = [
    "NEAR(kellan bridge)",
    "kellan NEAR/2 bridge",
    "headline:kellan",
    "title : storm",
    "{headline title}: kellan",
    "kellan*",
    "*",
    "* kellan",
    '"unbalanced kellan',
    'kellan "',
    '""',
    '"""',
    "kellan OR ferry",
    "kellan AND NOT ferry",
    "-kellan",
    "^kellan",
    "kellan & | ! ( ) :* <-> 'x'",
    "'; DROP TABLE items; --",
    "\\",
    "%_%",
    "kellan\x00bridge",
    "ℌ𝔢𝔩𝔩𝔬 🙂",
    "a" * 5000,
    "kellan " * 300,
]


@pytest.mark.parametrize("typed", HOSTILE)
def test_typed_text_is_never_query_syntax(desk, typed: str) -> None:
    engine, ids = desk
    result = found(engine, typed)  # never raises
    with Session(engine) as session:
        count = queue_count(session, QueueFilter(search=typed))
    assert count == len(result)
    assert result <= set(ids.values())


def test_operators_are_only_words(desk) -> None:
    engine, ids = desk
    # "OR" is a word that must be present, not an operator that widens the search.
    assert found(engine, "kellan OR ferry") == set()
    assert found(engine, "headline:kellan") == set()  # the word "headline" is in no text
    assert found(engine, '"unbalanced kellan') == set()
    assert found(engine, 'kellan "') == {ids["bridge"]}
    assert found(engine, "NEAR(kellan bridge)") == set()  # "near" is in no text


def test_every_view_searches(db_url: str) -> None:
    engine = open_store(db_url)
    try:
        with session_scope(engine) as session:
            approved = add(session, "bridge", st.APPROVED)
            rejected = add(session, "library", st.REJECTED)
            discarded = add(session, "ferry", st.DISCARDED)
        with Session(engine) as session:
            assert [r.id for r in decided_page(session, st.APPROVED, search="steel")] == [approved]
            assert decided_count(session, st.APPROVED, search="steel") == 1
            assert decided_page(session, st.APPROVED, search="Marsh") == []
            assert [r.id for r in decided_page(session, st.REJECTED, search="Marsh")] == [rejected]
            assert decided_count(session, st.REJECTED, search=f"#{rejected}") == 1
            assert decided_count(session, st.REJECTED, search="") == 1
            filt = DiscardFilter(search="skerra-storm")
            assert [r.id for r in discard_page(session, filt)] == [discarded]
            assert discard_count(session, DiscardFilter(search="bridge")) == 0
    finally:
        engine.dispose()


def test_the_index_follows_edits(desk) -> None:
    engine, ids = desk
    bridge = ids["bridge"]
    with session_scope(engine) as session:
        item = session.get(Item, bridge)
        st.record_edit(
            session,
            item,
            actor=EDITOR,
            headline="Tarrow crossing back in use",
            summary="The repaired span carries traffic again.",
            expected_version=item.version,
        )
    assert found(engine, "repaired span") == {bridge}
    assert found(engine, "open again") == set()  # the old headline is gone from the index
    assert found(engine, "steel deck") == {bridge}  # the source is unchanged
    with session_scope(engine) as session:  # a status move leaves the index as it is
        st.move(session, session.get(Item, bridge), st.REJECTED, actor=EDITOR, reason="late")
    with Session(engine) as session:
        assert decided_count(session, st.REJECTED, search="repaired span") == 1


def test_parse_cuts_terms() -> None:
    query = parse('kellan "loading ramp" harrowby.example.test/council counc')
    assert [t.text for t in query.terms] == [
        "kellan",
        "loading ramp",
        "harrowby.example.test/council",
        "counc",
    ]
    assert [t.url for t in query.terms] == [False, False, True, False]
    assert [t.prefix for t in query.terms] == [False, False, False, True]
    assert parse("#42").only_item and parse("#42").item_id == 42
    assert parse("42").item_id == 42 and not parse("42").only_item
    assert parse("  ").empty and parse("* - ()").empty
    assert search_clause("") is None


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(typed=hs.text(max_size=40))
def test_any_typed_text_runs_on_sqlite(sqlite_url: str, typed: str) -> None:
    engine = open_store(sqlite_url)
    try:
        clause = search_clause(typed)
        if clause is not None:
            with Session(engine) as session:
                session.execute(select(Item.id).where(clause)).all()
    finally:
        engine.dispose()
