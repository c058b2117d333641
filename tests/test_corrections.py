"""Issue 21, corrections: a published item reopened as a correction (an editor, a
note), edited and approved again, is republished to every target under the same
id: the Atom entry keeps its id and first publication time, gets a new `updated`
and the note in its text (RFC 4287 4.2.6, 4.2.9, 4.2.15); the JSON Lines file and
the webhook get a "corrected" event with the note and a key of its own. The
records still prove themselves (approvals, deliveries, the audit chain), and a
later retraction reaches each target once. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from lxml import etree
from sqlalchemy import select
from sqlmodel import Session

from publish.payload import SCHEMA_PATH
from publish.service import retract
from review_ui.desk import publishing
from review_ui.desk.decisions import Reviewer
from store import approvals, audit_chain
from store import status as st
from store.db import open_store, session_scope
from store.models import Delivery, Item
from tests.publish_helpers import (
    Webhook,
    add_editor_once,
    approve,
    cli,
    jsonl_lines,
    run_pipeline,
    webhook_server,
    write_config,
)

ATOM = "{http://www.w3.org/2005/Atom}"
CD = "{tag:copydesk,2026:ns/evidence}"
ANN = Reviewer("ann", "editor")
NOTE = "An earlier version gave the quay's length as 1,250 metres; the council says 1,520."


@pytest.fixture
def world(tmp_path: Path, db_url: str, migrated: None):  # type: ignore[no-untyped-def]
    run_pipeline(write_config(tmp_path, db_url, targets=()))
    engine = open_store(db_url)
    with session_scope(engine) as session:
        add_editor_once(session, "ann")
    yield tmp_path, db_url, engine
    engine.dispose()


def entries(folder: Path) -> list[etree._Element]:
    return etree.parse(str(folder / "out" / "feed.xml")).getroot().findall(f"{ATOM}entry")


def item(engine, item_id: int) -> Item:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        found = session.get(Item, item_id)
        assert found is not None
        session.expunge(found)
        return found


def published_earlier(engine, item_id: int) -> None:  # type: ignore[no-untyped-def]
    """The first publication was made on 2 January (its recorded payloads say so):
    the correction's time is then later whatever the clock's resolution."""
    with session_scope(engine) as session:
        for row in session.scalars(select(Delivery).where(Delivery.item_id == item_id)):
            row.payload = dict(row.payload, published_at="2026-01-02T09:00:00Z")
            session.add(row)


def correct_and_approve(engine, item_id: int, note: str, summary: str | None) -> None:  # type: ignore[no-untyped-def]
    publishing.reopen_as_correction(engine, ANN, item_id, item(engine, item_id).version, note)
    with session_scope(engine) as session:
        row = session.get(Item, item_id)
        assert row is not None and row.status == st.DRAFT
        if summary is not None:
            st.record_edit(
                session,
                row,
                actor="editor:ann",
                headline=row.headline,
                summary=summary,
                expected_version=row.version,
            )
        st.move(session, row, st.APPROVED, actor="editor:ann", reason="approved")


def test_a_correction_is_republished_under_the_same_id_with_its_note(world) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = world
    [item_id] = approve(engine, 1)
    with webhook_server(Webhook()) as hook:
        config = write_config(folder, db_url, webhook_url=hook.url)
        assert cli(config, "publish").exit_code == 0
        published_earlier(engine, item_id)
        [first] = entries(folder)
        first_id = first.findtext(f"{ATOM}id")
        original = item(engine, item_id).summary or ""

        # Reopened: a draft again, still live as it was on every target.
        with pytest.raises(ValueError, match="reason"):
            publishing.reopen_as_correction(engine, ANN, item_id, item(engine, item_id).version, "")
        shorter = original.split(". ")[0].rstrip(".") + "."
        assert shorter != original
        correct_and_approve(engine, item_id, NOTE, shorter)
        assert [e.findtext(f"{ATOM}id") for e in entries(folder)] == [first_id]
        assert cli(config, "publish").exit_code == 0

    assert item(engine, item_id).status == st.PUBLISHED
    [entry] = entries(folder)  # the same entry, corrected: not a second one
    assert entry.findtext(f"{ATOM}id") == first_id
    assert entry.findtext(f"{ATOM}published") == "2026-01-02T09:00:00+00:00"
    assert entry.findtext(f"{ATOM}updated") > "2026-01-02T09:00:00+00:00"
    assert entry.findtext(f"{ATOM}summary") == f"{shorter}\n\nCorrection: {NOTE}"
    mark = entry.find(f"{CD}correction")
    assert mark is not None and (mark.get("revision"), mark.get("note")) == ("1", NOTE)

    published, corrected = jsonl_lines(folder)
    assert (published["event"], corrected["event"]) == ("published", "corrected")
    assert corrected["id"] == published["id"] and corrected["summary"] == shorter
    assert corrected["correction"]["note"] == NOTE and corrected["correction"]["revision"] == 1
    assert corrected["first_published_at"] == "2026-01-02T09:00:00Z"  # as recorded
    sent = [(r.headers["x-copydesk-event"], r.headers["idempotency-key"]) for r in hook.received]
    assert [event for event, _ in sent] == ["published", "corrected"]
    assert len({key for _, key in sent}) == 2  # a receiver keeping seen keys takes it
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text("utf-8")))
    for payload in [published, corrected, *(r.json for r in hook.received)]:
        validator.validate(payload)
    assert not validator.is_valid(dict(corrected, correction={"note": ""}))

    records = approvals.verify(engine)
    assert records.ok, records.problems
    assert audit_chain.verify(engine).ok


def test_a_second_correction_and_a_retraction_reach_each_target_once(world) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = world
    [item_id] = approve(engine, 1)
    with webhook_server(Webhook()) as hook:
        config = write_config(folder, db_url, webhook_url=hook.url)
        assert cli(config, "publish").exit_code == 0
        correct_and_approve(engine, item_id, "First correction: the date.", None)
        # A correction's approval can still be taken back before it is republished.
        publishing.take_back(engine, ANN, item_id, item(engine, item_id).version, "not yet")
        with session_scope(engine) as session:
            row = session.get(Item, item_id)
            st.move(session, row, st.APPROVED, actor="editor:ann", reason="approved")  # type: ignore[arg-type]
        assert cli(config, "publish").exit_code == 0
        correct_and_approve(engine, item_id, "Second correction: the name.", None)
        assert cli(config, "publish").exit_code == 0
        assert retract(engine, item_id, editor="ann", reason="Withdrawn") == [
            "atom",
            "jsonl",
            "webhook",
        ]
        assert cli(config, "publish").exit_code == 0
    lines = jsonl_lines(folder)
    assert [line["event"] for line in lines] == ["published", "corrected", "corrected", "retracted"]
    assert [line.get("correction", {}).get("revision") for line in lines[1:3]] == [1, 2]
    assert [r.json["event"] for r in hook.received] == [line["event"] for line in lines]
    assert len({r.headers["idempotency-key"] for r in hook.received}) == 4
    [entry] = entries(folder)
    assert entry.findtext(f"{ATOM}title").startswith("Retracted: ")
    assert item(engine, item_id).status == st.RETRACTED
    assert approvals.verify(engine).ok and audit_chain.verify(engine).ok
