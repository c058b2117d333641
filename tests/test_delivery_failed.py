"""Issue 21: the queue's Delivery failed view and its Retry, on SQLite and PostgreSQL.

A webhook that refuses an item (a 4xx) leaves it approved, live on the other
targets; one that keeps failing (5xx) leaves it waiting for its next try. Both are
listed with the target's answer and the tries so far; an editor's Retry sends them
again at once and is recorded in the item's audit trail under the editor's name; a
viewer may not retry; a Retry that finds nothing left to retry records nothing.
The page itself is driven through AppTest (the Chromium test is
tests/test_delivery_failed_browser.py)."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, update
from sqlalchemy.engine import Engine
from sqlmodel import Session

from publish.build import configured_publisher
from publish.service import retract
from review_ui.desk import publishing
from review_ui.desk.decisions import NotAllowed, Reviewer
from store import approvals, audit_chain
from store.db import session_scope
from store.deliveries import RETRIED, target_states, troubles
from store.models import AuditEvent, Delivery, Item, utcnow
from tests.apptest_helpers import list_rows, page_html, shown, signed_in
from tests.publish_helpers import (
    Webhook,
    approved_earlier,
    desk_with_drafts,
    jsonl_lines,
    review_settings,
    webhook_server,
)

HOSTILE = "<script>alert(1)</script> ![](https://tracker.example.net/p.png)"
ANN, VERA = Reviewer("ann", "editor"), Reviewer("vera", "viewer")


@pytest.fixture
def drafts(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch, migrated: None):  # type: ignore[no-untyped-def]
    """Drafts from the real pipeline, two accounts, the secret in the environment."""
    with desk_with_drafts(tmp_path, db_url, monkeypatch) as desk:
        yield desk


def publish_as_cli(engine: Engine, settings) -> None:  # type: ignore[no-untyped-def]
    import os

    publisher = configured_publisher(
        engine, settings.publish, settings.gates, actor="cli:publish", env=os.environ
    )
    try:
        publisher.publish()
    finally:
        publisher.close()


def retries(engine: Engine, item_id: int) -> list[AuditEvent]:
    with Session(engine) as session:
        return list(
            session.scalars(
                select(AuditEvent).where(
                    AuditEvent.item_id == item_id, AuditEvent.reason == RETRIED
                )
            )
        )


def status(engine: Engine, item_id: int) -> str:
    with Session(engine) as session:
        return session.get(Item, item_id).status  # type: ignore[union-attr]


def test_a_refused_delivery_is_listed_and_an_editors_retry_sends_it_and_is_audited(
    drafts, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = drafts
    [item_id] = approved_earlier(engine, 1)
    with webhook_server(Webhook(then=422)) as hook:
        settings = review_settings(folder, db_url, hook, monkeypatch)
        publish_as_cli(engine, settings)
        assert status(engine, item_id) == "approved"  # live in the file, refused by the hook
        with Session(engine) as session:
            [trouble] = troubles(session)
        assert (trouble.item_id, trouble.target, trouble.kind, trouble.state) == (
            item_id,
            "webhook",
            "publish",
            "failed",
        )
        assert trouble.attempts == 1 and "422" in trouble.error

        # A viewer may look, not retry: nothing changes, nothing is recorded.
        with pytest.raises(NotAllowed):
            publishing.retry_now(engine, settings, VERA, item_id)
        assert retries(engine, item_id) == [] and len(hook.received) == 1

        hook.then = 200
        again, report = publishing.retry_now(engine, settings, ANN, item_id)
    assert again == [(item_id, "webhook")]
    assert report is not None and report.published == [item_id]
    assert status(engine, item_id) == "published"
    assert [r.json["item_id"] for r in hook.received] == [item_id, item_id]
    assert len({r.headers["idempotency-key"] for r in hook.received}) == 1  # the same delivery
    assert [line["item_id"] for line in jsonl_lines(folder)] == [item_id]  # not sent twice
    [event] = retries(engine, item_id)
    assert (event.actor, event.from_status, event.to_status) == (
        "editor:ann",
        "approved",
        "approved",
    )
    assert event.details == {"targets": ["webhook"]}
    with Session(engine) as session:
        assert troubles(session) == []
    # The audit trail still proves the records (the Retry's event keeps the status).
    assert approvals.verify(engine).ok and audit_chain.verify(engine).ok
    # Retried again (a second editor's click that came late): nothing is recorded.
    assert publishing.retry_now(engine, settings, ANN, item_id) == ([], None)
    assert len(retries(engine, item_id)) == 1


def test_a_delivery_waiting_for_its_next_try_is_listed_and_retried_at_once(
    drafts, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = drafts
    [item_id] = approved_earlier(engine, 1)
    with webhook_server(Webhook(then=503)) as hook:
        settings = review_settings(folder, db_url, hook, monkeypatch)
        publish_as_cli(engine, settings)
        with Session(engine) as session:
            [trouble] = troubles(session)
        assert trouble.state == "pending" and trouble.next_attempt_at is not None
        assert "503" in trouble.error
        publish_as_cli(engine, settings)  # inside its backoff: not tried
        assert len(hook.received) == 1
        hook.then = 200
        again, report = publishing.retry_now(engine, settings, ANN, item_id)
    assert again == []  # nothing was failed; the waiting one was made due
    assert report is not None and report.published == [item_id]
    assert len(hook.received) == 2
    [event] = retries(engine, item_id)
    assert event.details == {"targets": ["webhook"]}


def test_a_refused_retraction_is_listed_and_retried(drafts, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = drafts
    [item_id] = approved_earlier(engine, 1)
    with webhook_server(Webhook()) as hook:
        settings = review_settings(folder, db_url, hook, monkeypatch)
        publish_as_cli(engine, settings)
        assert status(engine, item_id) == "published"
        retract(engine, item_id, editor="ann", reason="The harbour board withdrew the plan")
        hook.then = 410
        publish_as_cli(engine, settings)
        with Session(engine) as session:
            [trouble] = troubles(session)
        assert (trouble.kind, trouble.state, trouble.item_status) == (
            "retract",
            "failed",
            "retracted",
        )
        hook.then = 200
        again, _ = publishing.retry_now(engine, settings, ANN, item_id)
    assert again == [(item_id, "webhook")]
    assert [r.json["event"] for r in hook.received] == ["published", "retracted", "retracted"]
    [event] = retries(engine, item_id)
    assert (event.from_status, event.to_status) == ("retracted", "retracted")
    with Session(engine) as session:
        assert troubles(session) == []


# ----------------------------------------------------------------- the page (AppTest)


def test_the_view_shows_the_answer_as_text_and_an_editor_retries_from_it(
    tmp_path: Path, sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with desk_with_drafts(tmp_path, sqlite_url, monkeypatch) as (_, _, engine):
        [refused, fine] = approved_earlier(engine, 2)
        with webhook_server(Webhook(script=[422], then=200)) as hook:
            settings = review_settings(tmp_path, sqlite_url, hook, monkeypatch)
            publish_as_cli(engine, settings)
            assert [status(engine, i) for i in (refused, fine)] == ["approved", "published"]
            with session_scope(engine) as session:  # a hostile answer from the target
                session.execute(
                    update(Delivery)
                    .where(Delivery.item_id == refused, Delivery.target == "webhook")
                    .values(last_error=f"HTTP 422 {HOSTILE}")
                )

            viewer = signed_in("vera", "Delivery failed")
            page = shown(viewer)
            assert f"#{refused} " in page and f"#{fine} " not in page
            assert "webhook" in page and "failed" in page
            assert "<script>" not in page.replace(f"HTTP 422 {HOSTILE}", "")
            assert not any((b.key or "").startswith("retry_") for b in viewer.button)

            at = signed_in("ann", "Delivery failed")
            # An escaped HTML table (issue 25: a time shows UTC on hovering its cell).
            [row] = list_rows(at)
            assert row["attempts"] == "1" and row["answer"] == f"HTTP 422 {HOSTILE}"
            assert row["state"] == "failed" and row["since"] not in ("", "-")
            [table_html] = [h for h in page_html(at) if 'class="cd-list"' in h]
            since = re.search(r'<time class="cd-time" datetime="[^"]+" title="([^"]+)"', table_html)
            assert since and since.group(1).endswith("UTC"), table_html
            assert all("<script>" not in h for h in page_html(at))
            at.button(key=f"retry_{refused}").click()
            at.run()
            assert not at.exception, at.exception
            assert status(engine, refused) == "published"
            page = shown(at)
            assert f"Retried #{refused}: delivered to webhook; it is published." in page
            assert "Every delivery went out" in page
        [event] = retries(engine, refused)
        assert event.actor == "editor:ann"


def test_the_published_views_deliveries_show_utc_on_hovering_their_time(
    tmp_path: Path, sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25, one time zone rule: the Published view's per-delivery table is an
    escaped HTML table whose "delivered" cell shows the editor's zone and, on
    hover (its title), the UTC time."""
    with desk_with_drafts(tmp_path, sqlite_url, monkeypatch) as (_, _, engine):
        [item] = approved_earlier(engine, 1)
        with webhook_server(Webhook(then=200)) as hook:
            settings = review_settings(tmp_path, sqlite_url, hook, monkeypatch)
            publish_as_cli(engine, settings)
            assert status(engine, item) == "published"
            at = signed_in("ann", "Published")
        [detail] = [h for h in page_html(at) if "last error" in h and 'class="cd-list"' in h]
        stamps = re.findall(r'<time class="cd-time" datetime="[^"]+" title="([^"]+)"', detail)
        assert len(stamps) == 2 and all(t.endswith(" UTC") for t in stamps), detail
        assert "webhook" in detail and "delivered" in detail


