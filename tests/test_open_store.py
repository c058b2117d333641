"""Opening the store from a command (issue 22): only `init` and `migrate` create a
database; a mistyped path is an error naming it; on PostgreSQL no command leaves
tables the runtime role cannot use, and the runtime role's "permission denied"
names `copydesk migrate`."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import text

from store.db import (
    StoreError,
    alembic_config,
    grant_runtime_rights,
    make_engine,
    migrate_as_owner,
    open_store,
)


def tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "sqlite":
                query = "SELECT name FROM sqlite_master WHERE type = 'table'"
            else:
                query = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            return set(conn.execute(text(query)).scalars())
    finally:
        engine.dispose()


def test_a_missing_sqlite_file_is_named_and_not_created(tmp_path) -> None:
    path = tmp_path / "copydesk.bd"  # a typo
    with pytest.raises(StoreError) as caught:
        open_store(f"sqlite:///{path}", create=False)
    message = str(caught.value)
    assert str(path) in message
    assert "relative to the folder of config.toml" in message  # the rule for relative paths
    assert "copydesk init" in message
    assert not path.exists()


def test_a_relative_sqlite_path_is_named_absolute(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match=str(tmp_path / "missing.db")):
        open_store("sqlite:///missing.db", create=False)


def test_a_database_without_copydesk_tables_is_refused_and_left_empty(db_url: str) -> None:
    if db_url.startswith("sqlite"):
        make_engine(db_url).dispose()
        path = db_url.removeprefix("sqlite:///")
        open(path, "wb").close()  # an empty file: a database, but not copydesk's
    with pytest.raises(StoreError, match="has no copydesk tables.*copydesk init"):
        open_store(db_url, create=False)
    assert tables(db_url) == set()


def test_init_and_library_callers_still_create(db_url: str) -> None:
    open_store(db_url).dispose()  # create=True, as `init` and the tests' fixtures do
    open_store(db_url, create=False).dispose()
    assert "items" in tables(db_url)


@pytest.mark.postgres
def test_runtime_role_without_rights_is_told_to_run_migrate(
    pg_url: str, pg_runtime_url: str
) -> None:
    migrate_as_owner(pg_url)  # the owner migrated, but granted the runtime role nothing
    with pytest.raises(StoreError) as caught:
        open_store(pg_runtime_url, create=False)
    message = str(caught.value)
    assert "permission denied" in message
    assert "copydesk migrate" in message and "COPYDESK_MIGRATE_DATABASE_URL" in message


@pytest.mark.postgres
def test_an_upgrade_by_the_owners_url_grants_the_runtime_role_the_new_tables(
    pg_url: str, pg_runtime_url: str
) -> None:
    """A command run with the owner's URL after an upgrade of copydesk migrates on
    first use: the runtime role `copydesk migrate` set up can use what it made."""
    owner = make_engine(pg_url)
    try:
        command.upgrade(alembic_config(owner), "0009_notes")  # before desk_presence
        grant_runtime_rights(owner, make_engine(pg_runtime_url).url.username)
    finally:
        owner.dispose()
    assert "desk_presence" not in tables(pg_url)

    open_store(pg_url, create=False).dispose()  # e.g. `copydesk run` with the owner's URL

    runtime = open_store(pg_runtime_url, create=False)
    try:
        with runtime.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM desk_presence")).scalar() == 0
            assert conn.execute(text("SELECT count(*) FROM audit_events")).scalar() == 0
            owns = conn.execute(
                text("SELECT count(*) FROM pg_tables WHERE tableowner = current_user")
            ).scalar()
        assert owns == 0
    finally:
        runtime.dispose()


def test_connections_held_at_once_stay_open_for_the_next_use(engine) -> None:
    """A run has its model threads, page readers and writer in sessions at once
    (issue 24). The pool kept 5 connections and closed every other one as it came
    back (QueuePool's overflow), so each busy moment opened them again: about 240
    PostgreSQL logins in a 320-article run at concurrency 16, 1.5 ms or more of CPU
    each. Now as many as are held at once stay open, up to the same cap as before."""
    import threading

    from sqlalchemy import event

    opened: list[int] = []
    event.listen(engine, "connect", lambda *args: opened.append(1))
    at_once = 12

    def busy_moment() -> None:
        together = threading.Barrier(at_once)

        def hold() -> None:
            with engine.connect() as conn:
                conn.execute(text("SELECT 1"))
                together.wait(timeout=120)  # all of them held at once

        threads = [threading.Thread(target=hold) for _ in range(at_once)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    for _ in range(3):
        busy_moment()
    assert len(opened) <= at_once, f"{len(opened)} connections opened for {at_once} at once"


class _Clock:
    """The pool's idle clock, moved by the test (store.db._idle_clock)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _counting_pings(engine, monkeypatch) -> list[int]:
    pings: list[int] = []
    real = engine.dialect.do_ping

    def ping(dbapi_connection):  # type: ignore[no-untyped-def]
        pings.append(1)
        return real(dbapi_connection)

    monkeypatch.setattr(engine.dialect, "do_ping", ping)
    return pings


def test_a_connection_handed_back_a_moment_ago_is_not_pinged_again(pg_url, monkeypatch) -> None:
    """Issue 24 (session 16): each of a run's short transactions (two an article on
    the model path: each call's ledger row) paid a `SELECT 1` round trip first
    (`pool_pre_ping`). A connection back in the pool for less than
    PING_AFTER_IDLE_SECONDS is handed out without one; one idle longer is pinged."""
    import store.db

    clock = _Clock()
    monkeypatch.setattr(store.db, "_idle_clock", clock, raising=False)
    engine = make_engine(pg_url)
    pings = _counting_pings(engine, monkeypatch)
    try:
        for _ in range(4):  # the first is a new connection: never pinged
            with engine.begin() as conn:
                assert conn.execute(text("SELECT 1")).scalar() == 1
            clock.now += 0.5
        assert pings == []
        clock.now += 60
        with engine.begin() as conn:
            assert conn.execute(text("SELECT 1")).scalar() == 1
        assert pings == [1]
    finally:
        engine.dispose()


def test_a_connection_that_died_while_idle_is_replaced_before_use(pg_url, monkeypatch) -> None:
    """What the ping is for, kept: a pooled connection the server ended while it sat
    idle (a restart, an idle-session timeout) is replaced at checkout, and the
    transaction that asked for it runs on a new one without an error."""
    import store.db

    clock = _Clock()
    monkeypatch.setattr(store.db, "_idle_clock", clock, raising=False)
    engine, killer = make_engine(pg_url), make_engine(pg_url)
    try:
        with engine.begin() as conn:
            first = conn.execute(text("SELECT pg_backend_pid()")).scalar()
        with killer.begin() as conn:
            assert conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": first}).scalar()
        clock.now += 60
        with engine.begin() as conn:
            second = conn.execute(text("SELECT pg_backend_pid()")).scalar()
        assert second != first
    finally:
        engine.dispose()
        killer.dispose()
