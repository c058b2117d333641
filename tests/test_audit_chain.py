"""The audit log cannot be rewritten through the application's connection, and
rewriting it with more rights than that shows in `copydesk audit --verify`."""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy import insert, text
from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from copydesk.cli import app
from store import audit_chain
from store import status as st
from store.db import open_store, session_scope
from store.models import AuditEvent, Item
from store.packing import read_digest
from tests.audit_helpers import owner_runs

runner = CliRunner()


def make_item(engine: Engine, road: tuple[str, ...] = ("draft", "approved")) -> int:
    with session_scope(engine) as session:
        item = Item(dedup_key=f"https://news.example.test/{uuid.uuid4().hex}", title="Quay")
        st.create(session, item, actor="cli", reason="submitted by the test")
        for to_status in road:
            actor = "editor:ann" if to_status == "approved" else "run:3"
            st.move(session, item, to_status, actor=actor, details={"n": 1, "why": ("a", 2)})
        assert item.id is not None
        return item.id


def events(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT * FROM audit_events ORDER BY id")).mappings()
        # A hash as hex, however it is stored (32 bytes on SQLite since migration 0031).
        return [dict(row) | {k: read_digest(row[k]) for k in ("prev_hash", "hash")} for row in rows]


def event_ids(engine: Engine) -> list[int]:
    return [row["id"] for row in events(engine)]


# --- SQLite: INSERT OR REPLACE ------------------------------------------------------------


REPLACE_SQL = {
    "insert-or-replace": "INSERT OR REPLACE INTO audit_events "
    "(id, item_id, at, actor, from_status, to_status, reason, prev_hash, hash) "
    "SELECT id, item_id, at, 'editor:nobody', from_status, 'approved', 'rewritten', "
    "prev_hash, hash FROM audit_events WHERE id = :id",
    "replace-into": "REPLACE INTO audit_events "
    "(id, item_id, at, actor, from_status, to_status, reason, prev_hash, hash) "
    "SELECT id, item_id, at, actor, from_status, to_status, 'rewritten', prev_hash, hash "
    "FROM audit_events WHERE id = :id",
    # A new id, but the same previous hash: REPLACE would delete the other event.
    "replace-by-prev-hash": "INSERT OR REPLACE INTO audit_events "
    "(id, item_id, at, actor, from_status, to_status, reason, prev_hash, hash) "
    "SELECT id + 1000, item_id, at, actor, from_status, to_status, 'rewritten', "
    "prev_hash, hash FROM audit_events WHERE id = :id",
    "upsert": "INSERT INTO audit_events "
    "(id, item_id, at, actor, from_status, to_status, reason, prev_hash, hash) "
    "SELECT id, item_id, at, actor, from_status, to_status, reason, prev_hash, hash "
    "FROM audit_events WHERE id = :id ON CONFLICT (id) DO UPDATE SET reason = 'rewritten'",
}


@pytest.mark.parametrize("sql", REPLACE_SQL.values(), ids=REPLACE_SQL.keys())
def test_sqlite_insert_or_replace_by_sql_is_refused(sqlite_engine: Engine, sql: str) -> None:
    make_item(sqlite_engine)
    before = events(sqlite_engine)
    with pytest.raises(sa_exc.DBAPIError, match="append-only"):
        with sqlite_engine.begin() as conn:
            conn.execute(text(sql), {"id": before[1]["id"]})
    assert events(sqlite_engine) == before


def test_sqlite_insert_or_replace_through_the_orm_is_refused(sqlite_engine: Engine) -> None:
    make_item(sqlite_engine)
    before = events(sqlite_engine)
    with session_scope(sqlite_engine) as session:
        victim = session.get(AuditEvent, before[1]["id"])
        assert victim is not None
        forged = victim.model_dump() | {"actor": "editor:nobody", "reason": "rewritten"}
    with pytest.raises(sa_exc.DBAPIError, match="append-only"):
        with session_scope(sqlite_engine) as session:
            session.execute(insert(AuditEvent).prefix_with("OR REPLACE").values(**forged))
    assert events(sqlite_engine) == before


@pytest.mark.parametrize("sql", REPLACE_SQL.values(), ids=REPLACE_SQL.keys())
def test_sqlite_shell_without_our_pragmas_cannot_replace_either(sqlite_url: str, sql: str) -> None:
    """The trigger lives in the database file: a plain sqlite3 connection (no
    recursive_triggers) is refused too."""
    engine = open_store(sqlite_url)
    make_item(engine)
    before = events(engine)
    engine.dispose()
    path = sqlite_url.removeprefix("sqlite:///")
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA recursive_triggers").fetchone() == (0,)
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute(sql.replace(":id", str(before[1]["id"])))
        conn.rollback()
    finally:
        conn.close()
    engine = open_store(sqlite_url)
    try:
        assert events(engine) == before
    finally:
        engine.dispose()


def test_postgres_upsert_cannot_rewrite_an_event(pg_url: str) -> None:
    engine = open_store(pg_url)
    try:
        make_item(engine)
        before = events(engine)
        with pytest.raises(sa_exc.DBAPIError, match="append-only"):
            with engine.begin() as conn:
                conn.execute(text(REPLACE_SQL["upsert"]), {"id": before[1]["id"]})
        assert events(engine) == before
    finally:
        engine.dispose()


# --- The hash chain -----------------------------------------------------------------------


def test_every_event_links_to_the_one_before(engine: Engine) -> None:
    for _ in range(3):
        make_item(engine)
    rows = events(engine)
    assert len(rows) == 9
    assert rows[0]["prev_hash"] == audit_chain.GENESIS
    for before, after in zip(rows, rows[1:], strict=False):
        assert after["prev_hash"] == before["hash"]
    report = audit_chain.verify(engine)
    assert (report.ok, report.events, report.head) == (True, 9, rows[-1]["hash"])


TAMPERS = {
    "reason": "UPDATE audit_events SET reason = 'history rewritten' WHERE id = {id}",
    "actor": "UPDATE audit_events SET actor = 'editor:nobody' WHERE id = {id}",
    "status": "UPDATE audit_events SET to_status = 'rejected' WHERE id = {id}",
    "details": "UPDATE audit_events SET details = '{{\"n\": 2}}' WHERE id = {id}",
    "time": "UPDATE audit_events SET at = at + interval '1 second' WHERE id = {id}",
    "hash": "UPDATE audit_events SET hash = '{fake}' WHERE id = {id}",
}


@pytest.mark.audit_tampered
@pytest.mark.parametrize("change", TAMPERS.keys())
def test_a_changed_event_is_named_by_verify(engine: Engine, change: str) -> None:
    for _ in range(3):
        make_item(engine)
    victim = event_ids(engine)[4]
    sql = TAMPERS[change]
    if change == "time" and engine.dialect.name == "sqlite":
        sql = "UPDATE audit_events SET at = datetime(at, '+1 second') WHERE id = {id}"
    owner_runs(engine, sql.format(id=victim, fake="f" * 64))
    report = audit_chain.verify(engine)
    assert (report.ok, report.bad_event) == (False, victim)


@pytest.mark.audit_tampered
def test_a_changed_and_rehashed_event_breaks_the_next_link(engine: Engine) -> None:
    """Someone who knows the scheme re-hashes the event they changed: the event
    matches its own hash, but the next one still links to the old hash."""
    for _ in range(2):
        make_item(engine)
    ids = event_ids(engine)
    with session_scope(engine) as session:
        victim = session.get(AuditEvent, ids[2])
        assert victim is not None
        victim.reason = "nothing happened here"
        forged = audit_chain.hash_of(victim, victim.prev_hash)
        session.expunge(victim)
    owner_runs(
        engine,
        "UPDATE audit_events SET reason = 'nothing happened here', hash = :forged WHERE id = :id",
        forged=forged,
        id=ids[2],
    )
    report = audit_chain.verify(engine)
    assert (report.ok, report.bad_event) == (False, ids[3])


@pytest.mark.audit_tampered
def test_a_removed_event_is_named_by_verify(engine: Engine) -> None:
    for _ in range(2):
        make_item(engine)
    ids = event_ids(engine)
    owner_runs(engine, "DELETE FROM audit_events WHERE id = :id", id=ids[2])
    report = audit_chain.verify(engine)
    assert (report.ok, report.bad_event) == (False, ids[3])
    assert "previous-event hash" in (report.problem or "")


@pytest.mark.audit_tampered
def test_verify_on_the_command_line(sqlite_url: str, tmp_path: Path) -> None:
    engine = open_store(sqlite_url)
    make_item(engine)
    config = tmp_path / "config.toml"
    # The chain alone: no anchor (the events were written without one kept).
    config.write_text(
        f'[database]\nurl = "{sqlite_url}"\n[runs]\naudit_anchor = ""\n', encoding="utf-8"
    )

    ok = runner.invoke(app, ["-c", str(config), "audit", "--verify"])
    assert ok.exit_code == 0, ok.output
    assert f"audit chain ok: 3 events, head {events(engine)[-1]['hash']}" in ok.stdout

    victim = event_ids(engine)[1]
    owner_runs(engine, "UPDATE audit_events SET reason = 'no' WHERE id = :id", id=victim)
    engine.dispose()
    bad = runner.invoke(app, ["-c", str(config), "audit", "--verify"])
    assert bad.exit_code == 1
    assert bad.stderr.strip().splitlines() == [
        "note: no audit anchor is kept ([runs] audit_anchor is off): the log's end is not checked",
        f"copydesk: error: audit chain broken at event {victim}: "
        "its content does not match its hash (the event was changed)",
    ]
    as_json = runner.invoke(app, ["-c", str(config), "audit", "--verify", "--json"])
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout)["bad_event"] == victim

    usage = runner.invoke(app, ["-c", str(config), "audit", "7", "--verify"])
    assert usage.exit_code == 2


