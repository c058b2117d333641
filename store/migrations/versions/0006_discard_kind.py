"""items.discard_kind: why a discarded item was discarded, as a column

Revision ID: 0006_discard_kind
Revises: 0004_leases
Create Date: 2026-12-01

- items.discard_kind (indexed): the first failed hard gate, or duplicate / robots /
  refused / fetch / model / internal / other (store/discard_kinds.py). The status
  machine sets it on the move to `discarded`; nothing parses reason text any more.
- Backfill: each discarded item takes the kind from its latest discard event's
  details["discard_kind"] (the pipeline wrote it there), and where that is absent,
  from the opening of the event's reason, as the review stats used to match it.
  The matching lives here only, frozen as it was when this revision was written.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0006_discard_kind"
down_revision = "0004_leases"
branch_labels = None
depends_on = None

# The kinds as this revision knows them (store/discard_kinds.py may grow later).
GATES = (
    "source_url",
    "source_length",
    "numbers_grounded",
    "quotes_verbatim",
    "names_grounded",
    "dates_grounded",
    "claims_supported",
    "faithfulness",
)
NO_GATE = ("duplicate", "robots", "refused", "fetch", "model", "internal", "other")
KINDS = frozenset(GATES) | frozenset(NO_GATE)
# The reason openings the pipeline writes, checked in this order after the gates.
OPENINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("duplicate", ("duplicate of ",)),
    ("robots", ("robots.txt",)),
    ("refused", ("link refused",)),
    ("model", ("summariser failed", "model failed")),
    (
        "fetch",
        (
            "page fetch failed",
            "fetch failed",
            "the link is ",
            "text extraction failed",
            "the feed carries no text",
        ),
    ),
    ("internal", ("processing failed",)),
)


def kind_of(reason: str | None, details: Any) -> str:
    """The kind of one discard event: its recorded kind, else its reason's opening."""
    recorded = details.get("discard_kind") if isinstance(details, dict) else None
    if recorded in KINDS:
        return str(recorded)
    replayed = details.get("replay") if isinstance(details, dict) else None
    gates = replayed.get("gates") if isinstance(replayed, dict) else None
    if isinstance(gates, list) and gates and gates[0] in GATES:
        return str(gates[0])  # `copydesk replay` discarded a draft: its first failed gate
    text = reason or ""
    for gate in sorted(GATES, key=len, reverse=True):  # a longer name first
        if text.startswith(f"{gate}:"):
            return gate
    for kind, openings in OPENINGS:
        if text.startswith(openings):
            return kind
    return "other"


def upgrade() -> None:
    with op.batch_alter_table("items") as batch:
        batch.add_column(
            sa.Column("discard_kind", sqlmodel.sql.sqltypes.AutoString(), nullable=True)
        )
        batch.create_index("ix_items_discard_kind", ["discard_kind"])
    events = sa.table(
        "audit_events",
        sa.column("id", sa.Integer),
        sa.column("item_id", sa.Integer),
        sa.column("to_status", sa.String),
        sa.column("reason", sa.Text),
        sa.column("details", sa.JSON),
    )
    items = sa.table(
        "items",
        sa.column("id", sa.Integer),
        sa.column("status", sa.String),
        sa.column("discard_kind", sa.String),
    )
    latest = (
        sa.select(sa.func.max(events.c.id))
        .where(events.c.to_status == "discarded")
        .group_by(events.c.item_id)
        .scalar_subquery()
    )
    conn = op.get_bind()
    rows = conn.execute(
        sa.select(items.c.id, events.c.reason, events.c.details)
        .join(events, events.c.item_id == items.c.id)
        .where(items.c.status == "discarded", events.c.id.in_(latest))
    ).all()
    if rows:
        conn.execute(
            items.update()
            .where(items.c.id == sa.bindparam("item"))
            .values(discard_kind=sa.bindparam("kind")),
            [{"item": i, "kind": kind_of(reason, details)} for i, reason, details in rows],
        )
    # A discarded item without a discard event (none should exist): kind unknown.
    conn.execute(
        items.update()
        .where(items.c.status == "discarded", items.c.discard_kind.is_(None))
        .values(discard_kind="other")
    )


def downgrade() -> None:
    with op.batch_alter_table("items") as batch:
        batch.drop_index("ix_items_discard_kind")
        batch.drop_column("discard_kind")
