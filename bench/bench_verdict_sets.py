"""The database's size with gate verdicts as rows, and as one packed set per attempt.

    .venv/bin/python bench/bench_verdict_sets.py [articles] [words]

bench/bench_ledger.py's loopback run (320 articles of 300 words by default), then the
same file with its `gate_verdicts` rows moved into `verdict_sets`
(`store.verdicts.move_rows_to_sets`, issue 19 §4): both VACUUMed, each as a ratio to
the stored source text, side by side in one run. Until the writers write sets, this
is how the set is measured.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_ledger import measure, table_bytes  # noqa: E402
from store import verdicts  # noqa: E402
from store.db import make_engine, session_scope  # noqa: E402

VERDICT_TABLES = ("gate_verdicts", "verdict_sets")


def file_bytes(db: Path) -> int:
    """The database's pages after a checkpoint and VACUUM."""
    con = sqlite3.connect(db)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("VACUUM")
        return (
            con.execute("PRAGMA page_count").fetchone()[0]
            * con.execute("PRAGMA page_size").fetchone()[0]
        )
    finally:
        con.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("articles", nargs="?", type=int, default=320)
    parser.add_argument("words", nargs="?", type=int, default=300, help="words per article")
    args = parser.parse_args(argv)
    articles, words = args.articles, args.words
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ["BENCH_LEDGER_DIR"] = str(folder)
        source = measure(articles, words)["source_bytes"]
        assert isinstance(source, int)
        rows, sets = folder / "bench.db", folder / "sets.db"
        con = sqlite3.connect(rows)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()
        shutil.copy(rows, sets)
        engine = make_engine(f"sqlite:///{sets}")
        with session_scope(engine) as session:
            moved = verdicts.move_rows_to_sets(session)
        engine.dispose()
        print(f"{articles} articles of {words} words; {moved} verdicts moved into sets")
        for name, db in (("rows", rows), ("sets", sets)):
            size, tables = file_bytes(db), table_bytes(db)
            parts = ", ".join(f"{t} {tables.get(t, 0) / source:.3f}x" for t in VERDICT_TABLES)
            print(
                f"  as {name}: file {size:,} bytes, {size / source:.3f}x the source text ({parts})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
