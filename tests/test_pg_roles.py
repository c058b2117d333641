"""PostgreSQL with two roles: the owner migrates, the runtime role runs copydesk and
cannot touch the audit log's triggers, its columns, or its rows once written."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import exc as sa_exc
from sqlalchemy import text
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

from copydesk.cli import app
from store import audit_chain
from store import status as st
from store.db import (
    alembic_config,
    grant_runtime_rights,
    make_engine,
    migrate_as_owner,
    open_store,
    session_scope,
)
from store.models import Item

runner = CliRunner()


def cli(args: list[str], runtime_url: str, owner_url: str | None = None):
    env = {"COPYDESK_DATABASE_URL": runtime_url}
    if owner_url:
        env["COPYDESK_MIGRATE_DATABASE_URL"] = owner_url
    return runner.invoke(app, args, env=env)


def anchor_path(url: str) -> Path:
    """Where the CLI keeps the audit anchor for `url` when no config.toml is found."""
    from copydesk.config import load_settings

    return Path(load_settings(env={**os.environ, "COPYDESK_DATABASE_URL": url}).runs.audit_anchor)


def add_items(url: str, count: int = 2, anchor: Path | None = None) -> None:
    """Two drafts written as a run writes them; with `anchor`, the commits advance the
    audit anchor there, as every copydesk command's commits do."""
    engine = open_store(url)
    audit_chain.keep_anchor(engine, anchor)
    try:
        for _ in range(count):
            with session_scope(engine) as session:
                item = Item(dedup_key=f"https://news.example.test/{uuid.uuid4().hex}")
                st.create(session, item, actor="run:1", reason="found in a feed")
                st.move(session, item, "draft", actor="run:1")
    finally:
        audit_chain.keep_anchor(engine, None)
        engine.dispose()