# ----------------------------------------------------------------- the Approved view


def test_the_approved_view_shows_each_targets_state(
    tmp_path: Path, sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21: "The Approved view shows each target's delivery state". One item is
    in the file and refused by the hook, one in the file and waiting for the hook's
    next try, one not sent anywhere yet."""
    with desk_with_drafts(tmp_path, sqlite_url, monkeypatch) as (_, _, engine):
        refused, waiting = approved_earlier(engine, 2)
        with webhook_server(Webhook(script=[422], then=503)) as hook:
            settings = review_settings(tmp_path, sqlite_url, hook, monkeypatch)
            publish_as_cli(engine, settings)
            [fresh] = approved_earlier(engine, 1)
            at = signed_in("ann", "Approved")
        states = {
            int(row["#"]): (row["jsonl"], row["webhook"])
            for frame in at.dataframe
            if "webhook" in frame.value.columns
            for _, row in frame.value.iterrows()
        }
        assert states[refused] == ("delivered", "failed")
        assert states[waiting][0] == "delivered"
        assert states[waiting][1].startswith("pending: next try after ")
        assert states[fresh] == ("not sent yet", "not sent yet")


def test_target_states_on_both_backends(drafts, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = drafts
    refused, fresh = approved_earlier(engine, 2)
    with webhook_server(Webhook(then=422)) as hook:
        settings = review_settings(folder, db_url, hook, monkeypatch)
        publish_as_cli(engine, settings)
    with session_scope(engine) as session:  # the second item: a worker is sending it now
        session.execute(
            update(Delivery)
            .where(Delivery.item_id == fresh, Delivery.target == "webhook")
            .values(state="pending", claimed_until=utcnow() + timedelta(minutes=5))
        )
    with Session(engine) as session:
        got = target_states(session, [refused, fresh, 999], ["jsonl", "webhook"])
    assert {t: s.state for t, s in got[refused].items()} == {
        "jsonl": "delivered",
        "webhook": "failed",
    }
    assert got[fresh]["webhook"].state == "sending"
    assert {t: s.state for t, s in got[999].items()} == dict.fromkeys(
        ["jsonl", "webhook"], "not sent yet"
    )