def test_postgres_writers_appending_at_once_do_not_fork_the_chain(pg_url: str) -> None:
    """Eight threads, each with its own connection, moving their own items at once:
    every event lands, and the chain is one line."""
    engine = open_store(pg_url)
    workers, per_worker = 8, 6
    ready = threading.Barrier(workers)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            ready.wait(timeout=30)
            for _ in range(per_worker):
                make_item(engine, road=("draft",))
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(workers)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert errors == []
        rows = events(engine)
        assert len(rows) == workers * per_worker * 2
        assert len({row["prev_hash"] for row in rows}) == len(rows)
        assert audit_chain.verify(engine).ok
    finally:
        engine.dispose()


def test_the_chain_hash_and_the_migrations_frozen_copy_agree() -> None:
    """Migration 0003 chains old events with its own copy of the hash function."""
    import importlib.util
    from datetime import UTC, datetime

    path = Path(__file__).parent.parent / "store/migrations/versions/0003_audit_chain.py"
    spec = importlib.util.spec_from_file_location("m0003", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    row = {
        "item_id": 4,
        "at": datetime(2026, 3, 1, 9, 30, 0, 120, tzinfo=UTC),
        "actor": "editor:ann",
        "from_status": "draft",
        "to_status": "approved",
        "reason": "Ça va — «quote»",
        "details": {"b": [1, 2.5], "a": {"3": None}},
    }
    assert module._event_hash("ab" * 32, row) == audit_chain.event_hash(prev_hash="ab" * 32, **row)
    naive = {**row, "at": row["at"].replace(tzinfo=None)}
    assert module._event_hash("ab" * 32, naive) == module._event_hash("ab" * 32, row)


# --- The anchor: events cut from the end ---------------------------------------------------


def cut_tail(engine: Engine, count: int) -> None:
    """The table's owner deletes the last `count` events: the shorter chain still holds."""
    last = event_ids(engine)[-count]
    owner_runs(engine, "DELETE FROM audit_events WHERE id >= :id", id=last)


@pytest.mark.audit_tampered
def test_events_cut_from_the_end_are_caught_by_the_anchor(engine: Engine) -> None:
    for _ in range(3):
        make_item(engine)
    anchor = audit_chain.head(engine)
    assert anchor == audit_chain.Anchor(event_ids(engine)[-1], events(engine)[-1]["hash"])
    cut_tail(engine, 2)
    assert audit_chain.verify(engine).ok  # what the chain alone cannot see
    report = audit_chain.verify(engine, expect=anchor)
    assert (report.ok, report.bad_event) == (False, anchor.event_id)
    assert f"before the anchor's event {anchor.event_id}" in (report.problem or "")
    assert "cut from its end" in (report.problem or "")


@pytest.mark.audit_tampered
def test_a_cut_log_written_on_afterwards_still_fails_the_anchor(engine: Engine) -> None:
    """Cut, then the application appends as usual (a chain that holds): the anchor's
    event is gone (PostgreSQL: ids move on) or holds another event (SQLite may give
    the id again): either way verify names it."""
    for _ in range(2):
        make_item(engine)
    anchor = audit_chain.head(engine)
    cut_tail(engine, 3)
    make_item(engine)
    make_item(engine)
    assert audit_chain.verify(engine).ok
    report = audit_chain.verify(engine, expect=anchor)
    assert (report.ok, report.bad_event) == (False, anchor.event_id)
    assert "anchor" in (report.problem or "")


def test_an_earlier_anchor_holds_as_the_log_grows_and_a_forged_one_fails(engine: Engine) -> None:
    make_item(engine)
    anchor = audit_chain.head(engine)
    make_item(engine)
    assert audit_chain.verify(engine, expect=anchor).ok
    assert audit_chain.verify(engine, expect=audit_chain.Anchor(0, audit_chain.GENESIS)).ok
    forged = audit_chain.Anchor(anchor.event_id, "e" * 64)
    report = audit_chain.verify(engine, expect=forged)
    assert (report.ok, report.bad_event) == (False, anchor.event_id)
    assert "differs from the anchor" in (report.problem or "")


@pytest.mark.parametrize("text", ["", "12", "12:abc", "x:" + "a" * 64, "3:" + "A" * 64])
def test_a_malformed_anchor_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="expected ID:HASH"):
        audit_chain.Anchor.parse(text)


