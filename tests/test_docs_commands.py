"""README's command table and every command's --help agree with the CLI (issue 22):
each command has one row naming it, with exactly the exit codes copydesk/cli/exits.py
gives it, and its --help ends with those codes and their meanings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from copydesk.cli import app
from copydesk.cli.exits import SPECIFIC, codes
from tests.cli_helpers import cli_commands

README = Path(__file__).resolve().parents[1] / "README.md"


def table_rows(text: str) -> dict[str, set[int]]:
    """README's command table: {"feeds add": {0, 2, 3}}, from the first code span
    of each row (its command words: lowercase, up to the first argument or option)."""
    start = text.index("| command | what it does | exit codes |")
    rows: dict[str, set[int]] = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        span = re.match(r"`copydesk ([^`]*)`", cells[0])
        assert span, f"a row without `copydesk ...`: {line}"
        words = []
        for word in span.group(1).split():
            if not re.fullmatch(r"[a-z]+", word):
                break
            words.append(word)
        name = " ".join(words)
        assert name not in rows, f"two rows for {name}"
        rows[name] = {int(c) for c in re.findall(r"\d", cells[-1])}
    return rows


def test_the_readme_table_lists_every_command_with_its_exit_codes():
    rows = table_rows(README.read_text(encoding="utf-8"))
    names = cli_commands()
    assert sorted(rows) == sorted(names), (
        f"missing: {sorted(set(names) - set(rows))}; not commands: {sorted(set(rows) - set(names))}"
    )
    for name in names:
        assert rows[name] == set(codes(name)), (
            f"{name}: README {rows[name]}, CLI {set(codes(name))}"
        )


def test_a_missing_row_or_a_wrong_code_is_caught():
    text = README.read_text(encoding="utf-8")
    rows = table_rows(
        text.replace("| `copydesk stats [--json]` |", "| `copydesk statz [--json]` |")
    )
    assert "stats" not in rows and "statz" in rows
    assert table_rows(text)["watch"] == {0, 1, 2, 3}


@pytest.mark.parametrize("name", cli_commands())
def test_help_ends_with_every_exit_code(name):
    assert name in SPECIFIC, f"add {name!r} and its exit codes to copydesk/cli/exits.py"
    done = CliRunner().invoke(app, [*name.split(), "--help"], terminal_width=400)
    assert done.exit_code == 0, done.output
    epilog = " ".join(done.output.split("Exit codes:")[1].split())
    for code, meaning in codes(name).items():
        assert f"{code} {' '.join(meaning.split())}" in epilog, (code, epilog)


def test_the_readme_says_what_differs_on_postgresql_14_and_older():
    """Issue 22: README itself (not only docs/deploy.md) warns that PUBLIC may create
    tables in `public` before version 15, and gives the one statement that closes it."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "PostgreSQL 14 and older" in text
    assert "REVOKE CREATE ON SCHEMA public FROM PUBLIC;" in text


def test_the_readme_recommends_backend_anthropic_in_production():
    """Issue 22: with the offline default, a cron job that lost its key goes on with the
    extractive summariser, exit 0; README tells production to name its backend."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert 'backend = "anthropic"' in text and "exit 3" in text
