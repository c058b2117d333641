"""0030_digests_as_bytes: a database made at the revision before it, holding an item
with a text hash, a model call with its prompt hash and ledger parts, comes out on
SQLite with each SHA-256 digest stored as its 32 bytes instead of 64 or 71
characters of hex (issue 19 §4), every one read back as the same text: the item's
text hash still finds its duplicate, the ledger still puts the request back together,
the audit shows the same hashes. A value that is not a digest stays text. PostgreSQL
is unchanged. Downgrading gives the hex back."""

from __future__ import annotations

import hashlib

from alembic import command
from sqlalchemy import inspect, text
from sqlmodel import Session, select

from copydesk.services.pipeline.duplicates import find_duplicates
from store import ledger
from store.db import alembic_config, migrate
from store.models import Item, LedgerPart, ModelCall
from tests.migration_helpers import (
    add_call,
    at_previous_revision,
    insert_article,
    ledger_rows,
    summary_request,
)

REVISION = "0030_digests_as_bytes"
ARTICLE = (
    "The Quillan harbour board delayed the dredging of the inner basin until April, "
    "its chair, Ffion Tregarth, said on Friday, after 212 objections were lodged."
)
SYSTEM = "You summarise local news for the Quillan Herald. " * 6
HASH = hashlib.sha256(b"quillan dredging").hexdigest()
PROMPT = "sha256:" + hashlib.sha256(b"summary-v2 prompt").hexdigest()


def _forms(engine) -> dict[str, set[tuple[str, int]]]:  # type: ignore[no-untyped-def]
    kind = "typeof" if engine.dialect.name == "sqlite" else "pg_typeof"
    # A call's prompt hash is in its settings row since 0038, copied as stored.
    calls = (
        "call_settings" if "call_settings" in inspect(engine).get_table_names() else "model_calls"
    )
    queries = {
        "content_hash": "items WHERE content_hash IS NOT NULL",
        "prompt_hash": f"{calls} WHERE prompt_hash IS NOT NULL",
        "hash": "ledger_parts",
    }
    with engine.connect() as conn:
        return {
            column: {
                (str(k), n)
                for k, n in conn.execute(
                    text(f"SELECT {kind}({column}), length({column}) FROM {rest}")  # noqa: S608
                )
            }
            for column, rest in queries.items()
        }


def test_upgrade_stores_digests_as_bytes_and_reads_them_as_before(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        item = insert_article(conn, 1, "draft", "Dredging delayed", ARTICLE, "https://q.test/1")
        odd = insert_article(conn, 2, "new", "Gala", "The Quillan gala moved.", "https://q.test/2")
        conn.execute(
            text("UPDATE items SET content_hash = :h WHERE id = :i"), {"h": HASH, "i": item}
        )
        conn.execute(
            text("UPDATE items SET content_hash = 'not-a-digest' WHERE id = :i"), {"i": odd}
        )
    add_call(engine, item, summary_request(ARTICLE, SYSTEM))
    with engine.begin() as conn:
        conn.execute(text("UPDATE model_calls SET prompt_hash = :p"), {"p": PROMPT})
    with Session(engine) as session:
        [call] = ledger_rows(session)
        sent = ledger.requests(session, [call])
        keys = sorted(session.exec(select(LedgerPart.hash)).all())

    migrate(engine)

    forms = _forms(engine)
    if engine.dialect.name == "sqlite":
        assert forms["content_hash"] == {("blob", 32), ("text", 12)}  # the odd one stays text
        assert forms["prompt_hash"] == {("blob", 32)}
        assert forms["hash"] == {("blob", 32)}
    else:
        assert forms["prompt_hash"] == {("character varying", 71)}
    with Session(engine) as session:
        assert session.get(Item, item).content_hash == HASH  # type: ignore[union-attr]
        assert session.get(Item, odd).content_hash == "not-a-digest"  # type: ignore[union-attr]
        [call] = session.exec(select(ModelCall)).all()
        assert call.prompt_hash == PROMPT
        assert ledger.requests(session, [call]) == sent
        assert sorted(session.exec(select(LedgerPart.hash)).all()) == keys
        # The text hash still finds the earlier item with the same text.
        found = find_duplicates(session, [(99, [], HASH)])
        assert found[99][0] == item, found

    command.downgrade(alembic_config(engine), "0029_replies_against_parts")
    forms = _forms(engine)
    assert forms["prompt_hash"] == {
        ("text" if engine.dialect.name == "sqlite" else "character varying", 71)
    }
    with engine.connect() as conn:
        assert (
            conn.execute(text("SELECT content_hash FROM items WHERE id = :i"), {"i": item}).scalar()
            == HASH
        )
    engine.dispose()
