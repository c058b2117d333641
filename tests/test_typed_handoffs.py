"""Typed hand-offs into the store: a stored item's status cannot be assigned,
only moved, and the columns a move sets are an `ItemChanges`, not a loose dict."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlmodel import Session

from store import status as st
from store.changes import UNSET, ItemChanges
from store.db import session_scope
from store.models import AuditEvent, Item, StatusNotAssignable


def _draft(engine, key: str = "https://news.example.org/a") -> int:
    with session_scope(engine) as session:
        item = Item(dedup_key=key, source_url=key, title="A draft")
        st.create(session, item, actor="run:1", reason="seen")
        st.move(session, item, st.DRAFT, actor="run:1", reason="all hard gates passed")
        return item.id


def _stored_status(engine, item_id: int) -> str:
    with Session(engine) as session:
        return session.scalars(select(Item.status).where(Item.id == item_id)).one()


def test_assigning_approved_then_moving_cannot_publish_without_an_editor(engine):
    item_id = _draft(engine)
    with pytest.raises(StatusNotAssignable):
        with session_scope(engine) as session:
            item = session.get(Item, item_id)
            item.status = "approved"
            st.move(session, item, st.PUBLISHED, actor="cli:publish")
    assert _stored_status(engine, item_id) == st.DRAFT
    # Even caught, the assignment never took: the move still sees a draft.
    with session_scope(engine) as session:
        item = session.get(Item, item_id)
        try:
            item.status = "approved"
        except StatusNotAssignable:
            pass
        with pytest.raises(st.IllegalMove):
            st.move(session, item, st.PUBLISHED, actor="cli:publish")
    assert _stored_status(engine, item_id) == st.DRAFT
    with Session(engine) as session:
        moves = session.scalars(
            select(AuditEvent.to_status).where(AuditEvent.item_id == item_id)
        ).all()
    assert moves == ["new", "draft"]


def test_a_new_item_is_built_with_its_status_and_moves_still_mirror_it(engine):
    item_id = _draft(engine, "https://news.example.org/b")
    with session_scope(engine) as session:
        item = session.get(Item, item_id)
        st.move(session, item, st.APPROVED, actor="editor:ann")
        assert item.status == st.APPROVED  # mirrored on the object by the machine
    assert _stored_status(engine, item_id) == st.APPROVED


def test_item_changes_refuse_a_misspelt_column():
    changes = ItemChanges()
    with pytest.raises(AttributeError):
        changes.headlin = "typo"  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        changes.update(summary="ok", headlin="typo")
    with pytest.raises(ValueError, match="headlin"):
        ItemChanges.of({"headlin": "typo"})
    changes.unset("summary")
    changes.headline, changes.next_attempt_at = "Set", None
    assert changes.values() == {"headline": "Set", "next_attempt_at": None}
    changes.unset("headline")
    assert changes.headline is UNSET and changes.values() == {"next_attempt_at": None}


def test_every_item_change_is_an_item_column():
    columns = set(Item.__table__.columns.keys())
    assert set(ItemChanges.names()) <= columns
    assert not {"status", "version", "decided_by", "decided_at"} & set(ItemChanges.names())


def test_a_move_with_a_bad_column_changes_nothing(engine):
    item_id = _draft(engine, "https://news.example.org/c")
    with pytest.raises(ValueError, match="no_such_column"):
        with session_scope(engine) as session:
            item = session.get(Item, item_id)
            st.move(session, item, st.APPROVED, actor="editor:ann", changes={"no_such_column": 1})
    assert _stored_status(engine, item_id) == st.DRAFT


def test_a_discard_stores_its_kind_and_a_misspelt_kind_moves_nothing(engine):
    item_id = _draft(engine)
    with session_scope(engine) as session:
        item = session.get(Item, item_id)
        with pytest.raises(ValueError, match="not a discard kind: 'refsued'"):
            st.move(session, item, st.DISCARDED, actor="run:1", reason="x", discard_kind="refsued")
        with pytest.raises(st.IllegalMove, match="move to discarded"):
            st.move(
                session, item, st.REJECTED, actor="editor:ann", reason="x", discard_kind="fetch"
            )
    assert _stored_status(engine, item_id) == st.DRAFT
    with session_scope(engine) as session:
        item = session.get(Item, item_id)
        st.move(session, item, st.DISCARDED, actor="run:1", reason="link refused: ftp")
        assert item.discard_kind == "other"  # no kind given: nobody said why
    other = _draft(engine, "https://news.example.org/b")
    with session_scope(engine) as session:
        item = session.get(Item, other)
        st.move(session, item, st.DISCARDED, actor="run:1", reason="x", discard_kind="refused")
    with Session(engine) as session:
        assert session.get(Item, other).discard_kind == "refused"
        assert session.get(Item, item_id).discard_kind == "other"
