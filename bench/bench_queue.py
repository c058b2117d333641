"""The review queue's queries at newsroom scale: 100,000 pending drafts in a
SQLite file (and PostgreSQL when COPYDESK_TEST_PG_URL is set).

    .venv/bin/python bench/bench_queue.py [drafts]

Prints the median time of each query an editor's click runs, and the ratio of
the last page to the first (paging must not get slower with depth by much).

Search: each draft carries an invented article of about 110 words and a link.
A search is what the queue runs for it (the count and the first page); it is
timed through the full-text index (store/search.py: FTS5 / tsvector + GIN)
and, beside it, as the LIKE scan a user would write over the same columns
(headline, title, summary, source text, link), median and p95 of 15 runs.

Measured 2026-12-01 (100,000 drafts, load average about 10 on 2 cores shared
with other work, so absolute times are high; compare within a row), median ms
of count + first page, index / LIKE:

    query            SQLite FTS5          PostgreSQL tsvector+GIN
    rare name         48 / 784  (16x)       69 / 1210 (18x)
    "full name"       96 / 1013 (11x)       86 / 2957 (35x)
    "phrase" (1 hit)  61 / 1862 (31x)       56 / 2138 (38x)
    link piece        41 / 1034 (25x)      140 / 3993 (29x)
    #item number      21 / 377  (18x)       59 / 3669 (62x)
    word in every     193 / 195  (1.0x)    205 / 344  (1.7x)

A word found in every draft is the worst case: both ways must read all of them
(the count stops at 1,001 matches); the LIKE scan finds its first page at once.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime

import sqlalchemy
from sqlalchemy import func, or_, select
from sqlmodel import Session

from review_ui.queries import (
    QueueFilter,
    next_in_queue,
    queue_count,
    queue_neighbours,
    queue_page,
    queue_position,
)
from store.db import open_store
from store.models import Feed, GateVerdict, Item

TOWNS = [
    f"{a}{b}"
    for a in ("Tar", "Harr", "Vell", "Dun", "Kest", "Brack", "Ost", "Pell")
    for b in ("row", "owby", "more", "ford", "wick", "ham", "ley", "stead")
]
SURNAMES = [
    f"{a}{b}"
    for a in (
        "Mar",
        "Ok",
        "Ash",
        "Quil",
        "Rud",
        "Lind",
        "Cole",
        "Vane",
        "Feld",
        "Reyes",
        "Drum",
        "Gall",
        "Osei",
        "Harl",
        "Pel",
        "Rei",
    )
    for b in ("sh", "afor", "down", "l", "d", "berg", "s", "ton", "mond", "oway")
]
THINGS = ("library", "bus depot", "bridge", "school", "ward", "ferry ramp", "market", "park")
SEARCHES = {  # what an editor types, and what it stands for
    "rare name": "Quilmond",  # about 1 draft in 160
    "full name": '"Edda Quilmond"',
    "phrase": '"plan number 99999"',  # one draft
    "common word": "council",  # every draft
    "link piece": "news/2026/item-77777",
    "item number": "#54321",
}


def article(rng: random.Random, i: int) -> str:
    town, thing = rng.choice(TOWNS), rng.choice(THINGS)
    first, last = rng.choice(("Edda", "Tom", "Priya", "Iain", "Ama")), rng.choice(SURNAMES)
    votes, cost = rng.randint(20, 40), rng.randint(2, 90) / 10
    return (
        f"{town} council voted {votes} to {60 - votes} on Tuesday to approve plan number {i}, "
        f"a new {thing} for the town centre. Councillor {first} {last} said the {thing} would "
        f"cost £{cost} million and open in {rng.randint(2027, 2030)}. Residents of "
        f"{rng.choice(TOWNS)} Lane had asked for changes to the {thing} after a public meeting "
        f"in March, and {rng.randint(100, 900)} people signed a petition. The opposition said "
        f"the money should go to road repairs first. Work is due to start in "
        f"{rng.choice(('January', 'April', 'June', 'September'))}, and a temporary {thing} "
        f"will stay open until then, {last} added."
    )


def seed(engine: sqlalchemy.Engine, drafts: int) -> None:
    now = datetime.now(UTC)
    with engine.begin() as conn:
        conn.execute(
            sqlalchemy.insert(Feed.__table__),
            [
                {
                    "url": "https://bench.example.org/rss",
                    "name": "Bench Gazette",
                    "enabled": True,
                    "origin": "cli",
                    "consecutive_errors": 0,
                    "created_at": now,
                }
            ],
        )
        rng = random.Random(12)
        rows = [
            {
                "dedup_key": f"https://bench.example.org/news/2026/item-{i}",
                "source_url": f"https://bench.example.org/news/2026/item-{i}",
                "source_text": article(rng, i),
                "feed_id": 1,
                "status": "draft",
                "headline": f"Council approves plan number {i}",
                "title": f"Plan {i}",
                "summary": f"The council approved plan {i} on Tuesday.",
                "version": 1,
                "attempts": 0,
                "recorded_reply": False,
                "seen_at": now,
                "created_at": now,
                "updated_at": now,
            }
            for i in range(drafts)
        ]
        for start in range(0, drafts, 10_000):
            conn.execute(sqlalchemy.insert(Item.__table__), rows[start : start + 10_000])
        flags = [
            {
                "item_id": i,
                "stage": "draft",
                "gate": "quotes_verbatim",
                "passed": False,
                "mode": "flag",
                "reason": "flagged",
                "created_at": now,
            }
            for i in range(1, drafts + 1, 10)
        ]
        conn.execute(sqlalchemy.insert(GateVerdict.__table__), flags)
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("ANALYZE")


def samples(fn, runs: int = 7) -> list[float]:
    fn()  # warm the cache once: an editor's second search is the usual one
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def timed(fn, runs: int = 7) -> float:
    return statistics.median(samples(fn, runs))


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[18]


def like_scan(session: Session, typed: str) -> None:
    """The search a user would write: each word anywhere in any column, by LIKE."""
    words = typed.replace('"', "").lstrip("#").split()
    columns = (Item.headline, Item.title, Item.summary, Item.source_text, Item.source_url)
    where = [Item.status == "draft"] + [
        or_(*(c.icontains(w, autoescape=True) for c in columns))
        for w in words  # type: ignore[union-attr]
    ]
    session.scalar(select(func.count()).select_from(Item).where(*where))
    session.execute(select(Item.id).where(*where).order_by(Item.id).limit(25)).all()


def indexed(session: Session, typed: str) -> list[int]:
    filt = QueueFilter(search=typed)
    queue_count(session, filt)
    return [r.id for r in queue_page(session, filt, page=1)]


def indexed_and_open(session: Session, typed: str) -> None:
    """The whole queue page of a search: count, list, and the open draft's place."""
    filt = QueueFilter(search=typed)
    ids = indexed(session, typed)
    if ids:
        queue_neighbours(session, filt, ids[0])
        queue_position(session, filt, ids[0])


