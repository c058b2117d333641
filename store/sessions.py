"""Review sessions: a sign-in that survives a reload, and can be taken back (issue 25).

Signing in makes a random key (256 bits); the browser keeps it inside a signed
token (review_ui/desk/session_tokens.py) and the database keeps only its SHA-256,
so a copy of this table signs nobody in. A key names its editor while its row is
unexpired and unrevoked and the account is enabled: `session_editor` checks all
three in one query, and the review app asks on every page run, so a revoked or
disabled session stops working at its next click, in every tab.

Revoked: by signing out (that key), by disabling the editor or giving them a new
password (all of theirs, store/editors.py). Rows ended a day ago are deleted when
the next session is opened, so the table does not grow for ever.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from sqlalchemy import delete, or_, select, update
from sqlmodel import Session

from store.models import Editor, ReviewSession, utcnow

KEY_BYTES = 32
FORGET_ENDED_AFTER = timedelta(days=1)


def key_hash(key: str) -> str:
    """What the database keeps of a key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def open_session(
    session: Session, editor: str, lifetime: timedelta, *, now: datetime | None = None
) -> str:
    """A new session for `editor` lasting `lifetime`; returns its key (shown to
    nobody but the browser). The caller commits."""
    now = now or utcnow()
    table = ReviewSession.__table__
    session.execute(
        delete(table).where(
            or_(
                table.c.expires_at < now - FORGET_ENDED_AFTER,
                table.c.revoked_at < now - FORGET_ENDED_AFTER,
            )
        )
    )
    key = secrets.token_urlsafe(KEY_BYTES)
    session.add(
        ReviewSession(
            key_hash=key_hash(key), editor=editor, created_at=now, expires_at=now + lifetime
        )
    )
    session.flush()
    return key


def session_editor(
    session: Session, key: str, *, now: datetime | None = None
) -> tuple[str, str] | None:
    """(name, role) of the enabled editor whose live session `key` is, else None."""
    now = now or utcnow()
    row = session.execute(
        select(Editor.name, Editor.role)
        .join(ReviewSession, ReviewSession.editor == Editor.name)  # type: ignore[arg-type]
        .where(
            ReviewSession.key_hash == key_hash(key),  # type: ignore[arg-type]
            ReviewSession.revoked_at.is_(None),  # type: ignore[union-attr]
            ReviewSession.expires_at > now,  # type: ignore[arg-type]
            Editor.enabled.is_(True),  # type: ignore[attr-defined]
        )
    ).first()
    return (row[0], row[1]) if row else None


def revoke(session: Session, key: str, *, now: datetime | None = None) -> bool:
    """End the session of `key` (signing out). True when it was live."""
    table = ReviewSession.__table__
    done = session.execute(
        update(table)
        .where(table.c.key_hash == key_hash(key), table.c.revoked_at.is_(None))
        .values(revoked_at=now or utcnow())
    )
    return bool(done.rowcount)


def revoke_all(session: Session, editor: str, *, now: datetime | None = None) -> int:
    """End every session of `editor` (disabled, or a new password); how many."""
    table = ReviewSession.__table__
    done = session.execute(
        update(table)
        .where(table.c.editor == editor, table.c.revoked_at.is_(None))
        .values(revoked_at=now or utcnow())
    )
    return int(done.rowcount or 0)
