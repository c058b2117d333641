"""A published item is reopened as a correction by the review role only

Revision ID: 0017_correction_by_review_only
Revises: 0016_item_language
Create Date: 2026-12-03

Issue 21 made published -> draft a legal move (an editor reopens a published item as
a correction). Migration 0013's trigger refuses the workers' role every move that is
an editor's decision, but it was written when a published item could only be
retracted: this adds the new move to what the workers' role may not make, with the
same test of who may decide (`copydesk_may_decide`, migration 0013) and the same
error code. PostgreSQL only; nothing changes on SQLite.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017_correction_by_review_only"
down_revision = "0016_item_language"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    schema = bind.dialect.identifier_preparer.quote(
        bind.execute(sa.text("SELECT current_schema()")).scalar_one()
    )
    op.execute(
        f"""
        CREATE FUNCTION items_reopened_by_review_only() RETURNS trigger
        LANGUAGE plpgsql SET search_path = {schema}, pg_temp AS $$
        BEGIN
            IF OLD.status = 'published' AND NEW.status IS DISTINCT FROM OLD.status
                AND NOT copydesk_may_decide(current_user)
            THEN
                RAISE EXCEPTION 'role % may not move item % from % to %: an editor''s '
                    'decision (the review role)', current_user, OLD.id, OLD.status,
                    NEW.status USING ERRCODE = 'insufficient_privilege';
            END IF;
            RETURN NEW;
        END
        $$"""  # noqa: S608 - only the dialect-quoted schema name is interpolated
    )
    op.execute(
        "CREATE TRIGGER items_reopened_by_review_only BEFORE UPDATE ON items "
        "FOR EACH ROW EXECUTE FUNCTION items_reopened_by_review_only()"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER IF EXISTS items_reopened_by_review_only ON items")
    op.execute("DROP FUNCTION IF EXISTS items_reopened_by_review_only()")
