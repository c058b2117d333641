"""`copydesk run` on a terminal (issue 22), through a pseudo-terminal: the progress bar
and the log lines do not fight. Every log line reaches the screen whole, on a line
of its own, never glued to a redraw of the bar."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time

from tests.cli_helpers import COPYDESK
from tests.ops_helpers import make_desk

CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
BAR = "━"
LOG_LINE = re.compile(r"^\d\d:\d\d:\d\d (INFO|WARNING|ERROR|DEBUG) ")


def run_on_a_terminal(args: list[str], cwd, env, seconds: float = 120.0) -> str:  # type: ignore[no-untyped-def]
    """Everything the command wrote to its terminal (stdout and stderr both)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [COPYDESK, *args],
        cwd=cwd,
        env={**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"},
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
    )
    os.close(follower)
    chunks = []
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    data = os.read(leader, 65536)
                except OSError:  # the terminal closed: the command ended
                    break
                if not data:
                    break
                chunks.append(data)
            elif process.poll() is not None:
                break
    finally:
        os.close(leader)
        process.wait(timeout=seconds)
    assert process.returncode == 0, b"".join(chunks).decode(errors="replace")
    return b"".join(chunks).decode("utf-8", errors="replace")


def screen_lines(raw: str) -> list[str]:
    """What each line shows once carriage returns and erases have acted (a small
    terminal: text after the last \\r or erase-line on a line is what remains)."""
    lines = []
    for line in raw.replace("\r\n", "\n").split("\n"):
        line = re.split(r"\r|\x1b\[2K", line)[-1]
        lines.append(CSI.sub("", line))
    return lines


def test_progress_bar_and_log_lines_do_not_fight(tmp_path):
    env = make_desk(tmp_path)
    env.pop("COLUMNS", None)
    raw = run_on_a_terminal(["-v", "run"], tmp_path, env)
    assert BAR in raw, "no progress bar drawn on the terminal"
    shown = screen_lines(raw)
    logs = [line for line in shown if re.search(r"\d\d:\d\d:\d\d (INFO|DEBUG) ", line)]
    assert logs, raw
    for line in logs:
        assert LOG_LINE.match(line), f"log line not on a line of its own: {line!r}"
        assert BAR not in line, f"log line glued to the bar: {line!r}"
