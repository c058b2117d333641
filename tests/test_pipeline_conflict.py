"""Two workers on one item: the first result stands, the second is dropped
without crashing the run, and the ledger still records the second's model call."""

from __future__ import annotations

from sqlmodel import Session, select

from copydesk.config import FeedSettings, Settings
from copydesk.pipeline import Pipeline
from ingest.fetch import Fetcher
from store import status as st
from store.db import open_store, session_scope
from store.models import AuditEvent, Item, ModelCall
from summarise.base import Article, CallRecord, Draft
from tests.articles import FERRY, TITLES, paragraphs_html, rss


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
    feed = tmp_path / "feed.xml"
    feed.write_text(
        rss(
            [
                {
                    "guid": "g1",
                    "title": TITLES["ferry"],
                    "link": "https://x.example.org/ferry",
                    "content": paragraphs_html(FERRY),
                }
            ]
        )
    )
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
