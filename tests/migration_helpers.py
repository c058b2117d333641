"""Helpers for migration tests: a database made at the revision before the one under
test, and items written into it with raw SQL (the models describe the newest schema)."""

from __future__ import annotations

from typing import Any

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Engine

from store.db import alembic_config, make_engine


def at_previous_revision(db_url: str, revision: str) -> Engine:
    """An engine on `db_url`, migrated up to the revision before `revision`."""
    engine = make_engine(db_url)
    config = alembic_config(engine)
    previous = ScriptDirectory.from_config(config).get_revision(revision).down_revision
    assert isinstance(previous, str)
    command.upgrade(config, previous)
    return engine


def insert_article(conn: Any, n: int, status: str, title: str, source: str, url: str) -> int:
    """An item with a title, source text and summary, in `status`; returns its id."""
    return conn.execute(
        text(
            "INSERT INTO items (dedup_key, source_url, original_url, title, source_text, "
            "headline, summary, status, version, attempts, recorded_reply, seen_at, "
            "created_at, updated_at) VALUES (:url, :url, :url, :title, :source, :title, "
            ":summary, :status, 1, 0, false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, "
            "CURRENT_TIMESTAMP) RETURNING id"
        ),
        {
            "url": url,
            "title": title,
            "source": source,
            "summary": f"Summary {n}.",
            "status": status,
        },
    ).scalar_one()
