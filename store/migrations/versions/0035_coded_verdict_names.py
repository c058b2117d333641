"""gate verdicts store their gate, stage and mode as short codes

Revision ID: 0035_coded_verdict_names
Revises: 0034_short_part_names
Create Date: 2026-12-04

- Each verdict row spelled out its gate, stage and mode ("claims_supported",
  "check", "flag"): about 200 bytes an article of nine verdicts on
  bench/bench_ledger.py's 320-article run. Since this revision a row holds each
  name's position in its list (store/coded.py: "7", "2", "1"), and the model's
  `Coded` type reads it back as the name.
- Upgrade codes every row's names (one UPDATE a column); a name with no code is
  left as it is, as new rows store it. Downgrade writes the names back. No column
  changes, on either backend.
"""

from __future__ import annotations

from alembic import op

from store.coded import GATES, MODES, STAGES, recode

revision = "0035_coded_verdict_names"
down_revision = "0034_short_part_names"
branch_labels = None
depends_on = None

_COLUMNS = {"gate": GATES, "stage": STAGES, "mode": MODES}


def upgrade() -> None:
    for statement in recode("gate_verdicts", _COLUMNS, to_code=True):
        op.execute(statement)


def downgrade() -> None:
    for statement in recode("gate_verdicts", _COLUMNS, to_code=False):
        op.execute(statement)
