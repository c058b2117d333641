"""0033_parts_against_items: a database made at the revision before it, holding model
calls whose ledger parts were each packed by themselves, comes out with each part
that quotes its item's text (the article's block) packed against that text: far
smaller, and read back exactly by the ledger and the audit. A part every item shares
(the system prompt), and one named only by a call about no item, stay as they were.
Downgrading packs every part by itself again, byte for byte as before. Both backends."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import text
from sqlmodel import Session, select

from store import ledger
from store.db import alembic_config, migrate, session_scope
from store.history import item_history
from store.models import CallRecord, ModelCall
from store.packing import AGAINST_ITEM, read_digest
from tests.migration_helpers import (
    add_call,
    add_calls,
    at_previous_revision,
    insert_article,
    parts_named_in_full,
    parts_packed_alone,
    summary_request,
)

REVISION = "0033_parts_against_items"
SYSTEM = "You summarise local news for the Linfield Gazette. " * 6
ARTICLE = (
    "The Linfield school trust approved a budget of 412,000 pounds on Tuesday for a new "
    "science block at Harrowgate Academy, its chair, Perpetua Vance, said. Work on the "
    "block, which will hold six laboratories, is to start in May and end next spring. "
    "The trust said 38 objections had been lodged and answered in its 19-page report."
)
UNOWNED = "A standalone evaluation prompt that names no article of the desk at all. " * 3


def _parts(engine) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT hash, content FROM ledger_parts")).all()
    return {read_digest(h, "sha256:"): bytes(c) for h, c in rows}


def _article_with_its_call(db_url: str):  # type: ignore[no-untyped-def]
    """A database at the revision before 0033 with the article and one summary call
    about it (through today's ledger): the engine and the item's id."""
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        item = insert_article(conn, 1, "draft", "Science block", ARTICLE, "https://l.test/1")
    add_call(engine, item, summary_request(ARTICLE, SYSTEM))
    with engine.begin() as conn:  # as the code before 0034 named its parts
        parts_named_in_full(conn)
    return engine, item


def test_upgrade_packs_an_article_s_part_against_its_item_and_downgrade_undoes_it(
    db_url: str,
) -> None:
    engine, item = _article_with_its_call(db_url)
    request = summary_request(ARTICLE, SYSTEM)
    loose = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": UNOWNED}]}],
    }
    with session_scope(engine) as session:
        call = CallRecord(backend="anthropic:claude-haiku-4-5", request_json=loose)
        add_calls(session, [call], None)
    with engine.begin() as conn:  # as the code before this revision stored them
        assert parts_packed_alone(conn) == 1
        parts_named_in_full(conn)
    before = _parts(engine)
    assert len(before) == 3  # the system prompt, the article's block, the loose prompt
    article_key = ledger.digest(ledger.canonical(ARTICLE))

    migrate(engine)

    after = _parts(engine)
    assert after[article_key][:1] == AGAINST_ITEM
    assert len(after[article_key]) < 0.3 * len(before[article_key]), (after, before)
    assert {k: v for k, v in after.items() if k != article_key} == {
        k: v for k, v in before.items() if k != article_key
    }
    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        assert ledger.requests(session, rows) == [request, loose]
    history = item_history(engine, item)
    assert history is not None
    assert [c.request_json for c in history.calls] == [request]

    command.downgrade(alembic_config(engine), "0032_fewer_index_pages")
    assert _parts(engine) == before
    engine.dispose()


def test_downgrade_refuses_a_part_whose_item_text_changed_with_one_clear_line(
    sqlite_url: str,
) -> None:
    engine, item = _article_with_its_call(sqlite_url)
    migrate(engine)
    with engine.begin() as conn:  # never done by copydesk: a source text is kept as found
        conn.execute(
            text("UPDATE items SET source_text = 'Another text.' WHERE id = :i"), {"i": item}
        )
    with pytest.raises(RuntimeError, match="no longer that text"):
        command.downgrade(alembic_config(engine), "0032_fewer_index_pages")
    engine.dispose()
