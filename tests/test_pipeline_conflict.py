"""Two workers on one item: the first result stands, the second is dropped
without crashing the run, and the ledger still records the second's model call."""

from __future__ import annotations

from sqlmodel import Session, select

from copydesk.config import FeedSettings, Settings
from copydesk.services.pipeline import Pipeline
from ingest.fetch import Fetcher
from store import status as st
from store.db import open_store, session_scope
from store.models import AuditEvent, Item, ModelCall
from summarise.base import Article, CallRecord, Draft
from tests.articles import local_feed


class RacedSummariser:
    """Summarises, but first lets a rival worker discard the item."""

    name = "raced"

    def __init__(self, engine):
        self.engine = engine

    def summarise(self, article: Article) -> Draft:
        with session_scope(self.engine) as session:
            item = session.exec(select(Item).where(Item.dedup_key == article.key)).one()
            st.move(session, item, st.DISCARDED, actor="run:rival", reason="rival got there")
        call = CallRecord(purpose="summary", backend="raced", input_tokens=10, output_tokens=5)
        first = article.text.split("\n\n")[1]
        return Draft(headline=article.title or "", summary=first, backend="raced", calls=[call])


def test_a_lost_race_is_logged_not_fatal(tmp_path, sqlite_url, caplog):
    feed = local_feed(tmp_path, stories=1)  # the ferry story alone
    settings = Settings(feeds=[FeedSettings(url=str(feed), name="local")])
    engine = open_store(sqlite_url)
    with Fetcher(settings.ingest) as fetcher:
        report = Pipeline(settings, engine, RacedSummariser(engine), fetcher).run()
    assert report.fatal is None
    with Session(engine) as session:
        item = session.exec(select(Item)).one()
        events = session.exec(select(AuditEvent).where(AuditEvent.item_id == item.id)).all()
        calls = session.exec(select(ModelCall)).all()
    assert item.status == "discarded"
    assert [e.actor for e in events if e.to_status == "discarded"] == ["run:rival"]
    assert len(calls) == 1 and calls[0].item_id == item.id and calls[0].input_tokens == 10
    assert "this run's result is dropped" in caplog.text


# --- Outcomes committed together ------------------------------------------------------------


def _claimed_outcomes(engine, pipeline: Pipeline, count: int):
    """`count` new items claimed by the pipeline's run, each with a finished draft."""
    from datetime import timedelta

    from copydesk.services.pipeline import Job, Outcome
    from store import claims
    from store.changes import ItemChanges

    with session_scope(engine) as session:
        for i in range(count):
            item = Item(dedup_key=f"https://tollmere.example.test/{i}", title=f"Quay {i}")
            st.create(session, item, actor="cli", reason="test")
    with session_scope(engine) as session:
        claimed = claims.claim_items(session, pipeline.run_id, count, timedelta(minutes=5))
    outs = []
    for c in claimed:
        job = Job(c.item_id, c.version, c.dedup_key, c.source_url, c.title, False, 0, None)
        call = CallRecord(purpose="summary", backend="batch", input_tokens=c.item_id)
        changes = ItemChanges(headline=c.title, summary=f"The quay {c.item_id} reopened.")
        outs.append(Outcome(job, st.DRAFT, changes=changes, calls=[call]))
    return outs


def _commits(engine) -> list[int]:
    from sqlalchemy import event

    seen: list[int] = []
    event.listen(engine, "commit", lambda conn: seen.append(1))
    return seen


def test_outcomes_finished_together_are_one_transaction(engine) -> None:
    from copydesk.services.heartbeat import start_run_row

    settings = Settings()
    with Fetcher(settings.ingest) as fetcher:
        pipeline = Pipeline(settings, engine, RacedSummariser(engine), fetcher)
        pipeline.run_id = start_run_row(engine, "run", "batch")
        outs = _claimed_outcomes(engine, pipeline, 5)
        commits = _commits(engine)
        pipeline.writer.commit_batch(outs)
    assert len(commits) == 1
    with Session(engine) as session:
        items = session.exec(select(Item).order_by(Item.id)).all()
        calls = session.exec(select(ModelCall)).all()
    assert [(i.status, i.claimed_by) for i in items] == [(st.DRAFT, None)] * 5
    assert sorted(c.input_tokens for c in calls) == [i.id for i in items]
    assert sum(r.drafts for r in pipeline.reports.values()) == 5


def test_a_conflict_in_a_batch_keeps_the_other_items_results(engine, caplog) -> None:
    """One item of the batch was taken over by another run meanwhile: the batch rolls
    back and is written item by item; the other four land, the lost one keeps the
    new holder's state, and every model call is in the ledger."""
    from copydesk.services.heartbeat import start_run_row

    settings = Settings()
    with Fetcher(settings.ingest) as fetcher:
        pipeline = Pipeline(settings, engine, RacedSummariser(engine), fetcher)
        pipeline.run_id = start_run_row(engine, "run", "batch")
        outs = _claimed_outcomes(engine, pipeline, 5)
        lost = outs[2].job.item_id
        with session_scope(engine) as session:
            st.move(session, session.get(Item, lost), st.DISCARDED, actor="run:rival", reason="x")
        pipeline.writer.commit_batch(outs)
    with Session(engine) as session:
        items = {i.id: i for i in session.exec(select(Item))}
        calls = session.exec(select(ModelCall)).all()
        rival = session.exec(select(AuditEvent).where(AuditEvent.item_id == lost)).all()
    assert {i: items[i].status for i in items} == {
        o.job.item_id: (st.DISCARDED if o.job.item_id == lost else st.DRAFT) for o in outs
    }
    assert [e.actor for e in rival] == ["cli", "run:rival"]
    assert sorted(c.item_id for c in calls) == sorted(items)  # one ledger row each
    assert sum(r.drafts for r in pipeline.reports.values()) == 4
    assert f"item {lost}: " in caplog.text and "this run's result is dropped" in caplog.text