def test_migrate_as_owner_then_the_runtime_role_works(
    pg_url: str, pg_runtime_url: str, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run away from the repository's own config.toml: its anchor file would land in the
    # checkout. No config here puts the anchor in this test's own state folder.
    monkeypatch.chdir(tmp_path)
    result = cli(["migrate"], pg_runtime_url, owner_url=pg_url)
    assert result.exit_code == 0, result.output
    assert "runtime role copydesk_app" in result.stdout
    assert "copydesk:***@" in result.stdout  # the password is masked

    add_items(pg_runtime_url, anchor=anchor_path(pg_runtime_url))
    verified = cli(["audit", "--verify"], pg_runtime_url)
    assert verified.exit_code == 0, verified.output
    assert "audit chain ok: 4 events" in verified.stdout
    listed = cli(["feeds", "list"], pg_runtime_url)
    assert listed.exit_code == 0, listed.output

    engine = make_engine(pg_runtime_url)
    try:
        with engine.connect() as conn:
            owns = conn.execute(
                text("SELECT count(*) FROM pg_tables WHERE tableowner = current_user")
            ).scalar()
        assert owns == 0
    finally:
        engine.dispose()


# What someone holding the runtime role's password might try.
TAMPERING = {
    "disable-trigger": "ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_update_delete",
    "disable-all-triggers": "ALTER TABLE audit_events DISABLE TRIGGER ALL",
    "drop-trigger": "DROP TRIGGER audit_events_no_update_delete ON audit_events",
    "drop-truncate-trigger": "DROP TRIGGER audit_events_no_truncate ON audit_events",
    "replace-function": "CREATE OR REPLACE FUNCTION audit_events_append_only() "
    "RETURNS trigger AS $$ BEGIN RETURN NEW; END; $$ LANGUAGE plpgsql",
    "alter-column-type": "ALTER TABLE audit_events ALTER COLUMN reason TYPE varchar(3)",
    "drop-column": "ALTER TABLE audit_events DROP COLUMN hash",
    "rename-table": "ALTER TABLE audit_events RENAME TO audit_events_old",
    "drop-table": "DROP TABLE audit_events CASCADE",
    "new-trigger": "CREATE TRIGGER sneaky BEFORE INSERT ON audit_events "
    "FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()",
    "update": "UPDATE audit_events SET reason = 'rewritten'",
    "delete": "DELETE FROM audit_events",
    "truncate": "TRUNCATE audit_events",
    "session-replica": "SET session_replication_role = replica",
    "rewrite-version": "UPDATE alembic_version SET version_num = '0001'",
    "new-table": "CREATE TABLE shadow (id int)",
}


@pytest.mark.parametrize("sql", TAMPERING.values(), ids=TAMPERING.keys())
def test_the_runtime_role_cannot_touch_the_audit_log(
    pg_url: str, pg_runtime_url: str, sql: str
) -> None:
    migrate_as_owner(pg_url, pg_runtime_url)
    add_items(pg_runtime_url, 1)
    engine = make_engine(pg_runtime_url)
    owner = make_engine(pg_url)
    try:
        with owner.connect() as conn:
            before = conn.execute(text("SELECT * FROM audit_events ORDER BY id")).all()
        with pytest.raises(sa_exc.DBAPIError, match="permission denied|must be owner|append-only"):
            with engine.begin() as conn:
                conn.execute(text(sql))
        with owner.connect() as conn:
            assert conn.execute(text("SELECT * FROM audit_events ORDER BY id")).all() == before
            triggers = conn.execute(
                text(
                    "SELECT tgname, tgenabled FROM pg_trigger "
                    "WHERE tgrelid = 'audit_events'::regclass AND NOT tgisinternal ORDER BY 1"
                )
            ).all()
        assert triggers == [
            ("audit_events_decided_by_review_only", "O"),
            ("audit_events_no_truncate", "O"),
            ("audit_events_no_update_delete", "O"),
        ]
        assert audit_chain.verify(owner).ok
    finally:
        engine.dispose()
        owner.dispose()


def test_runtime_commands_on_an_unmigrated_database_say_to_migrate(
    pg_url: str, pg_runtime_url: str
) -> None:
    for args in (["feeds", "list"], ["audit", "--verify"], ["run"], ["stats"]):
        result = cli(args, pg_runtime_url)
        assert result.exit_code == 3, (args, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, (args, result.stderr)
        assert "run `copydesk migrate` with COPYDESK_MIGRATE_DATABASE_URL" in lines[0]
        assert "Traceback" not in result.output
    engine = make_engine(pg_url)
    try:
        with engine.connect() as conn:
            tables = conn.execute(
                text("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            ).scalar()
        assert tables == 0
    finally:
        engine.dispose()


def test_runtime_role_finding_an_old_schema_runs_no_ddl(pg_url: str, pg_runtime_url: str) -> None:
    """Migrated by the owner to an older revision: the runtime role does not try the
    upgrade (it would fail half way on a table it does not own); the owner does."""
    owner = make_engine(pg_url)
    try:
        command.upgrade(alembic_config(owner), "0001")
        grant_runtime_rights(owner, make_url(pg_runtime_url).username or "")
        stale = cli(["feeds", "list"], pg_runtime_url)
        assert stale.exit_code == 3
        assert "copydesk migrate" in stale.stderr
        assert len(stale.stderr.strip().splitlines()) == 1
        with owner.connect() as conn:
            assert conn.execute(text("SELECT version_num FROM alembic_version")).all() == [
                ("0001",)
            ]

        migrated = cli(["init"], pg_runtime_url, owner_url=pg_url)
        assert migrated.exit_code == 0, migrated.output
        assert cli(["feeds", "list"], pg_runtime_url).exit_code == 0
    finally:
        owner.dispose()


def test_the_review_app_never_gets_the_owners_url() -> None:
    from copydesk.cli.review import review_env
    from copydesk.config import Settings

    env = review_env(
        Settings(),
        {
            "COPYDESK_MIGRATE_DATABASE_URL": "postgresql://owner:s3cret@db/desk",
            "COPYDESK_CONFIG": "/srv/desk/config.toml",
        },
    )
    assert "COPYDESK_MIGRATE_DATABASE_URL" not in env
    assert env["COPYDESK_CONFIG"] == "/srv/desk/config.toml"
