"""Bulk decisions (review_ui/desk/bulk.py) and assignment (store/assignments.py) on both
backends: each item through the status machine, a changed item named and
skipped, assignments audited and never mistaken for edits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui.desk import bulk
from review_ui.desk.decisions import NotAllowed, ReasonRequired, Reviewer, approve
from review_ui.desk.queries import QueueFilter, current_verdicts, queue_count, queue_page
from store import status as st
from store.assignments import NotAssignable, assign
from store.db import open_store, session_scope
from store.editors import add_editor
from store.models import AuditEvent, Item
from tests.conftest import Seeded
from tests.dup_material import ARTICLES, add_draft

ALICE = Reviewer("alice", "editor")
BOB = Reviewer("bob", "editor")
VIEWER = Reviewer("vera", "viewer")
KEYS = ("match-a", "match-b", "ferry-a", "strike-a")


@pytest.fixture
def desk(db_url: str, migrated: None, seeded: Seeded) -> Iterator[tuple[Engine, dict[str, int]]]:
    ids = seeded(db_url, "bulk desk", _seed_desk)
    engine = open_store(db_url)
    yield engine, ids
    engine.dispose()


def _seed_desk(engine: Engine) -> dict[str, int]:
    """Editors alice and bob, viewer vera (three password hashes) and the drafts of
    KEYS: made once per test process and backend, copied per test (conftest)."""
    with session_scope(engine) as session:
        for name, role in (("alice", "editor"), ("bob", "editor"), ("vera", "viewer")):
            add_editor(session, name, "correct horse battery", role=role)
        return {key: add_draft(session, key, *ARTICLES[key]) for key in KEYS}


def versions(engine: Engine, ids: list[int]) -> dict[int, int]:
    with Session(engine) as session:
        return {i: session.get(Item, i).version for i in ids}  # type: ignore[union-attr]


def events(engine: Engine, item_id: int) -> list[AuditEvent]:
    with Session(engine) as session:
        query = select(AuditEvent).where(AuditEvent.item_id == item_id).order_by(AuditEvent.id)
        return list(session.scalars(query))


def test_reject_many_skips_what_changed_and_names_it(desk) -> None:
    engine, ids = desk
    seen = versions(engine, [ids["ferry-a"], ids["strike-a"], ids["match-a"]])
    with session_scope(engine) as session:  # bob decides one meanwhile
        approve(session, BOB, ids["strike-a"], seen[ids["strike-a"]])
    report = bulk.reject_many(engine, ALICE, seen, "out of our area")
    assert [label.split()[0] for label in report.done] == [
        f"#{ids['ferry-a']}",
        f"#{ids['match-a']}",
    ]
    ((label, why),) = report.skipped
    assert label.startswith(f"#{ids['strike-a']} Porters")
    assert why.startswith("already approved by bob at ")
    for key in ("ferry-a", "match-a"):
        last = events(engine, ids[key])[-1]
        assert (last.from_status, last.to_status, last.actor, last.reason) == (
            "draft",
            "rejected",
            "editor:alice",
            "out of our area",
        )
    assert events(engine, ids["strike-a"])[-1].actor == "editor:bob"


def test_an_edit_since_the_list_was_drawn_is_skipped(desk) -> None:
    engine, ids = desk
    seen = versions(engine, [ids["ferry-a"]])
    with session_scope(engine) as session:
        item = session.get(Item, ids["ferry-a"])
        st.record_edit(
            session,
            item,
            actor="editor:bob",
            headline="New",
            summary="New text.",
            expected_version=item.version,
        )
    report = bulk.reject_many(engine, ALICE, seen, "dull")
    assert report.done == []
    assert "changed by bob" in report.skipped[0][1]
    assert versions(engine, [ids["ferry-a"]]) == {ids["ferry-a"]: seen[ids["ferry-a"]] + 1}


def test_reasons_and_roles(desk) -> None:
    engine, ids = desk
    seen = versions(engine, [ids["ferry-a"]])
    with pytest.raises(ReasonRequired):
        bulk.reject_many(engine, ALICE, seen, "  ")
    with pytest.raises(NotAllowed):  # a viewer stops the whole action at the first item
        bulk.reject_many(engine, VIEWER, seen, "dull")
    with Session(engine) as session:
        assert session.get(Item, ids["ferry-a"]).status == "draft"  # type: ignore[union-attr]
    with pytest.raises(NotAllowed):
        bulk.assign_many(engine, VIEWER, [ids["ferry-a"]], "alice")


def test_reject_duplicates_names_the_kept_item(desk) -> None:
    engine, ids = desk
    kept, other = ids["match-a"], ids["match-b"]
    with Session(engine) as session:
        from store.duplicates import similar_drafts

        assert [o for o, _ in similar_drafts(session, [kept])[kept]] == [other]
    report = bulk.reject_duplicates(engine, ALICE, kept, versions(engine, [other]))
    assert len(report.done) == 1
    last = events(engine, other)[-1]
    assert last.reason.startswith(f"duplicate of #{kept} Vell Valley Rovers beat")  # type: ignore[union-attr]
    assert last.details == {"duplicate_of": kept}
    with Session(engine) as session:
        assert session.get(Item, kept).status == "draft"  # type: ignore[union-attr]


def test_assignment_is_stored_audited_filtered_and_not_an_edit(desk) -> None:
    engine, ids = desk
    item_id = ids["ferry-a"]
    before = versions(engine, [item_id])[item_id]
    report = bulk.assign_many(engine, ALICE, [item_id, ids["match-a"]], "bob")
    assert len(report.done) == 2
    last = events(engine, item_id)[-1]
    assert (last.from_status, last.to_status, last.actor, last.reason) == (
        "draft",
        "draft",
        "editor:alice",
        "assigned to bob",
    )
    assert last.details == {"assigned_to": "bob", "previous": None}
    with Session(engine) as session:
        assert versions(engine, [item_id])[item_id] == before  # an open draft stays decidable
        assert current_verdicts(session, item_id).edited is False  # not mistaken for an edit
        mine = QueueFilter(assigned_to="bob")
        assert queue_count(session, mine) == 2
        assert {r.assigned_to for r in queue_page(session, mine)} == {"bob"}
        assert queue_count(session, QueueFilter(assigned_to="alice")) == 0
    assert bulk.assign_many(engine, ALICE, [item_id], None).done  # unassigned
    assert events(engine, item_id)[-1].reason == "unassigned"
    with session_scope(engine) as session, pytest.raises(NotAssignable):
        assign(session, session.get(Item, item_id), "vera", actor="editor:alice")  # a viewer


def test_assigning_a_decided_item_is_skipped(desk) -> None:
    engine, ids = desk
    item_id = ids["strike-a"]
    with session_scope(engine) as session:
        approve(session, BOB, item_id, versions(engine, [item_id])[item_id])
    report = bulk.assign_many(engine, ALICE, [item_id], "alice")
    assert report.done == [] and "already approved by bob" in report.skipped[0][1]
