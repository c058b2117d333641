"""`copydesk run` as a scheduler meets it: config paths, typos, logs, and bugs
confined to their item."""

from __future__ import annotations

import json

from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from copydesk.config import FeedSettings, Settings, load_settings
from copydesk.services.pipeline import Pipeline
from copydesk.services.pipeline.intake import Intake
from ingest.fetch import Fetcher
from store.db import open_store
from store.models import Item, Run
from summarise.extractive import ExtractiveSummariser
from tests.articles import local_feed


def test_relative_paths_in_config_mean_next_to_the_config(tmp_path, monkeypatch):
    desk = tmp_path / "desk"
    desk.mkdir()
    local_feed(desk)
    (desk / "config.toml").write_text(
        '[database]\nurl = "sqlite:///desk.db"\n\n[summarise]\nbackend = "extractive"\n\n'
        '[[feeds]]\nname = "local"\nurl = "feed.xml"\n'
    )
    elsewhere = tmp_path / "cron"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert CliRunner().invoke(app, ["-c", str(desk / "config.toml"), "init"]).exit_code == 0
    result = CliRunner().invoke(app, ["-c", str(desk / "config.toml"), "run", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["totals"]["drafts"] == 2
    assert (desk / "desk.db").is_file()
    assert not list(elsewhere.iterdir())  # nothing created where the job happened to run


def test_environment_database_url_stays_relative_to_the_working_directory(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[database]\nurl = "sqlite:///a.db"\n')
    assert load_settings(config).database.url == f"sqlite:///{tmp_path / 'a.db'}"
    env = {"COPYDESK_DATABASE_URL": "sqlite:///b.db"}
    assert load_settings(config, env=env).database.url == "sqlite:///b.db"


def test_only_temperature_zero_or_model_default(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[summarise]\ntemperature = 0.7\n")
    result = CliRunner().invoke(app, ["-c", str(config), "run"])
    assert result.exit_code == 3
    assert "summarise.temperature" in result.stderr


def test_an_unknown_feed_name_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    result = CliRunner().invoke(app, ["run", "--feed", "no-such-feed"])
    assert result.exit_code == 2
    assert "no feed named no-such-feed" in result.stderr


def test_no_feeds_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    result = CliRunner().invoke(app, ["run"])
    assert result.exit_code == 0
    assert "no feeds to poll" in result.stdout


def test_missing_database_folder_is_one_line_and_exit_3(tmp_path, monkeypatch):
    monkeypatch.setenv("COPYDESK_DATABASE_URL", f"sqlite:///{tmp_path}/typo/desk.db")
    result = CliRunner().invoke(app, ["run"])
    assert result.exit_code == 3
    assert result.stderr.strip().splitlines() == [
        f"copydesk: error: database folder {tmp_path}/typo does not exist"
    ]


def test_unknown_log_format_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["--log-format", "yaml", "run"])
    assert result.exit_code == 2


def test_json_log_mode_writes_only_json_to_stderr(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    local_feed(tmp_path)
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    CliRunner().invoke(app, ["feeds", "add", "feed.xml", "--name", "local"])
    result = CliRunner().invoke(app, ["--log-format", "json", "run"])
    assert result.exit_code == 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # every line is JSON
    assert any("summariser: extractive" in r["msg"] for r in records)
    failed = CliRunner().invoke(app, ["--log-format", "json", "run", "--feed", "nope"])
    record = json.loads(failed.stderr.strip().splitlines()[-1])
    assert record["level"] == "error" and record["exit_status"] == 2


def test_feeds_add_refuses_what_is_not_a_feed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    for bad in ("javascript:alert(1)", "ftp://example.org/feed", "missing.xml", "https://"):
        result = CliRunner().invoke(app, ["feeds", "add", bad])
        assert result.exit_code == 2, bad
    local_feed(tmp_path)
    first = CliRunner().invoke(app, ["feeds", "add", "feed.xml", "--name", "old"])
    again = CliRunner().invoke(app, ["feeds", "add", str(tmp_path / "feed.xml"), "-n", "new"])
    assert first.exit_code == again.exit_code == 0
    listing = json.loads(CliRunner().invoke(app, ["feeds", "list", "--json"]).stdout)
    # Adding a known URL again changes nothing (issue 22: it used to rename silently).
    assert "known already; nothing changed" in again.stdout
    assert [(f["name"], f["url"]) for f in listing] == [("old", str(tmp_path / "feed.xml"))]


class Flaky(ExtractiveSummariser):
    """A bug that strikes one article: the rest of the run must not notice."""

    name = "flaky"

    def summarise(self, article):
        if "ferry" in (article.url or ""):
            raise ZeroDivisionError("a bug in one item")
        return super().summarise(article)


def test_a_bug_in_one_item_is_confined_to_it(tmp_path, sqlite_url):
    settings = Settings(feeds=[FeedSettings(url=str(local_feed(tmp_path)), name="local")])
    engine = open_store(sqlite_url)
    with Fetcher(settings.ingest) as fetcher:
        report = Pipeline(settings, engine, Flaky(), fetcher).run()
    assert report.fatal is None
    with Session(engine) as session:
        items = {i.entry_id: i for i in session.exec(select(Item))}
        run = session.exec(select(Run)).one()
    assert items["g2"].status == "draft"
    assert items["g1"].status == "error"
    assert "ZeroDivisionError: a bug in one item" in items["g1"].last_error
    assert run.exit_status == 0


class Broken(ExtractiveSummariser):
    name = "broken"


def test_a_crashed_run_is_recorded_as_such(tmp_path, sqlite_url, monkeypatch):
    settings = Settings(feeds=[FeedSettings(url=str(local_feed(tmp_path)), name="local")])
    engine = open_store(sqlite_url)

    def explode(self):
        raise RuntimeError("database went away")

    monkeypatch.setattr(Intake, "feeds", lambda self, only: explode(self))
    with Fetcher(settings.ingest) as fetcher:
        try:
            Pipeline(settings, engine, Broken(), fetcher).run()
        except RuntimeError:
            pass
        else:
            raise AssertionError("the crash was swallowed")
    with Session(engine) as session:
        run = session.exec(select(Run)).one()
    assert run.exit_status == 3
    assert run.error == "run crashed: RuntimeError: database went away"


def test_a_run_keeps_what_was_loaded_before_it_out_of_the_collectors_scans(
    tmp_path, monkeypatch
) -> None:
    """Issue 24 (CPU per article): the modules, models and schemas loaded before a
    run are moved out of the cyclic collector's scans once, before its first item
    (`gc.freeze`): each full collection otherwise walked every one of them again,
    about 1.4 ms per article of a 640-article model run on PostgreSQL. Only once
    per process: a second run (`watch`) freezes nothing of the first run's."""
    import gc

    monkeypatch.chdir(tmp_path)
    local_feed(tmp_path)
    (tmp_path / "config.toml").write_text(
        '[database]\nurl = "sqlite:///desk.db"\n\n[summarise]\nbackend = "extractive"\n\n'
        '[[feeds]]\nname = "local"\nurl = "feed.xml"\n'
    )
    gc.unfreeze()
    try:
        assert CliRunner().invoke(app, ["init"]).exit_code == 0
        assert gc.get_freeze_count() == 0
        result = CliRunner().invoke(app, ["run", "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["totals"]["drafts"] == 2
        frozen = gc.get_freeze_count()
        assert frozen > 0
        result = CliRunner().invoke(app, ["run", "--json"])
        assert result.exit_code == 0, result.output
        assert gc.get_freeze_count() <= frozen  # (frozen objects freed by refcount leave it)
    finally:
        gc.unfreeze()
