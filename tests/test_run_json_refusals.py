"""`run --json` prints one JSON document on stdout also when the run is refused
(SQLite: another run is working, exit 0) or cannot start (exit 3): a scheduler that
parses stdout never reads an empty string (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store.db import open_store, session_scope
from store.models import Run, utcnow
from tests.publish_helpers import cli, write_config

# Each test's database starts at the newest schema (conftest's migrated template), so
# `copydesk init` in write_config migrates nothing; what init makes is the same.
pytestmark = pytest.mark.usefixtures("migrated")


def test_a_refused_run_says_so_in_json(sqlite_url: str, tmp_path: Path) -> None:
    config = write_config(tmp_path, sqlite_url, targets=())
    engine = open_store(sqlite_url)
    with session_scope(engine) as session:  # a live run of another host holds the slot
        session.add(Run(command="run", heartbeat_at=utcnow(), worker="elsewhere:7"))
    engine.dispose()
    result = cli(config, "run", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["status"] == "refused" and document["exit_code"] == 0
    assert document["run_id"] is None
    assert document["error"].startswith("another run is in progress (run 1 on elsewhere:7")


def test_a_run_that_cannot_start_says_why_in_json(sqlite_url: str, tmp_path: Path) -> None:
    config = write_config(tmp_path, sqlite_url, targets=())
    text = config.read_text(encoding="utf-8").replace('"extractive"', '"anthropic"')
    config.write_text(text, encoding="utf-8")
    result = cli(config, "run", "--json")  # no ANTHROPIC_API_KEY
    assert result.exit_code == 3
    document = json.loads(result.stdout)
    assert (document["status"], document["exit_code"], document["run_id"]) == ("failed", 3, None)
    assert "ANTHROPIC_API_KEY" in document["error"]
    assert len(result.stderr.strip().splitlines()) == 1  # the one line, as before


def test_a_finished_run_prints_its_report_once(sqlite_url: str, tmp_path: Path) -> None:
    config = write_config(tmp_path, sqlite_url, targets=())
    result = cli(config, "run", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)  # exactly one document
    assert document["run_id"] == 1 and "status" not in document
