"""claims with leases, run heartbeats, feeds cut by their size cap

Revision ID: 0004_leases
Revises: 0005_publish
Create Date: 2026-12-01

- items.claimed_by / claim_until: the run that holds a `new` item and until when.
  Taking a claim also bumps items.version, so a worker whose claim was taken over
  fails the status machine's compare-and-set instead of writing over the new holder.
- feeds.claimed_by / claim_until / claim_token: the run polling a feed; the token
  fences the write of what the poll brought.
- feeds.entries_read / truncated: how many entries the last poll read, and whether
  the body was cut by `max_feed_bytes` (so some entries were never seen).
- runs.heartbeat_at / worker: a live run writes its counts and this time as it
  goes; a run with no end and an old heartbeat did not finish.
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_leases"
down_revision = "0005_publish"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("items") as batch:
        batch.add_column(sa.Column("claimed_by", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("claim_until", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("feeds") as batch:
        batch.add_column(sa.Column("claimed_by", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("claim_until", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("claim_token", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("entries_read", sa.Integer(), nullable=True))
        batch.add_column(
            sa.Column("truncated", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("worker", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("worker")
        batch.drop_column("heartbeat_at")
    with op.batch_alter_table("feeds") as batch:
        for name in ("truncated", "entries_read", "claim_token", "claim_until", "claimed_by"):
            batch.drop_column(name)
    with op.batch_alter_table("items") as batch:
        batch.drop_column("claim_until")
        batch.drop_column("claimed_by")
