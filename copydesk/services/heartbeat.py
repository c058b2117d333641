"""A run's life in the database: the slot a SQLite run takes, and the heartbeat.

The heartbeat is a thread that, every third of the lease, writes the run's counts
so far and the time to its row, and renews the claims the run holds. A run killed
with -9 stops beating: `copydesk stats` then shows it as "did not finish" with
what it did, and its claims run out for another run to take over.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from store import claims
from store.db import session_scope
from store.models import Run, utcnow

log = logging.getLogger("copydesk.pipeline")


class AnotherRunInProgress(RuntimeError):
    """SQLite: another `copydesk run` is working and did not finish in the wait."""


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def start_run_row(engine: Engine, command: str, backend: str) -> int:
    """Insert the run's row (heartbeat now) and return its id."""
    with session_scope(engine) as session:
        now = utcnow()
        run = Run(
            command=command, backend=backend, heartbeat_at=now, started_at=now, worker=worker_name()
        )
        session.add(run)
        session.flush()
        return run.id


def take_sqlite_slot(
    engine: Engine, command: str, backend: str, *, lease: timedelta, wait: float
) -> int:
    """SQLite: insert this run's row only when no other live run is working, waiting up
    to `wait` seconds. The INSERT comes first, so the transaction holds SQLite's write
    lock while it looks: two runs starting at once cannot both see the field clear."""
    deadline = time.monotonic() + wait
    while True:
        with session_scope(engine) as session:
            now = utcnow()
            run = Run(
                command=command,
                backend=backend,
                heartbeat_at=now,
                started_at=now,
                worker=worker_name(),
            )
            session.add(run)
            session.flush()
            others = [
                other
                for other in claims.live_runs(session, lease, exclude=run.id)
                if not _taken_over_from_the_dead(session, other, run.id)
            ]
            if not others:
                return run.id
            other = others[0]
            busy = (
                f"another run is in progress (run {other.id} on {other.worker or '?'}, "
                f"started {other.started_at.isoformat(timespec='seconds')}); nothing to do"
            )
            session.rollback()
        if time.monotonic() >= deadline:
            raise AnotherRunInProgress(busy)
        time.sleep(min(1.0, max(0.05, deadline - time.monotonic())))


def process_gone(worker: str | None) -> bool:
    """True when `worker` ("host:pid", `worker_name`) names a process of this host
    that no longer exists (or is a zombie: killed, not yet reaped). A process of
    another host, or one this user may not signal, is taken as alive."""
    host, _, pid = (worker or "").rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:  # Linux: "pid (name) Z ..." for a zombie
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


def _taken_over_from_the_dead(session: Session, other: Run, run_id: int) -> bool:
    """A run whose process on this host is gone (kill -9) holds the SQLite slot no
    longer: its row is ended with why, its claims are handed back, at once (not
    when its heartbeat grows stale)."""
    if not process_gone(other.worker):
        return False
    log.warning("run %s: its process %s is gone; run %s takes over", other.id, other.worker, run_id)
    other.ended_at = utcnow()
    other.error = f"its process {other.worker} no longer exists (killed); run {run_id} took over"
    claims.release_all(session, other.id)  # type: ignore[arg-type]
    session.flush()
    return True


class Heartbeat:
    """Every `interval` seconds: counts and time on the run row, claims renewed."""

    def __init__(
        self,
        engine: Engine,
        run_id: int,
        lease: timedelta,
        counts: Callable[[], dict[str, Any]],
    ):
        self.engine, self.run_id, self.lease, self.counts = engine, run_id, lease, counts
        self.interval = max(0.1, lease.total_seconds() / 3)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.beat()
            except Exception:  # noqa: BLE001 - a missed beat is retried; the run goes on
                log.warning("run %s: heartbeat failed", self.run_id, exc_info=True)

    def beat(self) -> None:
        counts = _snapshot(self.counts)
        with session_scope(self.engine) as session:
            claims.renew(session, self.run_id, self.lease)
            run = session.get(Run, self.run_id)
            run.heartbeat_at = utcnow()
            if counts is not None:
                run.counts = counts


def _snapshot(counts: Callable[[], dict[str, Any]]) -> dict[str, Any] | None:
    """The counts, read while the run's thread updates them: a dict that changed
    size mid-read is simply read again (or skipped until the next beat)."""
    for _ in range(3):
        try:
            return counts()
        except RuntimeError:
            continue
    return None
