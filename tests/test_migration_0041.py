"""0041_waiting_items_index: a database at 0040 holding a done item and two waiting
ones comes out with `ix_items_waiting`, which holds the waiting items only; a run's
claim then takes the waiting ones, oldest first, and not the done one. Downgrading
drops the index and keeps the items. Both backends."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa
from alembic import command
from sqlmodel import Session

from store import claims
from store.db import alembic_config
from tests.db_catalog import index_names
from tests.migration_helpers import at_previous_revision, insert_article

REVISION = "0041_waiting_items_index"
ARTICLES = [
    ("draft", "Quarry road reopens at Ebbing", "The quarry road at Ebbing reopened."),
    ("new", "Ebbing library extends its hours", "The library now opens at eight."),
    ("new", "Ebbing rowing club elects a captain", "The club elected Mara Venn."),
]


def test_upgrade_indexes_the_waiting_items_and_downgrade_drops_the_index(db_url: str) -> None:
    engine = at_previous_revision(db_url, REVISION)
    with engine.begin() as conn:
        ids = [
            insert_article(conn, n, status, title, source, f"https://ebbing.example.test/{n}")
            for n, (status, title, source) in enumerate(ARTICLES)
        ]
    assert "ix_items_waiting" not in index_names(engine, "items")

    config = alembic_config(engine)
    command.upgrade(config, REVISION)

    assert "ix_items_waiting" in index_names(engine, "items")
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            definition = conn.execute(
                sa.text("SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_items_waiting'")
            ).scalar_one()
        else:
            definition = conn.execute(
                sa.text("SELECT sql FROM sqlite_master WHERE name = 'ix_items_waiting'")
            ).scalar_one()
    assert "status" in definition and "'new'" in definition, definition
    with Session(engine) as session:
        claimed = claims.claim_items(session, 1, 16, timedelta(minutes=10))
        session.commit()
    assert [c.item_id for c in claimed] == ids[1:]

    command.downgrade(config, "0040_verdicts_into_sets")
    assert "ix_items_waiting" not in index_names(engine, "items")
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM items")).scalar() == 3
    engine.dispose()
