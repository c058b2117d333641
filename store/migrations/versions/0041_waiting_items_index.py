"""an index of the items waiting to be claimed: a claim no longer walks the done ones

Revision ID: 0041_waiting_items_index
Revises: 0040_verdicts_into_sets
Create Date: 2026-12-05

A run claims the oldest waiting items (`store/claims.py`: status `new`, in id order,
a few at a time). No index served that order: PostgreSQL walked the primary key and
dropped every item already past `new` (3,200 items, half done: 1,600 rows read and
thrown away a claim, 2.2 ms of the server's time at 32,000), so a run's claims cost
in all the square of the store's size (issue 24, session 17). `ix_items_waiting` is
a partial index of the waiting items' ids only: a claim reads as many entries as it
takes, however many items are done, and the index stays as small as the backlog.
Both backends support partial indexes
(https://www.postgresql.org/docs/15/indexes-partial.html,
https://www.sqlite.org/partialindex.html). Downgrade drops it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0041_waiting_items_index"
down_revision = "0040_verdicts_into_sets"
branch_labels = None
depends_on = None

INDEX = "ix_items_waiting"
WAITING = sa.text("status = 'new'")


def upgrade() -> None:
    op.create_index(INDEX, "items", ["id"], postgresql_where=WAITING, sqlite_where=WAITING)


def downgrade() -> None:
    op.drop_index(INDEX, table_name="items")
