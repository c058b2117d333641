"""0016_item_language: a database made at the revision before it, with items in it,
upgrades to one where every item reads as declaring no language (language NULL: the
gates detect it, as before), the items otherwise untouched; a declared language can
then be stored, read back, and is what a replay of the gates reads."""

from __future__ import annotations

from sqlmodel import Session, select

from copydesk.services.replay import replay
from guards.registry import DEFAULT_MODES
from store.db import session_scope
from store.models import Item
from tests.language_material import HEADLINE, SOURCE, SUMMARY
from tests.migration_helpers import MILL_SOLD, upgraded_with

REVISION = "0016_item_language"


def test_upgrade_adds_language_and_keeps_items(db_url: str) -> None:
    protest = ("draft", "Saint-Aulne protest", SOURCE, "https://aulne.example.test/gare")
    engine, (first, second) = upgraded_with(db_url, REVISION, protest, MILL_SOLD)
    with session_scope(engine) as session:
        items = {i.id: i for i in session.exec(select(Item))}
        assert {i: (items[i].status, items[i].title, items[i].language) for i in items} == {
            first: ("draft", "Saint-Aulne protest", None),
            second: ("new", "Tamsett mill sold", None),
        }
        items[first].headline, items[first].summary = HEADLINE, SUMMARY
        session.add(items[first])
    # Nothing declared: the detector reads the bilingual story as French, and replay
    # says the faithful draft would now fail (4,500 read as 4.5).
    modes = dict(DEFAULT_MODES)
    (flip,) = replay(engine, modes=modes, min_source_words=150).flips
    assert (flip.item_id, flip.now, flip.gates) == (first, "fails", ("numbers_grounded",))
    with session_scope(engine) as session:
        item = session.get(Item, first)
        item.language = "en"  # type: ignore[union-attr]
        session.add(item)
    with Session(engine) as session:
        assert session.get(Item, first).language == "en"  # type: ignore[union-attr]
    assert replay(engine, modes=modes, min_source_words=150).flips == []
    engine.dispose()
