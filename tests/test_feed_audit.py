"""Feed changes in the audit log (issue 22): every feed added, renamed, disabled,
enabled or removed, by a feeds command or by the run's sync of config.toml, is an
audit event with no item, in the same hash chain: `audit --verify` covers it, the
anchor follows it, `audit --feeds` shows it, and an item's history and the records
check are as before. Through the CLI's entry point, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from copydesk.cli import app
from store import audit_chain
from store.db import open_store

FEED = "https://saltmere.example.test/news.xml"
OTHER = "https://saltmere.example.test/notices.xml"


def _config(folder: Path, db_url: str, feeds: str = "") -> Path:
    config = folder / "config.toml"
    config.write_text(
        f'[database]\nurl = "{db_url}"\n[summarise]\nbackend = "extractive"\n'
        f'[runs]\naudit_anchor = "audit.anchor"\n{feeds}',
        encoding="utf-8",
    )
    return config


def _cli(config: Path, *args: str):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(app, ["--config", str(config), *args])
    assert result.exit_code == 0, result.output
    return result


def _feed_events(config: Path) -> list[dict]:  # type: ignore[type-arg]
    return json.loads(_cli(config, "audit", "--feeds", "--json").stdout)


def test_feeds_commands_are_audited_in_the_chain(db_url: str, tmp_path: Path) -> None:
    config = _config(tmp_path, db_url)
    _cli(config, "init")
    assert _feed_events(config) == []
    _cli(config, "feeds", "add", FEED, "--name", "Saltmere News")
    _cli(config, "feeds", "add", FEED)  # known already: no change, no event
    _cli(config, "feeds", "rename", "Saltmere News", "Saltmere Gazette")
    _cli(config, "feeds", "disable", "Saltmere Gazette")
    _cli(config, "feeds", "disable", "Saltmere Gazette")  # disabled already: no event
    _cli(config, "feeds", "enable", FEED)
    _cli(config, "feeds", "add", OTHER, "--name", "Notices")
    _cli(config, "feeds", "remove", "Notices")
    events = _feed_events(config)
    changes = [(e["to_status"], e["details"]["name"], e["details"].get("before")) for e in events]
    assert changes == [
        ("feed added", "Saltmere News", None),
        ("feed renamed", "Saltmere Gazette", {"name": "Saltmere News"}),
        ("feed disabled", "Saltmere Gazette", None),
        ("feed enabled", "Saltmere Gazette", None),
        ("feed added", "Notices", None),
        ("feed removed", "Notices", None),
    ]
    assert all(e["actor"].startswith("cli") and e["from_status"] is None for e in events)
    assert {e["details"]["url"] for e in events} == {FEED, OTHER}
    verified = _cli(config, "audit", "--verify")
    assert f"audit chain ok: {len(events)} events" in verified.stdout
    engine = open_store(db_url)
    try:  # the anchor followed the last feed change
        head = audit_chain.head(engine)
        assert head.event_id == events[-1]["id"]
        assert audit_chain.read_anchor(tmp_path / "audit.anchor") == head
    finally:
        engine.dispose()
    shown = _cli(config, "audit", "--feeds").stdout
    assert "feed renamed" in shown and "Saltmere News" in shown and "cli" in shown


def test_the_config_sync_is_audited_once_per_change(db_url: str, tmp_path: Path) -> None:
    declared = '[[feeds]]\nurl = "{url}"\nname = "{name}"\nenabled = {enabled}\n'
    config = _config(tmp_path, db_url)
    _cli(config, "init")
    for name, enabled in (
        ("Saltmere News", "true"),
        ("Saltmere News", "true"),  # nothing changed: nothing recorded
        ("Saltmere Gazette", "true"),
        ("Saltmere Gazette", "false"),
    ):
        feeds = declared.format(url=FEED, name=name, enabled=enabled)
        _config(tmp_path, db_url, feeds)
        _cli(config, "feeds", "list")  # syncs config.toml's feeds, as a run does
    events = _feed_events(config)
    assert [(e["actor"], e["to_status"], e["details"].get("before")) for e in events] == [
        ("config", "feed added", None),
        ("config", "feed renamed", {"name": "Saltmere News"}),
        ("config", "feed disabled", None),
    ]
    assert "audit chain ok: 3 events" in _cli(config, "audit", "--verify").stdout


def test_feed_events_go_with_no_item_option(db_url: str, tmp_path: Path) -> None:
    config = _config(tmp_path, db_url)
    _cli(config, "init")
    refused = CliRunner().invoke(app, ["--config", str(config), "audit", "1", "--feeds"])
    assert refused.exit_code == 2
    assert "--feeds" in refused.output


def test_the_runtime_role_records_its_feed_changes(
    pg_url: str, pg_runtime_url: str, tmp_path: Path
) -> None:
    """On PostgreSQL the workers' role (no ownership) adds and disables feeds, and
    its events join the chain the owner's migration left: `copydesk migrate` as the
    owner, then the feeds commands as the runtime role."""
    import os

    config = _config(tmp_path, pg_runtime_url)
    migrated = CliRunner().invoke(
        app,
        ["--config", str(config), "migrate"],
        env={"COPYDESK_MIGRATE_DATABASE_URL": pg_url, **os.environ},
    )
    assert migrated.exit_code == 0, migrated.output
    _cli(config, "feeds", "add", FEED, "--name", "Saltmere News")
    _cli(config, "feeds", "disable", "Saltmere News")
    events = _feed_events(config)
    assert [e["to_status"] for e in events] == ["feed added", "feed disabled"]
    assert "audit chain ok: 2 events" in _cli(config, "audit", "--verify").stdout
