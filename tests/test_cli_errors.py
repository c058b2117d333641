"""Errors are one line, everywhere: every command of the Typer app, run against each
broken environment, ends with one line on stderr, exit 3 and no traceback.

The commands are enumerated from the app itself: a new command without an entry
in COMMAND_ARGS fails `test_every_command_has_sample_arguments`, so it cannot
slip past this file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import typer
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

from copydesk.cli import app
from store.db import open_store, session_scope
from store.editors import add_editor

PASSWORD = "lantern-harbour-42"
NOTES = ("summariser: ", "model checks: ", "database: ")

# Arguments that get each command past its own usage checks to the point where it
# needs its config and database. "{tmp}" is the test's folder.
COMMAND_ARGS: dict[str, list[str]] = {
    "init": [],
    "migrate": [],
    "run": [],
    "recheck": [],
    "demo": ["--no-ui", "--dir", "{tmp}/demo"],
    "submit": ["https://news.example.test/harbour-ferry"],
    "extract": ["{tmp}/page.html"],
    "check": ["{tmp}/source.txt", "{tmp}/draft.txt", "--url", "https://news.example.test/q"],
    "eval": ["--from-decisions"],
    "audit": ["--verify"],
    "discards": [],
    "unchecked": [],
    "stats": [],
    "models": [],
    "doctor": [],
    "review": ["--port", "8"],
    "publish": [],
    "retract": ["1", "--reason", "the figure was wrong", "--editor", "ann"],
    "watch": [],
    "replay": [],
    "feeds add": ["https://news.example.test/feed.xml"],
    "feeds list": [],
    "feeds rename": ["wire", "agency"],
    "feeds disable": ["wire"],
    "feeds enable": ["wire"],
    "feeds remove": ["wire"],
    "editor add": ["bea", "--password-stdin"],
    "editor password": ["ann", "--password-stdin"],
    "editor list": [],
    "editor disable": ["ann"],
}

# Commands that do not need what an environment breaks, with the exit code they
# give there instead: (command, environment) -> exit code.
DATABASE_BROKEN = (
    "sqlite-read-only",
    "sqlite-folder-missing",
    "postgres-unreachable",
    "postgres-database-missing",
)
# `demo` makes its own database in --dir; `check` on files (1: its gates found a
# problem in the sample draft) and `extract` need no database at all.
NOT_AFFECTED: dict[tuple[str, str], int] = {
    (command, environment): code
    for command, code in (("demo", 0), ("check", 1), ("extract", 0), ("models", 0))
    for environment in DATABASE_BROKEN
}
# Commands that only read work on a read-only database (an auditor's copy); so
# do `init` and `migrate` when the schema is already at head.
NOT_AFFECTED |= {
    (command, "sqlite-read-only"): 0
    for command in (
        "audit",
        "discards",
        "unchecked",
        "editor list",
        "eval",
        "stats",
        "doctor",
        "init",
        "migrate",
        "replay",
        "watch",
    )
}
NOT_AFFECTED[("retract", "sqlite-read-only")] = 1  # no item 1 to retract: found before writing
# No feed "wire" to change: found before writing.
NOT_AFFECTED |= {
    (f"feeds {verb}", "sqlite-read-only"): 1 for verb in ("rename", "disable", "enable", "remove")
}


def all_commands() -> list[str]:
    def walk(command: object, path: list[str]) -> Iterator[str]:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                yield from walk(sub, [*path, name])
        else:
            yield " ".join(path)

    return sorted(walk(typer.main.get_command(app), []))


@dataclass
class Broken:
    """A broken environment: options before the command, and environment variables."""

    options: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


def _good_config(tmp: Path, url: str) -> Path:
    config = tmp / "config.toml"
    config.write_text(
        f'[database]\nurl = "{url}"\n\n[summarise]\nbackend = "extractive"\n\n'
        '[[feeds]]\nurl = "https://news.example.test/feed.xml"\nname = "Harbour News"\n',
        encoding="utf-8",
    )
    return config


def _not_utf8(tmp: Path) -> Path:
    config = tmp / "latin1.toml"
    config.write_bytes('[database]\nurl = "sqlite:///café.db"\n'.encode("latin-1"))
    return config


def _read_only_sqlite(tmp: Path) -> Broken:
    """A migrated database with an editor in it, opened read-only. (SQLite's
    mode=ro, not chmod: the suite may run as root, which ignores file modes.)"""
    path = tmp / "desk.db"
    engine = open_store(f"sqlite:///{path}")
    with session_scope(engine) as session:
        add_editor(session, "ann", PASSWORD)
    engine.dispose()
    url = f"sqlite:///file:{path}?mode=ro&uri=true"
    return Broken(["-c", str(_good_config(tmp, url))], {"COPYDESK_DATABASE_URL": url})


def _missing_postgres_database(tmp: Path) -> Broken:
    server = os.environ.get("COPYDESK_TEST_PG_URL")
    if not server:
        pytest.skip("COPYDESK_TEST_PG_URL is not set")
    url = make_url(server).set(database="copydesk_no_such_database", drivername="postgresql")
    return Broken(env={"COPYDESK_DATABASE_URL": url.render_as_string(hide_password=False)})


ENVIRONMENTS: dict[str, Callable[[Path], Broken]] = {
    "config-not-utf8 (-c)": lambda tmp: Broken(["-c", str(_not_utf8(tmp))]),
    "config-not-utf8 (COPYDESK_CONFIG)": lambda tmp: Broken(
        env={"COPYDESK_CONFIG": str(_not_utf8(tmp))}
    ),
    "config-is-a-directory (-c)": lambda tmp: Broken(["-c", str(tmp)]),
    "config-is-a-directory (COPYDESK_CONFIG)": lambda tmp: Broken(
        env={"COPYDESK_CONFIG": str(tmp)}
    ),
    "config-missing (-c)": lambda tmp: Broken(["-c", str(tmp / "nowhere.toml")]),
    "sqlite-read-only": _read_only_sqlite,
    "sqlite-folder-missing": lambda tmp: Broken(
        env={"COPYDESK_DATABASE_URL": f"sqlite:///{tmp}/no/such/folder/desk.db"}
    ),
    "postgres-unreachable": lambda tmp: Broken(
        env={"COPYDESK_DATABASE_URL": "postgresql://copydesk:s3cret-pw@127.0.0.1:9/copydesk"}
    ),
    "postgres-database-missing": _missing_postgres_database,
}


def test_every_command_has_sample_arguments() -> None:
    assert all_commands() == sorted(COMMAND_ARGS), (
        "add the new command to COMMAND_ARGS (and NOT_AFFECTED if a broken "
        "environment does not concern it)"
    )


@pytest.mark.parametrize("environment", ENVIRONMENTS.keys())
@pytest.mark.parametrize("command", all_commands())
def test_every_command_fails_in_one_line(
    command: str, environment: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no ./config.toml of the developer's
    (tmp_path / "page.html").write_text("<html><body><p>Quay works.</p></body></html>")
    (tmp_path / "source.txt").write_text("The quay in Dunmore reopened on Monday.\n")
    (tmp_path / "draft.txt").write_text("The Dunmore quay reopened on Monday.\n")
    broken = ENVIRONMENTS[environment](tmp_path)
    args = [a.replace("{tmp}", str(tmp_path)) for a in COMMAND_ARGS[command]]
    result = CliRunner().invoke(
        app,
        [*broken.options, *command.split(), *args],
        env={"HOME": str(tmp_path), **broken.env},
        input=PASSWORD + "\n",
    )
    expected = NOT_AFFECTED.get((command, environment), 3)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == expected, (result.exit_code, result.stderr, result.exception)
    assert "Traceback" not in result.output + result.stderr
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), repr(result.exception)
    if expected == 3:
        # One error line, the last; before it at most the notes a run prints as it
        # starts (which summariser, which checks), never part of the error.
        errors = [line for line in lines if line.startswith("copydesk: error: ")]
        assert len(errors) == 1 and lines[-1] == errors[0], result.stderr
        assert all(line.startswith(NOTES) for line in lines[:-1]), result.stderr
    assert "s3cret-pw" not in result.output + result.stderr
