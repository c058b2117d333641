"""Issue 12, search at scale: the queue's searched pages come out of the indexes
(the story-order index of migration 0010_story_order, the text index of
0008_search) exactly as a plain reading would give them: the same ids, in the
same order, page after page, with the same next/previous, place and count, for
rare, common and mixed terms, with filters and both orders, on SQLite and
PostgreSQL. The reference here is every matching id read without ORDER BY or
LIMIT and sorted in Python."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy
from alembic import command
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui.desk.queries import (
    SEARCH_COUNT_CAP,
    QueueFilter,
    next_in_queue,
    queue_count,
    queue_neighbours,
    queue_page,
    queue_position,
    queue_where,
    utc,
)
from store.db import alembic_config, make_engine, migrate, open_store
from store.models import Feed, GateVerdict, Item
from store.search import STORY_ORDER_INDEX
from tests.db_catalog import index_names

ITEMS = 240
START = datetime(2026, 11, 1, tzinfo=UTC)


def _row(i: int, feed: int) -> dict[str, Any]:
    words = ["common"]  # in every draft
    if i % 2:
        words.append("half")
    if i % 37 == 5:
        words.append("rare")
    if i % 3 == 0:
        words.append("commonwealth")  # "comm" also finds it as a prefix
    seen = START + timedelta(minutes=i)
    # Story times out of ingestion order, in groups that tie, and some missing.
    published = None if i % 7 == 2 else START + timedelta(hours=(i * 7919) % 23)
    url = f"https://order.example.test/story-{i}"
    return {
        "dedup_key": url,
        "source_url": url,
        "source_text": f"Story {i} is about " + " and ".join(words) + ".",
        "feed_id": feed,
        "status": "approved" if i % 11 == 4 else "draft",
        "headline": f"Headline {i}",
        "title": f"Title {i}",
        "summary": "A summary.",
        "version": 1,
        "attempts": 0,
        "recorded_reply": False,
        "seen_at": seen,
        "published_at": published,
        "created_at": seen,
        "updated_at": seen,
    }


def seed(engine: Engine) -> None:
    with engine.begin() as conn:
        for n in (1, 2):
            conn.execute(
                sqlalchemy.insert(Feed.__table__),
                {
                    "id": n,
                    "url": f"https://order.example.test/rss{n}",
                    "name": f"Feed {n}",
                    "enabled": True,
                    "origin": "cli",
                    "consecutive_errors": 0,
                    "created_at": START,
                },
            )
        conn.execute(sqlalchemy.insert(Item.__table__), [_row(i, 1 + i % 2) for i in range(ITEMS)])
        ids = list(conn.scalars(select(Item.id).order_by(Item.id)))
        conn.execute(
            sqlalchemy.insert(GateVerdict.__table__),
            [
                {
                    "item_id": item_id,
                    "stage": "draft",
                    "gate": "names_grounded",
                    "passed": False,
                    "mode": "flag",
                    "reason": "flagged",
                    "created_at": START,
                }
                for item_id in ids[::5]
            ],
        )


@pytest.fixture(scope="module")
def queue_db(module_engine: Engine) -> Engine:
    seed(module_engine)
    return module_engine


def reference(session: Session, filt: QueueFilter) -> list[int]:
    """Every id the filter finds, read without ORDER BY or LIMIT, sorted here."""
    rows = session.execute(
        select(Item.id, Item.published_at, Item.seen_at).where(*queue_where(filt))
    ).all()
    if filt.order == "story":
        return [r[0] for r in sorted(rows, key=lambda r: (utc(r[1] or r[2]), r[0]))]
    return sorted(r[0] for r in rows)


TERMS = ["common", "half", "rare", "common rare", "half comm", '"about common and half"']
FILTERS = {
    "none": {},
    "flagged": {"flagged_only": True},
    "feed": {"feed_id": 2},
}


@pytest.mark.parametrize("order", ["ingested", "story"])
@pytest.mark.parametrize("filter_name", list(FILTERS))
@pytest.mark.parametrize("typed", TERMS)
def test_searched_queue_is_the_plain_reading_in_order(
    queue_db: Engine, typed: str, filter_name: str, order: str
) -> None:
    filt = QueueFilter(search=typed, order=order, **FILTERS[filter_name])
    with Session(queue_db) as session:
        expected = reference(session, filt)
        assert expected, "every case finds something"
        assert queue_count(session, filt) == min(len(expected), SEARCH_COUNT_CAP + 1)
        pages = []
        for page in range(1, len(expected) // 9 + 2):
            pages += [r.id for r in queue_page(session, filt, page=page, size=9)]
        assert pages == expected
        # First, a middle one, the last, and drafts that tie on story time.
        for at in {0, 1, len(expected) // 2, len(expected) - 1}:
            item_id = expected[at]
            before = expected[at - 1] if at > 0 else None
            after = expected[at + 1] if at + 1 < len(expected) else None
            assert queue_neighbours(session, filt, item_id) == (before, after)
            assert queue_position(session, filt, item_id) == at + 1
            assert next_in_queue(session, filt, item_id) == (after or expected[0])


def test_story_order_without_search_is_the_plain_reading(queue_db: Engine) -> None:
    filt = QueueFilter(order="story")
    with Session(queue_db) as session:
        expected = reference(session, filt)
        pages = []
        for page in range(1, len(expected) // 25 + 2):
            pages += [r.id for r in queue_page(session, filt, page=page)]
        assert pages == expected
        middle = expected[len(expected) // 2]
        assert queue_position(session, filt, middle) == len(expected) // 2 + 1


def test_story_order_walks_its_index_on_sqlite(sqlite_url: str) -> None:
    """The page, its neighbours and its place in story order read the index of
    0010_story_order (before it, every one sorted all drafts)."""
    engine = open_store(sqlite_url)
    try:
        seed(engine)
        plans: list[str] = []

        @sqlalchemy.event.listens_for(engine, "before_cursor_execute")
        def explain(conn, cursor, statement, params, context, executemany):  # type: ignore[no-untyped-def]
            if statement.lstrip().upper().startswith("SELECT") and "ORDER BY" in statement:
                found = cursor.connection.execute("EXPLAIN QUERY PLAN " + statement, params)
                plans.append(" / ".join(str(row[3]) for row in found))

        filt = QueueFilter(order="story")
        with Session(engine) as session:
            first = queue_page(session, filt)[0].id
            queue_neighbours(session, filt, first)
        story_plans = [p for p in plans if "gate_verdicts" not in p]
        assert len(story_plans) == 3, plans
        for plan in story_plans:
            assert STORY_ORDER_INDEX in plan, plan
            assert "TEMP B-TREE" not in plan, plan  # no sort of every draft
    finally:
        engine.dispose()


def test_upgrade_from_0008_adds_the_story_index_and_keeps_the_order(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        command.upgrade(alembic_config(engine), "0008_search")
        seed(engine)  # data made at the previous head
        migrate(engine)
        assert STORY_ORDER_INDEX in index_names(engine, "items")
        filt = QueueFilter(search="half", order="story")
        with Session(engine) as session:
            expected = reference(session, filt)
            assert [r.id for r in queue_page(session, filt, size=500)] == expected
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_postgresql_plans_each_search_for_its_own_terms(pg_url: str) -> None:
    """psycopg would prepare a statement after its fifth run, and PostgreSQL could
    then plan every later term alike (a one-hit phrase walked all drafts)."""
    engine = open_store(pg_url)
    try:
        with engine.connect() as conn:
            assert conn.connection.dbapi_connection.prepare_threshold is None  # type: ignore[union-attr]
    finally:
        engine.dispose()
