"""The database's size per article (issue 19 §4: the whole database under 3x the
stored source text per article on the 320-article loopback run, bench/bench_ledger.py).

- A new SQLite database is made with 4 KB pages (8 KB before the source text was
  packed, migration 0026: a row was 2.6 KB then, about 1 KB now, and every table
  and index with few rows takes a whole page); an existing database keeps the page
  size it was made with.
- What the database grows by per article, through a real `copydesk run` with the
  real `anthropic` SDK against the loopback stand-in, is pinned as a multiple of the
  articles' text (bytes on disk after VACUUM, never a timing).
"""

from __future__ import annotations

import random
import sqlite3

from sqlalchemy import text

from bench.bench_ledger import article, measure
from store import search
from store.db import make_engine, migrate
from store.packing import SQL_UNPACK, sql_unpack

PAGE = 4096


def test_a_new_sqlite_database_is_made_with_4_kb_pages(tmp_path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'new.db'}")
    migrate(engine)
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA page_size")).scalar() == PAGE
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    engine.dispose()


def test_an_existing_database_keeps_its_page_size(tmp_path) -> None:
    path = tmp_path / "old.db"
    con = sqlite3.connect(path)
    con.execute("PRAGMA page_size=8192")  # made while copydesk chose 8 KB
    con.execute("CREATE TABLE kept (id INTEGER PRIMARY KEY, note TEXT)")
    con.execute("INSERT INTO kept (note) VALUES ('Esk Holme ferry timetable')")
    con.commit()
    con.close()
    engine = make_engine(f"sqlite:///{path}")
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA page_size")).scalar() == 8192
        assert conn.execute(text("SELECT note FROM kept")).scalar() == "Esk Holme ferry timetable"
    engine.dispose()


def test_the_database_per_article_is_a_bounded_multiple_of_the_source_text(
    monkeypatch,
) -> None:
    # measure() points the SDK at its loopback server through the environment.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "unset")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.delenv("BENCH_LEDGER_DIR", raising=False)
    figures = measure(64, 300)
    assert figures["drafts"] == 64
    source = figures["source_bytes"]
    payload = figures["payload_bytes"]
    assert isinstance(source, int) and isinstance(payload, int)
    # What the rows and index entries hold (no page slack: deterministic but for
    # timestamps and ids), and the file itself (its fixed part, one page or more
    # per table, is about 0.2 MB of 4 KB pages, 3.5x the text of 64 articles).
    print(f"payload {payload / source:.2f}x, file {figures['ratio']}x the source text")
    assert payload / source < PAYLOAD, (payload, source)
    assert figures["ratio"] < FILE, figures


# Measured 2.35x and 4.62x since the verdicts are one packed set an attempt (0040);
# 2.82x and 5.18x since a call's settings are a row of their own (0038);
# 2.92x and 5.25x with the table verdict_sets still empty beside gate_verdicts
# (0037: two fixed 4 KB pages, its table and its index); 2.92x and 5.18x since a
# passing gate's fixed reason is a code too (0036);
# 2.97x and 5.25x since a verdict's gate, stage and mode are codes (0035);
# 3.08x and 5.32x since rows name their ledger parts by a 64-bit prefix
# (0034); 3.21x and 5.49x before, since a part that quotes its item's text is packed
# against it (0033); 3.48x and 5.8x before that (3.60x, 5.98x before 0031-0032; 3.72x,
# 6.12x before 0030; 4.21x, 6.6x before 0028).
PAYLOAD = 2.42
FILE = 4.72


def _fts_bytes(db) -> int:  # type: ignore[no-untyped-def]
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT sum(length(block)) FROM items_fts_data").fetchone()[0]
    finally:
        con.close()


