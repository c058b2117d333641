"""What the command line imports before it does anything (issue 22: `--help` under
1 s; issue 20: `copydesk check` starting in under 0.5 s). The time itself is
measured only in bench/bench_cli.py, beside `python -c pass`; here the test is on
WHAT gets imported, which does not depend on the machine: `--help` must not pull
in the store, the model SDK, the page extractor or the review server, and `check`
(deterministic gates, no database) must not pull in the store or the SDK.

Each case runs the console entry point in a fresh interpreter (imports are
process-wide) and reads `sys.modules` when it exits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.check_helpers import GOOD, URL, pair, write_config

# Packages no `--help` may import: each costs from a tenth of a second (httpx) to
# seconds (anthropic) and none is needed to print a usage text. (pydantic is not
# here: Typer 0.29 itself imports it to coerce a command's parameters; the bare
# `copydesk --help` and `--version` do without it, checked below.)
HEAVY = ("anthropic", "trafilatura", "streamlit", "sqlalchemy", "sqlmodel", "httpx")
# The stages, every one of them: `--help` is Typer and the command modules only.
STAGES = ("store", "summarise", "ingest", "publish", "review_ui", "guards")

# Runs the console entry point as the installed `copydesk` script does, then writes the
# modules that were imported, as JSON, on stderr's last line.
PROBE = """
import atexit, json, sys
atexit.register(lambda: sys.stderr.write(
    "\\n" + json.dumps(sorted(sys.modules)) + "\\n"))
sys.argv = ["copydesk", *sys.argv[1:]]
from copydesk.cli import main
main()
"""


def imported(args: list[str], cwd: Path) -> tuple[int, set[str]]:
    """The exit code and the modules imported ("store.db"), with their packages ("store")."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COPYDESK_")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,  # a hang, not a speed limit
        check=False,
    )
    modules = set(json.loads(done.stderr.strip().splitlines()[-1]))
    return done.returncode, modules | {m.split(".")[0] for m in modules}


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["run", "--help"],
        ["editor", "add", "--help"],
        ["feeds", "--help"],
        ["review", "--help"],
    ],
    ids=" ".join,
)
def test_help_imports_no_stage_and_no_heavy_package(tmp_path: Path, args: list[str]) -> None:
    code, modules = imported(args, tmp_path)
    assert code == 0
    assert not modules & set(HEAVY + STAGES), sorted(modules & set(HEAVY + STAGES))
    assert "copydesk" in modules  # the probe ran the real entry point
    if len(args) == 1:
        assert "pydantic" not in modules


def test_check_imports_neither_the_store_nor_the_model_sdk(tmp_path: Path) -> None:
    """A gates-only check of one pair: the gates and the settings, nothing else. It
    prints its verdicts (exit 0: the faithful draft passes), so the import list is
    that of a check that did its whole job."""
    source, draft = pair(tmp_path, GOOD)
    config = write_config(tmp_path / "config.toml")
    code, modules = imported(
        ["--config", str(config), "check", source, draft, "--url", URL], tmp_path
    )
    assert code == 0
    assert "guards" in modules
    unwanted = {"anthropic", "trafilatura", "streamlit", "sqlalchemy", "sqlmodel", "httpx"}
    # The stages' settings types come with the config; their working modules do not.
    unwanted |= {"store.db", "store.models", "ingest.fetch", "ingest.extract", "publish.service"}
    assert not modules & unwanted, sorted(modules & unwanted)


def test_role_help_names_the_stores_roles() -> None:
    """`editor add --role`'s help lists the roles without importing the store."""
    from copydesk.cli import app
    from store.editors import ROLES

    result = CliRunner().invoke(app, ["editor", "add", "--help"])
    assert f"one of: {', '.join(ROLES)}" in " ".join(result.output.split())


def test_check_without_a_config_file_imports_no_sqlalchemy(tmp_path: Path) -> None:
    """Without a config.toml the settings place the audit anchor beside the database,
    which reads the database URL with SQLAlchemy: `check` touches no database, so it
    does not ask for that, and starts as fast as with a config file (issue 20)."""
    source, draft = pair(tmp_path, GOOD)
    code, modules = imported(["check", source, draft, "--url", URL], tmp_path)
    assert code == 0
    assert "guards" in modules
    assert not modules & {"sqlalchemy", "sqlmodel", "store.db"}, sorted(
        modules & {"sqlalchemy", "sqlmodel", "store.db"}
    )


def test_a_sqlite_run_at_head_imports_neither_alembic_nor_postgresql(tmp_path: Path) -> None:
    """A run (or any command) on a database already at the head revision reads its
    revision and the code's head without Alembic (issue 24: Alembic and its dialect
    modules are about 0.1 s of CPU for every process; only a migration needs them)."""
    from store.db import open_store

    db = tmp_path / "wendle.db"
    open_store(f"sqlite:///{db}").dispose()  # at head
    config = tmp_path / "config.toml"
    config.write_text(
        f'[database]\nurl = "sqlite:///{db}"\n\n[runs]\naudit_anchor = "{tmp_path / "anchor"}"\n'
        '\n[summarise]\nbackend = "extractive"\n'
    )
    code, modules = imported(["--config", str(config), "--quiet", "run", "--json"], tmp_path)
    assert code == 0
    assert "store.db" in modules  # the run opened its database
    assert "alembic" not in modules
    # Nor PostgreSQL's dialect, on SQLite (issue 24: about 0.05 s of CPU a process,
    # 0.15 ms an article of a 320-article run; its INSERT is imported where it runs).
    assert "sqlalchemy.dialects.postgresql" not in modules


def test_the_head_revision_read_without_alembic_is_alembics() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from store import db

    config = Config()
    config.set_main_option("script_location", str(db.MIGRATIONS))
    assert db.head_revision(None) == ScriptDirectory.from_config(config).get_current_head()


@pytest.mark.parametrize(
    "args",
    [
        ["audit", "--verify"],
        ["discards"],
        ["stats"],
        ["feeds", "list"],
        ["feeds", "add", "https://wendle.example.test/feed.xml"],
    ],
    ids=" ".join,
)
def test_a_command_that_runs_no_pipeline_imports_none_of_it(
    tmp_path: Path, args: list[str]
) -> None:
    """Every command that opens the store gets the composition root's `Desk`
    (copydesk/services/compose.py); only those that run the pipeline, summarise or
    publish import those parts (they were about a third of the CPU of starting
    `copydesk audit --verify`, and the test suite starts such commands by the hundred).
    `feeds list` and `feeds add` write the feeds table through copydesk/services/feeds.py,
    not through the pipeline (which cost them about a second of imports)."""
    (tmp_path / "config.toml").write_text('[database]\nurl = "sqlite:///desk.db"\n')
    assert imported(["init"], tmp_path)[0] == 0
    code, modules = imported(args, tmp_path)
    assert code == 0
    assert "store" in modules  # the command did open the store
    unwanted = {"copydesk.services.pipeline", "trafilatura", "feedparser", "anthropic"}
    unwanted |= {"ingest.fetch", "publish.service", "summarise.factory"}
    assert not modules & unwanted, sorted(modules & unwanted)
