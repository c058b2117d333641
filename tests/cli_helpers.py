"""The `copydesk` command line as a person meets it, for the tests that assert on
what they see: stdout, stderr and the exit code.

`run` starts the real console script in a subprocess, in a folder with an
environment made by `cli_env` unless given one: the test process's environment
without any COPYDESK_* variable, HOME the folder, and a wide terminal (COLUMNS=200)
so that tables are not wrapped.

`run_here` takes the same arguments and returns the same result, but runs the
command in this process (Typer's CliRunner): the folder, exactly that environment
(TZ included) and stdin for the one command, all put back afterwards. A process
start costs about a second of CPU (the store, pydantic, the SDK imported again);
a test about what the command does, not about the process, uses `run_here`. What
only a fresh process shows stays with `run`: the console script's entry point, a
library's warning printed once per process, the shell's completion, a terminal.
An exception the command lets out fails the test here (a process would print a
traceback and exit 1, which those tests refuse anyway).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
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


def run_here(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`run`, in this process: the same exit code, stdout and stderr."""
    from typer.testing import CliRunner

    from copydesk.cli import app

    with _as_a_process(cwd, env if env is not None else cli_env(cwd)):
        result = CliRunner().invoke(
            app, args, input=stdin or "", prog_name="copydesk", catch_exceptions=False
        )
    return subprocess.CompletedProcess(
        ["copydesk", *args], result.exit_code, result.stdout, result.stderr
    )


@contextmanager
def _as_a_process(cwd: Path, env: dict[str, str]) -> Iterator[None]:
    """This process's folder, environment (exactly `env`: TZ re-read) and consoles as a
    child started in `cwd` with `env` would have them; all put back afterwards."""
    from copydesk.cli import context

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    consoles = [(c, c._console) for c in (context.out, context.err)]  # type: ignore[attr-defined]
    os.environ.clear()
    os.environ.update(env)
    time.tzset()
    os.chdir(cwd)
    for console, _ in consoles:  # made afresh: a Console reads COLUMNS when it is made
        console._console = None
    try:
        yield
    finally:
        for console, made in consoles:
            console._console = made
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        time.tzset()


def cli_commands() -> list[str]:
    """Every command a person runs ("feeds add"): the leaves of the command tree."""
    from docs import gen_cli

    found = []
    for path, command in gen_cli.walk(gen_cli.root_command(), ("copydesk",)):
        if len(path) > 1 and not hasattr(command, "commands"):
            found.append(" ".join(path[1:]))
    return found
