"""0031_audit_hashes_as_bytes: a database made at the revision before it, holding a
hash-chained audit log, comes out with every event's hash and previous hash stored
as 32 bytes on SQLite (issue 19 §4), and the chain proves what it proved: it
verifies, an anchor taken before the upgrade still matches, a new event links to the
head, the unique index still refuses a second event linking to the same one, and the
log is still append-only. PostgreSQL is unchanged. Downgrading gives the hex back."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import exc, text

from store import audit_chain
from store import status as st
from store.db import alembic_config, migrate, session_scope
from store.models import Item
from tests.migration_helpers import at_previous_revision, draft_in_sql

REVISION = "0031_audit_hashes_as_bytes"


def _forms(engine) -> set[tuple[str, int]]:  # type: ignore[no-untyped-def]
    kind = "typeof" if engine.dialect.name == "sqlite" else "pg_typeof"
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                f"SELECT {kind}(hash), length(hash) FROM audit_events UNION "  # noqa: S608
                f"SELECT {kind}(prev_hash), length(prev_hash) FROM audit_events"
            )
        )
        return {(str(k), n) for k, n in rows}


def test_upgrade_stores_the_chain_as_bytes_and_it_proves_the_same(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    draft_in_sql(engine, 1, "Tarrow ferry fares", "Fares on the Tarrow ferry rise in May.")
    draft_in_sql(engine, 2, "Linfield pool", "The Linfield pool reopens after repairs.")
    anchor = audit_chain.head(engine)
    assert audit_chain.verify(engine).ok

    migrate(engine)

    sqlite = engine.dialect.name == "sqlite"
    assert _forms(engine) == ({("blob", 32)} if sqlite else {("character varying", 64)})
    report = audit_chain.verify(engine, expect=anchor)
    assert (report.ok, report.events, report.head) == (True, 4, anchor.hash)
    assert audit_chain.head(engine) == anchor
    with session_scope(engine) as session:  # a new event links to the head
        item = Item(dedup_key="https://esk.example.test/quay", title="Esk Holme quay")
        st.create(session, item, actor="cli", reason="submitted")
    later = audit_chain.head(engine)
    assert later.event_id == anchor.event_id + 1
    assert audit_chain.verify(engine, expect=later).ok
    with engine.connect() as conn:
        row = conn.execute(text("SELECT * FROM audit_events WHERE id = :i"), {"i": later.event_id})
        fork = dict(row.mappings().one()) | {"id": later.event_id + 1}
    columns = ", ".join(fork)
    values = ", ".join(f":{k}" for k in fork)
    with pytest.raises(exc.DatabaseError):  # a second event after the same one: a fork
        with engine.begin() as conn:
            conn.execute(text(f"INSERT INTO audit_events ({columns}) VALUES ({values})"), fork)  # noqa: S608
    with pytest.raises(exc.DatabaseError, match="append-only"):
        with engine.begin() as conn:
            conn.execute(text("UPDATE audit_events SET reason = 'rewritten' WHERE id = 1"))

    command.downgrade(alembic_config(engine), "0030_digests_as_bytes")
    assert _forms(engine) == ({("text", 64)} if sqlite else {("character varying", 64)})
    assert audit_chain.verify(engine, expect=later).ok
    engine.dispose()
