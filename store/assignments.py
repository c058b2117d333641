"""Assigning a draft to an editor: stored on the item, audited in the hash chain.

An assignment is not a status move and does not bump the item's version (an
editor who has the draft open can still decide on it). Its audit event keeps
the item's status on both sides, with the reason "assigned to <name>" (or
"unassigned") and `details = {"assigned_to": name, "previous": earlier name}`.
`ASSIGNED` marks these events so that nothing reads them as an edit.
"""

from __future__ import annotations

from sqlalchemy import update
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session

from store import audit_chain
from store.editors import get_editor
from store.models import AuditEvent, Item, utcnow

ASSIGNED = "assigned to "  # the reason's opening
UNASSIGNED = "unassigned"


class NotAssignable(ValueError):
    """The editor is not an enabled account with the `editor` role."""


def assign(session: Session, item: Item, editor: str | None, *, actor: str) -> AuditEvent | None:
    """Assign `item` to `editor` (None: to nobody). None when nothing changes.
    The caller commits."""
    if editor is not None:
        account = get_editor(session, editor)
        if account is None or not account.enabled or account.role != "editor":
            raise NotAssignable(f"{editor} is not an enabled editor account")
    before = item.assigned_to
    if before == editor:
        return None
    session.flush()
    session.connection().execute(
        update(Item.__table__).where(Item.__table__.c.id == item.id).values(assigned_to=editor)  # type: ignore[attr-defined]
    )
    set_committed_value(item, "assigned_to", editor)
    event = AuditEvent(
        item_id=item.id,
        at=utcnow(),
        actor=actor,
        from_status=item.status,
        to_status=item.status,
        reason=f"{ASSIGNED}{editor}" if editor else UNASSIGNED,
        details={"assigned_to": editor, "previous": before},
    )
    return audit_chain.append(session, event)


def is_assignment(reason: str | None) -> bool:
    return bool(reason) and (reason.startswith(ASSIGNED) or reason == UNASSIGNED)  # type: ignore[union-attr]
