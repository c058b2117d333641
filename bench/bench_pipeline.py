"""Pipeline throughput: a local feed of generated articles, the extractive
summariser, a fresh SQLite file (and PostgreSQL when COPYDESK_TEST_PG_URL is set).

    .venv/bin/python bench/bench_pipeline.py [entries]

Prints items per second for a first run (everything new) and a second run
(everything already seen), and, measured in the same process, the share of the
first run spent in the deterministic gates, so the figures read as ratios.
"""

from __future__ import annotations

import argparse
import random
import resource
import tempfile
import time
from html import escape
from pathlib import Path

from copydesk.config import FeedSettings, Settings
from copydesk.services.pipeline import Pipeline
from guards.registry import DRAFT_GATES, SOURCE_GATES, run_gates
from ingest.fetch import Fetcher
from store.db import open_store
from summarise.extractive import ExtractiveSummariser

PLACES = ["Ostbrook", "Carrow Vale", "Linfield", "Marrow Bay", "Esk Holme", "Tarrow"]
SUBJECTS = ["the council", "the harbour board", "the school trust", "the health board"]
VERBS = ["approved", "delayed", "published", "rejected", "funded", "reviewed"]
THINGS = [
    "a budget of £{n},000",
    "{n} new homes",
    "a {n}-page report",
    "{n} jobs",
    "a {n}% rise in fares",
    "repairs costing £{m}.{d}m",
]


def paragraph(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randrange(3, 6)):
        thing = rng.choice(THINGS).format(
            n=rng.randrange(11, 990), m=rng.randrange(1, 9), d=rng.randrange(0, 9)
        )
        sentences.append(
            f"In {rng.choice(PLACES)}, {rng.choice(SUBJECTS)} {rng.choice(VERBS)} {thing} "
            f"on {rng.choice(['Monday', 'Tuesday', 'Friday'])}, officials said."
        )
    return " ".join(sentences)


def build_feed(path: Path, entries: int) -> None:
    rng = random.Random(7)
    items = []
    for i in range(entries):
        body = "".join(f"<p>{escape(paragraph(rng))}</p>" for _ in range(8))
        items.append(
            f"<item><title>Bench story {i}</title><link>https://bench.example.org/{i}</link>"
            f"<guid>bench-{i}</guid><content:encoded><![CDATA[{body}]]></content:encoded></item>"
        )
    path.write_text(
        '<?xml version="1.0"?><rss version="2.0" '
        'xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>'
        f"<title>Bench</title>{''.join(items)}</channel></rss>"
    )


def bench(url: str, feed: Path, entries: int) -> None:
    settings = Settings(feeds=[FeedSettings(url=str(feed), name="bench")])
    settings.database.url = url
    engine = open_store(url)
    summariser = ExtractiveSummariser()
    timings = []
    with Fetcher(settings.ingest) as fetcher:
        for _ in range(2):
            started = time.perf_counter()
            report = Pipeline(settings, engine, summariser, fetcher).run()
            timings.append(time.perf_counter() - started)
    first, second = timings
    drafts = report.totals()
    # The gates alone, on the same articles and drafts, in this process.
    from sqlmodel import Session, select

    from store.models import Item

    with Session(engine) as session:
        pairs = [
            (i.source_text, i.source_url, f"{i.headline}\n\n{i.summary}")
            for i in session.exec(select(Item))
        ]
    started = time.perf_counter()
    for source, src_url, draft in pairs:
        run_gates(SOURCE_GATES + DRAFT_GATES, source, src_url, draft, modes={})
    gates = time.perf_counter() - started
    name = url.split(":", 1)[0]
    print(
        f"{name}: first run {entries / first:,.0f} items/s ({first:.2f} s), "
        f"second run {entries / second:,.0f} entries/s; second/first time = "
        f"{second / first:.2f}; gates are {gates / first:.0%} of the first run; "
        f"drafts in db {len(pairs)} (second run new={drafts['new']})"
    )
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("entries", nargs="?", type=int, default=400, help="feed entries")
    entries = parser.parse_args().entries
    with tempfile.TemporaryDirectory() as tmp:
        feed = Path(tmp) / "feed.xml"
        build_feed(feed, entries)
        bench(f"sqlite:///{tmp}/bench.db", feed, entries)
        import os

        pg = os.environ.get("COPYDESK_TEST_PG_URL")
        if pg:
            import sqlalchemy

            admin = sqlalchemy.create_engine(pg, isolation_level="AUTOCOMMIT")
            with admin.connect() as conn:
                conn.exec_driver_sql("DROP DATABASE IF EXISTS copydesk_bench WITH (FORCE)")
                conn.exec_driver_sql("CREATE DATABASE copydesk_bench")
            bench(pg.rsplit("/", 1)[0] + "/copydesk_bench", feed, entries)
            with admin.connect() as conn:
                conn.exec_driver_sql("DROP DATABASE IF EXISTS copydesk_bench WITH (FORCE)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MiB for {entries} entries")


if __name__ == "__main__":
    main()
