"""The queue after approval, through AppTest: Publish now (editors, not viewers), take
an approval back (with a reason), the Published view's deliveries, Source changed."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlmodel import Session

from review_ui.desk import publishing
from review_ui.desk.decisions import NotAllowed, Reviewer
from store.db import open_store, session_scope
from store.models import AuditEvent, Item, SourceCheck
from tests.apptest_helpers import shown, signed_in
from tests.publish_helpers import (
    SECRET,
    SECRET_ENV,
    add_editor_once,
    approve,
    jsonl_lines,
    run_pipeline,
    write_config,
)

HOSTILE = "<script>alert(1)</script> ![](https://tracker.example.net/p.png)"


@pytest.fixture
def desk(tmp_path: Path, sqlite_url: str, monkeypatch: pytest.MonkeyPatch, migrated: None):  # type: ignore[no-untyped-def]
    config = write_config(tmp_path, sqlite_url, targets=("atom", "jsonl"))
    run_pipeline(config)
    engine = open_store(sqlite_url)
    with session_scope(engine) as session:
        add_editor_once(session, "ann")
        add_editor_once(session, "vera", role="viewer")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    monkeypatch.setenv(SECRET_ENV, SECRET)
    yield tmp_path, engine
    engine.dispose()


def statuses(engine, ids):  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        return [session.get(Item, i).status for i in ids]


def test_an_editor_publishes_now_and_sees_the_deliveries(desk) -> None:  # type: ignore[no-untyped-def]
    folder, engine = desk
    ids = approve(engine, 2)
    with session_scope(engine) as session:  # approved before the Undo window
        for item_id in ids:
            item = session.get(Item, item_id)
            item.decided_at = item.decided_at - timedelta(minutes=5)
            session.add(item)
    at = signed_in("ann", "Approved")
    at.button(key="publish_now").click()
    at.run()
    # It lists what it will publish, and sends nothing until confirmed.
    assert all(f"#{i} " in shown(at) for i in ids)
    assert statuses(engine, ids) == ["approved"] * 2
    next(b for b in at.button if b.label == "Confirm: publish 2").click()
    at.run()
    assert not at.exception, at.exception
    job = publishing.current_job(engine)  # Publish now runs in the background
    assert job is not None and job.wait(120)
    at.run()
    assert statuses(engine, ids) == ["published"] * 2
    assert "Published 2 item(s)" in shown(at)
    assert sorted(line["item_id"] for line in jsonl_lines(folder)) == sorted(ids)
    with Session(engine) as session:
        actors = session.scalars(
            select(AuditEvent.actor).where(AuditEvent.to_status == "published")
        ).all()
    assert actors == ["editor:ann"] * 2

    at.radio(key="view").set_value("Published")
    at.run()
    assert "atom ✓ · jsonl ✓" in shown(at)


def test_a_viewer_gets_no_publish_button_and_cannot_publish(desk) -> None:  # type: ignore[no-untyped-def]
    folder, engine = desk
    ids = approve(engine, 1)
    at = signed_in("vera", "Approved")
    assert "publish_now" not in {b.key for b in at.button}
    from copydesk.config import load_settings

    with pytest.raises(NotAllowed):
        publishing.publish_now(engine, load_settings().for_review(), Reviewer("vera", "editor"))
    assert statuses(engine, ids) == ["approved"] and jsonl_lines(folder) == []


def test_an_editor_takes_an_approval_back_with_a_reason(desk) -> None:  # type: ignore[no-untyped-def]
    folder, engine = desk
    [item_id] = approve(engine, 1)
    at = signed_in("ann", "Approved")
    at.button(key="FormSubmitter:take_back-Take back to draft").click()
    at.run()
    assert statuses(engine, [item_id]) == ["approved"], "no reason, no take-back"
    assert "needs a reason" in shown(at)

    at.text_input(key="take_back_reason").input("Headline overstates the cost")
    at.button(key="FormSubmitter:take_back-Take back to draft").click()
    at.run()
    assert not at.exception, at.exception
    assert statuses(engine, [item_id]) == ["draft"]
    with Session(engine) as session:
        last = session.scalars(
            select(AuditEvent).where(AuditEvent.item_id == item_id).order_by(AuditEvent.id.desc())
        ).first()
    assert (last.actor, last.from_status, last.to_status, last.reason) == (
        "editor:ann",
        "approved",
        "draft",
        "Headline overstates the cost",
    )


def test_source_changed_shows_before_and_after_as_text_and_an_editor_resolves_it(desk) -> None:  # type: ignore[no-untyped-def]
    folder, engine = desk
    [item_id] = approve(engine, 1)
    with session_scope(engine) as session:
        session.add(
            SourceCheck(
                item_id=item_id,
                state="open",
                failing=[
                    {
                        "gate": "numbers_grounded",
                        "reason": "1 of 3 numbers not in the source: 1,250",
                        "mode": "discard",
                    }
                ],
                passages=[
                    {
                        "before": f"a quay of 1,250 metres {HOSTILE}",
                        "after": "a quay of 1,520 metres",
                    }
                ],
            )
        )
    at = signed_in("ann", "Source changed")
    page = shown(at)
    assert "a quay of 1,520 metres" in page and "numbers_grounded" in page
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert not at.markdown or all("<script>" not in str(m.value) for m in at.markdown)
    [button] = [b for b in at.button if (b.key or "").startswith("resolve_")]
    button.click()
    at.run()
    with Session(engine) as session:
        check = session.scalars(select(SourceCheck)).one()
    assert (check.state, check.resolved_by) == ("resolved", "ann")
    assert "No published summary is waiting" in shown(at)
