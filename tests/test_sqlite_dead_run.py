"""SQLite: a run killed with -9 holds the run slot no longer (issue 26). Before, every
run for the next 300 s (the lease) said "another run is in progress"; now a run
whose process on this host no longer exists is taken over at once, its row ended
with why. A run of another host, or a live one, still holds the slot."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlmodel import Session, select

from copydesk.services.heartbeat import AnotherRunInProgress, process_gone, take_sqlite_slot
from store.db import open_store
from store.models import Run
from tests.publish_helpers import cli, write_config

ROOT = Path(__file__).resolve().parents[1]
LEASE = timedelta(seconds=300)
HOLDER = """
import sys, time
from datetime import timedelta
from copydesk.services.heartbeat import take_sqlite_slot
from store.db import open_store

engine = open_store(sys.argv[1])
print(take_sqlite_slot(engine, "run", "extractive", lease=timedelta(seconds=300), wait=0),
      flush=True)
time.sleep(600)
"""


def test_a_killed_runs_slot_is_taken_over_at_once(sqlite_url: str, tmp_path: Path) -> None:
    engine = open_store(sqlite_url)
    holder = subprocess.Popen(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", HOLDER, sqlite_url],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    try:
        dead_id = int(holder.stdout.readline())  # type: ignore[union-attr]
        with pytest.raises(AnotherRunInProgress):  # alive: it holds the slot
            take_sqlite_slot(engine, "run", "extractive", lease=LEASE, wait=0)
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()

    config = write_config(tmp_path, sqlite_url, targets=())
    result = cli(config, "run")
    assert result.exit_code == 0, result.output
    assert "another run is in progress" not in result.output
    with Session(engine) as session:
        dead = session.get(Run, dead_id)
        assert dead is not None and dead.ended_at is not None
        assert f"its process {dead.worker} no longer exists (killed)" in (dead.error or "")
        newest = session.exec(select(func.max(Run.id))).one()
        assert newest is not None and newest > dead_id
    engine.dispose()


def test_a_run_of_another_host_or_a_live_process_is_not_gone() -> None:
    assert not process_gone(f"{os.uname().nodename}-elsewhere:1")
    assert not process_gone(f"{os.uname().nodename}:{os.getpid()}")
    assert not process_gone(None)
