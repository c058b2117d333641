"""The status machine and the audit log, on SQLite and on PostgreSQL.

The moves expected here are written out from ARCHITECTURE.md, not imported from
`store.status`: a wrong table in the code must fail these tests. Every test works
on items it creates itself, so most share one database per backend (`module_engine`).
"""

from __future__ import annotations

import itertools
import threading
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy import func, select, text
from sqlalchemy.engine import Engine
from sqlmodel import Session

from store import approvals
from store import status as st
from store.db import open_store, session_scope
from store.models import AuditEvent, Item

STATUSES = (
    "new",
    "draft",
    "discarded",
    "error",
    "approved",
    "rejected",
    "published",
    "retracted",
)

# ARCHITECTURE.md, "Statuses and the only moves between them".
LEGAL = frozenset(
    {
        ("new", "discarded"),
        ("new", "draft"),
        ("new", "error"),
        ("error", "new"),
        ("error", "discarded"),
        ("draft", "approved"),
        ("draft", "rejected"),
        ("draft", "discarded"),
        ("approved", "published"),
        ("approved", "draft"),
        ("approved", "retracted"),  # live on some targets, refused by another (issue 21)
        ("rejected", "draft"),
        ("published", "retracted"),
        ("published", "draft"),  # reopened as a correction (issue 21)
    }
)
ALL_PAIRS = list(itertools.product(STATUSES, STATUSES))
ILLEGAL = [pair for pair in ALL_PAIRS if pair not in LEGAL]
DECISIONS = frozenset({("draft", "approved"), ("draft", "rejected")})
REOPENS = frozenset({("approved", "draft"), ("rejected", "draft"), ("published", "draft")})
EDITOR_MOVES = DECISIONS | REOPENS | {("published", "retracted"), ("approved", "retracted")}
NEEDS_REASON = frozenset({"discarded", "rejected", "error", "retracted"})
NEEDS_REASON_PAIRS = frozenset({("approved", "draft"), ("published", "draft")})

# One legal road from birth to each status, used to put a test item where a test needs it.
ROAD_TO = {
    "new": [],
    "draft": ["draft"],
    "discarded": ["discarded"],
    "error": ["error"],
    "approved": ["draft", "approved"],
    "rejected": ["draft", "rejected"],
    "published": ["draft", "approved", "published"],
    "retracted": ["draft", "approved", "published", "retracted"],
}

# Columns a move is allowed to change; every other column must come out as it went in.
MOVE_COLUMNS = {"status", "version", "updated_at", "decided_by", "decided_at", "discard_kind"}


def pair_id(pair: tuple[str, str]) -> str:
    return f"{pair[0]}->{pair[1]}"


def actor_for(from_status: str, to_status: str) -> str:
    return "editor:ann" if (from_status, to_status) in EDITOR_MOVES else "run:7"


def reason_for(to_status: str, from_status: str | None = None) -> str | None:
    needed = to_status in NEEDS_REASON or (from_status, to_status) in NEEDS_REASON_PAIRS
    return f"moved to {to_status} by the test" if needed else None


def make_item(engine: Engine, status: str = "new", **fields: Any) -> int:
    """Create an item and walk it by legal moves to `status`; returns its id."""
    defaults = {
        "dedup_key": f"https://news.example.test/{uuid.uuid4().hex}",
        "title": "Harbour board in Dunmore votes to extend the ferry timetable",
        "source_text": "The Dunmore harbour board voted 7 to 2 on Tuesday to extend ...",
        "headline": "Dunmore extends ferry timetable",
        "summary": "The harbour board voted 7 to 2 to run ferries later in the evening.",
    }
    with session_scope(engine) as session:
        item = Item(**(defaults | fields))
        st.create(session, item, actor="cli", reason="submitted by the test")
        for to_status in ROAD_TO[status]:
            st.move(
                session,
                item,
                to_status,
                actor=actor_for(item.status, to_status),
                reason=reason_for(to_status, item.status),
            )
        assert item.id is not None
        return item.id


