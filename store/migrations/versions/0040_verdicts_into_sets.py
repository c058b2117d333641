"""gate verdicts move into verdict sets: the writers write sets from here on

Revision ID: 0040_verdicts_into_sets
Revises: 0039_verdict_set_summary
Create Date: 2026-12-04

From this revision the pipeline, the re-check, the replay and the desk's edits write
each attempt's verdicts as one `verdict_sets` row (store/verdicts.py `write`). The
filters read an item's verdicts in rows or in sets and assume never both, so the rows
already stored move into sets here, one an attempt (item, run, time), in the order
written, each with the item's state after it (`store/verdicts.py` `move_rows_to_sets`,
500 items a transaction-step), and leave `gate_verdicts` empty. The table itself stays
until its last readers go (issue 19 §4).

Downgrade moves every set back into rows (`move_sets_to_rows`), so that 0037's
downgrade, which drops `verdict_sets`, loses nothing.
This revision runs today's store/verdicts.py and models (it needs `summary`'s rules);
a later change to them must keep this revision's upgrade test green.
"""

from __future__ import annotations

from alembic import op
from sqlmodel import Session

revision = "0040_verdicts_into_sets"
down_revision = "0039_verdict_set_summary"
branch_labels = None
depends_on = None


def upgrade() -> None:
    _in_session("move_rows_to_sets")


def downgrade() -> None:
    _in_session("move_sets_to_rows")


def _in_session(move: str) -> None:
    from store import verdicts

    # A Session on the migration's own connection and transaction: with "rollback_only"
    # its commit flushes and leaves the transaction to Alembic (SQLAlchemy 2.0, "Joining
    # a Session into an External Transaction", orm/session_transaction.html).
    with Session(bind=op.get_bind(), join_transaction_mode="rollback_only") as session:
        getattr(verdicts, move)(session)
        session.commit()