def _indexed_in_commits(path, articles: int = 120, per_commit: int = 8):  # type: ignore[no-untyped-def]
    """A database whose items were written as a run writes them, in commits of a few:
    found (title and text), then given their summary; no run, so no thread timing."""
    engine = make_engine(f"sqlite:///{path}")
    migrate(engine)
    rng = random.Random(24)
    for start in range(0, articles, per_commit):
        with engine.begin() as conn:
            for i in range(start, min(start + per_commit, articles)):
                conn.execute(
                    text(
                        "INSERT INTO items (id, dedup_key, title, source_text, status, version, "
                        "attempts, recorded_reply, seen_at, created_at, updated_at) VALUES "
                        "(:id, :key, :title, :text, 'new', 1, 0, false, CURRENT_TIMESTAMP, "
                        "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                    ),
                    {
                        "id": i + 1,
                        "key": f"https://tollmere.example.test/{i}",
                        "title": f"Tollmere story {i}",
                        "text": article(rng, i, 300),
                    },
                )
    for start in range(0, articles, per_commit):
        with engine.begin() as conn:
            conn.execute(
                text(
                    "UPDATE items SET headline = title, summary = substr(source_text, 1, 240) "
                    "WHERE id > :a AND id <= :b"
                ),
                {"a": start, "b": start + per_commit},
            )
    return engine


def test_the_merge_leaves_the_search_index_as_small_as_optimized(tmp_path) -> None:
    # Each commit adds an FTS5 segment, and an item's change (its summary as a
    # draft) leaves its old entries in the older ones until they are merged.
    db = tmp_path / "index.db"
    engine = _indexed_in_commits(db)
    unmerged = _fts_bytes(db)
    search.merge_index(engine)
    engine.dispose()
    after_merge = _fts_bytes(db)
    con = sqlite3.connect(db)
    con.execute("INSERT INTO items_fts(items_fts) VALUES ('optimize')")
    con.commit()
    con.close()
    optimized = _fts_bytes(db)
    assert unmerged > 1.5 * optimized, (unmerged, optimized)  # what the merge is for
    assert after_merge <= 1.1 * optimized, (after_merge, optimized)


def test_the_merge_after_a_run_does_not_rewrite_a_merged_index(tmp_path, monkeypatch) -> None:
    # A newsroom's index grows for years: the merge at a run's end merges what the
    # run added, not the whole index again (an incremental rewrite of all of it
    # would hold two copies while it lasts, and write the whole index every run).
    monkeypatch.setenv("ANTHROPIC_API_KEY", "unset")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("BENCH_LEDGER_DIR", str(tmp_path))
    assert measure(40, 300)["drafts"] == 40
    db = tmp_path / "bench.db"
    con = sqlite3.connect(db)
    # The run ended with the merge (its setting is the index's own).
    assert con.execute("SELECT v FROM items_fts_config WHERE k = 'usermerge'").fetchone() == (2,)
    con.execute("INSERT INTO items_fts(items_fts) VALUES ('optimize')")
    con.commit()
    merged = set(con.execute("SELECT id, block FROM items_fts_data WHERE id > 10"))
    con.create_function(SQL_UNPACK, 1, sql_unpack)  # the search index's triggers read it
    con.execute(
        "INSERT INTO items (dedup_key, title, source_text, status, version, attempts, "
        "recorded_reply, seen_at, created_at, updated_at) VALUES ('https://esk.example.test/1', "
        "'Esk Holme quay', 'The Esk Holme quay reopened on Friday after repairs.', 'new', 1, 0, "
        "0, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
    )
    con.commit()
    con.close()
    engine = make_engine(f"sqlite:///{db}")
    search.merge_index(engine)
    engine.dispose()
    con = sqlite3.connect(db)
    kept = merged & set(con.execute("SELECT id, block FROM items_fts_data WHERE id > 10"))
    # The index keeps no positions (migration 0028): FTS5 answers words, not phrases.
    found = con.execute(
        "SELECT rowid FROM items_fts WHERE items_fts MATCH 'Esk AND Holme AND quay'"
    )
    assert [row[0] for row in found] != []
    con.close()
    assert len(kept) >= 0.9 * len(merged), (len(kept), len(merged))