@pytest.mark.audit_tampered
def test_head_and_expect_head_on_the_command_line(sqlite_url: str, tmp_path: Path) -> None:
    engine = open_store(sqlite_url)
    make_item(engine)
    make_item(engine)
    config = tmp_path / "config.toml"
    config.write_text(
        f'[database]\nurl = "{sqlite_url}"\n[runs]\naudit_anchor = ""\n', encoding="utf-8"
    )
    base = ["-c", str(config), "audit"]

    head = runner.invoke(app, [*base, "--head"])
    assert head.exit_code == 0, head.output
    assert head.stdout.strip() == f"{event_ids(engine)[-1]}:{events(engine)[-1]['hash']}"
    anchor = head.stdout.strip()
    ok = runner.invoke(app, [*base, "--verify", "--expect-head", anchor])
    assert ok.exit_code == 0, ok.output
    assert f"holds the anchor {anchor.split(':')[0]} from --expect-head" in ok.stdout

    cut_tail(engine, 1)
    engine.dispose()
    # The chain alone still holds; the records do not: the item has lost its last move.
    cut = runner.invoke(app, [*base, "--verify"])
    assert cut.exit_code == 1
    assert "audit records do not match" in cut.stderr
    bad = runner.invoke(app, [*base, "--verify", "--expect-head", anchor])
    assert bad.exit_code == 1
    last = int(anchor.split(":")[0])
    assert bad.stderr.strip().splitlines() == [
        f"copydesk: error: audit chain broken at event {last}: the log ends at event "
        f"{last - 1}, before the anchor's event {last} (events were cut from its end)"
    ]
    as_json = runner.invoke(app, [*base, "--verify", "--json", "--expect-head", anchor])
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout)["anchor"] == anchor

    for args in (
        ["--verify", "--expect-head", "7:nothex"],
        ["--head", "--verify"],
        ["--expect-head", anchor, "7"],
        ["--head", "7"],
    ):
        usage = runner.invoke(app, [*base, *args])
        assert usage.exit_code == 2, args
        assert len(usage.stderr.strip().splitlines()) == 1, usage.stderr


