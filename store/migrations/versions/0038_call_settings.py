"""model calls keep their settings once, in a call_settings row they reference

Revision ID: 0038_call_settings
Revises: 0037_verdict_sets
Create Date: 2026-12-04

- A model call's purpose, backend, model, API version, temperature, prompt version
  and prompt hash are the same for thousands of calls: about 120 bytes of every
  ledger row (issue 19 §4). Since this revision they are a `call_settings` row,
  unique by `key` (their canonical JSON text, store/call_settings.py), and
  `model_calls.settings_id` references it; `ModelCall` reads them through it.
- Upgrade makes one settings row per distinct set in `model_calls` and points every
  row at its own, then drops the seven columns. Values are copied as stored (the
  prompt hash as its 32 bytes on SQLite); only the key reads them. Downgrade copies
  them back into every row and drops the table. Both backends.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
import sqlmodel
from alembic import op

from store.call_settings import key
from store.packing import read_digest

revision = "0038_call_settings"
down_revision = "0037_verdict_sets"
branch_labels = None
depends_on = None

# The settings, in store/call_settings.py's order, and whether a row must have one.
SETTINGS = {
    "purpose": (sqlmodel.sql.sqltypes.AutoString, False),
    "backend": (sqlmodel.sql.sqltypes.AutoString, False),
    "model": (sqlmodel.sql.sqltypes.AutoString, True),
    "api_version": (sqlmodel.sql.sqltypes.AutoString, True),
    "temperature": (sa.Float, True),
    "prompt_version": (sqlmodel.sql.sqltypes.AutoString, True),
    "prompt_hash": (sqlmodel.sql.sqltypes.AutoString, True),
}
FOREIGN_KEY = "fk_model_calls_settings_id_call_settings"


def _columns() -> list[sa.Column[Any]]:
    return [sa.Column(name, kind(), nullable=null) for name, (kind, null) in SETTINGS.items()]


def _key(row: Any) -> str:
    """The key of a set as stored (the prompt hash read back as its hex text)."""
    values = dict(zip(SETTINGS, row, strict=True))
    values["prompt_hash"] = read_digest(values["prompt_hash"], "sha256:")
    return key(values)


def upgrade() -> None:
    settings = op.create_table(
        "call_settings",
        *_columns(),
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key"),
    )
    with op.batch_alter_table("model_calls") as batch:
        batch.add_column(sa.Column("settings_id", sa.Integer(), nullable=True))
    conn = op.get_bind()
    calls = sa.table("model_calls", sa.column("settings_id"), *map(sa.column, SETTINGS))
    found = conn.execute(sa.select(*(calls.c[name] for name in SETTINGS)).distinct()).all()
    for number, row in enumerate(found, 1):
        conn.execute(
            sa.insert(settings).values(
                id=number, key=_key(row), **dict(zip(SETTINGS, row, strict=True))
            )
        )
        # NULL-safe equality: `IS` on SQLite, `IS NOT DISTINCT FROM` on PostgreSQL
        # (https://docs.sqlalchemy.org/en/21/core/sqlelement.html, `is_not_distinct_from`).
        same = [calls.c[n].is_not_distinct_from(v) for n, v in zip(SETTINGS, row, strict=True)]
        conn.execute(sa.update(calls).where(*same).values(settings_id=number))
    if conn.dialect.name == "postgresql" and found:  # the ids above were given by hand
        conn.execute(
            sa.text("SELECT setval(pg_get_serial_sequence('call_settings', 'id'), :n)"),
            {"n": len(found)},
        )
    with op.batch_alter_table("model_calls") as batch:
        batch.alter_column("settings_id", existing_type=sa.Integer(), nullable=False)
        batch.create_foreign_key(FOREIGN_KEY, "call_settings", ["settings_id"], ["id"])
        for name in SETTINGS:
            batch.drop_column(name)


def downgrade() -> None:
    with op.batch_alter_table("model_calls") as batch:
        for name, (kind, _) in SETTINGS.items():
            batch.add_column(sa.Column(name, kind(), nullable=True))
    calls = sa.table("model_calls", sa.column("settings_id"), *map(sa.column, SETTINGS))
    settings = sa.table("call_settings", sa.column("id"), *map(sa.column, SETTINGS))
    op.get_bind().execute(
        sa.update(calls).values(
            {
                name: sa.select(settings.c[name])
                .where(settings.c.id == calls.c.settings_id)
                .scalar_subquery()
                for name in SETTINGS
            }
        )
    )
    with op.batch_alter_table("model_calls") as batch:
        for name, (kind, null) in SETTINGS.items():
            if not null:
                batch.alter_column(name, existing_type=kind(), nullable=False)
        batch.drop_constraint(FOREIGN_KEY, type_="foreignkey")
        batch.drop_column("settings_id")
    op.drop_table("call_settings")
