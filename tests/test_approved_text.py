"""What was approved is what ships (issue 26): the approval event records a hash of
the exact text and version approved; publishing refuses a payload whose text is not
that text; `store.approvals.verify` (part of `audit --verify`) finds an approved
item whose text, status or approver was written behind the status machine's back.

The attacker here writes SQL with the database's full rights (the owner's URL on
PostgreSQL, the file on SQLite): the chain of audit events still holds, so only
these checks see it. Drafts come from the real pipeline over the sample feed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select, update
from sqlalchemy.engine import Engine
from sqlmodel import Session

from publish.service import GateConfig, Publisher, PublishReport
from publish.settings import JsonlTargetSettings
from publish.targets import build_targets
from store import approvals, audit_chain
from store.db import open_store, session_scope
from store.models import AuditEvent, Delivery, Item
from tests.publish_helpers import approve, cli, jsonl_lines, run_pipeline, write_config


@pytest.fixture
def world(tmp_path: Path, db_url: str, migrated: None):  # type: ignore[no-untyped-def]
    config = write_config(tmp_path, db_url, targets=("jsonl",))
    run_pipeline(config)
    engine = open_store(db_url)
    yield tmp_path, config, engine
    engine.dispose()


def publish(config: Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    result = cli(config, "publish", "--json")
    return result.exit_code, json.loads(result.stdout)


def item(engine: Engine, item_id: int) -> Item:
    with Session(engine) as session:
        found = session.get(Item, item_id)
        assert found is not None
        return found


def test_the_approval_event_records_the_text_and_version_approved(world) -> None:  # type: ignore[no-untyped-def]
    _, config, engine = world
    [item_id] = approve(engine, 1)
    approved = item(engine, item_id)
    with Session(engine) as session:
        event = approvals.latest_approval(session, item_id)
    assert event is not None and event.actor == "editor:ann"
    assert event.details == {
        approvals.TEXT_HASH: approvals.text_hash(approved.headline, approved.summary),
        approvals.VERSION: approved.version,
    }
    # Any other text, even one character, has another hash.
    assert (
        approvals.text_hash(approved.headline, (approved.summary or "") + " ")
        != (event.details[approvals.TEXT_HASH])
    )
    assert approvals.text_hash(None, approved.summary) != event.details[approvals.TEXT_HASH]

    code, report = publish(config)
    assert code == 0, report
    assert item(engine, item_id).status == "published"
    [line] = jsonl_lines(config.parent)
    assert (
        approvals.text_hash(line["headline"], line["summary"])
        == (event.details[approvals.TEXT_HASH])
    )
    records = approvals.verify(engine)
    assert records.ok, records.problems
    assert records.unhashed == [] and records.items > 1


@pytest.mark.audit_tampered
def test_an_approved_summary_changed_by_sql_is_not_published(world) -> None:  # type: ignore[no-untyped-def]
    _, config, engine = world
    [item_id] = approve(engine, 1)
    with session_scope(engine) as session:  # the attack: a plain UPDATE, no status move
        session.execute(
            update(Item)
            .where(Item.id == item_id)
            .values(summary="The council of Harrowby has resigned in full.")
        )
    code, report = publish(config)
    assert code == 1
    assert report["published"] == []
    [(blocked, why)] = [(b["item"], b["why"]) for b in report["blocked"]]
    assert blocked == item_id and "not the text editor:ann approved" in why
    assert jsonl_lines(config.parent) == []
    with Session(engine) as session:
        assert session.scalars(select(Delivery)).all() == []
    assert item(engine, item_id).status == "approved"

    assert audit_chain.verify(engine).ok  # the chain alone cannot see it
    records = approvals.verify(engine)
    [problem] = records.problems
    assert problem.item_id == item_id
    assert problem.problem == "its text is not the text the editor approved"


@pytest.mark.audit_tampered
def test_a_forged_delivery_payload_is_refused_at_sending(world) -> None:  # type: ignore[no-untyped-def]
    """A pending delivery row rewritten after it was prepared (the payload is what a
    retry sends): the send refuses it and records the row as failed."""
    _, config, engine = world
    [item_id] = approve(engine, 1)
    jsonl = JsonlTargetSettings(path=config.parent / "out" / "items.jsonl")
    gates = GateConfig(min_source_words=40)  # as write_config's [gates]
    publisher = Publisher(engine, build_targets([jsonl], {}), actor="test", gates=gates)
    report = PublishReport()
    payload = publisher._prepare(item_id, report)  # the pending row, not yet sent
    assert payload is not None, report
    forged = payload | {"summary": "Harrowby's mayor admitted the bridge was never built."}
    with session_scope(engine) as session:
        session.execute(update(Delivery).where(Delivery.item_id == item_id).values(payload=forged))

    code, result = publish(config)
    assert code == 1
    [failed] = result["failed"]
    assert failed["item"] == item_id and "not the text editor:ann approved" in failed["why"]
    assert jsonl_lines(config.parent) == []
    with Session(engine) as session:
        [row] = session.scalars(select(Delivery)).all()
        assert (row.state, row.delivered_at) == ("failed", None)
    assert item(engine, item_id).status == "approved"


@pytest.mark.audit_tampered
def test_a_status_written_by_sql_is_not_an_approval(world) -> None:  # type: ignore[no-untyped-def]
    """A draft set to approved "by alice" with no status move: nothing is published,
    and the records check names the item."""
    _, config, engine = world
    with Session(engine) as session:
        draft_id = session.scalars(select(Item.id).where(Item.status == "draft")).first()
    with session_scope(engine) as session:
        session.execute(
            update(Item)
            .where(Item.id == draft_id)
            .values(status="approved", decided_by="alice", version=Item.version + 1)
        )
    code, report = publish(config)
    assert code == 1
    assert [b["item"] for b in report["blocked"]] == [draft_id]
    assert "no editor's approval" in report["blocked"][0]["why"]
    assert jsonl_lines(config.parent) == []
    [problem] = approvals.verify(engine).problems
    assert problem.item_id == draft_id
    assert "its last audit event moved it to draft" in problem.problem


@pytest.mark.audit_tampered
def test_a_rewritten_approver_is_found(world) -> None:  # type: ignore[no-untyped-def]
    _, _, engine = world
    [item_id] = approve(engine, 1)
    with session_scope(engine) as session:
        session.execute(update(Item).where(Item.id == item_id).values(decided_by="alice"))
    [problem] = approvals.verify(engine).problems
    assert problem.item_id == item_id
    assert "names 'alice' as its approver; the audit log says 'ann'" in problem.problem


def test_an_approval_from_before_the_hash_is_counted_not_failed(world) -> None:  # type: ignore[no-untyped-def]
    """An approval recorded before this change has no hash in its details: it is
    published (nothing to compare) and listed as unhashed."""
    _, config, engine = world
    with session_scope(engine) as session:
        draft = session.scalars(select(Item).where(Item.status == "draft")).first()
        assert draft is not None
        draft_id = draft.id
        session.execute(
            update(Item)
            .where(Item.id == draft_id)
            .values(status="approved", decided_by="ann", version=Item.version + 1)
        )
        audit_chain.append(
            session,
            AuditEvent(
                item_id=draft_id, actor="editor:ann", from_status="draft", to_status="approved"
            ),
        )
    records = approvals.verify(engine)
    assert records.ok, records.problems
    assert records.unhashed == [draft_id]
    code, report = publish(config)
    assert code == 0, report
    assert report["published"] == [draft_id]
