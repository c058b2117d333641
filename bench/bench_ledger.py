"""The database's size per article after a loopback run with the Anthropic backend.

    .venv/bin/python bench/bench_ledger.py [articles] [words]

A local feed of `articles` distinct invented articles of about `words` words (320
and 300 by default: issue 19's measure), `copydesk run` in this process with the
real `anthropic` SDK against the loopback stand-in of the Messages API
(tests/anthropic_fake.py: a grounded summary, then a check call per draft), on a
fresh SQLite file. Prints the database's size (after VACUUM) and the bytes per table,
each as a ratio to the stored source text, so the figure reads the same on any
machine. The goal (issue 19): the whole database under 3x the source text.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from typer.testing import CliRunner  # noqa: E402

from copydesk.cli import app  # noqa: E402
from store.packing import sql_unpack  # noqa: E402
from tests import anthropic_fake as fake_api  # noqa: E402
from tests.articles import paragraphs_html, rss  # noqa: E402

KEY = "sk-ant-bench-0123456789abcdef"
PLACES = ["Ostbrook", "Carrow Vale", "Linfield", "Marrow Bay", "Esk Holme", "Tarrow", "Quillan"]
SUBJECTS = ["the council", "the harbour board", "the school trust", "the ferry company"]
VERBS = ["approved", "delayed", "published", "rejected", "funded", "reviewed", "questioned"]
THINGS = [
    "a budget of {n},000 pounds",
    "{n} new homes",
    "a {n}-page report on the quay",
    "{n} jobs at the yard",
    "a {n} per cent rise in fares",
    "repairs to {n} bridges",
]


def article(rng: random.Random, i: int, words: int) -> str:
    sentences = [f"Dispatch {i} from the Tollmere desk."]
    while sum(len(s.split()) for s in sentences) < words:
        thing = rng.choice(THINGS).format(n=rng.randrange(11, 990))
        sentences.append(
            f"In {rng.choice(PLACES)}, {rng.choice(SUBJECTS)} {rng.choice(VERBS)} {thing} "
            f"on {rng.choice(['Monday', 'Tuesday', 'Friday'])}, officials said."
        )
    paragraphs = [" ".join(sentences[k : k + 4]) for k in range(0, len(sentences), 4)]
    return "\n\n".join(paragraphs)


def build(folder: Path, articles: int, words: int) -> Path:
    rng = random.Random(19)
    entries = [
        {
            "guid": f"b-{i}",
            "title": f"Bench story {i}",
            "link": f"https://bench.example.org/{i}",
            "content": paragraphs_html(article(rng, i, words)),
        }
        for i in range(articles)
    ]
    (folder / "feed.xml").write_text(rss(entries))
    config = folder / "config.toml"
    config.write_text(
        '[database]\nurl = "sqlite:///bench.db"\n\n'
        '[summarise]\nbackend = "anthropic"\nmax_retries = 0\nmax_concurrency = 4\n\n'
        '[[feeds]]\nname = "bench"\nurl = "feed.xml"\n'
    )
    return config


def table_bytes(db: Path) -> dict[str, int]:
    """Bytes of each table with its indexes (SQLite's dbstat), when compiled in."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute(
            "SELECT coalesce(m.tbl_name, s.name), sum(s.pgsize) FROM dbstat s "
            "LEFT JOIN sqlite_master m ON m.name = s.name GROUP BY 1 ORDER BY 2 DESC"
        ).fetchall()
    except sqlite3.OperationalError:
        return {}
    finally:
        con.close()
    return {name: size for name, size in rows}


def payload_bytes(db: Path) -> int | None:
    """The bytes the rows and index entries hold, without the pages' empty space
    (SQLite's dbstat): what a page size does not change."""
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT sum(payload) FROM dbstat").fetchone()[0]
    except sqlite3.OperationalError:
        return None
    finally:
        con.close()


def measure(articles: int = 320, words: int = 300) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(os.environ.get("BENCH_LEDGER_DIR") or tmp)
        config = build(folder, articles, words)
        fake = fake_api.FakeAnthropic(responder=fake_api.first_sentences_responder(), api_key=KEY)
        os.environ.update(ANTHROPIC_API_KEY=KEY)
        runner = CliRunner()
        init = runner.invoke(app, ["--config", str(config), "init"])
        if init.exit_code != 0:
            raise SystemExit(f"init failed ({init.exit_code}): {init.output[-2000:]}")
        with fake.serve() as base_url:
            os.environ["ANTHROPIC_BASE_URL"] = base_url
            result = runner.invoke(app, ["--config", str(config), "run", "--json"])
        if result.exit_code != 0:
            raise SystemExit(f"the run failed ({result.exit_code}): {result.output[-2000:]}")
        totals = json.loads(result.stdout)["totals"]
        db = folder / "bench.db"
        con = sqlite3.connect(db)
        con.execute("VACUUM")
        # The articles' text as written, not as stored (packed since migration 0026).
        texts = [sql_unpack(v) or "" for (v,) in con.execute("SELECT source_text FROM items")]
        source = (sum(len(t.encode()) for t in texts), len(texts))
        # The database's size in pages, not the file's: in WAL mode the file shrinks
        # only when a checkpoint runs, which a connection still open elsewhere in
        # this process (the run's engine) can put off.
        pages, page_size = (
            con.execute("PRAGMA page_count").fetchone()[0],
            con.execute("PRAGMA page_size").fetchone()[0],
        )
        con.close()
        size = pages * page_size
        tables = table_bytes(db)
        payload = payload_bytes(db)
    source_bytes, items = source
    return {
        "articles": articles,
        "words": words,
        "drafts": totals.get("drafts"),
        "items": items,
        "database_bytes": size,
        "source_bytes": source_bytes,
        "ratio": round(size / source_bytes, 2) if source_bytes else None,
        "payload_bytes": payload,
        "tables": {k: round(v / source_bytes, 2) for k, v in tables.items()}
        if source_bytes
        else {},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("articles", nargs="?", type=int, default=320)
    parser.add_argument("words", nargs="?", type=int, default=300, help="words per article")
    args = parser.parse_args(argv)
    articles, words = args.articles, args.words
    figures = measure(articles, words)
    print(
        f"{figures['items']} items ({figures['drafts']} drafts), {words} words each: database "
        f"{figures['database_bytes']:,} bytes, source text {figures['source_bytes']:,} bytes, "
        f"ratio {figures['ratio']}x (goal: under 3x)"
    )
    for table, ratio in figures["tables"].items():  # type: ignore[union-attr]
        print(f"  {table:<24} {ratio}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
