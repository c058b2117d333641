"""0028_search_without_positions: a database made at the revision before it, holding
items, comes out with a SQLite search index that keeps no word positions (FTS5
`detail=none`, a fraction of the size) and finds what it found before: words in any
order, a quoted phrase only in its order and within one field, a piece of a link, a
figure ("3.1" in "£3.1m"), a prefix, text in a script FTS5 is not trusted to cut
alike; a text changed after the upgrade takes its old words out. PostgreSQL is
unchanged. Downgrading gives the index its positions back."""

from __future__ import annotations

from alembic import command
from sqlalchemy import text, update
from sqlmodel import Session, select

from store.db import alembic_config, migrate
from store.models import Item
from store.search import search_clause
from tests.migration_helpers import at_previous_revision, insert_article

REVISION = "0028_search_without_positions"
ARTICLES = {
    "ferry": (
        "draft",
        "Storm halts Skerrow ferry",
        "All ferry sailings between Dunhallow and Skerrow were cancelled on Tuesday as "
        "gales hit the coast. Harbour master Aled Marchbank said the loading ramp had "
        "been damaged and that repairs would cost £3.1 million. The Zürich-built tug "
        "stayed in port.",
        "https://dunhallow.example.test/news/skerrow-ferry-storm",
    ),
    "gala": (
        "new",
        "Brindle gala moved",
        "The Brindle gala moved to June after the ramp loading bay at the showground "
        "flooded, organiser Wen Hollis said. 港口 关闭 notices went up in the market.",
        "https://brindle.example.test/gala",
    ),
}
LATER = (
    "The Skerrow ferry will sail again on Friday, the Dunhallow harbour trust said, once "
    "councillor Nessa Quayle's committee had seen the tug's survey."
)


def _found(engine, typed: str) -> set[int]:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        return set(session.exec(select(Item.id).where(search_clause(typed))).all())  # type: ignore[arg-type]


def _expectations(engine, ids: dict[str, int]) -> None:  # type: ignore[no-untyped-def]
    ferry, gala = ids["ferry"], ids["gala"]
    assert _found(engine, "ferry Marchbank") == {ferry}
    assert _found(engine, "Marchbank ferry") == {ferry}  # words in any order
    assert _found(engine, '"loading ramp"') == {ferry}
    assert _found(engine, '"ramp loading"') == {gala}  # a phrase keeps its order
    assert _found(engine, '"ferry all"') == set()  # the title's last word, the text's first
    assert _found(engine, "ramp") == {ferry, gala}
    assert _found(engine, "3.1") == {ferry}  # "£3.1 million": the phrase "3 1"
    assert _found(engine, "news/skerrow-ferry") == {ferry}  # a piece of its link
    assert _found(engine, "dunhallow.example.test/news") == {ferry}
    assert _found(engine, "brindle.example.test/news") == set()
    assert _found(engine, "showgr") == {gala}  # the last word as a prefix
    if engine.dialect.name == "sqlite":  # PostgreSQL's cut depends on its locale
        assert _found(engine, "zurich-built") == {ferry}  # diacritics and case folded
        assert _found(engine, '"港口 关闭"') == {gala}
        assert _found(engine, '"关闭 港口"') == set()
        assert _found(engine, "港口") == {gala}


def _index_sql(engine) -> str:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return conn.execute(
            text("SELECT sql FROM sqlite_master WHERE name = 'items_fts'")
        ).scalar_one()


def test_upgrade_drops_the_positions_and_search_finds_the_same(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        ids = {key: insert_article(conn, n, *a) for n, (key, a) in enumerate(ARTICLES.items())}
    _expectations(engine, ids)  # today's search on the index with positions

    migrate(engine)

    sqlite = engine.dialect.name == "sqlite"
    if sqlite:
        assert "detail=none" in _index_sql(engine).replace(" ", "")
    _expectations(engine, ids)
    with engine.begin() as conn:  # the page is fetched again: another text
        conn.execute(update(Item).where(Item.id == ids["ferry"]).values(source_text=LATER))
    assert _found(engine, "Marchbank") == set()
    assert _found(engine, '"Nessa Quayle"') == {ids["ferry"]}
    assert _found(engine, '"Quayle Nessa"') == set()

    command.downgrade(alembic_config(engine), "0027_bands_keyed_by_bucket")
    if sqlite:
        assert "detail" not in _index_sql(engine)
        with engine.connect() as conn:  # a phrase query FTS5 answers itself again
            hits = conn.execute(
                text("SELECT rowid FROM items_fts WHERE items_fts MATCH '\"Nessa Quayle\"'")
            ).scalars()
            assert list(hits) == [ids["ferry"]]
    assert _found(engine, '"Nessa Quayle"') == {ids["ferry"]}
    assert _found(engine, '"ramp loading"') == {ids["gala"]}
    engine.dispose()
