"""Only `init` and `migrate` create a database (issue 22): every other command, given
a database file that does not exist (a mistyped path) or a database with no copydesk
tables, exits 3 with one line naming it and the fix, and creates nothing: no file,
no table, no anchor. Each command through the entry point (Typer's runner on the
real app), on SQLite and, for the empty database, PostgreSQL too."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect
from typer.testing import CliRunner

from copydesk.cli import app
from tests.cli_helpers import run

# Every command that opens the database, with arguments that get it that far.
COMMANDS = [
    ["run"],
    ["run", "--json"],
    ["recheck"],
    ["feeds", "list"],
    ["feeds", "add", "https://news.example.org/feed.xml"],
    ["feeds", "rename", "Gazette", "Courier"],
    ["feeds", "disable", "Gazette"],
    ["feeds", "enable", "Gazette"],
    ["feeds", "remove", "Gazette"],
    ["submit", "https://news.example.org/a-story"],
    ["audit", "1"],
    ["audit", "--verify"],
    ["audit", "--head"],
    ["discards"],
    ["unchecked"],
    ["stats"],
    ["editor", "list"],
    ["editor", "add", "ines", "--password-stdin"],
    ["editor", "password", "ines", "--password-stdin"],
    ["editor", "disable", "ines"],
    ["publish"],
    ["retract", "1", "--editor", "ines", "--reason", "wrong figure"],
    ["watch"],
    ["replay"],
    ["doctor"],
]  # `review` below, in a process of its own: if it did start, it would serve until stopped
IDS = [" ".join(c) for c in COMMANDS]


def _invoke(config: Path, args: list[str]):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(
        app, ["--config", str(config), *args], input="a long enough password\n" * 2
    )


def _config(folder: Path, url: str) -> Path:
    config = folder / "config.toml"
    config.write_text(
        f'[database]\nurl = "{url}"\n[summarise]\nbackend = "extractive"\n'
        '[runs]\naudit_anchor = "anchor.txt"\n'
        '[[publish.targets]]\nkind = "jsonl"\npath = "out/feed.jsonl"\n',
        encoding="utf-8",
    )
    return config


@pytest.mark.parametrize("args", COMMANDS, ids=IDS)
def test_a_mistyped_sqlite_path_is_exit_3_naming_it_and_nothing_is_created(
    tmp_path: Path, args: list[str]
) -> None:
    config = _config(tmp_path, "sqlite:///newsroom-typo.db")  # relative: to config.toml's folder
    before = sorted(p.name for p in tmp_path.iterdir())
    result = _invoke(config, args)
    assert result.exit_code == 3, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    missing = tmp_path / "newsroom-typo.db"
    assert f"database file {missing} does not exist" in lines[0]
    assert "relative to the folder of config.toml" in lines[0]  # the rule, in the error
    assert "copydesk init" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no database, no anchor


@pytest.mark.parametrize("args", COMMANDS, ids=IDS)
def test_a_database_without_tables_is_exit_3_and_stays_empty(
    tmp_path: Path, args: list[str]
) -> None:
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()  # a file, but no copydesk schema in it
    config = _config(tmp_path, f"sqlite:///{path}")
    result = _invoke(config, args)
    assert result.exit_code == 3, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "has no copydesk tables" in lines[0] and "copydesk init" in lines[0]
    engine = create_engine(f"sqlite:///{path}")
    assert inspect(engine).get_table_names() == []
    engine.dispose()
    assert not (tmp_path / "anchor.txt").exists()


@pytest.mark.parametrize("args", [["run"], ["feeds", "list"], ["stats"]], ids=" ".join)
def test_an_empty_postgresql_database_is_left_empty(
    tmp_path: Path, pg_url: str, args: list[str]
) -> None:
    """The owner's URL before `copydesk migrate`: nothing is made (a schema made by
    a command would be one the runtime role has no rights on)."""
    result = _invoke(_config(tmp_path, pg_url), args)
    assert result.exit_code == 3, result.output
    assert "has no copydesk tables" in result.stderr
    engine = create_engine(pg_url)
    assert inspect(engine).get_table_names() == []
    engine.dispose()


@pytest.mark.parametrize("args", [["run"], ["feeds", "list"], ["stats"]], ids=" ".join)
def test_the_runtime_role_refused_by_postgresql_is_told_to_run_migrate(
    tmp_path: Path, pg_url: str, pg_runtime_url: str, args: list[str]
) -> None:
    """The owner migrated but never granted the runtime role its rights (`migrate`
    without COPYDESK_MIGRATE_DATABASE_URL's runtime role): a command signed in as
    that role says "permission denied" with the fix, in one line, exit 3."""
    from store.db import migrate_as_owner

    migrate_as_owner(pg_url)
    result = _invoke(_config(tmp_path, pg_runtime_url), args)
    assert result.exit_code == 3, result.output
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("copydesk: error:")]
    assert "permission denied" in line and "copydesk migrate" in line, line
    assert "Traceback" not in result.output


def test_review_with_a_mistyped_path_starts_no_server(tmp_path: Path) -> None:
    config = _config(tmp_path, "sqlite:///newsroom-typo.db")
    with socket.socket() as probe:  # a free port, should the server start after all
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = run(["--config", str(config), "review", "--port", str(port)], tmp_path)
    assert done.returncode == 3, done.stderr
    assert f"database file {tmp_path / 'newsroom-typo.db'} does not exist" in done.stderr
    assert not (tmp_path / "newsroom-typo.db").exists()


def test_the_review_app_started_by_hand_creates_no_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`streamlit run copydesk/review_app.py` without `copydesk review`'s check first:
    the page says which file is missing and the fix, and no file, table or anchor
    appears (only init and migrate create a database)."""
    from streamlit.testing.v1 import AppTest

    from tests.review_app_helpers import APP, texts

    config = _config(tmp_path, "sqlite:///newsroom-typo.db")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    monkeypatch.delenv("COPYDESK_DATABASE_URL", raising=False)
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    shown = texts(at)
    assert "copydesk review cannot start" in shown
    assert f"database file {tmp_path / 'newsroom-typo.db'} does not exist" in shown
    assert not (tmp_path / "newsroom-typo.db").exists()
    assert not (tmp_path / "anchor.txt").exists()


def test_init_creates_it_and_then_the_command_works(tmp_path: Path) -> None:
    config = _config(tmp_path, "sqlite:///newsroom.db")
    assert _invoke(config, ["stats"]).exit_code == 3
    assert not (tmp_path / "newsroom.db").exists()
    result = _invoke(config, ["init"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "newsroom.db").exists()
    assert _invoke(config, ["stats"]).exit_code == 0
