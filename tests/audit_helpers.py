"""Shared by the audit tests: what someone with more rights than the application
(the table's owner, the SQLite file's user) can do to the audit log."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import select, text, update
from sqlalchemy.engine import Connection, Engine
from sqlmodel import Session

from store import audit_chain
from store.models import AuditEvent


def owner_runs(engine: Engine, *statements: str, **params: Any) -> None:
    """What someone with more rights than the application could do: set the
    append-only trigger aside, change the log, put the trigger back."""
    with owner_connection(engine) as conn:
        for statement in statements:
            conn.execute(text(statement), params)


@contextmanager
def owner_connection(engine: Engine) -> Iterator[Connection]:
    """A transaction with the audit log's append-only triggers set aside (PostgreSQL:
    disabled, then enabled again; SQLite: dropped)."""
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text("ALTER TABLE audit_events DISABLE TRIGGER USER"))
        else:
            conn.execute(text("DROP TRIGGER IF EXISTS audit_events_no_update"))
            conn.execute(text("DROP TRIGGER IF EXISTS audit_events_no_delete"))
        yield conn
        if engine.dialect.name == "postgresql":
            conn.execute(text("ALTER TABLE audit_events ENABLE TRIGGER USER"))


def rewrite_chain_from(engine: Engine, event_id: int, **changes: Any) -> None:
    """Change one event and recompute the chain from it on, as a careful forger
    would: the chain holds again, only heads kept elsewhere still show it."""
    with Session(engine) as session:
        rows = list(session.scalars(select(AuditEvent).order_by(AuditEvent.id)))  # type: ignore[arg-type]
        session.expunge_all()
    prev = audit_chain.GENESIS
    with owner_connection(engine) as conn:
        for event in rows:
            if (event.id or 0) < event_id:
                prev = event.hash
                continue
            if event.id == event_id:
                for name, value in changes.items():
                    setattr(event, name, value)
            event.prev_hash, event.hash = prev, audit_chain.hash_of(event, prev)
            prev = event.hash
            conn.execute(
                update(AuditEvent.__table__)  # type: ignore[arg-type]
                .where(AuditEvent.__table__.c.id == event.id)  # type: ignore[attr-defined]
                .values(
                    prev_hash=event.prev_hash,
                    hash=event.hash,
                    **{name: getattr(event, name) for name in changes},
                )
            )
