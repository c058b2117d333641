"""0017_correction_by_review_only: a database made at the revision before it, with
items in it, upgrades with its items untouched (SQLite and PostgreSQL); on
PostgreSQL the workers' role may then not reopen a published item as a correction
(the review role may), as it may not make any other editor's move."""

from __future__ import annotations

import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy import text

from store import status as st
from store.db import make_engine, migrate_as_owner, session_scope
from store.models import Item
from tests.migration_helpers import upgraded_with
from tests.pg_role_helpers import new_draft, role

REVISION = "0017_correction_by_review_only"


def test_upgrade_keeps_items(db_url: str) -> None:
    quay = ("published", "Tamsett quay", "The quay is 1,520 metres long.", "https://t.test/q")
    engine, (first,) = upgraded_with(db_url, REVISION, quay)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, status, title FROM items")).all()
    assert [tuple(r) for r in rows] == [(first, "published", "Tamsett quay")]
    engine.dispose()


def test_only_the_review_role_reopens_a_published_item(
    pg_url: str, pg_runtime_url: str, pg_review_url: str
) -> None:
    migrate_as_owner(pg_url, pg_runtime_url, review_role=role(pg_review_url))
    worker, review = make_engine(pg_runtime_url), make_engine(pg_review_url)
    try:
        item_id = new_draft(worker)
        with session_scope(review) as session:
            item = session.get(Item, item_id)
            st.move(session, item, st.APPROVED, actor="editor:alice")  # type: ignore[arg-type]
        with session_scope(worker) as session:  # the publisher, as the workers' role
            item = session.get(Item, item_id)
            st.move(session, item, st.PUBLISHED, actor="cli:publish", reason="published")  # type: ignore[arg-type]
        # A plain statement leaving decided_by alone (0013's trigger caught only a move
        # that clears it, as the status machine's does).
        with pytest.raises(sa_exc.DBAPIError, match="may not move item"):
            with worker.begin() as conn:
                conn.execute(
                    text("UPDATE items SET status = 'draft', version = version + 1 WHERE id = :i"),
                    {"i": item_id},
                )
        with pytest.raises(sa_exc.DBAPIError, match="may not"):
            with session_scope(worker) as session:
                item = session.get(Item, item_id)
                st.move(session, item, st.DRAFT, actor="editor:alice", reason="a correction")  # type: ignore[arg-type]
        with session_scope(review) as session:
            item = session.get(Item, item_id)
            st.move(session, item, st.DRAFT, actor="editor:alice", reason="a correction")  # type: ignore[arg-type]
            assert item.status == st.DRAFT  # type: ignore[union-attr]
    finally:
        worker.dispose()
        review.dispose()
