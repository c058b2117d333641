"""What every stage of one run shares: the settings and the store, the run's id
(once its row exists, the actor of its audit events) and its report per feed."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy.engine import Engine
from sqlmodel import Session

from copydesk.config import Settings
from copydesk.services.reports import FeedReport
from store.models import Feed


@dataclass
class RunState:
    settings: Settings
    engine: Engine
    command: str = "run"
    run_id: int | None = None
    reports: dict[int, FeedReport] = field(default_factory=dict)  # feed id (0: submitted)

    @property
    def actor(self) -> str:
        return f"run:{self.run_id}"

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=self.settings.runs.lease_seconds)

    def report_for(self, feed_id: int | None) -> FeedReport:
        key = feed_id or 0
        if key not in self.reports:
            with Session(self.engine) as session:
                feed = session.get(Feed, feed_id) if feed_id else None
            name, url = (feed.name, feed.url) if feed else ("(submitted)", "")
            self.reports[key] = FeedReport(name, url)
        return self.reports[key]
