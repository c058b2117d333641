"""items.language: the language a feed or page declares is stored with its item

Revision ID: 0016_item_language
Revises: 0015_ledger_parts
Create Date: 2026-12-03

- items.language: the primary language subtag ("de", "fr") the feed (RSS
  <language>, Atom xml:lang, JSON Feed language) or the article's page (<html lang>,
  content-language, og:locale) declares, read at ingest (ingest/language.py). The
  draft gates read numbers and dates in that language instead of detecting it from
  the text (issue 20). NULL: nothing declared, or an item from before this
  revision; the gates then detect the language, as they did before.
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0016_item_language"
down_revision = "0015_ledger_parts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("items", sa.Column("language", sqlmodel.sql.sqltypes.AutoString(), nullable=True))


def downgrade() -> None:
    op.drop_column("items", "language")
