"""Issue 12, the first run at the command line: the real `copydesk` entry point in
a subprocess (or on a pseudo-terminal where a person would type), asserting on
stdout, stderr and the exit code. The database a command names and a set-up `init`
run in this process (`run_here`, tests/cli_helpers.py): what they show is the same."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli_helpers import COPYDESK, cli_env, run, run_here

PASSWORD = "lantern-harbour-42"


def on_a_terminal(args: list[str], cwd: Path, answers: list[str]) -> tuple[str, int]:
    """Run `copydesk` on a pseudo-terminal, typing each answer after a prompt;
    returns everything the terminal showed and the exit code."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: becomes copydesk, and never returns into pytest
        try:
            os.chdir(cwd)
            os.execve(COPYDESK, [COPYDESK, *args], cli_env(cwd))  # noqa: S606 - no shell wanted
        finally:
            os._exit(127)
    shown = b""
    pending = list(answers)
    deadline = time.monotonic() + 120
    last_output = time.monotonic()
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
            last_output = time.monotonic()
        # Type once the prompt is out and the terminal is quiet: the prompt turns the
        # echo off (and flushes what was typed before) after printing its text.
        quiet = time.monotonic() - last_output > 0.5
        if pending and quiet and shown.rstrip().endswith(b":"):
            os.write(fd, (pending.pop(0) + "\n").encode())
            shown += b"\n"
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return shown.decode(errors="replace"), os.waitstatus_to_exitcode(status)


# --------------------------------------------------------------------------- editor add


def test_editor_add_without_a_terminal_says_to_use_password_stdin(tmp_path: Path) -> None:
    result = run(["editor", "add", "alice"], tmp_path)
    assert result.returncode == 2
    first = result.stderr.splitlines()[0]
    assert "--password-stdin" in first and "no terminal" in first
    assert len(result.stderr.splitlines()) == 1 and result.stdout == ""


def test_editor_add_refuses_a_short_password_before_asking_again(tmp_path: Path) -> None:
    shown, code = on_a_terminal(["editor", "add", "alice"], tmp_path, ["short", "short"])
    assert code == 2
    assert "password too short: at least 8 characters" in shown
    assert "Repeat" not in shown  # refused before the second prompt
    assert "short" not in shown.replace("too short", "")  # never echoed


def test_editor_add_on_a_terminal_asks_twice_and_checks_they_match(tmp_path: Path) -> None:
    assert run(["init"], tmp_path).returncode == 0  # only `init` creates a database
    shown, code = on_a_terminal(["editor", "add", "alice"], tmp_path, [PASSWORD, PASSWORD])
    assert code == 0, shown
    assert "Repeat for confirmation" in shown and "added editor alice" in shown
    assert PASSWORD not in shown
    shown, code = on_a_terminal(["editor", "add", "bob"], tmp_path, [PASSWORD, PASSWORD + "x"])
    assert code == 2 and "do not match" in shown


@pytest.mark.parametrize("command", [["editor", "password", "alice"]])
def test_editor_password_without_a_terminal_names_its_own_command(
    tmp_path: Path, command: list[str]
) -> None:
    result = run(command, tmp_path)
    assert result.returncode == 2
    assert "copydesk editor password NAME --password-stdin" in result.stderr.splitlines()[0]


# --------------------------------------------------------------------------- demo and first run


def test_demo_on_a_taken_port_says_so_before_any_url(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run(["demo", "--port", str(port), "--dir", str(tmp_path / "d")], tmp_path)
    assert result.returncode == 3
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"copydesk: error: port {port} on 127.0.0.1 is taken")
    suggested = int(line.rsplit("--port ", 1)[1])
    assert suggested != port
    assert "http://" not in result.stdout + result.stderr  # no URL was printed
    assert not (tmp_path / "d" / "demo.db").exists()  # nothing was run


def test_review_on_a_taken_port_says_so_before_any_url(tmp_path: Path) -> None:
    import socket

    env = cli_env(tmp_path, COPYDESK_DATABASE_URL=f"sqlite:///{tmp_path}/desk.db")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert run_here(["init"], tmp_path, env=env).returncode == 0
        result = run(["review", "--port", str(port)], tmp_path, env=env)
    assert result.returncode == 3
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert errors == [errors[0]] and f"port {port} on 127.0.0.1 is taken" in errors[0]
    assert "http://" not in result.stdout + result.stderr


def test_the_demo_hints_work_pasted_into_a_fresh_shell(tmp_path: Path) -> None:
    result = run(["demo", "--no-ui", "--dir", str(tmp_path / "d")], tmp_path)
    assert result.returncode == 0, result.stderr
    hints = {
        line.split(":", 1)[0]: line.split(":", 1)[1].strip()
        for line in result.stdout.splitlines()
        if line.startswith(("see why an item was discarded:", "review queue:"))
    }
    assert set(hints) == {"see why an item was discarded", "review queue"}
    assert hints["review queue"].endswith(" review") and COPYDESK in hints["review queue"]
    # A fresh shell: no virtualenv on PATH, another folder.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    fresh = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    pasted = subprocess.run(
        ["/bin/sh", "-c", hints["see why an item was discarded"]],
        cwd=elsewhere,
        env=fresh,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert pasted.returncode == 0, pasted.stderr
    assert "Discarded items (" in pasted.stdout and "numbers_grounded" in pasted.stdout


def test_a_command_outside_the_project_folder_names_its_database(tmp_path: Path) -> None:
    assert run_here(["init"], tmp_path).returncode == 0  # only `init` creates a database
    result = run_here(["stats", "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    json_document = __import__("json").loads(result.stdout)  # stdout stays machine-readable
    assert "items_by_status" in json_document
    (line,) = result.stderr.splitlines()
    assert line == (
        f"database: {(tmp_path / 'copydesk.db').resolve()} "
        f"(from the default: no config.toml in {tmp_path.resolve()})"
    )
    # Inside a project folder (a config.toml here), or with the database named: silent.
    (tmp_path / "config.toml").write_text('[database]\nurl = "sqlite:///copydesk.db"\n')
    assert run_here(["stats", "--json"], tmp_path).stderr == ""
    (tmp_path / "config.toml").unlink()
    named = cli_env(tmp_path, COPYDESK_DATABASE_URL=f"sqlite:///{tmp_path}/copydesk.db")
    assert run_here(["editor", "list"], tmp_path, env=named).stderr == ""
