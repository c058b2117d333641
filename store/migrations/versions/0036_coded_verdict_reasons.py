"""gate verdicts store a passing gate's fixed reason as a short code

Revision ID: 0036_coded_verdict_reasons
Revises: 0035_coded_verdict_names
Create Date: 2026-12-04

- A passing gate that found nothing to check gives the same reason every time
  ("no attributed quotation the source also quotes"): about 100 bytes an article
  on bench/bench_ledger.py's 320-article run. Since this revision such a reason is
  stored as its position in `store.coded.REASONS`; every other reason as it is.
- Upgrade codes the rows that hold one of those reasons; downgrade writes the
  words back. No column changes, on either backend.
"""

from __future__ import annotations

from alembic import op

from store.coded import REASONS, recode

revision = "0036_coded_verdict_reasons"
down_revision = "0035_coded_verdict_names"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for statement in recode("gate_verdicts", {"reason": REASONS}, to_code=True):
        op.execute(statement)


def downgrade() -> None:
    for statement in recode("gate_verdicts", {"reason": REASONS}, to_code=False):
        op.execute(statement)
