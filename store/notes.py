"""Editors' notes on items: attributable (the account name) and timestamped,
only ever added, and never a change to the item itself (its status, version and
text stay as they are, so a note cannot move a draft or race a decision)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlmodel import Session, col

from store.models import Item, Note

MAX_NOTE_CHARS = 2000


class NoteRefused(ValueError):
    """An empty or over-long note, or one on an item that does not exist."""


def add_note(session: Session, item_id: int, author: str, body: str) -> Note:
    """Add a note (the caller commits, and has checked the author may write one)."""
    text = (body or "").strip()
    if not text:
        raise NoteRefused("a note needs some text")
    if len(text) > MAX_NOTE_CHARS:
        raise NoteRefused(f"a note is at most {MAX_NOTE_CHARS:,} characters ({len(text):,} given)")
    if session.get(Item, item_id) is None:
        raise NoteRefused(f"item {item_id} does not exist")
    note = Note(item_id=item_id, author=author, body=text)
    session.add(note)
    session.flush()
    return note


def notes_for(session: Session, item_id: int) -> list[Note]:
    """An item's notes, oldest first."""
    return list(
        session.scalars(select(Note).where(col(Note.item_id) == item_id).order_by(col(Note.id)))
    )


def note_counts(session: Session, item_ids: list[int]) -> dict[int, int]:
    """How many notes each of these items has (items without notes left out)."""
    if not item_ids:
        return {}
    rows = session.execute(
        select(Note.item_id, func.count())
        .where(col(Note.item_id).in_(item_ids))
        .group_by(Note.item_id)
    ).all()
    return {item_id: n for item_id, n in rows}
