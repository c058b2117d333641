"""full-text search, near-duplicate signatures, assignment

Revision ID: 0008_search
Revises: 0007_presence
Create Date: 2026-12-01

- Search (store/search.py):
  - SQLite: FTS5 table `items_fts` with external content (`items`): headline,
    title, summary, source_text, source_url, original_url; triggers after insert,
    delete and an update of those columns keep it in step. Backfilled by FTS5's
    'rebuild'. NOTE: a later migration that rebuilds `items` in batch mode drops
    these triggers (SQLite drops a table's triggers with it): it must create them
    again (SQLITE_TRIGGERS below, copied into it).
  - PostgreSQL: `items.search_doc`, a stored generated tsvector (`simple`
    configuration) over the same text (the source text's first 100,000
    characters) cut into runs of letters and digits, with a GIN index. Adding
    the column computes it for every existing row. No extension
    is needed (the owner role runs this; CREATE EXTENSION pg_trgm would need a
    superuser on a normal install).
- Near duplicates (store/duplicates.py): `items.dup_signature` (a MinHash of the
  source's word shingles) and `item_dup_bands` (its LSH band buckets, indexed).
  Existing drafts get theirs from the store code of this revision's time.
- Assignment: `items.assigned_to` (indexed), the editor a draft is assigned to.
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0008_search"
down_revision = "0007_presence"
branch_labels = None
depends_on = None

COLUMNS = "headline, title, summary, source_text, source_url, original_url"
# Written out (not built from COLUMNS) so the SQL reads as it runs.
SQLITE_TRIGGERS = (
    """CREATE TRIGGER items_fts_ai AFTER INSERT ON items BEGIN
        INSERT INTO items_fts(rowid, headline, title, summary, source_text, source_url,
                              original_url)
        VALUES (new.id, new.headline, new.title, new.summary, new.source_text,
                new.source_url, new.original_url);
    END""",
    """CREATE TRIGGER items_fts_ad AFTER DELETE ON items BEGIN
        INSERT INTO items_fts(items_fts, rowid, headline, title, summary, source_text,
                              source_url, original_url)
        VALUES ('delete', old.id, old.headline, old.title, old.summary, old.source_text,
                old.source_url, old.original_url);
    END""",
    """CREATE TRIGGER items_fts_au AFTER UPDATE OF headline, title, summary, source_text,
        source_url, original_url ON items BEGIN
        INSERT INTO items_fts(items_fts, rowid, headline, title, summary, source_text,
                              source_url, original_url)
        VALUES ('delete', old.id, old.headline, old.title, old.summary, old.source_text,
                old.source_url, old.original_url);
        INSERT INTO items_fts(rowid, headline, title, summary, source_text, source_url,
                              original_url)
        VALUES (new.id, new.headline, new.title, new.summary, new.source_text,
                new.source_url, new.original_url);
    END""",
)

PG_DOCUMENT = """
    to_tsvector('simple'::regconfig, regexp_replace(
        coalesce(headline, '') || ' ' || coalesce(title, '') || ' ' ||
        coalesce(summary, '') || ' ' || left(coalesce(source_text, ''), 100000) || ' ' ||
        coalesce(source_url, '') || ' ' || coalesce(original_url, ''),
        '[^[:alnum:]]+', ' ', 'g'))
"""


def upgrade() -> None:
    with op.batch_alter_table("items") as batch:
        batch.add_column(
            sa.Column("assigned_to", sqlmodel.sql.sqltypes.AutoString(), nullable=True)
        )
        batch.add_column(sa.Column("dup_signature", sa.LargeBinary(), nullable=True))
        batch.create_index("ix_items_assigned_to", ["assigned_to"])
    op.create_table(
        "item_dup_bands",
        sa.Column("item_id", sa.Integer(), sa.ForeignKey("items.id"), primary_key=True),
        sa.Column("band", sa.Integer(), primary_key=True),
        sa.Column("bucket", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_item_dup_bands_bucket", "item_dup_bands", ["bucket"])
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            f"CREATE VIRTUAL TABLE items_fts USING fts5({COLUMNS}, content='items', "
            "content_rowid='id', tokenize='unicode61 remove_diacritics 2')"
        )
        for trigger in SQLITE_TRIGGERS:
            op.execute(trigger)
        op.execute("INSERT INTO items_fts(items_fts) VALUES ('rebuild')")
    else:
        op.execute(
            f"ALTER TABLE items ADD COLUMN search_doc tsvector GENERATED ALWAYS AS ({PG_DOCUMENT}) "
            "STORED"
        )
        op.execute("CREATE INDEX ix_items_search_doc ON items USING gin (search_doc)")
        # Finer statistics of the words: a rare word or a phrase of common words
        # is then judged rare, and searched through the index.
        op.execute("ALTER TABLE items ALTER COLUMN search_doc SET STATISTICS 1000")
    _backfill_signatures()


def _backfill_signatures() -> None:
    # The store's own code: the signature is whatever store/duplicates.py computes now.
    from store import duplicates

    conn = op.get_bind()
    items = sa.table(
        "items",
        sa.column("id", sa.Integer),
        sa.column("status", sa.String),
        sa.column("title", sa.String),
        sa.column("source_text", sa.Text),
    )
    rows = conn.execute(
        sa.select(items.c.id, items.c.title, items.c.source_text).where(
            items.c.status.in_(("draft", "approved", "rejected", "published"))
        )
    ).all()
    for item_id, title, source in rows:
        duplicates.write_signature(conn, item_id, title, source)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in ("items_fts_ai", "items_fts_ad", "items_fts_au"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS items_fts")
    else:
        op.execute("DROP INDEX IF EXISTS ix_items_search_doc")
        op.execute("ALTER TABLE items DROP COLUMN IF EXISTS search_doc")
    op.drop_index("ix_item_dup_bands_bucket", table_name="item_dup_bands")
    op.drop_table("item_dup_bands")
    with op.batch_alter_table("items") as batch:
        batch.drop_index("ix_items_assigned_to")
        batch.drop_column("dup_signature")
        batch.drop_column("assigned_to")