@pytest.mark.audit_tampered
def test_each_run_writes_the_anchor_file_that_verify_checks(tmp_path: Path) -> None:
    from tests.articles import local_feed

    desk = tmp_path / "desk"
    desk.mkdir()
    local_feed(desk)
    config = desk / "config.toml"
    config.write_text(
        '[database]\nurl = "sqlite:///desk.db"\n\n[summarise]\nbackend = "extractive"\n\n'
        '[runs]\naudit_anchor = "../offsite/anchor"\n\n'
        '[[feeds]]\nname = "local"\nurl = "feed.xml"\n',
        encoding="utf-8",
    )
    base = ["-c", str(config)]
    anchor_file = tmp_path / "offsite" / "anchor"
    assert runner.invoke(app, [*base, "init"]).exit_code == 0
    first = runner.invoke(app, [*base, "audit", "--verify"])
    assert first.exit_code == 0, first.output
    assert f"no audit anchor at {anchor_file} yet" in first.stderr

    run = runner.invoke(app, [*base, "run"])
    assert run.exit_code == 0, run.output
    engine = open_store(f"sqlite:///{desk / 'desk.db'}")
    written = audit_chain.read_anchor(anchor_file)  # its first line; the second names the database
    assert written == audit_chain.head(engine)
    # config.toml's feed added (migration 0024's feed event), 2 items: new, then draft
    assert written.event_id == len(event_ids(engine)) == 5

    ok = runner.invoke(app, [*base, "audit", "--verify"])
    assert ok.exit_code == 0, ok.output
    assert f"holds the anchor {written.event_id} from {anchor_file}" in ok.stdout

    cut_tail(engine, 2)
    engine.dispose()
    bad = runner.invoke(app, [*base, "audit", "--verify"])
    assert bad.exit_code == 1
    assert "events were cut from its end" in bad.stderr

    anchor_file.write_text("garbage\n", encoding="utf-8")
    broken = runner.invoke(app, [*base, "audit", "--verify"])
    assert broken.exit_code == 1
    assert broken.stderr.strip().splitlines() == [
        f"copydesk: error: audit anchor file {anchor_file}: 'garbage' is not an anchor: "
        "expected ID:HASH (64 hex)"
    ]


def test_the_anchor_file_is_written_durably_and_replaced_in_one_step(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """fsync of the file before the rename, and of its folder after: a power cut
    leaves the old anchor or the new one, never an empty file."""
    import os

    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    path = tmp_path / "anchors" / "audit.anchor"
    audit_chain.write_anchor(path, audit_chain.Anchor(1, "a" * 64))
    audit_chain.write_anchor(path, audit_chain.Anchor(2, "b" * 64))
    assert audit_chain.read_anchor(path) == audit_chain.Anchor(2, "b" * 64)
    files = [p for p in synced if Path(p).name.startswith(".audit.anchor.")]
    folders = [p for p in synced if p == str(path.parent)]
    assert len(files) == 2 and len(folders) == 2, synced
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind
