"""runs.error keeps no SQL parameters (issue 26): a run that crashes on a database
error records the driver's message, not the statement nor the values it carried
(article text, or anything a row held)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import exc as sa_exc
from sqlmodel import Session, select

from copydesk.services.pipeline.intake import Intake
from store.db import open_store
from store.models import Run
from tests.publish_helpers import cli, write_config

# Each test's database starts at the newest schema (conftest's migrated template), so
# `copydesk init` in write_config migrates nothing; what init makes is the same.
pytestmark = pytest.mark.usefixtures("migrated")

SECRET = "Harrowby-council-minutes-not-for-publication"


def test_a_database_crash_is_recorded_without_its_parameters(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(self, feeds):  # type: ignore[no-untyped-def]
        raise sa_exc.IntegrityError(
            "INSERT INTO items (dedup_key, summary) VALUES (?, ?)",
            ("https://news.example.test/1", SECRET),
            ValueError("UNIQUE constraint failed: items.dedup_key"),
        )

    monkeypatch.setattr(Intake, "ingest_feeds", crash)
    config = write_config(tmp_path, db_url, targets=())
    result = cli(config, "run", "--json")
    assert result.exit_code == 3
    assert SECRET not in result.output and "INSERT INTO" not in result.output
    engine = open_store(db_url)
    try:
        with Session(engine) as session:
            [run] = session.exec(select(Run)).all()
    finally:
        engine.dispose()
    assert run.error == "run crashed: ValueError: UNIQUE constraint failed: items.dedup_key"
    assert SECRET not in (run.error or "")
