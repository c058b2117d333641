"""audit hash chain, no INSERT OR REPLACE on SQLite, sign-in failures of unknown names

Revision ID: 0003_audit_chain
Revises: 0001
Create Date: 2026-12-01

- audit_events gains `prev_hash` and `hash` (store/audit_chain.py); the events
  already there are chained in id order, so `copydesk audit --verify` covers them.
  A unique index on `prev_hash` makes a forked chain impossible.
- SQLite: `INSERT OR REPLACE` deletes the row it replaces without firing DELETE
  triggers, so it could rewrite an event. A BEFORE INSERT trigger refuses any
  insert that would collide with an existing event.
- sign_in_failures: throttling counters for names that are no account, which
  lived in the memory of each review server.
"""

import hashlib
import json
from datetime import UTC, datetime

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0003_audit_chain"
down_revision = "0001"
branch_labels = None
depends_on = None

APPEND_ONLY_MESSAGE = "audit_events is append-only"
GENESIS = "0" * 64
# INSERT OR REPLACE (and REPLACE INTO) delete the event they collide with, by id or
# by the unique prev_hash, without firing DELETE triggers: refuse the insert first.
NO_REPLACE_TRIGGER = (
    "CREATE TRIGGER audit_events_no_replace BEFORE INSERT ON audit_events "
    "WHEN EXISTS (SELECT 1 FROM audit_events WHERE id = NEW.id OR prev_hash = NEW.prev_hash) "
    "BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END"
)


def upgrade() -> None:
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("prev_hash", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("hash", sa.String(length=64), nullable=True))
    _chain_existing_events()
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.alter_column("prev_hash", existing_type=sa.String(length=64), nullable=False)
        batch_op.alter_column("hash", existing_type=sa.String(length=64), nullable=False)
        batch_op.create_index("ux_audit_events_prev_hash", ["prev_hash"], unique=True)
    if _sqlite():
        # Rebuilding the table (batch mode) dropped its triggers: put them back.
        _sqlite_append_only_triggers()
        op.execute(NO_REPLACE_TRIGGER)

    op.create_table(
        "sign_in_failures",
        sa.Column("name_key", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name_key"),
    )
    with op.batch_alter_table("sign_in_failures", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sign_in_failures_last_at"), ["last_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("sign_in_failures", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sign_in_failures_last_at"))
    op.drop_table("sign_in_failures")
    if _sqlite():
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_replace")
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.drop_index("ux_audit_events_prev_hash")
        batch_op.drop_column("hash")
        batch_op.drop_column("prev_hash")
    if _sqlite():
        _sqlite_append_only_triggers()


def _sqlite() -> bool:
    return op.get_bind().dialect.name == "sqlite"


def _sqlite_append_only_triggers() -> None:
    """0001's UPDATE and DELETE triggers, (re)created after a batch rebuild."""
    for verb in ("UPDATE", "DELETE"):
        op.execute(f"DROP TRIGGER IF EXISTS audit_events_no_{verb.lower()}")
        op.execute(
            f"CREATE TRIGGER audit_events_no_{verb.lower()} BEFORE {verb} ON audit_events "
            f"BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY_MESSAGE}'); END"
        )


def _chain_existing_events() -> None:
    """Hash the events already there, in id order. The append-only trigger is set
    aside for these UPDATEs only, inside this migration's transaction."""
    bind = op.get_bind()
    events = sa.table(
        "audit_events",
        sa.column("id", sa.Integer()),
        sa.column("item_id", sa.Integer()),
        sa.column("at", sa.DateTime(timezone=True)),
        sa.column("actor", sa.String()),
        sa.column("from_status", sa.String()),
        sa.column("to_status", sa.String()),
        sa.column("reason", sa.Text()),
        sa.column("details", sa.JSON()),
        sa.column("prev_hash", sa.String()),
        sa.column("hash", sa.String()),
    )
    rows = bind.execute(sa.select(events).order_by(events.c.id)).mappings().all()
    if not rows:
        return
    if _sqlite():
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_update")
    else:
        op.execute("ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_update_delete")
    prev = GENESIS
    for row in rows:
        digest = _event_hash(prev, row)
        bind.execute(
            events.update().where(events.c.id == row["id"]).values(prev_hash=prev, hash=digest)
        )
        prev = digest
    if _sqlite():
        _sqlite_append_only_triggers()
    else:
        op.execute("ALTER TABLE audit_events ENABLE TRIGGER audit_events_no_update_delete")


def _event_hash(prev_hash: str, row: sa.RowMapping) -> str:
    """A frozen copy of store.audit_chain.event_hash: a released migration must not
    change with the application's code (tests check that the two agree)."""
    at: datetime = row["at"]
    at = (at if at.tzinfo else at.replace(tzinfo=UTC)).astimezone(UTC)
    content = {
        "prev_hash": prev_hash,
        "item_id": row["item_id"],
        "at": at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "actor": row["actor"],
        "from_status": row["from_status"],
        "to_status": row["to_status"],
        "reason": row["reason"],
        "details": json.loads(json.dumps(row["details"])),
    }
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
