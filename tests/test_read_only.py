"""An auditor opens the database read-only (issue 26): `copydesk --read-only` reads
(audit --verify, stats) and any write is refused by the database itself, in one
line; nothing is migrated."""

from __future__ import annotations

from pathlib import Path

from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from store.db import open_store
from store.models import Feed
from tests.publish_helpers import run_pipeline, write_config


def test_read_only_reads_and_refuses_writes(db_url: str, tmp_path: Path) -> None:
    config = write_config(tmp_path, db_url, targets=())
    run_pipeline(config)

    def ro(*args: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(app, ["--read-only", "--config", str(config), *args])

    ok = ro("audit", "--verify")
    assert ok.exit_code == 0, ok.output
    assert "audit chain ok" in ok.stdout
    assert ro("stats").exit_code == 0
    refused = ro("feeds", "add", "https://news.example.test/feed.xml", "--name", "extra")
    assert refused.exit_code != 0
    [line] = refused.stderr.strip().splitlines()
    assert "read-only" in line.lower() or "readonly" in line.lower(), line
    assert "Traceback" not in refused.output
    engine = open_store(db_url)
    try:
        with Session(engine) as session:
            names = session.exec(select(Feed.name)).all()
    finally:
        engine.dispose()
    assert "extra" not in names
