"""0014_page_cut: a database made at the revision before it, with items in it,
upgrades to one where every item reads as a page read whole (page_cut_at NULL),
the items otherwise untouched; a cut can then be recorded and read back, and the
queue's badge shows it."""

from __future__ import annotations

from sqlmodel import Session, select

from review_ui.desk.queries import QueueFilter, queue_page
from store.db import session_scope
from store.models import Item
from tests.migration_helpers import MILL_SOLD, upgraded_with

REVISION = "0014_page_cut"


def test_upgrade_adds_page_cut_at_and_keeps_items(db_url: str) -> None:
    pier = (
        "draft",
        "Orrin Bay pier reopens",
        "The pier at Orrin Bay reopened.",
        "https://orrin.example.test/pier",
    )
    engine, (first, second) = upgraded_with(db_url, REVISION, pier, MILL_SOLD)
    with session_scope(engine) as session:
        items = {i.id: i for i in session.exec(select(Item))}
        assert {i: (items[i].status, items[i].title, items[i].page_cut_at) for i in items} == {
            first: ("draft", "Orrin Bay pier reopens", None),
            second: ("new", "Tamsett mill sold", None),
        }
        items[first].page_cut_at = 4096
        session.add(items[first])
    with Session(engine) as session:
        assert session.get(Item, first).page_cut_at == 4096  # type: ignore[union-attr]
        (row,) = queue_page(session, QueueFilter())
        assert (row.id, row.badge) == (first, "source cut at 4,096 bytes")
    engine.dispose()