def item_row(engine: Engine, item_id: int) -> dict[str, Any]:
    table = Item.__table__
    with engine.connect() as conn:
        return dict(conn.execute(select(table).where(table.c.id == item_id)).mappings().one())


def audit_rows(engine: Engine, item_id: int) -> list[dict[str, Any]]:
    table = AuditEvent.__table__
    query = select(table).where(table.c.item_id == item_id).order_by(table.c.id)
    with engine.connect() as conn:
        return [dict(row) for row in conn.execute(query).mappings()]


def snapshot(engine: Engine, item_id: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return item_row(engine, item_id), audit_rows(engine, item_id)


def decisions(engine: Engine, item_id: int) -> list[dict[str, Any]]:
    return [e for e in audit_rows(engine, item_id) if e["to_status"] in ("approved", "rejected")]


def utc(value: datetime) -> datetime:
    """SQLite hands timestamps back without their zone; they were written in UTC."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def without(row: dict[str, Any], columns: set[str]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in columns}


# --- The table of moves -----------------------------------------------------------------


def edit(
    session: Session,
    item: Item,
    editor: str,
    headline: str = "x",
    summary: str = "y",
    version: int | None = None,
) -> AuditEvent:
    """`editor`'s edit of `item`, on the version they saw (the loaded one by default)."""
    seen = item.version if version is None else version
    return st.record_edit(
        session,
        item,
        actor=f"editor:{editor}",
        headline=headline,
        summary=summary,
        expected_version=seen,
    )


def test_design_table_has_every_status_and_pair() -> None:
    assert set(st.STATUSES) == set(STATUSES)
    assert len(ALL_PAIRS) == 64 and len(ILLEGAL) == 50
    assert st.FINAL == {"discarded", "retracted"}
    # Final means final: no legal move leaves a final status; published is retracted,
    # or reopened as a correction (and published again under the same id).
    assert not [pair for pair in LEGAL if pair[0] in st.FINAL]
    assert sorted(pair for pair in LEGAL if pair[0] == "published") == [
        ("published", "draft"),
        ("published", "retracted"),
    ]


def test_taking_back_an_approval_then_approving_again_records_the_new_decider(
    module_engine: Engine,
) -> None:
    item_id = make_item(module_engine, "approved")  # approved by ann
    with session_scope(module_engine) as session:
        item = session.get(Item, item_id)
        st.move(session, item, "draft", actor="editor:bo", reason="Wrong photo caption")
        st.move(session, item, "approved", actor="editor:cy")
    row = item_row(module_engine, item_id)
    assert (row["status"], row["decided_by"]) == ("approved", "cy")
    moves = [
        (e["actor"], e["from_status"], e["to_status"]) for e in audit_rows(module_engine, item_id)
    ]
    assert moves[-3:] == [
        ("editor:ann", "draft", "approved"),
        ("editor:bo", "approved", "draft"),
        ("editor:cy", "draft", "approved"),
    ]


@pytest.mark.parametrize("pair", ALL_PAIRS, ids=pair_id)
def test_can_move_agrees_with_design(pair: tuple[str, str]) -> None:
    assert st.can_move(*pair) is (pair in LEGAL)


@pytest.mark.parametrize("pair", sorted(LEGAL), ids=pair_id)
def test_legal_move_writes_exactly_one_audit_event(
    module_engine: Engine, pair: tuple[str, str]
) -> None:
    from_status, to_status = pair
    item_id = make_item(module_engine, from_status)
    item_before, events_before = snapshot(module_engine, item_id)
    actor, reason = actor_for(*pair), reason_for(to_status, from_status)

    with session_scope(module_engine) as session:
        item = session.get(Item, item_id)
        st.move(session, item, to_status, actor=actor, reason=reason, details={"case": "table"})
        assert (item.status, item.version) == (to_status, item_before["version"] + 1)

    item_after, events_after = snapshot(module_engine, item_id)
    assert item_after["status"] == to_status
    assert item_after["version"] == item_before["version"] + 1
    assert without(item_after, MOVE_COLUMNS) == without(item_before, MOVE_COLUMNS)

    assert events_after[:-1] == events_before, "earlier audit events must not change"
    assert len(events_after) == len(events_before) + 1
    event = events_after[-1]
    assert (event["actor"], event["from_status"], event["to_status"]) == (actor, *pair)
    assert event["reason"] == reason
    if pair == ("draft", "approved"):  # the text approved, and its version (issue 26)
        assert event["details"] == {"case": "table"} | approvals.approval_details(
            item_after["headline"], item_after["summary"], item_after["version"]
        )
    elif pair == ("published", "draft"):  # a correction, and its number (issue 21)
        assert event["details"] == {"case": "table", "correction": 1}
    else:
        assert event["details"] == {"case": "table"}
    assert utc(event["at"]) == utc(item_after["updated_at"])

    if pair in DECISIONS:
        assert item_after["decided_by"] == "ann"
        assert utc(item_after["decided_at"]) == utc(event["at"])
    elif pair in REOPENS:
        assert item_before["decided_by"] == "ann", "the road here went through a decision"
        assert (item_after["decided_by"], item_after["decided_at"]) == (None, None)
    else:
        assert item_after["decided_by"] == item_before["decided_by"]
        assert item_after["decided_at"] == item_before["decided_at"]
    # A move to discarded stores its kind ("other": none was given); no other move does.
    assert item_after["discard_kind"] == ("other" if to_status == "discarded" else None)


@pytest.mark.parametrize("pair", ILLEGAL, ids=pair_id)
def test_illegal_move_raises_and_changes_nothing(
    module_engine: Engine, pair: tuple[str, str]
) -> None:
    from_status, to_status = pair
    item_id = make_item(module_engine, from_status)
    before = snapshot(module_engine, item_id)

    # The session commits after the refused move: anything move() had written
    # before raising would reach the database and show below.
    with session_scope(module_engine) as session:
        item = session.get(Item, item_id)
        with pytest.raises(st.IllegalMove, match=f"{from_status} -> {to_status}"):
            st.move(session, item, to_status, actor="editor:ann", reason="an editor's reason")
        assert item.status == from_status

    assert snapshot(module_engine, item_id) == before


@pytest.mark.parametrize("pair", sorted(EDITOR_MOVES), ids=pair_id)
@pytest.mark.parametrize("actor", ["run:7", "cli", "ann", "editor", "editor:", "editor:   "])
def test_editor_moves_need_a_signed_in_editor(
    module_engine: Engine, pair: tuple[str, str], actor: str
) -> None:
    from_status, to_status = pair
    item_id = make_item(module_engine, from_status)
    before = snapshot(module_engine, item_id)
    with session_scope(module_engine) as session:
        item = session.get(Item, item_id)
        with pytest.raises(st.IllegalMove, match="editor"):
            st.move(session, item, to_status, actor=actor, reason="Figures not in the source")
    assert snapshot(module_engine, item_id) == before


REASONED_MOVES = [
    ("draft", "rejected"),
    ("draft", "discarded"),
    ("new", "discarded"),
    ("error", "discarded"),
    ("new", "error"),
    ("approved", "draft"),
    ("approved", "retracted"),
    ("published", "retracted"),
    ("published", "draft"),
]


@pytest.mark.parametrize("reason", [None, "", "  \n\t"], ids=["none", "empty", "blank"])
@pytest.mark.parametrize("pair", REASONED_MOVES, ids=pair_id)
def test_moves_that_need_a_reason_refuse_a_blank_one(
    module_engine: Engine, pair: tuple[str, str], reason: str | None
) -> None:
    from_status, to_status = pair
    item_id = make_item(module_engine, from_status)
    before = snapshot(module_engine, item_id)
    with session_scope(module_engine) as session:
        item = session.get(Item, item_id)
        with pytest.raises(st.IllegalMove, match="needs a reason"):
            st.move(session, item, to_status, actor=actor_for(*pair), reason=reason)
    assert snapshot(module_engine, item_id) == before


# --- Birth ------------------------------------------------------------------------------


def test_create_writes_the_birth_event(module_engine: Engine) -> None:
    with session_scope(module_engine) as session:
        item = Item(dedup_key=f"https://news.example.test/{uuid.uuid4().hex}", title="Mill fire")
        event = st.create(
            session, item, actor="run:3", reason="feed entry", details={"feed": "Kessby Post"}
        )
        item_id = item.id
        assert event.item_id == item_id

    row, events = snapshot(module_engine, item_id)
    assert (row["status"], row["version"], row["decided_by"]) == ("new", 0, None)
    assert len(events) == 1
    birth = events[0]
    assert (birth["actor"], birth["from_status"], birth["to_status"]) == ("run:3", None, "new")
    assert birth["reason"] == "feed entry"
    assert birth["details"] == {"feed": "Kessby Post"}
    assert birth["at"] is not None


@pytest.mark.parametrize("status", [s for s in STATUSES if s != "new"])
def test_an_item_is_born_new_only(module_engine: Engine, status: str) -> None:
    key = f"https://news.example.test/{uuid.uuid4().hex}"
    with session_scope(module_engine) as session:
        with pytest.raises(st.IllegalMove, match="born new"):
            st.create(session, Item(dedup_key=key, status=status), actor="cli", reason="x")
    with module_engine.connect() as conn:
        table = Item.__table__
        count = conn.scalar(select(func.count()).where(table.c.dedup_key == key))
    assert count == 0


# --- Compare-and-set --------------------------------------------------------------------


def test_second_decision_on_the_same_view_raises_conflict(module_engine: Engine) -> None:
    """Ann and Bob open the same draft; Ann approves first; Bob's reject must fail."""
    item_id = make_item(module_engine, "draft")

    with pytest.raises(st.Conflict) as caught:
        with session_scope(module_engine) as bob:
            bob_item = bob.get(Item, item_id)
            with session_scope(module_engine) as ann:
                ann_item = ann.get(Item, item_id)
                assert ann_item.version == bob_item.version
                st.move(ann, ann_item, "approved", actor="editor:ann")
            st.move(bob, bob_item, "rejected", actor="editor:bob", reason="Names not in source")

    conflict = caught.value
    row = item_row(module_engine, item_id)
    assert (conflict.item_id, conflict.status, conflict.actor) == (
        item_id,
        "approved",
        "editor:ann",
    )
    assert conflict.at is not None and utc(conflict.at) == utc(row["decided_at"])
    assert "approved by editor:ann at " in str(conflict)

    assert (row["status"], row["decided_by"]) == ("approved", "ann")
    decided = decisions(module_engine, item_id)
    assert [(e["actor"], e["to_status"]) for e in decided] == [("editor:ann", "approved")]


def test_stale_screen_gets_a_conflict_not_an_illegal_move(module_engine: Engine) -> None:
    """The review UI loads the item afresh when Bob clicks, passing the version his
    screen showed: he must hear that Ann approved it, not 'illegal move'."""
    item_id = make_item(module_engine, "draft")
    seen_version = item_row(module_engine, item_id)["version"]
    with session_scope(module_engine) as ann:
        st.move(ann, ann.get(Item, item_id), "approved", actor="editor:ann")
    before = snapshot(module_engine, item_id)

    with pytest.raises(st.Conflict, match="approved by editor:ann"):
        with session_scope(module_engine) as bob:
            item = bob.get(Item, item_id)
            st.move(
                bob,
                item,
                "rejected",
                actor="editor:bob",
                reason="Quote not verbatim",
                expected_version=seen_version,
            )
    assert snapshot(module_engine, item_id) == before


def test_decision_after_someone_edited_is_a_conflict(module_engine: Engine) -> None:
    item_id = make_item(module_engine, "draft")
    seen_version = item_row(module_engine, item_id)["version"]
    with session_scope(module_engine) as cara:
        item = cara.get(Item, item_id)
        edit(
            cara,
            item,
            "cara",
            "Ferries to run later in Dunmore",
            "The board voted 7 to 2 for later sailings.",
            version=seen_version,
        )
    before = snapshot(module_engine, item_id)

    with pytest.raises(st.Conflict, match="editor:cara"):
        with session_scope(module_engine) as ann:
            item = ann.get(Item, item_id)
            st.move(ann, item, "approved", actor="editor:ann", expected_version=seen_version)
    assert snapshot(module_engine, item_id) == before
    assert before[0]["status"] == "draft"


def test_approving_a_draft_edited_meanwhile_is_a_conflict(module_engine: Engine) -> None:
    """Ann has the draft open; Cara edits it; Ann must not approve a text she has not
    seen. Only the version in the compare-and-set can tell: the status is still draft."""
    item_id = make_item(module_engine, "draft")
    with pytest.raises(st.Conflict, match="draft by editor:cara"):
        with session_scope(module_engine) as ann:
            ann_item = ann.get(Item, item_id)
            with session_scope(module_engine) as cara:
                cara_item = cara.get(Item, item_id)
                edit(
                    cara,
                    cara_item,
                    "cara",
                    "Later ferries for Dunmore",
                    "Ferries will run later after a 7 to 2 vote.",
                )
            st.move(ann, ann_item, "approved", actor="editor:ann")

    row = item_row(module_engine, item_id)
    assert (row["status"], row["headline"], row["decided_by"]) == (
        "draft",
        "Later ferries for Dunmore",
        None,
    )
    assert decisions(module_engine, item_id) == []


def test_two_editors_editing_at_once_lose_no_edit(module_engine: Engine) -> None:
    """Both open version v; Cara saves first; Dana's save must fail, not overwrite."""
    item_id = make_item(module_engine, "draft")
    with pytest.raises(st.Conflict, match="editor:cara"):
        with session_scope(module_engine) as dana:
            dana_item = dana.get(Item, item_id)
            with session_scope(module_engine) as cara:
                cara_item = cara.get(Item, item_id)
                edit(cara, cara_item, "cara", "Cara's headline", "Cara's summary.")
            edit(dana, dana_item, "dana", "Dana's headline", "Dana's summary.")

    row, events = snapshot(module_engine, item_id)
    assert (row["headline"], row["summary"]) == ("Cara's headline", "Cara's summary.")
    assert [e["actor"] for e in events if e["reason"] == "edited"] == ["editor:cara"]


def test_two_editors_deciding_at_once_exactly_one_wins(module_engine: Engine) -> None:
    """A real race: both sessions have loaded the draft before either decides."""
    item_id = make_item(module_engine, "draft")
    both_loaded = threading.Barrier(2)
    outcomes: dict[str, object] = {}

    def decide(name: str, to_status: str, reason: str | None) -> None:
        try:
            with session_scope(module_engine) as session:
                item = session.get(Item, item_id)
                both_loaded.wait(timeout=30)
                st.move(session, item, to_status, actor=f"editor:{name}", reason=reason)
            outcomes[name] = "won"
        except Exception as exc:  # noqa: BLE001 - the assertions below say what was expected
            outcomes[name] = exc

    threads = [
        threading.Thread(target=decide, args=("ann", "approved", None)),
        threading.Thread(target=decide, args=("bob", "rejected", "Date not in source")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    winners = [name for name, outcome in outcomes.items() if outcome == "won"]
    assert len(winners) == 1, outcomes
    (loser,) = set(outcomes) - set(winners)
    assert isinstance(outcomes[loser], st.Conflict), outcomes
    assert outcomes[loser].actor == f"editor:{winners[0]}"

    row = item_row(module_engine, item_id)
    assert row["decided_by"] == winners[0]
    assert len(decisions(module_engine, item_id)) == 1


# --- Edits ------------------------------------------------------------------------------


def test_edit_keeps_a_draft_a_draft_and_keeps_both_texts(module_engine: Engine) -> None:
    item_id = make_item(
        module_engine,
        "draft",
        headline="Kessby mill fire: 40 jobs at risk",
        summary="A fire at the Kessby paper mill put 40 jobs at risk, the owner said.",
    )
    before_row, before_events = snapshot(module_engine, item_id)
    new_headline = "Fire closes Kessby paper mill"
    new_summary = "A fire closed the Kessby paper mill; the owner said 40 jobs were at risk."

    with session_scope(module_engine) as session:
        item = session.get(Item, item_id)
        st.record_edit(
            session,
            item,
            actor="editor:dana",
            headline=new_headline,
            summary=new_summary,
            expected_version=before_row["version"],
            details={"before": "caller must not overwrite the kept texts"},
        )

    row, events = snapshot(module_engine, item_id)
    assert row["status"] == "draft"
    assert row["version"] == before_row["version"] + 1
    assert (row["headline"], row["summary"]) == (new_headline, new_summary)
    assert row["decided_by"] is None

    assert events[:-1] == before_events and len(events) == len(before_events) + 1
    edit = events[-1]
    assert (edit["actor"], edit["from_status"], edit["to_status"]) == (
        "editor:dana",
        "draft",
        "draft",
    )
    assert edit["details"]["before"] == {
        "headline": before_row["headline"],
        "summary": before_row["summary"],
    }
    assert edit["details"]["after"] == {"headline": new_headline, "summary": new_summary}

    # The edited draft is decided on at its new version.
    with session_scope(module_engine) as session:
        item = session.get(Item, item_id)
        st.move(session, item, "approved", actor="editor:ann", expected_version=row["version"])
    assert item_row(module_engine, item_id)["status"] == "approved"


@pytest.mark.parametrize("status", [s for s in STATUSES if s != "draft"])
def test_only_a_draft_can_be_edited(module_engine: Engine, status: str) -> None:
    item_id = make_item(module_engine, status)
    before = snapshot(module_engine, item_id)
    with session_scope(module_engine) as session:
        item = session.get(Item, item_id)
        with pytest.raises(st.IllegalMove, match="only a draft"):
            edit(session, item, "dana", "x", "y")
    assert snapshot(module_engine, item_id) == before


@pytest.mark.parametrize("actor", ["run:7", "cli", "editor:", "dana"])
def test_only_an_editor_can_edit(module_engine: Engine, actor: str) -> None:
    item_id = make_item(module_engine, "draft")
    before = snapshot(module_engine, item_id)
    with session_scope(module_engine) as session:
        item = session.get(Item, item_id)
        with pytest.raises(st.IllegalMove, match="editor"):
            st.record_edit(
                session, item, actor=actor, headline="x", summary="y", expected_version=item.version
            )
    assert snapshot(module_engine, item_id) == before


def test_edit_on_a_stale_version_is_a_conflict(module_engine: Engine) -> None:
    item_id = make_item(module_engine, "draft")
    seen = item_row(module_engine, item_id)["version"]
    with session_scope(module_engine) as session:
        st.record_edit(
            session,
            session.get(Item, item_id),
            actor="editor:cara",
            headline="Cara's headline",
            summary="Cara's summary.",
            expected_version=seen,
        )
    before = snapshot(module_engine, item_id)
    with pytest.raises(st.Conflict, match="editor:cara"):
        with session_scope(module_engine) as session:
            st.record_edit(
                session,
                session.get(Item, item_id),
                actor="editor:dana",
                headline="Dana's headline",
                summary="Dana's summary.",
                expected_version=seen,
            )
    assert snapshot(module_engine, item_id) == before


# --- One transaction --------------------------------------------------------------------


def count_events(session: Session, item_id: int) -> int:
    query = select(func.count()).select_from(AuditEvent).where(AuditEvent.item_id == item_id)
    return session.scalar(query)


def test_failure_after_a_move_rolls_back_the_move_and_its_event(module_engine: Engine) -> None:
    item_id = make_item(module_engine, "draft")
    before = snapshot(module_engine, item_id)

    with pytest.raises(RuntimeError, match="crash after the move"):
        with session_scope(module_engine) as session:
            st.move(session, session.get(Item, item_id), "approved", actor="editor:ann")
            # Both are written inside the transaction...
            assert count_events(session, item_id) == len(before[1]) + 1
            assert session.get(Item, item_id).status == "approved"
            raise RuntimeError("crash after the move")

    # ...and neither outlives it.
    assert snapshot(module_engine, item_id) == before


def test_failure_after_an_edit_rolls_back_the_edit_and_its_event(module_engine: Engine) -> None:
    item_id = make_item(module_engine, "draft")
    before = snapshot(module_engine, item_id)
    with pytest.raises(RuntimeError, match="crash after the edit"):
        with session_scope(module_engine) as session:
            item = session.get(Item, item_id)
            edit(session, item, "dana", "Edited", "Edited summary.")
            raise RuntimeError("crash after the edit")
    assert snapshot(module_engine, item_id) == before


def test_failure_after_create_leaves_no_item_and_no_event(module_engine: Engine) -> None:
    key = f"https://news.example.test/{uuid.uuid4().hex}"
    with pytest.raises(RuntimeError, match="crash after create"):
        with session_scope(module_engine) as session:
            item = Item(dedup_key=key)
            st.create(session, item, actor="cli", reason="submitted")
            item_id = item.id
            raise RuntimeError("crash after create")
    with module_engine.connect() as conn:
        items = conn.scalar(select(func.count()).where(Item.__table__.c.dedup_key == key))
        events = conn.scalar(select(func.count()).where(AuditEvent.__table__.c.item_id == item_id))
    assert (items, events) == (0, 0)


# --- Append-only audit log --------------------------------------------------------------

TAMPERING = {
    "update-reason": "UPDATE audit_events SET reason = 'history rewritten' WHERE item_id = :id",
    "update-status": "UPDATE audit_events SET to_status = 'approved' WHERE item_id = :id",
    "update-actor": "UPDATE audit_events SET actor = 'editor:nobody' WHERE item_id = :id",
    "delete": "DELETE FROM audit_events WHERE item_id = :id",
}


@pytest.mark.parametrize("sql", TAMPERING.values(), ids=TAMPERING.keys())
def test_audit_log_refuses_update_and_delete(module_engine: Engine, sql: str) -> None:
    item_id = make_item(module_engine, "approved")
    before = audit_rows(module_engine, item_id)
    assert len(before) == 3

    with pytest.raises(sa_exc.DBAPIError, match="append-only"):
        with module_engine.begin() as conn:
            conn.execute(text(sql), {"id": item_id})

    assert audit_rows(module_engine, item_id) == before


def test_deleting_an_item_cannot_take_its_audit_trail(module_engine: Engine) -> None:
    item_id = make_item(module_engine, "rejected")
    before = snapshot(module_engine, item_id)
    with pytest.raises(sa_exc.IntegrityError):
        with module_engine.begin() as conn:
            conn.execute(text("DELETE FROM items WHERE id = :id"), {"id": item_id})
    assert snapshot(module_engine, item_id) == before


@pytest.mark.parametrize(
    "sql",
    [
        "TRUNCATE audit_events",
        "TRUNCATE TABLE audit_events RESTART IDENTITY",
        "TRUNCATE items CASCADE",
    ],
)
def test_postgres_audit_log_refuses_truncate(pg_url: str, sql: str) -> None:
    engine = open_store(pg_url)
    try:
        item_id = make_item(engine, "published")
        before = snapshot(engine, item_id)
        with pytest.raises(sa_exc.DBAPIError, match="append-only"):
            with engine.begin() as conn:
                conn.execute(text(sql))
        assert snapshot(engine, item_id) == before
        assert len(before[1]) == 4
    finally:
        engine.dispose()
