"""audit_events.item_id nullable: feed changes in the audit log

Revision ID: 0024_feed_audit_events
Revises: 0023_parts_without_rowid
Create Date: 2026-12-03

- A feed added, removed, disabled, enabled or renamed (the `feeds` commands, and
  the run's sync of config.toml's feeds) is an audit event with no item
  (`item_id` NULL), in the same hash chain (store/audit_chain.py `event_hash`:
  an item's event hashes exactly as before; a feed's has `"item_id": null`).
- SQLite: the table is rebuilt (batch mode), which drops its triggers; the
  append-only triggers are put back exactly as they were (their SQL is read from
  sqlite_master before the rebuild), and the indexes, the unique prev_hash one
  included, are made again by the rebuild.
- PostgreSQL: the owner's ALTER TABLE ... DROP NOT NULL; the table, its triggers
  and the runtime roles' grants stay as they are.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024_feed_audit_events"
down_revision = "0023_parts_without_rowid"
branch_labels = None
depends_on = None


def _item_id(nullable: bool) -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        change = "DROP" if nullable else "SET"
        op.execute(f"ALTER TABLE audit_events ALTER COLUMN item_id {change} NOT NULL")
        return
    triggers = bind.execute(
        sa.text(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' "
            "AND tbl_name = 'audit_events' ORDER BY name"
        )
    ).scalars()
    triggers = list(triggers)
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.alter_column("item_id", existing_type=sa.Integer(), nullable=nullable)
    for sql in triggers:  # the rebuild dropped them: the same ones again
        op.execute(sql)


def upgrade() -> None:
    _item_id(nullable=True)


def downgrade() -> None:
    feeds = (
        op.get_bind()
        .execute(sa.text("SELECT count(*) FROM audit_events WHERE item_id IS NULL"))
        .scalar_one()
    )
    if feeds:
        raise RuntimeError(
            f"audit_events holds {feeds} feed event(s) with no item: the audit log is "
            "append-only, so this revision cannot be undone on this database"
        )
    _item_id(nullable=False)
