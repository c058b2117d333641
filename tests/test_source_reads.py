"""Issue 24: a page reader starts on an item without reading its row again. The
claim already returns the item's declared language (the only thing the page reader
read for an item with no text of its own), so a run reads no item row by id before
fetching its page. That the declared language still reaches the gates is
tests/test_ingest_language.py's proof (a feed's language, stored and read)."""

from __future__ import annotations

import json
import re
from datetime import timedelta

from sqlalchemy import event
from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from copydesk.cli import app
from store import claims
from store import status as st
from store.db import session_scope
from store.models import Item
from tests.run_helpers import Newsroom, write_config

N = 4


def _reads_language_of_one_item(statement: str) -> bool:
    flat = " ".join(statement.split())
    return "items.language" in flat and bool(re.search(r"WHERE items\.id = ", flat))


def test_a_page_reader_reads_no_item_row_before_the_page(tmp_path, sqlite_url, migrated) -> None:
    reads: list[str] = []

    def seen(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        if _reads_language_of_one_item(statement):
            reads.append(statement)

    event.listen(Engine, "before_cursor_execute", seen)
    try:
        with Newsroom(N).serve() as feed_url:
            config = write_config(tmp_path, sqlite_url, feed_url, backend="extractive")
            result = CliRunner().invoke(
                app, ["--config", str(config), "--quiet", "run", "--json"], catch_exceptions=False
            )
    finally:
        event.remove(Engine, "before_cursor_execute", seen)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.strip().splitlines()[-1])["totals"]["drafts"] == N
    assert reads == []  # failed: one SELECT of items.language an item


def test_a_claim_says_which_items_have_their_text(engine) -> None:
    """`has_text` is what the page reader trusts to skip reading the store: an item
    born without a text must not claim to have one (on SQLite, RETURNING answered
    `source_text IS NOT NULL` with 1 for it), and one with a text must say so."""
    with session_scope(engine) as session:
        for key, text in (
            ("bare", None),
            ("told", "Ferry service to Orlin Point resumes."),
            ("blank", ""),
        ):
            item = Item(dedup_key=key, source_url=f"https://orlin.example.test/{key}", title=key)
            item.source_text = text
            st.create(session, item, actor="cli", reason="seen")
    with session_scope(engine) as session:
        claimed = claims.claim_items(session, None, 5, timedelta(minutes=5))
    assert {c.dedup_key: c.has_text for c in claimed} == {
        "bare": False,
        "told": True,
        "blank": True,
    }
