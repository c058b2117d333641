"""Issue 24: outcomes that finish a little apart are committed in one transaction
(`writer.COMMIT_LINGER`), not one transaction each with its fixed cost.

No timing decides the outcome: page i (i > 0) is held by the server until the
item of page i - 1 is committed, or HOLD runs out. A run that commits every
outcome as soon as it finishes commits them one by one (each commit releases the
next page): five transactions. With the linger longer than the test, the run
commits only when nothing else is in flight: one transaction of five, once each
held page's HOLD has run out. That the linger never holds items back while
another page is slow is tests/test_pipeline_overlap.py's proof (its held page is
released only once every other item is committed)."""

from __future__ import annotations

import json
import threading

from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from copydesk.services.pipeline import writer as pipeline_writer
from store.db import open_store
from store.models import AuditEvent, Item
from tests.run_helpers import Newsroom, write_config

N = 5
HOLD = 1.0  # seconds a page waits for the one before it: a bound, not a timing


def test_outcomes_finishing_apart_share_one_commit(
    tmp_path, sqlite_url, migrated, monkeypatch
) -> None:
    monkeypatch.setattr(pipeline_writer, "COMMIT_LINGER", 600.0)
    committed = [threading.Event() for _ in range(N)]
    batches: list[list[int]] = []  # the pages of each transaction
    inner = pipeline_writer.Writer.commit_batch

    def commit_batch(self, outs):  # type: ignore[no-untyped-def]
        inner(self, outs)
        pages = [int(out.job.source_url.rsplit("/", 1)[1]) for out in outs]
        batches.append(pages)
        for page in pages:
            committed[page].set()

    monkeypatch.setattr(pipeline_writer.Writer, "commit_batch", commit_batch)

    def hold(i: int) -> None:
        if i > 0:
            committed[i - 1].wait(HOLD)

    room = Newsroom(N, before_page=hold)
    with room.serve() as feed_url:
        config = write_config(tmp_path, sqlite_url, feed_url, backend="extractive")
        result = CliRunner().invoke(
            app, ["--config", str(config), "--quiet", "run", "--json"], catch_exceptions=False
        )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.strip().splitlines()[-1])["totals"]["drafts"] == N
    assert [sorted(b) for b in batches] == [list(range(N))], batches
    engine = open_store(sqlite_url)
    with Session(engine) as session:
        assert session.exec(select(Item.status)).all() == ["draft"] * N
        moves = session.exec(select(AuditEvent).where(AuditEvent.to_status == "draft")).all()
    engine.dispose()
    assert len(moves) == N  # one move each, in the one transaction
