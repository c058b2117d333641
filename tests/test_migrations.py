"""Migrations: a fresh database needs no set-up, a second start changes nothing, and
the SQLModel classes cannot drift from the migrated schema unnoticed."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import exc as sa_exc
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SAWarning
from sqlmodel import SQLModel

import store.models  # noqa: F401 - registers every table on SQLModel.metadata
from store import claims, search
from store import db as store_db
from store import status as st
from store.db import StoreError, alembic_config, make_engine, migrate, open_store, session_scope
from store.models import Item
from tests.db_catalog import trigger_names

ROOT = Path(__file__).resolve().parent.parent
MODEL_TABLES = frozenset(SQLModel.metadata.tables)
APPEND_ONLY_TRIGGERS = {
    "sqlite": {"audit_events_no_update", "audit_events_no_delete", "audit_events_no_replace"},
    "postgresql": {"audit_events_no_update_delete", "audit_events_no_truncate"},
}


def head_revision(engine: Engine) -> str:
    head = ScriptDirectory.from_config(alembic_config(engine)).get_current_head()
    assert head is not None
    return head


def current_revisions(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        return [row[0] for row in conn.execute(text("SELECT version_num FROM alembic_version"))]


def schema_fingerprint(engine: Engine) -> dict[str, Any]:
    """Everything about the schema a migration could change, in comparable form."""
    inspector = inspect(engine)
    tables: dict[str, Any] = {}
    for name in sorted(inspector.get_table_names()):
        tables[name] = {
            "columns": [
                (c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns(name)
            ],
            "indexes": sorted(
                (i["name"], tuple(i["column_names"]), bool(i["unique"]))
                for i in _indexes(inspector, name)
            ),
            "foreign_keys": sorted(
                (tuple(f["constrained_columns"]), f["referred_table"])
                for f in inspector.get_foreign_keys(name)
            ),
        }
    return {"tables": tables, "triggers": sorted(trigger_names(engine))}


@contextmanager
def _no_expression_index_warning() -> Iterator[None]:
    """SQLAlchemy cannot reflect an expression index on SQLite and warns; the
    story-order index is checked from the catalog instead (tests/test_search_order.py)."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", "Skipped unsupported reflection of expression-based index", SAWarning
        )
        yield


def _indexes(inspector: Any, table: str) -> list[Any]:
    with _no_expression_index_warning():
        return inspector.get_indexes(table)


def _not_search_index(obj: Any, name: str | None, kind: str, reflected: bool, _: Any) -> bool:
    """The full-text index, the story-order expression index (store/search.py) and
    the waiting items' partial index (store/claims.py) live beside the models, not in
    them."""
    if kind == "table":
        return name not in search.SQLITE_TABLES
    return name not in (
        search.PG_COLUMN,
        search.PG_INDEX,
        search.STORY_ORDER_INDEX,
        claims.WAITING_INDEX,
    )


def model_diffs(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn,
            opts={
                "compare_type": True,
                "compare_server_default": True,
                "include_object": _not_search_index,
            },
        )
        with _no_expression_index_warning():
            return compare_metadata(context, SQLModel.metadata)


def add_item(engine: Engine, key: str) -> int:
    with session_scope(engine) as session:
        item = Item(dedup_key=key, title="Council in Tarrow approves new bus depot")
        st.create(session, item, actor="cli", reason="submitted by the test")
        st.move(session, item, "draft", actor="run:1")
        assert item.id is not None
        return item.id


def test_open_store_on_a_fresh_database_creates_every_table(engine: Engine) -> None:
    tables = set(inspect(engine).get_table_names()) - search.SQLITE_TABLES
    assert tables == MODEL_TABLES | {"alembic_version"}
    assert {"items", "audit_events", "feeds", "gate_verdicts", "model_calls", "runs"} <= tables
    assert current_revisions(engine) == [head_revision(engine)]
    assert APPEND_ONLY_TRIGGERS[engine.dialect.name] <= trigger_names(engine)


def test_open_store_twice_is_a_no_op(db_url: str) -> None:
    first = open_store(db_url)
    try:
        item_id = add_item(first, "https://tarrow.example.test/depot")
        fingerprint = schema_fingerprint(first)
        revisions = current_revisions(first)
    finally:
        first.dispose()

    second = open_store(db_url)
    try:
        migrate(second)  # and a third time, on the same engine
        assert schema_fingerprint(second) == fingerprint
        assert current_revisions(second) == revisions == [head_revision(second)]
        with session_scope(second) as session:
            item = session.get(Item, item_id)
            assert (item.dedup_key, item.status) == ("https://tarrow.example.test/depot", "draft")
    finally:
        second.dispose()


