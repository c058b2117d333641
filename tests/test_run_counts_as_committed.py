"""A run's counts are written on its row as its items commit (issue 26), in the
same transaction as the items: a run that dies shows what it committed, not
"0 drafts". The heartbeat (every third of the lease) is not what writes them
here: the lease is an hour."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

from copydesk.config import Settings
from copydesk.services.pipeline import Pipeline
from ingest.fetch import Fetcher
from store.models import Item, Run
from summarise.base import Article, Draft
from summarise.extractive import ExtractiveSummariser
from tests.articles import local_feed

WAIT = 120  # seconds; wide, so a loaded machine only makes the test slower


class HeldSummariser:
    """Summarises; the second call waits until the test lets it go."""

    name = "held"

    def __init__(self) -> None:
        self.inner = ExtractiveSummariser()
        self.calls = 0
        self.second = threading.Event()
        self.release = threading.Event()

    def summarise(self, article: Article) -> Draft:
        self.calls += 1
        if self.calls == 2:
            self.second.set()
            self.release.wait(WAIT)
        return self.inner.summarise(article)


def _row(engine: Engine) -> tuple[int | None, int]:
    """(drafts on the run's row, draft items in the database): the items first, so
    a commit between the two reads cannot show items the row has not counted."""
    with Session(engine) as session:
        items = session.exec(select(func.count(Item.id)).where(Item.status == "draft")).one()
        run = session.exec(select(Run)).one()
    return ((run.counts or {}).get("totals") or {}).get("drafts"), items


def test_counts_are_on_the_run_row_while_it_works(engine: Engine, tmp_path: Path) -> None:
    feed = local_feed(tmp_path, stories=2)
    settings = Settings.model_validate(
        {
            "feeds": [{"url": str(feed), "name": "local"}],
            "summarise": {"backend": "extractive", "max_concurrency": 1},
            "runs": {"lease_seconds": 3600},
        }
    )
    summariser = HeldSummariser()
    finished: dict[str, object] = {}

    def run() -> None:
        with Fetcher(settings.ingest) as fetcher:
            finished["report"] = Pipeline(settings, engine, summariser, fetcher).run()

    worker = threading.Thread(target=run)
    worker.start()
    seen: tuple[int | None, int] = (None, 0)
    try:
        assert summariser.second.wait(WAIT), "the second item never reached the model"
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            seen = _row(engine)
            if seen[1] == 1:  # the first item is committed; the second is held
                break
            time.sleep(0.05)
    finally:
        summariser.release.set()
        worker.join(WAIT)
    assert seen == (1, 1)  # the row counted the draft committed with it
    assert finished["report"].totals()["drafts"] == 2  # type: ignore[attr-defined]
    assert _row(engine) == (2, 2)