def bench_search(session: Session, name: str, drafts: int) -> None:
    print(f"{name}, {drafts:,} drafts, search = count (capped at 1,001) + first page, ms, 15 runs:")
    head = (
        "query",
        "typed",
        "index med",
        "p95",
        "+open med",
        "p95",
        "LIKE med",
        "p95",
        "LIKE/index",
    )
    print("  {:<12} {:<22} {:>9} {:>7} {:>9} {:>7} {:>9} {:>7} {:>10}".format(*head))
    for label, typed in SEARCHES.items():
        fast = samples(lambda typed=typed: indexed(session, typed), 15)
        whole = samples(lambda typed=typed: indexed_and_open(session, typed), 15)
        slow = samples(lambda typed=typed: like_scan(session, typed), 15)
        ratio = statistics.median(slow) / statistics.median(fast)
        print(
            f"  {label:<12} {typed:<22} {statistics.median(fast):>9.1f} {p95(fast):>7.1f} "
            f"{statistics.median(whole):>9.1f} {p95(whole):>7.1f} "
            f"{statistics.median(slow):>9.1f} {p95(slow):>7.1f} {ratio:>9.1f}x"
        )


def bench(url: str, drafts: int) -> None:
    engine = open_store(url)
    seed(engine, drafts)
    plain, flagged, search = (
        QueueFilter(),
        QueueFilter(flagged_only=True),
        QueueFilter(search='"plan number 9999"'),
    )
    last = (drafts + 49) // 50
    middle = drafts // 2
    with Session(engine) as s:
        figures = {
            "count": timed(lambda: queue_count(s, plain)),
            "first page": timed(lambda: queue_page(s, plain, page=1)),
            "last page": timed(lambda: queue_page(s, plain, page=last)),
            "next/previous": timed(lambda: queue_neighbours(s, plain, middle)),
            "position": timed(lambda: queue_position(s, plain, middle)),
            "next after decision": timed(lambda: next_in_queue(s, plain, middle)),
            "flagged-only count": timed(lambda: queue_count(s, flagged)),
            "text search": timed(lambda: queue_page(s, search, page=1)),
        }
        name = engine.dialect.name
        print(
            f"{name}, {drafts:,} drafts: "
            + ", ".join(f"{k} {v:.1f} ms" for k, v in figures.items())
        )
        print(
            f"{name}: last page / first page = {figures['last page'] / figures['first page']:.1f}"
        )
        bench_search(s, name, drafts)
    engine.dispose()


def main() -> None:
    drafts = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        bench(f"sqlite:///{tmp}/queue.db", drafts)
    pg = os.environ.get("COPYDESK_TEST_PG_URL")
    if pg:
        admin = sqlalchemy.create_engine(pg, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.exec_driver_sql("DROP DATABASE IF EXISTS copydesk_bench_queue WITH (FORCE)")
            conn.exec_driver_sql("CREATE DATABASE copydesk_bench_queue")
        try:
            bench(pg.rsplit("/", 1)[0] + "/copydesk_bench_queue", drafts)
        finally:
            with admin.connect() as conn:
                conn.exec_driver_sql("DROP DATABASE IF EXISTS copydesk_bench_queue WITH (FORCE)")


if __name__ == "__main__":
    main()
