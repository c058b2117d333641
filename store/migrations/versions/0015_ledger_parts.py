"""ledger parts: what repeats across model calls is stored once, by hash

Revision ID: 0015_ledger_parts
Revises: 0014_page_cut
Create Date: 2026-12-03

- ledger_parts (hash, content): a part of model requests that repeats across calls
  (the tool list, the system prompt, an instruction, an article's block), stored
  once under the SHA-256 of its canonical JSON text. New model_calls rows name
  their parts as {"$part": hash} in request_json (store/ledger.py); rows written
  before this revision keep their full request and read unchanged.
- The runtime role only reads and inserts parts (store/db.py); `copydesk migrate`
  grants it (open_store grants a new table to the roles that had the others).
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0015_ledger_parts"
down_revision = "0014_page_cut"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ledger_parts",
        sa.Column("hash", sa.String(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("hash"),
    )


def downgrade() -> None:
    """Every row gets its full request back before the parts go."""
    bind = op.get_bind()
    parts = dict(bind.execute(sa.text("SELECT hash, content FROM ledger_parts")).all())

    def put_back(obj: dict) -> object:
        if len(obj) == 1 and obj.get("$part") in parts:
            return json.loads(parts[obj["$part"]])
        return obj

    rows = bind.execute(
        sa.text("SELECT id, request_json FROM model_calls WHERE request_json IS NOT NULL")
    ).all()
    for row_id, stored in rows:
        raw = stored if isinstance(stored, str) else json.dumps(stored)
        if '"$part"' in raw:
            whole = json.dumps(json.loads(raw, object_hook=put_back))
            bind.execute(
                sa.text("UPDATE model_calls SET request_json = :r WHERE id = :i"),
                {"r": whole, "i": row_id},
            )
    op.drop_table("ledger_parts")
