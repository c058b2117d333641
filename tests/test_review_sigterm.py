"""`copydesk review` stopped with SIGTERM (systemd's stop, `kill`) stops its Streamlit
process too and frees the port (issue 22), through the real console script."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

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
    env = cli_env(tmp_path)
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
    finally:
        for pid in [review.pid, *servers]:  # whatever this test started, nothing else
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        review.wait(timeout=WIDE)
