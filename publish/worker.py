"""Publish now in the background: the review queue hands a publish to a worker thread
and returns at once (a webhook that is down costs its timeouts there, not in the
editor's page).

At most one job runs per database in this process: a second start while one runs
raises `AlreadyRunning` (a second click, a second tab, a second editor). Across
processes (`run --publish` on a worker, another review server) the publisher's own
claims keep every delivery to one sender (publish/service.py), so nothing is sent
twice either way.

A job that dies mid-way (`STOPPED`, with the error) has changed nothing that the
next publish does not finish: deliveries recorded stay recorded and are not sent
again; one it was sending stays claimed until its lease runs out (`[publish]
lease_seconds`), then the next publish sends it again with the same key. The
job's progress is read from the database (the delivery rows), so it is true even
for a job whose thread is gone.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from publish.service import Publisher, PublishReport
from store.models import utcnow

log = logging.getLogger("copydesk.publish")

RUNNING, DONE, STOPPED = "running", "done", "stopped"


@dataclass
class Job:
    key: str  # the database it publishes from
    item_ids: list[int]
    started_by: str
    started_at: datetime = field(default_factory=utcnow)
    state: str = RUNNING
    report: PublishReport | None = None
    error: str | None = None  # why it stopped
    finished_at: datetime | None = None
    _thread: threading.Thread | None = field(default=None, repr=False)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the job to end (at most `timeout` seconds); True once it has."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.state != RUNNING


class AlreadyRunning(RuntimeError):
    """A publish from this database is running in this process: `job` is that one."""

    def __init__(self, job: Job):
        super().__init__(
            f"a publish is already running (started by {job.started_by} at "
            f"{job.started_at.isoformat(timespec='seconds').replace('+00:00', 'Z')})"
        )
        self.job = job


_lock = threading.Lock()
_jobs: dict[str, Job] = {}  # the newest job per database


def current(key: str) -> Job | None:
    """The running job of this database, or the last one to end (None: none yet)."""
    with _lock:
        return _jobs.get(key)


def start(
    key: str,
    make_publisher: Callable[[], Publisher],
    item_ids: Sequence[int],
    started_by: str,
) -> Job:
    """Publish `item_ids` on a worker thread; returns at once with the running job.
    Raises AlreadyRunning, or what `make_publisher` raises (a missing secret: a
    ValueError) before any thread starts."""
    with _lock:
        running = _jobs.get(key)
        if running is not None and running.state == RUNNING:
            raise AlreadyRunning(running)
        publisher = make_publisher()
        job = Job(key, list(item_ids), started_by)
        job._thread = threading.Thread(
            target=_run, args=(job, publisher), name=f"copydesk-publish-{key[-20:]}", daemon=True
        )
        _jobs[key] = job
    job._thread.start()
    return job


def _run(job: Job, publisher: Publisher) -> None:
    try:
        job.report = publisher.publish(job.item_ids)
    except BaseException as exc:  # noqa: BLE001 - the page must learn that it stopped, and why
        log.exception("the background publish started by %s stopped", job.started_by)
        job.error = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        try:
            publisher.close()  # the webhook's HTTP client
        finally:
            job.finished_at = utcnow()
            job.state = STOPPED if job.error is not None else DONE
