"""Publishing at scale: N approved items to the JSON Lines and Atom targets, on a
SQLite file (and PostgreSQL when COPYDESK_TEST_PG_URL is set).

    .venv/bin/python bench/bench_publish.py [items]

Beside it, the simplest alternative a newsroom would script: read the approved rows
and append each as a JSON line with an fsync, with no gate re-check, no evidence map,
no delivery records and no status moves. Printed as items per second and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from sqlalchemy import make_url, text
from sqlmodel import Session, select

from publish.service import GateConfig, Publisher
from publish.settings import AtomTargetSettings, JsonlTargetSettings
from publish.targets import AtomTarget, JsonlTarget
from store import status as st
from store.db import open_store, session_scope
from store.models import Item

PARAGRAPH = (
    "The Dunmore harbour board voted 7 to 2 on Tuesday to extend the ferry timetable, "
    "adding 14 sailings a week from March at a cost of £412,000, its chair Ilse Marrow said. "
)
SUMMARY = "The Dunmore harbour board voted 7 to 2 to add 14 sailings a week at a cost of £412,000."


def seed(url: str, items: int) -> None:
    engine = open_store(url)
    with session_scope(engine) as session:
        for i in range(items):
            item = Item(
                dedup_key=f"https://bench.example.org/{i}",
                source_url=f"https://bench.example.org/{i}",
                title="Ferry timetable",
                source_text=PARAGRAPH * 12,
                headline="Dunmore adds 14 sailings a week",
                summary=SUMMARY,
            )
            st.create(session, item, actor="bench", reason="bench")
            st.move(session, item, st.DRAFT, actor="bench")
            st.move(session, item, st.APPROVED, actor="editor:ann")
    engine.dispose()


def publish(url: str, folder: Path, with_atom: bool) -> float:
    engine = open_store(url)
    targets = [JsonlTarget(JsonlTargetSettings(path=folder / "items.jsonl"))]
    if with_atom:
        targets.append(AtomTarget(AtomTargetSettings(path=folder / "feed.xml", max_entries=50)))
    publisher = Publisher(engine, targets, actor="bench", gates=GateConfig(min_source_words=40))
    start = time.perf_counter()
    report = publisher.publish()
    elapsed = time.perf_counter() - start
    assert report.clean, (len(report.blocked), len(report.pending), len(report.failed))
    engine.dispose()
    return elapsed


def naive(url: str, folder: Path) -> float:
    engine = open_store(url)
    start = time.perf_counter()
    with Session(engine) as session, open(folder / "naive.jsonl", "ab") as out:
        for item in session.scalars(select(Item).where(Item.status == st.PUBLISHED)):
            line = {"id": item.id, "headline": item.headline, "summary": item.summary}
            out.write(json.dumps(line).encode() + b"\n")
            out.flush()
            os.fsync(out.fileno())
    elapsed = time.perf_counter() - start
    engine.dispose()
    return elapsed


def run(label: str, make_url_for: callable, items: int) -> None:
    rates = {}
    for with_atom in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            url = make_url_for(tmp)
            seed(url, items)
            rates["publish jsonl" + (" + atom" if with_atom else "")] = items / publish(
                url, Path(tmp), with_atom
            )
            if not with_atom:
                rates["naive script"] = items / naive(url, Path(tmp))
    base = rates["naive script"]
    for name, rate in rates.items():
        print(f"{label:10} {name:22} {rate:9.0f} items/s   {rate / base:6.3f}x the naive script")


def pg_database(server: str, name: str) -> str:
    url = make_url(server).set(drivername="postgresql+psycopg")
    admin = open_store  # noqa: F841 - the server's own database is used only to create ours
    from sqlalchemy import create_engine

    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return url.set(database=name).render_as_string(hide_password=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("items", nargs="?", type=int, default=300, help="approved items")
    items = parser.parse_args().items
    run("sqlite", lambda tmp: f"sqlite:///{tmp}/bench.db", items)
    server = os.environ.get("COPYDESK_TEST_PG_URL")
    if server:
        counter = iter(range(10))
        run(
            "postgres",
            lambda tmp: pg_database(server, f"copydesk_bench_publish_{next(counter)}"),
            items,
        )


if __name__ == "__main__":
    main()
