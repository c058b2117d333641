"""The review queue's queries at newsroom scale: 100,000 pending drafts in a
SQLite file (and PostgreSQL when COPYDESK_TEST_PG_URL is set).

    python -m bench queue [drafts] [--keep DIR]

`--keep DIR` keeps the seeded SQLite file in DIR (and the PostgreSQL database
copydesk_bench_queue_<drafts>) and reuses them on the next run: seeding 100,000
drafts takes a minute on PostgreSQL.

Prints the machine's load average, the median time of each query an editor's
click runs, and the ratio of the last page to the first.

Search: each draft carries an invented article of about 110 words and a link;
ingestion times are one a second, story times (published_at) up to six hours
earlier, one in ten without one. A search is what the queue runs for it: the
count (capped at 1,001) and the first page; "+open" adds the open draft's
next/previous and place. It is timed through the full-text index
(store/search.py) and, beside it, as the LIKE scan a user would write over the
same columns with the same filter, order and cap; median and p95 of 15 runs.
Figures: see CHANGELOG.md (issue 12), with the load average they were taken at.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy
from sqlalchemy import func, or_, select
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
)
from store import verdicts
from store.db import open_store
from store.models import Feed, Item

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
SEARCHES = {  # label: (what an editor types, the queue filter beside it)
    "rare name": ("Quilmond", {}),  # about 1 draft in 160
    "full name": ('"Edda Quilmond"', {}),
    "phrase": ('"plan number 99999"', {}),  # one draft
    "link piece": ("news/2026/item-77777", {}),
    "item number": ("#54321", {}),
    "word in all": ("council", {}),  # every draft (and a prefix: councillor too)
    "word in half": ("Thursday", {}),
    "all + flagged": ("council", {"flagged_only": True}),  # 1 draft in 10 flagged
    "all, story": ("council", {"order": "story"}),
    "rare, story": ("Quilmond", {"order": "story"}),
    "half, story": ("Thursday", {"order": "story"}),
}


DAYS = ("Tuesday", "Thursday")  # "Thursday" is in every other draft


def article(rng: random.Random, i: int) -> str:
    town, thing = rng.choice(TOWNS), rng.choice(THINGS)
    first, last = rng.choice(("Edda", "Tom", "Priya", "Iain", "Ama")), rng.choice(SURNAMES)
    votes, cost = rng.randint(20, 40), rng.randint(2, 90) / 10
    return (
        f"{town} council voted {votes} to {60 - votes} on {DAYS[i % 2]} "
        f"to approve plan number {i}, "
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
        start = now - timedelta(seconds=drafts)
        # Ingested one a second; the story's own time up to 6 h earlier, or none.
        seen = [start + timedelta(seconds=i) for i in range(drafts)]
        published = [
            None if i % 10 == 3 else seen[i] - timedelta(seconds=rng.randint(0, 6 * 3600))
            for i in range(drafts)
        ]
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
                "seen_at": seen[i],
                "published_at": published[i],
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
                "evidence": None,
                "created_at": now,
            }
            for i in range(1, drafts + 1, 10)
        ]
        with Session(conn) as session:  # one verdict set an item, with its state (flagged)
            for start in range(0, len(flags), 1000):
                verdicts.write(session, flags[start : start + 1000])
            session.flush()
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


def _filter(typed: str, options: dict) -> QueueFilter:
    return QueueFilter(search=typed, **options)


def like_scan(session: Session, typed: str, options: dict) -> None:
    """The search a user would write: each word anywhere in any column, by LIKE,
    with the same filter, order and count cap as the queue's."""
    words = typed.replace('"', "").lstrip("#").split()
    columns = (Item.headline, Item.title, Item.summary, Item.source_text, Item.source_url)
    where = queue_where(_filter("", options)) + [
        or_(*(c.icontains(w, autoescape=True) for c in columns))
        for w in words  # type: ignore[union-attr]
    ]
    capped = select(Item.id).where(*where).limit(SEARCH_COUNT_CAP + 1).subquery()
    session.scalar(select(func.count()).select_from(capped))
    if options.get("order") == "story":
        order = (func.coalesce(Item.published_at, Item.seen_at), Item.id)
    else:
        order = (Item.id,)
    session.execute(select(Item.id).where(*where).order_by(*order).limit(25)).all()


def indexed(session: Session, typed: str, options: dict) -> list[int]:
    filt = _filter(typed, options)
    queue_count(session, filt)
    return [r.id for r in queue_page(session, filt, page=1)]


def indexed_and_open(session: Session, typed: str, options: dict) -> None:
    """The whole queue page of a search: count, list, and the open draft's place."""
    filt = _filter(typed, options)
    ids = indexed(session, typed, options)
    if ids:
        queue_neighbours(session, filt, ids[0])
        queue_position(session, filt, ids[0])


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


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
    print("  {:<14} {:<22} {:>9} {:>7} {:>9} {:>7} {:>9} {:>7} {:>10}".format(*head))
    for label, (typed, options) in SEARCHES.items():
        fast = samples(lambda t=typed, o=options: indexed(session, t, o), 15)
        whole = samples(lambda t=typed, o=options: indexed_and_open(session, t, o), 15)
        slow = samples(lambda t=typed, o=options: like_scan(session, t, o), 15)
        ratio = statistics.median(slow) / statistics.median(fast)
        print(
            f"  {label:<14} {typed:<22} {statistics.median(fast):>9.1f} {p95(fast):>7.1f} "
            f"{statistics.median(whole):>9.1f} {p95(whole):>7.1f} "
            f"{statistics.median(slow):>9.1f} {p95(slow):>7.1f} {ratio:>9.1f}x",
            flush=True,
        )
    print(f"{name}: {load()}")


def drafts_in(engine: sqlalchemy.Engine) -> int:
    with Session(engine) as s:
        return s.scalar(select(func.count()).select_from(Item)) or 0


def bench(url: str, drafts: int) -> None:
    engine = open_store(url)
    if drafts_in(engine) != drafts:  # a kept database is reused as it is
        seed(engine, drafts)
    plain, story, flagged, search = (
        QueueFilter(),
        QueueFilter(order="story"),
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
            "story first page": timed(lambda: queue_page(s, story, page=1)),
            "story next/previous": timed(lambda: queue_neighbours(s, story, middle)),
            "story position": timed(lambda: queue_position(s, story, middle)),
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("drafts", nargs="?", type=int, default=100_000)
    parser.add_argument("--keep", metavar="DIR", help="keep the seeded databases, reuse them")
    args = parser.parse_args()
    drafts = args.drafts
    print(f"{load()} at the start", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        bench(f"sqlite:///{folder}/queue-{drafts}.db", drafts)
    pg = os.environ.get("COPYDESK_TEST_PG_URL")
    if pg:
        database = f"copydesk_bench_queue_{drafts}"
        admin = sqlalchemy.create_engine(pg, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            there = conn.exec_driver_sql(
                "SELECT 1 FROM pg_database WHERE datname = %(d)s", {"d": database}
            ).scalar()
            if there and not args.keep:
                conn.exec_driver_sql(f"DROP DATABASE {database} WITH (FORCE)")
            if not there or not args.keep:
                conn.exec_driver_sql(f"CREATE DATABASE {database}")
        try:
            bench(pg.rsplit("/", 1)[0] + "/" + database, drafts)
        finally:
            if not args.keep:
                with admin.connect() as conn:
                    conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


if __name__ == "__main__":
    main()
