"""0023_parts_without_rowid: a database made at the revision before it, holding model
calls whose requests name their parts, comes out with the same parts in a table keyed
by the hash alone (SQLite: WITHOUT ROWID, the hash no longer kept a second time in an
automatic index); the audit reassembles the same requests, a call written after the
upgrade shares the stored parts (the insert of a part already there does nothing),
on SQLite and PostgreSQL. Downgrading gives the rowid table back with the same rows."""

from __future__ import annotations

from alembic import command
from sqlalchemy import text
from sqlmodel import Session

from store import ledger
from store import status as st
from store.db import alembic_config, migrate, session_scope
from store.models import Item
from store.packing import read_digest
from tests.migration_helpers import (
    add_call,
    at_previous_revision,
    ledger_rows,
    sqlite_table_schema,
    summary_request,
)

REVISION = "0023_parts_without_rowid"
ARTICLE = (
    "<article>\nThe Pellworth allotment society opened 40 new plots on Saturday, its "
    "secretary, Ivo Blakeney, said; the waiting list had reached 130 names.\n</article>"
)
REQUEST = summary_request(ARTICLE, "You summarise local news for the Pellworth desk. " * 5)


def _parts(engine) -> list[tuple[str, bytes]]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT hash, content FROM ledger_parts ORDER BY hash"))
        # A key as hex, however it is stored (32 bytes on SQLite since 0030).
        return [(read_digest(h, "sha256:"), bytes(c)) for h, c in rows]


def _requests(engine) -> list:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        return ledger.requests(session, ledger_rows(session))


def test_upgrade_keeps_every_part_keyed_by_its_hash(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with session_scope(engine) as session:
        item = Item(dedup_key="https://pellworth.example.test/plots", headline="New plots")
        st.create(session, item, actor="run:1", reason="found in a feed")
        item_id = item.id
    add_call(engine, item_id, REQUEST)
    before = _parts(engine)
    assert len(before) == 2  # the system prompt and the article's block

    migrate(engine)

    assert _parts(engine) == before
    sqlite = engine.dialect.name == "sqlite"
    if sqlite:
        sql, indexes = sqlite_table_schema(engine, "ledger_parts")
        assert "WITHOUT ROWID" in sql.upper() and indexes == []
    assert _requests(engine) == [REQUEST]
    add_call(engine, item_id, REQUEST)  # its parts are there already: nothing is added
    assert _parts(engine) == before
    assert _requests(engine) == [REQUEST, REQUEST]

    command.downgrade(alembic_config(engine), "0022_packed_dictionary")
    assert _parts(engine) == before
    if sqlite:
        sql, indexes = sqlite_table_schema(engine, "ledger_parts")
        assert "WITHOUT ROWID" not in sql.upper()
        assert indexes == ["sqlite_autoindex_ledger_parts_1"]
    else:  # (on SQLite, today's code looks keys up as bytes, 0030's form, not as hex)
        assert _requests(engine) == [REQUEST, REQUEST]
    engine.dispose()
