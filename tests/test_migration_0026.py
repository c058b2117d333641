"""0026_source_text_packed: a database made at the revision before it, holding items
with source texts (long and short, one without any), comes out with every long text
packed on SQLite (short ones and NULL as they were), each read back exactly, the
search index finding the same words without a rebuild, and a text changed after the
upgrade taking its old words out of the index; on PostgreSQL the texts stay text.
Downgrading gives the texts back as text and the triggers as they were."""

from __future__ import annotations

from alembic import command
from sqlalchemy import text, update
from sqlmodel import Session, select

from store.db import alembic_config, migrate
from store.models import Item
from store.search import search_clause
from tests.migration_helpers import at_previous_revision, insert_article, source_text_forms

REVISION = "0026_source_text_packed"
ARTICLES = {
    "ferry": (
        "draft",
        "Skerrow ferry fares frozen",
        "Fares on the Skerrow ferry will not rise this year, the Dunhallow harbour trust "
        "said on Tuesday. Trust secretary Aled Marchbank said the 38 crossings a week "
        "would keep their timetable, and the new car deck would open in May.",
        "https://dunhallow.example.test/ferry-fares",
    ),
    "short": ("new", "Gala moved", "The Brindle gala moved to June.", "https://b.test/g"),
}
LATER = (
    "The Skerrow ferry's fares will rise by 4 per cent after all, the Dunhallow harbour "
    "trust said on Thursday, once the cost of the car deck was known to councillor "
    "Nessa Quayle's committee."
)


def _found(engine, typed: str) -> set[int]:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        return set(session.exec(select(Item.id).where(search_clause(typed))).all())  # type: ignore[arg-type]


def _kinds(engine) -> dict[int, str | None]:  # type: ignore[no-untyped-def]
    return {i: kind for i, (kind, _) in source_text_forms(engine).items()}


def _texts(engine) -> dict[int, str | None]:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        return dict(session.exec(select(Item.id, Item.source_text)).all())  # type: ignore[arg-type]


def test_upgrade_packs_the_texts_and_the_index_still_finds_their_words(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        ids = {key: insert_article(conn, n, *a) for n, (key, a) in enumerate(ARTICLES.items())}
        bare = insert_article(conn, 9, "new", "No text", "", "https://b.test/none")
        conn.execute(text("UPDATE items SET source_text = NULL WHERE id = :id"), {"id": bare})
    before = _texts(engine)
    assert _found(engine, '"Aled Marchbank"') == {ids["ferry"]}

    migrate(engine)

    sqlite = engine.dialect.name == "sqlite"
    stored_long = "blob" if sqlite else "text"
    assert _kinds(engine) == {ids["ferry"]: stored_long, ids["short"]: "text", bare: None}
    assert _texts(engine) == before
    assert _found(engine, '"Aled Marchbank"') == {ids["ferry"]}
    assert _found(engine, '"Brindle gala"') == {ids["short"]}
    with engine.begin() as conn:  # the page is fetched again: another text
        conn.execute(update(Item).where(Item.id == ids["ferry"]).values(source_text=LATER))
    assert _found(engine, "Marchbank") == set()
    assert _found(engine, '"Nessa Quayle"') == {ids["ferry"]}
    assert _kinds(engine)[ids["ferry"]] == stored_long

    command.downgrade(alembic_config(engine), "0025_bands_32bit")
    assert _kinds(engine) == {ids["ferry"]: "text", ids["short"]: "text", bare: None}
    with engine.connect() as conn:
        raw = conn.execute(
            text("SELECT source_text FROM items WHERE id = :id"), {"id": ids["ferry"]}
        ).scalar()
    assert raw == LATER
    if sqlite:  # the triggers read the column again, as 0008 made them
        with engine.connect() as conn:
            sql = " ".join(
                conn.execute(text("SELECT sql FROM sqlite_master WHERE type = 'trigger'")).scalars()
            )
        assert "items_fts_au" in sql and "copydesk_text" not in sql
    with engine.begin() as conn:
        conn.execute(
            text("UPDATE items SET source_text = :t WHERE id = :id"),
            {"t": ARTICLES["ferry"][2], "id": ids["ferry"]},
        )
    assert _found(engine, '"Nessa Quayle"') == set()
    assert _found(engine, '"Aled Marchbank"') == {ids["ferry"]}
    engine.dispose()
