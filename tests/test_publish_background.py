"""Issue 21: "Publish now" hands the work to a background worker and returns; the
page shows progress; a second click does not start a second publish; a worker
that dies mid-way leaves nothing half-done that the next Publish now does not
finish, and nothing delivered is sent twice. On SQLite and PostgreSQL for the
worker, through AppTest for the page.

The webhook receiver holds its answer until the test lets it go (a
`threading.Event`), so "still running" is a fact of the test, not of the
machine's speed."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session
from streamlit.testing.v1 import AppTest

from publish import worker
from publish.service import GateConfig, Publisher
from publish.settings import JsonlTargetSettings
from publish.targets import JsonlTarget
from review_ui.desk import publishing
from review_ui.desk.decisions import NotAllowed, Reviewer
from store.db import session_scope
from store.models import Delivery, Item, utcnow
from tests import apptest_helpers
from tests.apptest_helpers import signed_in
from tests.publish_helpers import (
    Webhook,
    approved_earlier,
    desk_with_drafts,
    jsonl_lines,
    review_settings,
    webhook_server,
)

ANN, VERA = Reviewer("ann", "editor"), Reviewer("vera", "viewer")
WAIT = 120  # seconds: a ceiling for a loaded machine, never a pace


@pytest.fixture
def drafts(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch, migrated: None):  # type: ignore[no-untyped-def]
    """Drafts from the real pipeline, two accounts, the secret in the environment."""
    with desk_with_drafts(tmp_path, db_url, monkeypatch) as desk:
        yield desk


def held_hook() -> tuple[Webhook, threading.Event]:
    """A receiver that answers 200 only once `go` is set."""
    go = threading.Event()
    return Webhook(on_request=lambda _: go.wait(WAIT)), go


def statuses(engine: Engine, ids: list[int]) -> list[str]:
    with Session(engine) as session:
        return [session.get(Item, i).status for i in ids]  # type: ignore[union-attr]


def test_publish_now_returns_at_once_and_a_second_start_is_refused(drafts, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = drafts
    ids = approved_earlier(engine, 2)
    hook, go = held_hook()
    with webhook_server(hook) as hook:
        settings = review_settings(folder, db_url, hook, monkeypatch, timeout_seconds=WAIT * 2)
        with pytest.raises(NotAllowed):
            publishing.publish_in_background(engine, settings, VERA, ids)
        job = publishing.publish_in_background(engine, settings, ANN, ids)
        try:
            assert job.state == worker.RUNNING  # returned while the hook holds its answer
            assert statuses(engine, ids) == ["approved", "approved"]
            with pytest.raises(worker.AlreadyRunning) as refused:
                publishing.publish_in_background(engine, settings, ANN, ids)
            assert refused.value.job is job
            assert publishing.current_job(engine) is job
            with Session(engine) as session:
                made, total = publishing.job_progress(session, job, settings)
            assert total == 4 and made <= 1  # the hook has answered nothing yet
        finally:
            go.set()
        assert job.wait(WAIT)
    assert job.state == worker.DONE and job.error is None
    assert job.report is not None and sorted(job.report.published) == sorted(ids)
    assert statuses(engine, ids) == ["published", "published"]
    assert sorted(r.json["item_id"] for r in hook.received) == sorted(ids)
    with Session(engine) as session:
        assert publishing.job_progress(session, job, settings) == (4, 4)
    # Done: a new Publish now may start (nothing left: it publishes nothing).
    again = publishing.publish_in_background(engine, settings, ANN, ids)
    assert again.wait(WAIT) and again.report is not None and again.report.published == []


class Crash(BaseException):
    """The worker dies (as a killed thread or process would): not an Exception, so no
    target's error handling catches it."""


class CrashOnSecond:
    """A JSON Lines target that dies when it is sent the second item."""

    def __init__(self, inner: JsonlTarget, second: int):
        self.inner, self.second = inner, second
        self.name, self.kind = inner.name, inner.kind

    def send(self, event, feed):  # type: ignore[no-untyped-def]
        if event.item_id == self.second:
            raise Crash("the worker died")
        return self.inner.send(event, feed)


def test_a_worker_that_dies_mid_way_is_resumed_by_the_next_publish(drafts) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = drafts
    first, second = approved_earlier(engine, 2)
    jsonl = JsonlTarget(JsonlTargetSettings(path=folder / "out" / "items.jsonl"))

    def make(target) -> Publisher:  # type: ignore[no-untyped-def]
        return Publisher(
            engine, [target], actor="editor:ann", gates=GateConfig(min_source_words=40)
        )

    job = worker.start(db_url, lambda: make(CrashOnSecond(jsonl, second)), [first, second], "ann")
    assert job.wait(WAIT)
    assert job.state == worker.STOPPED and "the worker died" in (job.error or "")
    assert worker.current(db_url) is job  # the page says it stopped, and why
    assert statuses(engine, [first, second]) == ["approved", "approved"]
    assert [line["item_id"] for line in jsonl_lines(folder)] == [first]
    # The dead worker's claim on the second item runs out (its lease, here moved on).
    with session_scope(engine) as session:
        session.execute(
            update(Delivery)
            .where(Delivery.item_id == second)
            .values(claimed_until=utcnow() - timedelta(seconds=1))
        )
    resumed = worker.start(db_url, lambda: make(jsonl), [first, second], "ann")
    assert resumed.wait(WAIT) and resumed.state == worker.DONE
    assert statuses(engine, [first, second]) == ["published", "published"]
    assert [line["item_id"] for line in jsonl_lines(folder)] == [first, second]  # once each


# ----------------------------------------------------------------- the page (AppTest)


def shown(at: AppTest) -> str:
    return apptest_helpers.shown(at, tables=False)


def test_the_page_shows_progress_and_a_second_click_starts_nothing(
    tmp_path: Path, sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook, go = held_hook()
    with desk_with_drafts(tmp_path, sqlite_url, monkeypatch) as (_, _, engine):
        try:
            ids = approved_earlier(engine, 2)
            with webhook_server(hook) as hook:
                settings = review_settings(
                    tmp_path, sqlite_url, hook, monkeypatch, timeout_seconds=WAIT * 2
                )
                at = signed_in("ann", "Approved")
                at.button(key="publish_now").click()
                at.run()
                next(b for b in at.button if b.label == "Confirm: publish 2").click()
                at.run()  # returns while the hook holds its answer
                assert not at.exception, at.exception
                job = publishing.current_job(engine)
                try:
                    assert job is not None and job.state == worker.RUNNING
                    page = shown(at)
                    assert "Publishing 2 item(s)" in page and "started by ann" in page
                    assert "deliveries made" in page
                    assert at.button(key="publish_now").disabled
                    # A second editor's page (or a second tab) shows the same publish and
                    # offers no second one; the worker refuses one anyway.
                    second = signed_in("ann", "Approved")
                    assert "Publishing 2 item(s)" in shown(second)
                    assert second.button(key="publish_now").disabled
                    with pytest.raises(worker.AlreadyRunning):
                        publishing.publish_in_background(engine, settings, ANN, ids)
                finally:
                    go.set()
                assert job.wait(WAIT)
                at.run()
            page = shown(at)
            assert "Last publish" in page and "Published 2 item(s)" in page
            assert not at.button(key="publish_now").disabled
            assert statuses(engine, ids) == ["published", "published"]
            assert len(hook.received) == 2
        finally:
            go.set()
