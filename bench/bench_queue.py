"""The review queue's queries at newsroom scale: 100,000 pending drafts in a
SQLite file (and PostgreSQL when COPYDESK_TEST_PG_URL is set).

    .venv/bin/python bench/bench_queue.py [drafts]

Prints the median time of each query an editor's click runs, and the ratio of
the last page to the first (paging must not get slower with depth by much).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime

import sqlalchemy
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
        rows = [
            {
                "dedup_key": f"https://bench.example.org/{i}",
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


def timed(fn, runs: int = 7) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def bench(url: str, drafts: int) -> None:
    engine = open_store(url)
    seed(engine, drafts)
    plain, flagged, search = (
        QueueFilter(),
        QueueFilter(flagged_only=True),
        QueueFilter(search="plan number 9999"),
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
    print(f"{name}, {drafts:,} drafts: " + ", ".join(f"{k} {v:.1f} ms" for k, v in figures.items()))
    print(f"{name}: last page / first page = {figures['last page'] / figures['first page']:.1f}")
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
