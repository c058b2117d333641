"""`copydesk --help` and `copydesk COMMAND --help` import only what the help needs
(issue 22: help in under a second). What the commands do (the database, the model's
SDK, the web app, HTML extraction) is imported when a command runs, not before.
A count of modules, not a timing: bench/bench_cli.py measures the time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import cli_env

HEAVY = (
    "sqlalchemy",
    "sqlmodel",
    "alembic",
    "anthropic",
    "streamlit",
    "trafilatura",
    "lxml",
    "feedparser",
    "httpx",
    "pydantic",
    "psycopg",
    "rapidfuzz",
)

PROBE = """
import json, sys
from copydesk.cli import app
try:
    app(sys.argv[1:], prog_name="copydesk")
except SystemExit:
    pass
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})), file=sys.stderr)
"""


def imported(folder: Path, *args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=folder,
        env=cli_env(folder),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "args", [["--help"], ["run", "--help"], ["feeds", "add", "--help"], ["--version"]], ids=" ".join
)
def test_help_imports_nothing_heavy(tmp_path, args):
    modules = imported(tmp_path, *args)
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_the_probe_sees_heavy_imports(tmp_path):
    """The check above can fail: a command that runs imports the database layer."""
    assert "sqlalchemy" in imported(tmp_path, "init")
