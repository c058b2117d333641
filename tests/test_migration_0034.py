"""0034_short_part_names: a database made at the revision before it, holding model
calls whose requests name their ledger parts by full key, comes out with each name
shortened to a 64-bit prefix (the rows smaller), every request and reply read back
exactly by the ledger and the audit. Downgrading puts the full keys back, byte for
byte as before. Both backends."""

from __future__ import annotations

from alembic import command
from sqlalchemy import text
from sqlmodel import Session, select

from store import ledger
from store.db import alembic_config, migrate, session_scope
from store.history import item_history
from store.models import CallRecord, ModelCall
from store.packing import unpack_json
from tests.migration_helpers import (
    add_calls,
    at_previous_revision,
    insert_article,
    parts_named_in_full,
    summary_request,
)

REVISION = "0034_short_part_names"
SYSTEM = "You summarise local news for the Marrow Bay Chronicle. " * 6
ARTICLE = (
    "The Marrow Bay harbour board delayed repairs to 14 bridges on Friday, officials "
    "said, after its engineer, Idris Kellaway, found the north quay unsafe for lorries."
)
REPLY = {"id": "msg_marrow_1", "content": [{"type": "text", "text": "Repairs delayed."}]}


def _requests(engine) -> dict[int, bytes]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, request_json FROM model_calls ORDER BY id"))
        return {i: bytes(r) for i, r in rows}


def test_upgrade_names_parts_by_a_prefix_and_downgrade_gives_the_keys_back(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        item = insert_article(conn, 1, "draft", "Repairs delayed", ARTICLE, "https://m.test/1")
    request = summary_request(ARTICLE, SYSTEM)
    plain = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with session_scope(engine) as session:
        calls = [
            CallRecord(backend="anthropic:m", request_json=request, response_json=REPLY),
            CallRecord(backend="anthropic:m", request_json=plain),
        ]
        add_calls(session, calls, item)
    with engine.begin() as conn:  # as the code before this revision named them
        assert parts_named_in_full(conn) == 1
    before = _requests(engine)
    named, unnamed = sorted(before)
    assert all(len(n) == 71 for n in ledger.part_keys(unpack_json(before[named])))

    migrate(engine)

    after = _requests(engine)
    names = ledger.part_keys(unpack_json(after[named]))
    assert len(names) == 2 and all(len(n) == len("sha256:") + 16 for n in names), names
    assert len(after[named]) < 0.7 * len(before[named]), (after, before)
    assert after[unnamed] == before[unnamed]
    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        assert ledger.requests(session, rows) == [request, plain]
        assert ledger.replies(session, rows) == [REPLY, None]
    history = item_history(engine, item)
    assert history is not None
    assert [c.request_json for c in history.calls] == [request, plain]

    command.downgrade(alembic_config(engine), "0033_parts_against_items")
    assert _requests(engine) == before
    engine.dispose()
