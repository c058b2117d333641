"""conftest's seeded templates (`seeded`, issue 23): a test gets a copy of a database
the real pipeline filled once per test process, backend and key; what it writes
stays in its copy; the seed's own files stay out of the test's folder."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from store import status
from store.audit_chain import verify
from store.db import open_store, session_scope
from store.models import Item
from tests.conftest import Seeded
from tests.review_seed import seed_queue

SEEDS: list[str] = []  # the URL of every database `_seed` filled in this process


def _seed(engine: Engine) -> dict[str, int]:
    SEEDS.append(engine.url.render_as_string(hide_password=False))
    return seed_queue(engine, ("bridge", "school"))


def _statuses(url: str) -> dict[int, str]:
    engine = open_store(url)
    try:
        with Session(engine) as session:
            return {row.id: row.status for row in session.execute(select(Item.id, Item.status))}
    finally:
        engine.dispose()


def test_a_copy_holds_the_seed_and_what_a_test_writes_stays_in_it(
    db_url: str, migrated: None, seeded: Seeded
) -> None:
    backend = db_url.partition(":")[0]
    ids = seeded(db_url, "test_seeded", _seed)
    assert _statuses(db_url) == {ids["bridge"]: "draft", ids["school"]: "draft"}

    engine = open_store(db_url)
    with session_scope(engine) as session:
        item = session.get(Item, ids["bridge"])
        status.move(session, item, status.DISCARDED, actor="test", reason="written in the copy")
    assert verify(engine).ok  # the copy's audit chain goes on from the seed's
    engine.dispose()
    assert _statuses(db_url)[ids["bridge"]] == "discarded"

    # Copied again: the seed as it was (the write above never reached the template),
    # and the seed did not run again.
    assert seeded(db_url, "test_seeded", _seed) == ids
    assert _statuses(db_url) == {ids["bridge"]: "draft", ids["school"]: "draft"}
    assert len([url for url in SEEDS if url.startswith(backend)]) == 1

    # The seed's pipeline run wrote its audit anchor in a folder of its own.
    assert not (Path.cwd() / "audit.anchor").exists()
    assert all(str(Path.cwd()) not in url for url in SEEDS)
