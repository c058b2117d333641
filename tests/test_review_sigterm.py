"""`copydesk review` stopped with SIGTERM (systemd's stop, `kill`) stops its Streamlit
process too and frees the port (issue 22), and a Streamlit that stops by itself is
copydesk's exit 3, through the real console script."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli_helpers import COPYDESK, cli_env, run

WIDE = 90.0  # seconds: Streamlit's start on a loaded two-core machine, never a speed check


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def children(pid: int) -> list[int]:
    """Processes whose parent is `pid` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, so split after its ")".
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has stopped


def wait_for(condition, seconds: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def test_sigterm_stops_streamlit_and_frees_the_port(tmp_path):
    """...and leaves nothing in the temporary folder (`copydesk review` makes no
    temporary home: the copydesk-review-* folders are the browser tests' server's,
    tested below)."""
    env = cli_env(tmp_path)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env["TMPDIR"] = str(temporary)
    assert run(["init"], tmp_path, env=env).returncode == 0
    port = free_port()
    review = subprocess.Popen(
        [COPYDESK, "review", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    servers: list[int] = []
    try:
        assert wait_for(lambda: listening(port), WIDE), "the review server never listened"
        servers = children(review.pid)
        assert servers, "no Streamlit process under copydesk review"
        review.send_signal(signal.SIGTERM)
        review.wait(timeout=WIDE)
        assert wait_for(lambda: not any(alive(p) for p in servers), WIDE), servers
        assert wait_for(lambda: not listening(port), WIDE)
        assert review.returncode in (0, 128 + signal.SIGTERM, -signal.SIGTERM)
        assert sorted(p.name for p in temporary.iterdir()) == []
    finally:
        for pid in [review.pid, *servers]:  # whatever this test started, nothing else
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        review.wait(timeout=WIDE)


def test_a_server_that_fails_by_itself_is_exit_3_with_one_line(tmp_path):
    """Streamlit refusing to start (here: a TLS certificate without its key, from the
    environment the unit's EnvironmentFile= may set) is "could not work", 3, said on
    one line: not Streamlit's own 1, which for copydesk means "found something that
    needs a person" and is not among review's exit codes."""
    env = cli_env(tmp_path, STREAMLIT_SERVER_SSL_CERT_FILE=str(tmp_path / "missing.pem"))
    assert run(["init"], tmp_path, env=env).returncode == 0
    done = subprocess.run(
        [COPYDESK, "review", "--port", str(free_port())],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WIDE,
    )
    assert done.returncode == 3, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("copydesk: error: the review server (Streamlit) stopped"), last
    assert "exit 1" in last


# The browser tests' review server (tests/browser.py `_shared_server`), started in a
# test process of its own, as pytest starts it: it prints the server's home, port and
# process, then waits for a line on its input and ends normally, or for a signal.
_SERVER_CHILD = """
import sys
from tests import browser
server = browser._shared_server()
print(server.config_link.parent, server.base.rsplit(":", 1)[1], server.process.pid, flush=True)
sys.stdin.readline()
"""


@pytest.mark.parametrize("how", ["SIGTERM", "exit"])
def test_a_test_process_that_ends_stops_its_review_server_and_removes_its_home(tmp_path, how):
    """A test process stopped with SIGTERM (a CI runner's stop) used to leave its
    review server running, its port taken and its temporary home
    (copydesk-review-*) behind (Python ends at once on SIGTERM, without atexit); one
    that ended normally stopped the server but left its home."""
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(Path(__file__).parents[1])}
    child = subprocess.Popen(
        [sys.executable, "-c", _SERVER_CHILD],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    server = 0
    try:
        line = child.stdout.readline()  # type: ignore[union-attr]
        assert line, f"the test process ended before its server was up ({child.wait()})"
        home, port, server = Path(line.split()[0]), int(line.split()[1]), int(line.split()[2])
        assert home.parent == tmp_path and home.name.startswith("copydesk-review-")
        assert listening(port) and home.is_dir()
        if how == "SIGTERM":
            child.send_signal(signal.SIGTERM)
            assert child.wait(timeout=WIDE) == -signal.SIGTERM  # ended by the signal, as before
        else:
            child.communicate("\n", timeout=WIDE)
            assert child.returncode == 0
        assert not home.exists(), sorted(p.name for p in home.rglob("*"))
        assert wait_for(lambda: not listening(port), WIDE)
        assert not alive(server)
        assert list(tmp_path.glob("copydesk-review-*")) == []
    finally:  # whatever this test started, nothing else
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signal.SIGKILL)
        if server:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server, signal.SIGKILL)  # the server leads a process group
        child.wait(timeout=WIDE)
