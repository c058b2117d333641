"""Least privilege on PostgreSQL (issue 26): the workers and the review server run as
different roles, and the database itself (migration 0013's triggers) refuses the
workers' role an editor's decision and any change to approved text, whatever SQL
it sends with the credentials every cron worker holds.

Roles: the owner (`pg_url`, migrates), the workers' role (`pg_runtime_url`,
copydesk_app) and the review server's role (`pg_review_url`, copydesk_review);
.ci/run creates all three."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import exc as sa_exc
from sqlalchemy import select, text, update
from sqlalchemy.engine import Engine

from store import audit_chain
from store import status as st
from store.db import (
    alembic_config,
    grant_runtime_rights,
    make_engine,
    migrate,
    migrate_as_owner,
    role_kinds,
    session_scope,
)
from store.models import AuditEvent, Item
from tests.migration_helpers import draft_in_sql
from tests.pg_role_helpers import new_draft, role
from tests.publish_helpers import approve, cli, jsonl_lines, write_config


@pytest.fixture
def roles(pg_url: str, pg_runtime_url: str, pg_review_url: str):  # type: ignore[no-untyped-def]
    """Migrated with three roles: (owner, worker, review) engines."""
    migrate_as_owner(pg_url, pg_runtime_url, review_role=role(pg_review_url))
    engines = [make_engine(u) for u in (pg_url, pg_runtime_url, pg_review_url)]
    yield tuple(engines)
    for engine in engines:
        engine.dispose()


def decide(engine: Engine, item_id: int, to_status: str, reason: str | None = None) -> None:
    with session_scope(engine) as session:
        item = session.get(Item, item_id)
        st.move(session, item, to_status, actor="editor:alice", reason=reason)  # type: ignore[arg-type]


def row(owner: Engine, item_id: int) -> tuple:  # type: ignore[type-arg]
    with owner.connect() as conn:
        return tuple(
            conn.execute(
                text(
                    "SELECT status, version, headline, summary, decided_by FROM items "
                    "WHERE id = :id"
                ),
                {"id": item_id},
            ).one()
        )


def test_migrate_registers_the_workers_and_the_review_role(roles, pg_runtime_url, pg_review_url):  # type: ignore[no-untyped-def]
    owner, _, _ = roles
    assert role_kinds(owner) == {role(pg_runtime_url): "worker", role(pg_review_url): "review"}


# What someone holding the workers' password might send (every one a plain statement).
WORKER_ATTACKS = {
    "approve-by-update": "UPDATE items SET status = 'approved', decided_by = 'alice', "
    "decided_at = now(), version = version + 1 WHERE id = :draft",
    "reject-by-update": "UPDATE items SET status = 'rejected', version = version + 1 "
    "WHERE id = :draft",
    "change-approved-summary": "UPDATE items SET summary = 'Harrowby closed its pier.', "
    "version = version + 1 WHERE id = :approved",
    "change-approved-headline": "UPDATE items SET headline = 'Pier closed' WHERE id = :approved",
    "change-approved-source": "UPDATE items SET source_url = 'https://evil.example.test/' "
    "WHERE id = :approved",
    "re-attribute": "UPDATE items SET decided_by = 'bob' WHERE id = :approved",
    "take-back": "UPDATE items SET status = 'draft', version = version + 1 WHERE id = :approved",
    "draft-text-without-version": "UPDATE items SET summary = 'Harrowby closed its pier.' "
    "WHERE id = :draft",
    "insert-approved": "INSERT INTO items (dedup_key, status, version, attempts, "
    "recorded_reply, summary, decided_by, seen_at, created_at, updated_at) VALUES "
    "('https://evil.example.test/1', 'approved', 1, 0, false, 'Invented.', 'alice', now(), "
    "now(), now())",
    "forge-approval-event": "INSERT INTO audit_events (item_id, at, actor, from_status, "
    "to_status, prev_hash, hash) VALUES (:draft, now(), 'editor:alice', 'draft', 'approved', "
    "repeat('a', 64), repeat('b', 64))",
    "register-as-review": "INSERT INTO runtime_roles (role_name, kind) "
    "VALUES (current_user, 'review')",
    "promote-self": "UPDATE runtime_roles SET kind = 'review'",
    "shadow-registry": "CREATE TEMP TABLE runtime_roles AS SELECT current_user::text AS "
    "role_name, 'review'::text AS kind; UPDATE items SET status = 'approved', "
    "decided_by = 'alice', version = version + 1 WHERE id = :draft",
    "drop-trigger": "DROP TRIGGER items_decided_by_review_only ON items",
    "disable-trigger": "ALTER TABLE items DISABLE TRIGGER items_decided_by_review_only",
}

# What the database answers each attack with (default: the triggers' refusal).
REFUSAL = {
    "register-as-review": "permission denied",
    "promote-self": "permission denied",
    "drop-trigger": "must be owner",
    "disable-trigger": "must be owner",
}


@pytest.mark.parametrize("attack", WORKER_ATTACKS)
def test_the_workers_role_cannot_decide_or_change_approved_text(roles, attack: str) -> None:  # type: ignore[no-untyped-def]
    owner, worker, review = roles
    sql = WORKER_ATTACKS[attack]
    draft = new_draft(worker)
    approved = new_draft(worker, "Harrowby's pier cost 12 million crowns.")
    decide(review, approved, st.APPROVED)
    before = {i: row(owner, i) for i in (draft, approved)}
    with owner.connect() as conn:
        events = conn.execute(text("SELECT count(*) FROM audit_events")).scalar()
    with pytest.raises(sa_exc.DBAPIError, match=REFUSAL.get(attack, r"role \S+ may not")):
        with worker.begin() as conn:
            for statement in sql.split("; "):
                conn.execute(text(statement), {"draft": draft, "approved": approved})
    assert {i: row(owner, i) for i in (draft, approved)} == before
    with owner.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM audit_events")).scalar() == events
        assert conn.execute(text("SELECT count(*) FROM items")).scalar() == 2
    assert role_kinds(owner)["copydesk_review"] == "review"


def test_the_status_machine_as_worker_is_refused_every_editor_move(roles) -> None:  # type: ignore[no-untyped-def]
    owner, worker, review = roles
    draft = new_draft(worker)
    with pytest.raises(sa_exc.DBAPIError, match="may not move item"):
        decide(worker, draft, st.APPROVED)
    with pytest.raises(sa_exc.DBAPIError, match="may not move item"):
        decide(worker, draft, st.REJECTED, reason="thin")
    assert row(owner, draft)[0] == "draft"
    decide(review, draft, st.APPROVED)
    with pytest.raises(sa_exc.DBAPIError, match="may not move item"):
        decide(worker, draft, st.DRAFT, reason="taken back")
    assert row(owner, draft)[:2] == ("approved", 2)
    assert audit_chain.verify(owner).ok


def test_the_workers_do_their_own_work_and_publish(roles, tmp_path: Path, pg_runtime_url) -> None:  # type: ignore[no-untyped-def]
    """The whole pipeline and publishing run as the workers' role; only the
    approval needs the review role."""
    owner, worker, review = roles
    config = write_config(tmp_path, pg_runtime_url, targets=("jsonl",))
    ran = cli(config, "run")
    assert ran.exit_code == 0, ran.output
    ids = approve(review, 2)
    published = cli(config, "publish")
    assert published.exit_code == 0, published.output
    assert sorted(line["item_id"] for line in jsonl_lines(tmp_path)) == sorted(ids)
    with owner.connect() as conn:
        statuses = conn.execute(
            select(Item.status).where(Item.id.in_(ids))  # type: ignore[attr-defined]
        ).scalars()
        assert set(statuses) == {"published"}
    # A draft's text changed with its version (a re-check, a replay) is the workers' right.
    with worker.begin() as conn:
        conn.execute(
            update(Item)
            .where(Item.status == "draft")
            .values(summary="Rewritten by the pipeline.", version=Item.version + 1)
        )


def test_one_runtime_role_without_a_review_role_may_still_decide(
    pg_url: str, pg_runtime_url: str
) -> None:
    """The set-up before this change (one runtime role) keeps working."""
    migrate_as_owner(pg_url, pg_runtime_url)
    runtime = make_engine(pg_runtime_url)
    owner = make_engine(pg_url)
    try:
        draft = new_draft(runtime)
        decide(runtime, draft, st.APPROVED)
        assert row(owner, draft)[0] == "approved"
        assert role_kinds(owner) == {role(pg_runtime_url): "review"}
    finally:
        runtime.dispose()
        owner.dispose()


def test_upgrade_from_0012_keeps_the_runtime_role_deciding_until_split(
    pg_url: str, pg_runtime_url: str, pg_review_url: str
) -> None:
    """A database at 0012 with a runtime role that had rights and data: after the
    upgrade the role is registered as review (nothing breaks), the data is as it
    was; `migrate --review-role` then makes it the workers' role."""
    owner = make_engine(pg_url)
    runtime = make_engine(pg_runtime_url)
    try:
        command.upgrade(alembic_config(owner), "0012_publish_fence")
        grant_runtime_rights(owner, role(pg_runtime_url))
        pier = ("Harrowby pier opens", "Harrowby opened its new ferry pier on Monday.")
        first = draft_in_sql(runtime, 1, *pier)
        second = draft_in_sql(runtime, 2, *pier)
        before = [row(owner, first), row(owner, second)]
        migrate(owner)
        assert role_kinds(owner) == {role(pg_runtime_url): "review"}
        assert [row(owner, first), row(owner, second)] == before
        decide(runtime, first, st.APPROVED)

        migrate_as_owner(pg_url, pg_runtime_url, review_role=role(pg_review_url))
        assert role_kinds(owner)[role(pg_runtime_url)] == "worker"
        with pytest.raises(sa_exc.DBAPIError, match="may not move item"):
            decide(runtime, second, st.APPROVED)
        with session_scope(owner) as session:
            events = session.scalars(select(AuditEvent).order_by(AuditEvent.id)).all()
        assert [e.to_status for e in events] == ["new", "draft", "new", "draft", "approved"]
        assert audit_chain.verify(owner).ok
    finally:
        runtime.dispose()
        owner.dispose()


def test_migrate_on_the_command_line_names_both_roles(
    pg_url: str, pg_runtime_url: str, pg_review_url: str
) -> None:
    from typer.testing import CliRunner

    from copydesk.cli import app

    env = {"COPYDESK_DATABASE_URL": pg_runtime_url, "COPYDESK_MIGRATE_DATABASE_URL": pg_url}
    runner = CliRunner()
    result = runner.invoke(app, ["migrate", "--review-role", role(pg_review_url)], env=env)
    assert result.exit_code == 0, result.output
    assert f"workers' role {role(pg_runtime_url)}:" in result.stdout
    assert "cannot decide or change approved text" in result.stdout
    assert f"review role {role(pg_review_url)}: the same rights, and decides" in result.stdout
    owner = make_engine(pg_url)
    try:
        assert role_kinds(owner) == {role(pg_runtime_url): "worker", role(pg_review_url): "review"}
    finally:
        owner.dispose()
    same = runner.invoke(app, ["migrate", "--review-role", role(pg_runtime_url)], env=env)
    assert same.exit_code == 3
    assert "must be another role than the workers' and the owner's" in same.stderr
