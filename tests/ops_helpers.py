"""A newsroom folder for the command-line tests of issue 22 (tests/test_cli_ops.py,
tests/test_cli_tty.py), and the check that stdout is one compact JSON document."""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from pathlib import Path

from tests.articles import local_feed
from tests.cli_helpers import cli_env, run
from tests.publish_helpers import copy_desk_database


def make_desk(folder: Path, *, backend: str = "extractive", init: bool = True) -> dict[str, str]:
    """A newsroom in `folder`: config.toml with the local two-story feed, a JSON Lines
    publish target, the database beside it (what `copydesk init` makes, unless not)."""
    local_feed(folder)
    (folder / "config.toml").write_text(
        f'[database]\nurl = "sqlite:///desk.db"\n\n[summarise]\nbackend = "{backend}"\n\n'
        '[[feeds]]\nname = "local"\nurl = "feed.xml"\n\n'
        '[[publish.targets]]\nname = "file"\nkind = "jsonl"\npath = "out/items.jsonl"\n',
        encoding="utf-8",
    )
    env = cli_env(folder, COPYDESK_CONFIG=str(folder / "config.toml"))
    if init:
        copy_desk_database(_initialised(backend), folder / "desk.db")
    return env


# backend -> a desk folder where the console script's `copydesk init` ran
_INITIALISED: dict[str, Path] = {}


def _initialised(backend: str) -> Path:
    """The database `copydesk init` (the console script, in a folder made as
    `make_desk` makes one) left, made once per test process and backend: every desk
    gets a copy of it (the init costs a process start and the whole migration; it
    leaves nothing else beside the config)."""
    if backend not in _INITIALISED:
        home = Path(tempfile.mkdtemp(prefix="copydesk-init-"))
        atexit.register(shutil.rmtree, home, True)
        env = make_desk(home, backend=backend, init=False)
        done = run(["init"], home, env=env)
        assert done.returncode == 0, done.stderr
        _INITIALISED[backend] = home / "desk.db"
    return _INITIALISED[backend]


def one_json_line(stdout: str) -> dict:
    """stdout is exactly one line holding one compact JSON document."""
    assert stdout.endswith("\n") and stdout.count("\n") == 1, stdout
    assert ": " not in stdout.split('"')[0]  # not pretty-printed
    document = json.loads(stdout)
    assert json.dumps(document, separators=(",", ":"), ensure_ascii=False) + "\n" == stdout
    return document
