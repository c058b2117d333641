"""Helpers for migration tests: a database made at the revision before the one under
test, and items written into it with raw SQL (the models describe the newest schema)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import MetaData, Table, insert, inspect, text
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from store import audit_chain, ledger
from store.db import alembic_config, make_engine, migrate, session_scope
from store.models import CallRecord, CallSetting, ModelCall, utcnow
from store.packing import (
    AGAINST_ITEM,
    AgainstItem,
    pack_json,
    pack_text,
    read_digest,
    sql_unpack,
    unpack_json,
)


def at_previous_revision(db_url: str, revision: str) -> Engine:
    """An engine on `db_url`, migrated up to the revision before `revision`."""
    engine = make_engine(db_url)
    config = alembic_config(engine)
    previous = ScriptDirectory.from_config(config).get_revision(revision).down_revision
    assert isinstance(previous, str)
    command.upgrade(config, previous)
    return engine


# The last revision whose verdicts live in `gate_verdicts` rows: 0040 moves them into
# verdict sets (store/verdicts.py). A test about an earlier migration that reads or
# writes verdict rows upgrades to here, not to head.
LAST_WITH_VERDICT_ROWS = "0039_verdict_set_summary"


def upgrade_to_verdict_rows(engine: Engine) -> None:
    """Upgrade `engine`'s database to LAST_WITH_VERDICT_ROWS."""
    command.upgrade(alembic_config(engine), LAST_WITH_VERDICT_ROWS)


# An article (status, title, source text, URL) several migration tests keep beside
# the one they are about.
MILL_SOLD = (
    "new",
    "Tamsett mill sold",
    "The Tamsett mill was sold on Friday.",
    "https://tamsett.example.test/mill",
)


def upgraded_with(
    db_url: str, revision: str, *articles: tuple[str, str, str, str]
) -> tuple[Engine, list[int]]:
    """A database made at the revision before `revision`, holding `articles` (status,
    title, source text, URL: `insert_article`), then migrated to the newest schema:
    its engine and the articles' ids, in order."""
    engine = at_previous_revision(db_url, revision)
    with engine.begin() as conn:
        ids = [insert_article(conn, n, *article) for n, article in enumerate(articles, 1)]
    migrate(engine)
    return engine, ids


def insert_article(
    conn: Any, n: int, status: str, title: str, source: str, url: str, summary: str | None = None
) -> int:
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
            "summary": summary or f"Summary {n}.",
            "status": status,
        },
    ).scalar_one()


def draft_in_sql(
    engine: Engine, n: int, title: str, source: str, summary: str | None = None
) -> int:
    """A draft (`insert_article`) with its two audit events, `new` then `draft`, chained
    as `audit_chain.append` chains them: what the status machine leaves, written in
    SQL for a database at an older revision."""
    with engine.begin() as conn:
        url = f"https://news.example.test/{uuid.uuid4().hex}"
        item_id = insert_article(conn, n, "draft", title, source, url, summary)
        for from_status, to_status, reason in (
            (None, "new", "found in a feed"),
            ("new", "draft", None),
        ):
            head = conn.execute(
                text("SELECT hash FROM audit_events ORDER BY id DESC LIMIT 1")
            ).scalar()
            prev = head or audit_chain.GENESIS
            event = {
                "item_id": item_id,
                "at": datetime.now(UTC),
                "actor": "run:1",
                "from_status": from_status,
                "to_status": to_status,
                "reason": reason,
            }
            digest = audit_chain.event_hash(prev_hash=prev, details=None, **event)
            conn.execute(
                text(
                    "INSERT INTO audit_events (item_id, at, actor, from_status, to_status, "
                    "reason, prev_hash, hash) VALUES (:item_id, :at, :actor, :from_status, "
                    ":to_status, :reason, :prev, :hash)"
                ),
                event | {"prev": prev, "hash": digest},
            )
    return item_id


def sqlite_table_schema(engine: Engine, table: str) -> tuple[str, list[str]]:
    """SQLite: the table's CREATE statement and the names of its indexes, sorted."""
    with engine.connect() as conn:
        sql = conn.execute(
            text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = :t"), {"t": table}
        ).scalar_one()
        indexes = conn.execute(
            text(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = :t "
                "ORDER BY name"
            ),
            {"t": table},
        ).scalars()
        return sql, list(indexes)


def summary_request(article: str, system: str) -> dict[str, Any]:
    """A summary request as copydesk sends it: a system prompt long enough to be a
    ledger part, and the article's block."""
    return {
        "model": "claude-haiku-4-5",
        "max_tokens": 4096,
        "system": system,
        "messages": [{"role": "user", "content": [{"type": "text", "text": article}]}],
        "temperature": 0.0,
    }


