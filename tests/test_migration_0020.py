"""0020_review_sessions: a database made at the revision before it, with editors and
a draft in it, upgrades to one where the accounts are as they were, no session
exists (nobody is signed in by the upgrade), and a sign-in's session works."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import text
from sqlmodel import Session, select

from store import sessions
from store.db import migrate, session_scope
from store.editors import hash_password
from store.models import Editor, Item, ReviewSession
from tests.migration_helpers import at_previous_revision, draft_in_sql

REVISION = "0020_review_sessions"


def test_upgrade_keeps_accounts_and_starts_with_no_session(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        for name, enabled in (("alice", True), ("bruno", False)):
            conn.execute(
                text(
                    "INSERT INTO editors (name, role, password_hash, enabled, failed_logins, "
                    "created_at) VALUES (:name, 'editor', :hash, :enabled, 0, CURRENT_TIMESTAMP)"
                ),
                {"name": name, "hash": hash_password("lantern-harbour-42"), "enabled": enabled},
            )
    item_id = draft_in_sql(engine, 1, "Harrowby ferry fares rise", "Fares rise by 40p.")
    migrate(engine)
    with Session(engine) as session:
        accounts = session.exec(select(Editor.name, Editor.enabled).order_by(Editor.name)).all()
        assert [tuple(a) for a in accounts] == [("alice", True), ("bruno", False)]
        assert session.exec(select(ReviewSession)).all() == []
        assert session.get(Item, item_id).status == "draft"  # type: ignore[union-attr]
    with session_scope(engine) as session:
        alice = sessions.open_session(session, "alice", timedelta(hours=1))
        bruno = sessions.open_session(session, "bruno", timedelta(hours=1))
    with Session(engine) as session:
        assert sessions.session_editor(session, alice) == ("alice", "editor")
        assert sessions.session_editor(session, bruno) is None  # disabled before the upgrade
    engine.dispose()
