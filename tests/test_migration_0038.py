"""0038_call_settings: a database made at the revision before it, holding model calls
with their settings in every row (two sets, one with NULLs), comes out with one
`call_settings` row per set, every call reading its settings as before (the ORM, a
query by purpose, the audit's history) and the columns gone from `model_calls`.
Downgrading copies them back into every row. Both backends."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command
from sqlalchemy import text
from sqlmodel import Session, select

from store import ledger
from store.db import alembic_config, migrate, session_scope
from store.history import item_history
from store.models import CallRecord, ModelCall
from store.packing import Digest
from tests.migration_helpers import at_previous_revision, insert_article

REVISION = "0038_call_settings"
HASH = "sha256:" + "4b" * 32
SUMMARY = {
    "purpose": "summary",
    "backend": "anthropic:claude-haiku-4-5",
    "model": "claude-haiku-4-5-20251001",
    "api_version": "2023-06-01",
    "temperature": 0.0,
    "prompt_version": "summary-v2",
    "prompt_hash": HASH,
}
EXTRACTIVE = {
    "purpose": "summary",
    "backend": "extractive",
    "model": None,
    "api_version": None,
    "temperature": None,
    "prompt_version": None,
    "prompt_hash": None,
}
SETTINGS = tuple(SUMMARY)
# model_calls as the revision before this one has it: the settings in every row.
_OLD_CALLS = sa.table(
    "model_calls",
    sa.column("id"),
    sa.column("item_id"),
    sa.column("created_at"),
    sa.column("temperature_in_force"),
    sa.column("ok"),
    sa.column("state"),
    sa.column("input_tokens"),
    *(sa.column(n) for n in SETTINGS if n != "prompt_hash"),
    sa.column("prompt_hash", Digest("sha256:")),
)
ARTICLE = "The Quillan ferry company delayed its spring timetable by 12 days on Monday."


def _columns(engine, table: str) -> set[str]:  # type: ignore[no-untyped-def]
    return {c["name"] for c in sa.inspect(engine).get_columns(table)}


def _old_rows(engine) -> list[tuple]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        query = sa.select(_OLD_CALLS.c.id, *(_OLD_CALLS.c[n] for n in SETTINGS))
        return [tuple(r) for r in conn.execute(query.order_by(_OLD_CALLS.c.id))]


def test_upgrade_keeps_each_set_of_settings_once_and_downgrade_copies_them_back(
    db_url: str,
) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        item = insert_article(conn, 1, "draft", "Timetable delayed", ARTICLE, "https://q.test/1")
        at = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)
        for n, settings in enumerate([SUMMARY, SUMMARY, EXTRACTIVE, SUMMARY], 1):
            checks = n == 2
            conn.execute(
                sa.insert(_OLD_CALLS).values(
                    item_id=item,
                    created_at=at,
                    temperature_in_force=settings["temperature"] is not None,
                    ok=True,
                    state="done",
                    input_tokens=100 * n,
                    **(settings | ({"purpose": "checks"} if checks else {})),
                )
            )
    before = _old_rows(engine)
    assert len(before) == 4

    migrate(engine)

    assert not _columns(engine, "model_calls") & set(SETTINGS)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM call_settings")).scalar() == 3
        assert (
            conn.execute(text("SELECT count(DISTINCT settings_id) FROM model_calls")).scalar() == 3
        )
    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        assert [(r.id, *(getattr(r, n) for n in SETTINGS)) for r in rows] == before
        ids = [r.id for r in rows]
        assert [r.input_tokens for r in rows] == [100, 200, 300, 400]
        checks = session.exec(select(ModelCall.id).where(ModelCall.purpose == "checks")).all()
        assert checks == [ids[1]]
    history = item_history(engine, item)
    assert history is not None
    assert [(c.backend, c.model, c.prompt_hash) for c in history.calls][1:3] == [
        (SUMMARY["backend"], SUMMARY["model"], HASH),
        ("extractive", None, None),
    ]
    # A call made after the upgrade with settings already there takes their row;
    # new settings get a row of their own (the ids go on after the copied ones).
    with session_scope(engine) as session:
        calls = [
            CallRecord(**SUMMARY, request_json={"model": "m"}),
            CallRecord(**(SUMMARY | {"model": "claude-haiku-5-5"}), request_json={"model": "n"}),
        ]
        ledger.add(session, calls, item_id=item, run_id=None)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM call_settings")).scalar() == 4
        kept = list(conn.execute(text("SELECT settings_id FROM model_calls ORDER BY id")).scalars())
        assert kept[4] == kept[0] and kept[5] not in kept[:5], kept

    command.downgrade(alembic_config(engine), "0037_verdict_sets")
    assert "settings_id" not in _columns(engine, "model_calls")
    assert "call_settings" not in sa.inspect(engine).get_table_names()
    after = _old_rows(engine)
    assert after[:4] == before
    assert after[5][1:] == tuple((SUMMARY | {"model": "claude-haiku-5-5"}).values())
    engine.dispose()