def add_call(engine: Engine, item_id: int, request: dict[str, Any]) -> None:
    """A completed model call about the item with this request, through the ledger
    (its repeated parts stored once)."""
    with session_scope(engine) as session:
        call = CallRecord(backend="anthropic:claude-haiku-4-5", request_json=request)
        add_calls(session, [call], item_id)


def add_calls(session: Session, calls: list[CallRecord], item_id: int | None) -> None:
    """The calls in the ledger as the database's revision keeps them: through the
    ledger, or, before 0038, with their settings in every row as the ledger wrote
    them then (the model describes the newest schema)."""
    names = _call_columns(session)
    if "settings_id" in names:
        ledger.add(session, calls, item_id=item_id, run_id=None)
        return
    parts: dict[str, str] = {}
    rows = [ledger.split_values(call, item_id, None, parts) for call in calls]
    ledger.store_parts(session, parts, item_id)
    rows = [{k: v for k, v in row.items() if k in names} | {"created_at": utcnow()} for row in rows]
    session.connection().execute(insert(_old_calls(names)), rows)


def ledger_rows(session: Session) -> list[Any]:
    """The ledger's rows in order as the database's revision keeps them (before 0038
    with their settings in each row), each with its fields as attributes: what
    `ledger.requests` and `ledger.replies` read."""
    names = _call_columns(session)
    if "settings_id" in names:
        return list(session.exec(select(ModelCall).order_by(ModelCall.id)).all())  # type: ignore[arg-type]
    table = _old_calls(names)
    return list(session.connection().execute(table.select().order_by(table.c.id)).all())


def _call_columns(session: Session) -> set[str]:
    return {c["name"] for c in inspect(session.connection()).get_columns("model_calls")}


def _old_calls(names: set[str]) -> Table:
    """model_calls as a revision before 0038 has it: the settings in each row."""
    settings = [c for c in CallSetting.__table__.columns if c.name not in ("id", "key")]  # type: ignore[attr-defined]
    typed = [*ModelCall.__table__.columns, *settings]  # type: ignore[attr-defined]
    return Table("model_calls", MetaData(), *(c._copy() for c in typed if c.name in names))


def source_text_forms(engine: Engine) -> dict[int, tuple[str | None, int | None]]:
    """How the database holds each item's source text: its SQL type ('blob' when
    packed on SQLite, 'text') and its length in bytes; (None, None) for NULL."""
    if engine.dialect.name == "sqlite":
        query = "SELECT id, typeof(source_text), length(CAST(source_text AS BLOB)) FROM items"
    else:
        query = "SELECT id, pg_typeof(source_text)::text, octet_length(source_text) FROM items"
    with engine.connect() as conn:
        rows = conn.execute(text(query)).all()
    return {i: (None, None) if size is None else (kind, size) for i, kind, size in rows}


def parts_packed_alone(conn: Any) -> int:
    """The ledger's parts as the code before 0033 stored them, each packed by itself
    (today's ledger packs an article's block against its item's text): how many
    were rewritten."""
    sources = {
        i: sql_unpack(bytes(v) if isinstance(v, memoryview) else v)
        for i, v in conn.execute(text("SELECT id, source_text FROM items"))
    }
    rewritten = 0
    for key, content in conn.execute(text("SELECT hash, content FROM ledger_parts")).all():
        if bytes(content)[:1] == AGAINST_ITEM:
            part = AgainstItem.read(bytes(content))
            plain = pack_text(part.unpack(sources[part.item_id]))
            conn.execute(
                text("UPDATE ledger_parts SET content = :c WHERE hash = :h"), {"c": plain, "h": key}
            )
            rewritten += 1
    return rewritten


def parts_named_in_full(conn: Any) -> int:
    """The rows' requests as the code before 0034 stored them, naming each part by its
    full key (today's ledger names it by a prefix): how many were rewritten."""
    keys = [
        read_digest(h, "sha256:")
        for h in conn.execute(text("SELECT hash FROM ledger_parts")).scalars()
    ]
    rewritten = 0
    for call_id, stored in conn.execute(text("SELECT id, request_json FROM model_calls")).all():
        request = unpack_json(bytes(stored))
        if (again := named_in_full(request, keys)) != request:
            conn.execute(
                text("UPDATE model_calls SET request_json = :r WHERE id = :i"),
                {"r": pack_json(again), "i": call_id},
            )
            rewritten += 1
    return rewritten


def named_in_full(request: Any, keys: Any) -> Any:
    """A stored request naming its parts by their full `keys`, as before 0034."""
    full = {ledger.short(key): key for key in keys}

    def rename(value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {ledger.PART_KEY}:
            return {ledger.PART_KEY: full.get(value[ledger.PART_KEY], value[ledger.PART_KEY])}
        if isinstance(value, dict):
            return {k: rename(v) for k, v in value.items()}
        return [rename(v) for v in value] if isinstance(value, list) else value

    return rename(request)
