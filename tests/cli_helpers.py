"""The real `copydesk` console script in a subprocess, for the tests that assert on
what a person at the command line sees: stdout, stderr and the exit code.

`run` starts it in a folder with an environment made by `cli_env` unless given
one: the test process's environment without any COPYDESK_* variable, HOME the
folder, and a wide terminal (COLUMNS=200) so that tables are not wrapped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

COPYDESK = str(Path(sys.executable).parent / "copydesk")  # the console script itself


def run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COPYDESK, *args],
        cwd=cwd,
        env=env if env is not None else cli_env(cwd),
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COPYDESK_")}
    env.update(HOME=str(home), COLUMNS="200", **extra)
    return env
