"""This database's installation id (one row, made with the schema: migration 0012)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session, select

from store.models import Installation


@dataclass(frozen=True)
class InstallationId:
    id: str
    day: str  # the day it was made, YYYY-MM-DD (UTC)


def installation(session: Session) -> InstallationId:
    row = session.exec(select(Installation)).one()
    return InstallationId(row.installation_id, row.created_at.date().isoformat())
