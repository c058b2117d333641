"""runtime roles: workers cannot decide (PostgreSQL)

Revision ID: 0013_runtime_roles
Revises: 0012_publish_fence
Create Date: 2026-12-03

- runtime_roles (role_name, kind "worker" or "review"): which database role the
  ingestion workers run as and which the review server runs as. Written by
  `copydesk migrate` as the owner (store/db.py); the runtime roles only read it.
- PostgreSQL only: triggers that let a role decide only when it owns the tables
  (or is a member of the owner) or is registered as "review". Any other role (a
  worker, or a role nobody registered):
  - on items: cannot insert a decided item, move an item to approved, rejected or
    retracted, move it out of approved (except to published) or rejected, change
    who decided, change an approved, published or retracted item's text or source,
    or change any text without bumping the version (an editor's compare-and-set
    on the version then sees it);
  - on audit_events: cannot insert a move to approved, rejected or retracted.
  The functions name their schema (search_path ends with pg_temp): a temporary
  table or function of the caller's cannot stand in for runtime_roles. The
  registry is read by `copydesk_may_decide(current_user)`, SECURITY DEFINER (the
  owner's right to read it, whatever was granted), told whom to look up by the
  trigger, which runs as the caller; the answer is all it gives away.
- Roles that already held UPDATE on items when this runs are registered as
  "review": a deployment with one runtime role keeps working until
  `copydesk migrate --review-role` names the review server's role.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_runtime_roles"
down_revision = "0012_publish_fence"
branch_labels = None
depends_on = None

DECIDED = "'approved', 'rejected', 'published', 'retracted'"
TEXT = "headline, summary, source_url, source_text, title"


def _functions(schema: str) -> list[str]:
    settings = f"SET search_path = {schema}, pg_temp"
    refused = "USING ERRCODE = 'insufficient_privilege'"
    # The schema's name is quoted by the dialect; nothing else is interpolated.
    return [
        f"""
        CREATE FUNCTION copydesk_may_decide(who name) RETURNS boolean
        LANGUAGE sql STABLE SECURITY DEFINER {settings} AS $$
            SELECT pg_has_role(who, c.relowner, 'USAGE')
                OR EXISTS (SELECT 1 FROM runtime_roles r
                           WHERE r.role_name = who AND r.kind = 'review')
            FROM pg_class c WHERE c.oid = '{schema}.items'::regclass
        $$""",  # noqa: S608
        f"""
        CREATE FUNCTION items_decided_by_review_only() RETURNS trigger
        LANGUAGE plpgsql {settings} AS $$
        BEGIN
            IF copydesk_may_decide(current_user) THEN
                RETURN NEW;
            END IF;
            IF TG_OP = 'INSERT' THEN
                IF NEW.status IN ({DECIDED}) OR NEW.decided_by IS NOT NULL THEN
                    RAISE EXCEPTION 'role % may not create a decided item: only the review '
                        'role decides', current_user {refused};
                END IF;
                RETURN NEW;
            END IF;
            IF NEW.status IS DISTINCT FROM OLD.status AND (
                NEW.status IN ('approved', 'rejected', 'retracted')
                OR OLD.status = 'rejected'
                OR (OLD.status = 'approved' AND NEW.status <> 'published')
            ) THEN
                RAISE EXCEPTION 'role % may not move item % from % to %: an editor''s decision '
                    '(the review role)', current_user, OLD.id, OLD.status, NEW.status {refused};
            END IF;
            IF (NEW.decided_by, NEW.decided_at) IS DISTINCT FROM (OLD.decided_by, OLD.decided_at)
            THEN
                RAISE EXCEPTION 'role % may not change who decided item %', current_user, OLD.id
                    {refused};
            END IF;
            IF OLD.status IN ('approved', 'published', 'retracted')
                AND ({", ".join(f"NEW.{c}" for c in TEXT.split(", "))})
                    IS DISTINCT FROM ({", ".join(f"OLD.{c}" for c in TEXT.split(", "))})
            THEN
                RAISE EXCEPTION 'role % may not change the text of % item %', current_user,
                    OLD.status, OLD.id {refused};
            END IF;
            IF (NEW.headline, NEW.summary) IS DISTINCT FROM (OLD.headline, OLD.summary)
                AND NEW.version <= OLD.version
            THEN
                RAISE EXCEPTION 'role % may not change the text of item % without a new version',
                    current_user, OLD.id {refused};
            END IF;
            RETURN NEW;
        END
        $$""",
        f"""
        CREATE FUNCTION audit_events_decided_by_review_only() RETURNS trigger
        LANGUAGE plpgsql {settings} AS $$
        BEGIN
            IF NEW.to_status IN ('approved', 'rejected', 'retracted')
                AND NOT copydesk_may_decide(current_user)
            THEN
                RAISE EXCEPTION 'role % may not record a move to %: only the review role decides',
                    current_user, NEW.to_status {refused};
            END IF;
            RETURN NEW;
        END
        $$""",
    ]


def upgrade() -> None:
    op.create_table(
        "runtime_roles",
        sa.Column("role_name", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.CheckConstraint("kind IN ('worker', 'review')", name="ck_runtime_roles_kind"),
        sa.PrimaryKeyConstraint("role_name"),
    )
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    schema = bind.dialect.identifier_preparer.quote(
        bind.execute(sa.text("SELECT current_schema()")).scalar_one()
    )
    for statement in _functions(schema):
        op.execute(statement)
    op.execute(
        "CREATE TRIGGER items_decided_by_review_only BEFORE INSERT OR UPDATE ON items "
        "FOR EACH ROW EXECUTE FUNCTION items_decided_by_review_only()"
    )
    op.execute(
        "CREATE TRIGGER audit_events_decided_by_review_only BEFORE INSERT ON audit_events "
        "FOR EACH ROW EXECUTE FUNCTION audit_events_decided_by_review_only()"
    )
    # What the roles could do before stays possible until `copydesk migrate` says otherwise.
    op.execute(
        "INSERT INTO runtime_roles (role_name, kind) "
        "SELECT DISTINCT pg_get_userbyid(a.grantee), 'review' "
        "FROM pg_class c, aclexplode(c.relacl) a "
        "WHERE c.oid = 'items'::regclass AND a.privilege_type = 'UPDATE' "
        "AND a.grantee <> c.relowner AND a.grantee <> 0"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_events_decided_by_review_only ON audit_events")
        op.execute("DROP TRIGGER IF EXISTS items_decided_by_review_only ON items")
        op.execute("DROP FUNCTION IF EXISTS audit_events_decided_by_review_only()")
        op.execute("DROP FUNCTION IF EXISTS items_decided_by_review_only()")
        op.execute("DROP FUNCTION IF EXISTS copydesk_may_decide(name)")
    op.drop_table("runtime_roles")