def test_models_match_the_migrated_schema(engine: Engine) -> None:
    """A model changed without a migration (or the reverse) shows up here as a diff.
    The fix is a new revision in store/migrations/versions, not an edit of this test."""
    assert model_diffs(engine) == []


def test_downgrade_to_base_then_upgrade_again(engine: Engine) -> None:
    fresh = schema_fingerprint(engine)
    config = alembic_config(engine)

    command.downgrade(config, "base")
    assert set(inspect(engine).get_table_names()) == {"alembic_version"}
    assert current_revisions(engine) == []
    assert trigger_names(engine) == set()
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            leftover = conn.scalar(
                text("SELECT count(*) FROM pg_proc WHERE proname = 'audit_events_append_only'")
            )
        assert leftover == 0

    command.upgrade(config, "head")
    assert schema_fingerprint(engine) == fresh
    assert model_diffs(engine) == []

    # The rebuilt schema works and its audit log is append-only again.
    item_id = add_item(engine, "https://tarrow.example.test/after-downgrade")
    with pytest.raises(sa_exc.DBAPIError, match="append-only"):
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM audit_events WHERE item_id = :id"), {"id": item_id})


def assert_migrated_once(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        assert current_revisions(engine) == [head_revision(engine)]
        assert set(inspect(engine).get_table_names()) - search.SQLITE_TABLES == MODEL_TABLES | {
            "alembic_version"
        }
        assert model_diffs(engine) == []
    finally:
        engine.dispose()


def test_threads_opening_a_fresh_database_at_once_all_succeed(db_url: str) -> None:
    """Streamlit serves each browser session on a thread of one process: several
    may open the store at the same moment."""
    starters = 3
    all_ready = threading.Barrier(starters)
    errors: list[BaseException] = []

    def start() -> None:
        engine = make_engine(db_url)
        try:
            all_ready.wait(timeout=30)
            migrate(engine)
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)
        finally:
            engine.dispose()

    threads = [threading.Thread(target=start) for _ in range(starters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert errors == []
    assert_migrated_once(db_url)


# Each child makes its engine, says it is ready, waits until all are, then migrates:
# the migrations overlap as closely as separate processes can make them.
CHILD = """
import os, sys, time, pathlib
from store.db import make_engine, migrate
url, gate, count = sys.argv[1], pathlib.Path(sys.argv[2]), int(sys.argv[3])
engine = make_engine(url)
(gate / f"ready-{os.getpid()}").touch()
give_up = time.monotonic() + 60
while len(list(gate.glob("ready-*"))) < count and time.monotonic() < give_up:
    time.sleep(0.002)
migrate(engine)
"""


def test_processes_opening_a_fresh_database_at_once_all_succeed(
    db_url: str, tmp_path: Path
) -> None:
    """A cron run and the review queue (or workers on several machines) starting
    together on an empty database: the later ones must wait for the first migration,
    not fail with 'table already exists'."""
    starters = 3
    gate = tmp_path / "gate"
    gate.mkdir()
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, db_url, str(gate), str(starters)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(starters)
    ]
    results = [(child.wait(timeout=120), child.stderr.read()) for child in children]
    for child in children:
        child.stdout.close()
        child.stderr.close()

    assert [code for code, _ in results] == [0] * starters, [err for _, err in results]
    assert_migrated_once(db_url)


def test_opening_a_file_another_process_holds_waits_for_it_instead_of_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The clean-clone CI once failed 2 of 3 processes opening a fresh file at once
    with "database is locked": switching a rollback-mode file to WAL needs the lock,
    and SQLite gives up after busy_timeout (or at once where waiting could deadlock).
    Here another connection holds the file exclusively past a short busy_timeout;
    the opener must ask again and open once the lock is gone."""
    path = tmp_path / "held.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE earlier (x)")  # a file in rollback mode
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(store_db, "SQLITE_BUSY_MS", 50)
    refused_once = threading.Event()
    pause = store_db._pause_before_asking_again

    def note_and_pause() -> None:
        refused_once.set()
        pause()

    monkeypatch.setattr(store_db, "_pause_before_asking_again", note_and_pause)
    engine = make_engine(f"sqlite:///{path}")
    outcome: dict[str, object] = {}

    def open_it() -> None:
        try:
            with engine.connect() as conn:
                outcome["mode"] = conn.exec_driver_sql("PRAGMA journal_mode").scalar()
        except Exception as exc:  # noqa: BLE001 - the test reports it
            outcome["error"] = repr(exc)

    opener = threading.Thread(target=open_it)
    opener.start()
    # Released only after the opener has been refused at least once (or has ended).
    while not refused_once.is_set() and opener.is_alive():
        opener.join(0.05)
    holder.execute("COMMIT")
    holder.close()
    opener.join(120)
    engine.dispose()
    assert outcome == {"mode": "wal"}


def test_unreachable_database_is_a_store_error_without_the_password() -> None:
    engine = make_engine("postgresql://copydesk:hunter2-secret@127.0.0.1:1/copydesk")
    try:
        with pytest.raises(StoreError) as caught:
            migrate(engine)
    finally:
        engine.dispose()
    message = str(caught.value)
    assert "could not be brought up to date" in message
    assert "hunter2-secret" not in message
    assert "copydesk:***@127.0.0.1:1/copydesk" in message


def test_plain_postgresql_urls_use_psycopg_3() -> None:
    engine = make_engine("postgresql://copydesk:pw@db.example.test/copydesk")
    try:
        assert (engine.dialect.name, engine.dialect.driver) == ("postgresql", "psycopg")
    finally:
        engine.dispose()


def test_sqlite_file_in_a_missing_folder_is_refused(tmp_path: Path) -> None:
    """A typo in the path must not quietly start a new, empty newsroom."""
    path = tmp_path / "not" / "yet" / "there" / "copydesk.db"
    with pytest.raises(StoreError, match="does not exist"):
        open_store(f"sqlite:///{path}")
    assert not path.parent.exists()


# --- 0003_audit_chain ---------------------------------------------------------------------


def test_audit_chain_migration_chains_the_events_already_there(db_url: str) -> None:
    """A database at the revision before 0003, with items and events in it, comes
    out with every event kept, chained in id order, and still append-only."""
    from store.audit_chain import verify

    engine = make_engine(db_url)
    config = alembic_config(engine)
    script = ScriptDirectory.from_config(config)
    previous = script.get_revision("0003_audit_chain").down_revision
    assert isinstance(previous, str)
    try:
        command.upgrade(config, previous)
        with engine.begin() as conn:
            for n in range(3):
                item_id = conn.execute(
                    text(
                        "INSERT INTO items (dedup_key, seen_at, recorded_reply, status, version, "
                        "attempts, created_at, updated_at) VALUES (:key, :at, false, 'draft', 1, "
                        "0, :at, :at) RETURNING id"
                    ),
                    {"key": f"https://tarrow.example.test/{n}", "at": "2026-11-30 10:00:00"},
                ).scalar_one()
                for from_status, to_status, details in (
                    (None, "new", {"feed": "Tarrow Courier", "entry": n}),
                    ("new", "draft", None),
                ):
                    conn.execute(
                        text(
                            "INSERT INTO audit_events (item_id, at, actor, from_status, "
                            "to_status, reason, details) VALUES (:item, :at, 'run:1', :f, :t, "
                            "'from the old schema', :details)"
                        ),
                        {
                            "item": item_id,
                            "at": f"2026-11-30 10:00:0{n}.25",
                            "f": from_status,
                            "t": to_status,
                            "details": None if details is None else json.dumps(details),
                        },
                    )
        with engine.connect() as conn:
            old = conn.execute(
                text("SELECT id, item_id, actor, to_status, reason FROM audit_events ORDER BY id")
            ).all()

        command.upgrade(config, "0003_audit_chain")

        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT id, item_id, actor, to_status, reason, prev_hash, hash "
                    "FROM audit_events ORDER BY id"
                )
            ).all()
        assert [tuple(row[:5]) for row in rows] == [tuple(row) for row in old]
        assert len(rows) == 6
        assert all(row.hash and len(row.hash) == 64 for row in rows)
        report = verify(engine)
        assert (report.ok, report.events, report.head) == (True, 6, rows[-1].hash)
        assert APPEND_ONLY_TRIGGERS[engine.dialect.name] <= trigger_names(engine)
        with pytest.raises(sa_exc.DBAPIError, match="append-only"):
            with engine.begin() as conn:
                conn.execute(text("UPDATE audit_events SET reason = 'rewritten'"))

        # The chain goes on from where the migration left it.
        command.upgrade(config, "head")
        add_item(engine, "https://tarrow.example.test/after")
        assert verify(engine).events == 8
        assert verify(engine).ok
    finally:
        engine.dispose()
