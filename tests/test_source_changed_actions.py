"""Issue 21: a published item whose source no longer grounds it is retracted from
the queue's Source changed view, in one action beside the before/after passages
(a reason required, editors only). The retraction reaches the targets that have
the item, and the source check is closed under the editor's name. Through AppTest,
on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlmodel import Session
from streamlit.testing.v1 import AppTest

from store.db import open_store, session_scope
from store.models import AuditEvent, Item, SourceCheck
from tests.apptest_helpers import signed_in
from tests.publish_helpers import (
    SECRET,
    SECRET_ENV,
    add_editor_once,
    approve,
    cli,
    jsonl_lines,
    run_pipeline,
    write_config,
)

# Each test's database starts at the newest schema (conftest's migrated template), so
# `copydesk init` in write_config migrates nothing; what init makes is the same.
pytestmark = pytest.mark.usefixtures("migrated")


def shown(at: AppTest) -> str:
    return "\n".join(str(e.value) for e in at.html)


def test_an_editor_retracts_from_the_source_changed_view(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path, db_url, targets=("jsonl",))
    run_pipeline(config)
    engine = open_store(db_url)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    monkeypatch.setenv(SECRET_ENV, SECRET)
    try:
        with session_scope(engine) as session:
            add_editor_once(session, "ann")
            add_editor_once(session, "vera", role="viewer")
        [item_id] = approve(engine, 1)
        with session_scope(engine) as session:
            item = session.get(Item, item_id)
            item.decided_at = item.decided_at - timedelta(minutes=5)
            session.add(item)
        assert cli(config, "publish").exit_code == 0
        with session_scope(engine) as session:
            check = SourceCheck(
                item_id=item_id,
                state="open",
                failing=[{"gate": "numbers_grounded", "reason": "1,250 not in the source"}],
                passages=[{"before": "a quay of 1,250 metres", "after": "a quay of 1,520 metres"}],
            )
            session.add(check)
            session.flush()
            check_id = check.id
        form = f"source_retract_{check_id}"

        viewer = signed_in("vera", "Source changed")
        assert f"#{item_id} " in shown(viewer)
        assert not any(f"{form}" in (b.key or "") for b in viewer.button)

        at = signed_in("ann", "Source changed")
        at.button(key=f"FormSubmitter:{form}-Retract").click()
        at.run()
        assert "reason" in shown(at)  # refused without one
        with Session(engine) as session:
            assert session.get(Item, item_id).status == "published"  # type: ignore[union-attr]

        at.text_input(key=f"{form}_reason").input("The quay is 1,520 metres, not 1,250")
        at.button(key=f"FormSubmitter:{form}-Retract").click()
        at.run()
        assert not at.exception, at.exception
        assert f"Retracted #{item_id}" in shown(at)
        assert "No published summary is waiting" in shown(at)
        with Session(engine) as session:
            assert session.get(Item, item_id).status == "retracted"  # type: ignore[union-attr]
            done = session.get(SourceCheck, check_id)
            assert (done.state, done.resolved_by) == ("resolved", "ann")  # type: ignore[union-attr]
            event = session.scalars(
                select(AuditEvent)
                .where(AuditEvent.item_id == item_id)
                .order_by(AuditEvent.id.desc())
            ).first()
        assert (event.actor, event.to_status) == ("editor:ann", "retracted")  # type: ignore[union-attr]
        assert event.reason == "The quay is 1,520 metres, not 1,250"  # type: ignore[union-attr]
        assert [line["event"] for line in jsonl_lines(tmp_path)] == ["published", "retracted"]
    finally:
        engine.dispose()


def test_an_editor_reopens_a_changed_item_as_a_correction(
    tmp_path: Path, sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path, sqlite_url, targets=("jsonl",))
    run_pipeline(config)
    engine = open_store(sqlite_url)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    try:
        with session_scope(engine) as session:
            add_editor_once(session, "ann")
        [item_id] = approve(engine, 1)
        assert cli(config, "publish").exit_code == 0
        with session_scope(engine) as session:
            check = SourceCheck(item_id=item_id, state="open", failing=[], passages=[])
            session.add(check)
            session.flush()
            form = f"source_correct_{check.id}"
            check_id = check.id
        at = signed_in("ann", "Source changed")
        note = "The council now gives the quay as 1,520 metres"
        at.text_input(key=f"{form}_reason").input(note)
        at.button(key=f"FormSubmitter:{form}-Reopen as a correction").click()
        at.run()
        assert not at.exception, at.exception
        assert f"#{item_id} is a correction draft" in shown(at)
        with Session(engine) as session:
            assert session.get(Item, item_id).status == "draft"  # type: ignore[union-attr]
            assert session.get(SourceCheck, check_id).resolved_by == "ann"  # type: ignore[union-attr]
            event = session.scalars(
                select(AuditEvent)
                .where(AuditEvent.item_id == item_id)
                .order_by(AuditEvent.id.desc())
            ).first()
        assert (event.from_status, event.to_status, event.reason) == ("published", "draft", note)  # type: ignore[union-attr]
        assert event.actor == "editor:ann"  # type: ignore[union-attr]
        assert [line["event"] for line in jsonl_lines(tmp_path)] == ["published"]  # still live
    finally:
        engine.dispose()
