"""The run's report when a batch's transaction rolls back (issue 23): only the
counts that batch added are undone. The writer used to copy every feed's report
before each commit and put the copies back on a rollback: a cost that grew with
the feeds in the run (a third of the CPU of a 2,174-feed run), and a rollback
dropped a report the intake thread had written meanwhile, or a count it had added."""

from __future__ import annotations

from copydesk.services.reports import FeedReport
from store import status as st
from tests.test_writer_cost import _outcomes, _writer


def test_a_rolled_back_batch_undoes_only_its_own_counts(engine, monkeypatch) -> None:
    writer = _writer(engine)
    outs = _outcomes(engine, writer.run.run_id, [50])  # an item of no feed: report 0
    own = writer.run.report_for(None)
    own.drafts = 3  # committed by earlier batches
    filling = FeedReport("Quarra harbour wire", "https://quarra.example.test/feed.xml")
    writer.run.reports[7] = filling
    arriving = FeedReport("Marsk council notices", "https://marsk.example.test/feed.xml")

    def lost_race(session, batch) -> None:  # type: ignore[no-untyped-def]
        # While the batch commits, the intake thread goes on: it counts an entry of
        # the feed it is filling and writes the report of the next feed.
        filling.seen += 5
        writer.run.reports[8] = arriving
        raise st.Conflict(outs[0].job.item_id, st.DRAFT, "run:99", None)  # another run was first

    monkeypatch.setattr(st, "move_many", lost_race)
    writer.commit_batch(outs)

    assert writer.run.reports[0].drafts == 3  # this batch's draft is not counted
    assert writer.run.reports[7] is filling and filling.seen == 5
    assert writer.run.reports[8] is arriving
