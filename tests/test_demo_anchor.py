"""`copydesk demo` run in a production folder (issue 22): the demo keeps its own audit
anchor beside its own database and never moves the configured one, so the real
database's `audit --verify` still holds after any number of demos; and the demo's
bundled feed, a fixed snapshot, is not reported stale by `feeds list --check`.

The commands run in this process (`run_here`: the folder and environment a process
would have), except in the moved-database test: there a database is renamed between
two commands, which only separate processes see as an operator does (issue 23)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from copydesk.cli import app
from tests.cli_helpers import cli_env, run, run_here


def test_demo_twice_in_a_production_folder_leaves_its_anchor_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.toml").write_text(
        '[database]\nurl = "sqlite:///desk.db"\n[runs]\naudit_anchor = "audit.anchor"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    for name in ("COPYDESK_CONFIG", "COPYDESK_DATABASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    runner = CliRunner()
    assert runner.invoke(app, ["init"]).exit_code == 0
    anchor = tmp_path / "audit.anchor"
    before = anchor.read_text() if anchor.exists() else None
    for _ in range(2):
        demo = runner.invoke(app, ["demo", "--no-ui", "--dir", "demo"])
        assert demo.exit_code == 0, demo.output
    assert (anchor.read_text() if anchor.exists() else None) == before
    verified = runner.invoke(app, ["audit", "--verify"])
    assert verified.exit_code == 0, verified.output
    # The demo's own anchor is beside its database and holds its chain.
    demo_db = tmp_path / "demo" / "demo.db"
    own = demo_db.with_name("demo.db.audit.anchor")
    assert own.exists() and own.read_text().strip()
    elsewhere = tmp_path / "elsewhere"  # no config.toml: the anchor beside the database
    elsewhere.mkdir()
    env = cli_env(elsewhere, COPYDESK_DATABASE_URL=f"sqlite:///{demo_db}")
    demo_verify = run_here(["audit", "--verify"], elsewhere, env)
    assert demo_verify.returncode == 0, demo_verify.stdout + demo_verify.stderr
    # The sample feed is a snapshot with old dates: not "stale", nothing to page about.
    listed = run_here(["feeds", "list", "--check", "--json"], elsewhere, env)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    (feed,) = json.loads(listed.stdout)
    assert feed["state"] != "stale" and not feed["needs_attention"]


def test_a_command_on_another_database_from_a_production_folder_keeps_each_anchor_its_own(
    tmp_path: Path,
) -> None:
    """The demo's printed follow-ups (`COPYDESK_DATABASE_URL=…/demo.db copydesk …`) run
    in a folder whose config.toml names an anchor: that anchor belongs to the
    production database, so a write to the demo database must not move it, and each
    database's `audit --verify` holds against its own anchor (issue 22)."""
    (tmp_path / "config.toml").write_text(
        '[database]\nurl = "sqlite:///desk.db"\n[runs]\naudit_anchor = "audit.anchor"\n',
        encoding="utf-8",
    )
    production = cli_env(tmp_path)
    assert run_here(["init"], tmp_path, production).returncode == 0
    # A refused link (loopback, not allowed) is still an item with an audit event.
    submitted = run_here(["submit", "http://127.0.0.1:9/harbour-levy"], tmp_path, production)
    assert submitted.returncode == 0, submitted.stderr
    anchor = tmp_path / "audit.anchor"
    before = anchor.read_text()
    assert run_here(["demo", "--no-ui", "--dir", "demo"], tmp_path, production).returncode == 0
    demo_db = tmp_path / "demo" / "demo.db"
    on_demo = cli_env(tmp_path, COPYDESK_DATABASE_URL=f"sqlite:///{demo_db}")
    written = run_here(["submit", "http://127.0.0.1:9/quay-closure"], tmp_path, on_demo)
    assert written.returncode == 0, written.stderr
    assert anchor.read_text() == before
    for env in (production, on_demo):
        verified = run_here(["audit", "--verify"], tmp_path, env)
        assert verified.returncode == 0, verified.stdout + verified.stderr
    # The demo's own anchor followed the demo database's write.
    own = demo_db.with_name("demo.db.audit.anchor")
    head = run_here(["audit", "--head"], tmp_path, on_demo)
    assert own.read_text().splitlines()[0] == head.stdout.strip()


def test_a_moved_database_is_told_whose_anchor_the_configured_one_is(tmp_path: Path) -> None:
    """A database moved to another path finds no anchor of its own: `audit --verify`
    fails (an anchor is never silently dropped) and says that the configured anchor
    names the old path, and what to do."""
    config = tmp_path / "config.toml"
    config.write_text('[database]\nurl = "sqlite:///desk.db"\n', encoding="utf-8")
    env = cli_env(tmp_path)
    assert run(["init"], tmp_path, env).returncode == 0
    added = run(["feeds", "add", "https://kelby.example.test/feed.xml"], tmp_path, env)
    assert added.returncode == 0, added.stderr
    (tmp_path / "desk.db").rename(tmp_path / "restored.db")
    config.write_text('[database]\nurl = "sqlite:///restored.db"\n', encoding="utf-8")
    verified = run(["audit", "--verify"], tmp_path, env)
    assert verified.returncode == 1, verified.stdout + verified.stderr
    assert f"{tmp_path / 'audit.anchor'} belongs to sqlite:{tmp_path / 'desk.db'}" in (
        verified.stderr
    )
