"""each verdict set carries the item's current state after it: blocking, flagging, checks_since

Revision ID: 0039_verdict_set_summary
Revises: 0038_call_settings
Create Date: 2026-12-04

The queue's filters (flagged, blocked, checks did not run), the re-check's choice and
`copydesk stats` need each gate's current verdict of an item: with verdicts packed per
attempt, SQL cannot pick the newest verdict of each gate. So store/verdicts.py `write`
computes the item's state after the attempt, with the desk's rules (the source's
newest verdicts, and the last edit's, else the pipeline's, on the text), and stores it
beside the set; every filter reads only the item's newest set:

- `blocking`: the gates failing in `discard` on the current text (comma-separated);
- `flagging`: the gates that ran and failed in `flag`;
- `checks_since`: the start of the oldest streak of failed model checks;
- `checks_state` (0037's column) now holds the newest verdict of every model check
  ("gate:ran", "gate:ran:problems", "gate:not run", "gate:failed[:transient]").

From here a set's lists name each gate and stage by its store/coded.py code ("7" for
claims_supported), as `gate_verdicts` does since 0035: about 45 bytes a set.

Nothing wrote sets before this revision (the writers write `gate_verdicts` rows), so
the columns are added empty. Downgrade drops them.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0039_verdict_set_summary"
down_revision = "0038_call_settings"
branch_labels = None
depends_on = None

COLUMNS = ("blocking", "flagging")


def upgrade() -> None:
    with op.batch_alter_table("verdict_sets") as batch:
        for name in COLUMNS:
            batch.add_column(sa.Column(name, sa.Text(), nullable=True))
        batch.add_column(sa.Column("checks_since", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("verdict_sets") as batch:
        for name in (*COLUMNS, "checks_since"):
            batch.drop_column(name)
