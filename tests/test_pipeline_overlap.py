"""Issue 24: page fetching overlaps the rest of the run. While one page's response
is held by the server, the other pages are fetched, extracted, summarised and
committed: a run takes as long as its slowest page, not the sum of them all.

No timing: the server holds page 0 until the run's writer has committed every
other item (an Event), and the test asserts that this is what released it. A
pipeline that fetched pages one after another, or under one lock, or that stopped
feeding the page readers behind a slow page, never gets there: the held page is
released only when WAIT runs out, and the test fails."""

from __future__ import annotations

import json
import threading

from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from copydesk.services.pipeline import writer as pipeline_writer
from store.db import open_store
from store.models import Item
from tests.run_helpers import Newsroom, write_config

N = 12
WAIT = 120  # seconds: a bound for a broken pipeline, never a timing the outcome depends on


def test_a_held_page_does_not_hold_up_the_other_pages(
    tmp_path, sqlite_url, migrated, monkeypatch
) -> None:
    # `migrated`: only `copydesk init` creates a database (issue 22); this one is at head.
    released = threading.Event()
    held: list[bool] = []  # page 0's requests: released (True) or ran out of WAIT
    committed: list[str] = []  # the committed items' pages, in commit order
    inner = pipeline_writer.Writer.commit_batch

    def commit_batch(self, outs):  # type: ignore[no-untyped-def]
        inner(self, outs)
        committed.extend(out.job.source_url for out in outs)
        if len([url for url in committed if not url.endswith("/news/0")]) == N - 1:
            released.set()  # every other page is in: page 0 may come

    monkeypatch.setattr(pipeline_writer.Writer, "commit_batch", commit_batch)

    def hold(i: int) -> None:  # page 0 waits until released (or WAIT runs out)
        if i == 0:
            held.append(released.wait(WAIT))

    room = Newsroom(N, before_page=hold)
    with room.serve() as feed_url:
        config = write_config(tmp_path, sqlite_url, feed_url, backend="extractive")
        # A fetch may wait longer than WAIT: only the server decides when page 0 comes.
        text = config.read_text().replace(
            "respect_robots = false\n", "respect_robots = false\ntimeout_seconds = 600\n"
        )
        config.write_text(text)
        try:
            result = CliRunner().invoke(
                app, ["--config", str(config), "--quiet", "run", "--json"], catch_exceptions=False
            )
        finally:
            released.set()  # the server's thread never outlives the test
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.strip().splitlines()[-1])["totals"]["drafts"] == N

    assert held == [True], "the held page held up the others"  # [False]: WAIT ran out
    assert committed[-1].endswith("/news/0")  # the held page came in last, once
    assert len(committed) == N
    engine = open_store(sqlite_url)
    with Session(engine) as session:
        statuses = session.exec(select(Item.status)).all()
    engine.dispose()
    assert statuses == ["draft"] * N
