"""ledger_parts keyed by its hash alone: SQLite WITHOUT ROWID

Revision ID: 0023_parts_without_rowid
Revises: 0022_packed_dictionary
Create Date: 2026-12-03

- ledger_parts (store/ledger.py: a request's repeated parts, by SHA-256) was a
  rowid table whose key, the 71-character hash, SQLite also kept in an automatic
  index: every hash stored twice, beside a rowid nothing reads. On SQLite it is
  made again WITHOUT ROWID (https://www.sqlite.org/withoutrowid.html), same
  columns, key and rows. Measured on bench/bench_ledger.py (320 drafts): the
  parts went from 0.6x to 0.49x the source text.
- PostgreSQL keeps its table: nothing changes there.
"""

from __future__ import annotations

from alembic import op

revision = "0023_parts_without_rowid"
down_revision = "0022_packed_dictionary"
branch_labels = None
depends_on = None


def _made_again(without_rowid: bool) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    suffix = " WITHOUT ROWID" if without_rowid else ""
    op.execute(
        "CREATE TABLE ledger_parts_again (hash VARCHAR NOT NULL, content BLOB NOT NULL, "
        f"PRIMARY KEY (hash)){suffix}"
    )
    op.execute(
        "INSERT INTO ledger_parts_again (hash, content) SELECT hash, content FROM ledger_parts"
    )
    op.drop_table("ledger_parts")
    op.rename_table("ledger_parts_again", "ledger_parts")


def upgrade() -> None:
    _made_again(True)


def downgrade() -> None:
    _made_again(False)
