"""What the PostgreSQL role tests share (tests/test_pg_runtime_roles.py and the
migration tests after 0013): a role's name from its URL, and a new draft made
through the status machine. A test module never imports another test module
(tests/test_layering.py)."""

from __future__ import annotations

import uuid

from sqlalchemy.engine import Engine, make_url

from store import status as st
from store.db import session_scope
from store.models import Item


def role(url: str) -> str:
    return make_url(url).username or ""


def new_draft(engine: Engine, summary: str = "Harrowby opened its new ferry pier.") -> int:
    with session_scope(engine) as session:
        item = Item(
            dedup_key=f"https://news.example.test/{uuid.uuid4().hex}",
            source_url="https://news.example.test/pier",
            source_text="Harrowby opened its new ferry pier on Monday.",
        )
        st.create(session, item, actor="run:1", reason="found in a feed")
        st.move(
            session,
            item,
            st.DRAFT,
            actor="run:1",
            changes={"headline": "Harrowby pier opens", "summary": summary},
        )
        assert item.id is not None
        return item.id
