"""The command line as an operator's scheduler and shell meet it (issue 22): one
compact JSON document per --json invocation, log levels, --version, shell
completion, the database a run uses, a mistyped database path, the feeds commands
people expect. Through the real console script (`run`) where the process is what is
tested (a run's JSON, its log lines, --version, completion, one refusal and one
feed command); the rest in this process (`run_here`, tests/cli_helpers.py), which
the first test holds to the console script's answers."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

import copydesk
from tests.cli_helpers import COPYDESK, cli_commands, cli_env, run, run_here
from tests.ops_helpers import make_desk, one_json_line


def test_in_process_commands_answer_as_the_console_script_does(tmp_path):
    """`run_here` gives what `run` gives (exit code, stdout, stderr; a JSON document's
    keys may come in another order), in the command's own folder, environment and
    time zone, and puts this process's back."""
    import os
    import time

    env = make_desk(tmp_path)
    env["TZ"] = "Asia/Kolkata"
    (tmp_path / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    before = (dict(os.environ), os.getcwd(), time.tzname)
    for args in (
        ["feeds", "remove", "nobody"],  # refused: one line on stderr, exit 1
        ["feeds", "list", "--json"],  # one JSON line, compared as JSON
        ["extract", "photo.png"],  # a file in the command's folder, not a page: exit 1
        ["python", "-c", "1"],  # not a command: Typer's usage error, exit 2
    ):
        real, here = run(args, tmp_path, env=env), run_here(args, tmp_path, env=env)
        if "--json" in args:
            assert one_json_line(here.stdout) == one_json_line(real.stdout)
            real.stdout = here.stdout
        assert (here.returncode, here.stdout, here.stderr) == (
            real.returncode,
            real.stdout,
            real.stderr,
        ), args
    said = run_here(["feeds", "add", "https://news.example.org/a.xml"], tmp_path, env=env)
    assert said.returncode == 0 and (tmp_path / "desk.db").exists()
    assert (dict(os.environ), os.getcwd(), time.tzname) == before


# --- one compact JSON document per invocation ------------------------------------


def test_run_publish_json_is_one_document_on_one_line(tmp_path):
    env = make_desk(tmp_path)
    done = run(["run", "--publish", "--json"], tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    report = one_json_line(done.stdout)
    assert report["totals"]["drafts"] == 2
    assert report["publish"] == {
        "published": [],
        "retracted": [],
        "delivered": [],
        "pending": [],
        "failed": [],
        "blocked": [],
        "held": [],
        "lost": [],
    }


def test_run_publish_json_keeps_the_run_when_publishing_cannot_start(tmp_path):
    """The run happened (drafts stored) before publishing was refused: its one JSON
    document is the run's report with the refusal under "publish", not a document
    saying no run took place."""
    env = make_desk(tmp_path)
    config = tmp_path / "config.toml"
    config.write_text(config.read_text().split("[[publish.targets]]")[0], encoding="utf-8")
    done = run(["run", "--publish", "--json"], tmp_path, env=env)
    assert done.returncode == 3, done.stderr
    report = one_json_line(done.stdout)
    with sqlite3.connect(tmp_path / "desk.db") as conn:
        (run_id,) = conn.execute("SELECT max(id) FROM runs").fetchone()
    assert report["run_id"] == run_id and report["totals"]["drafts"] == 2
    assert report["publish"] == {
        "status": "failed",
        "exit_code": 3,
        "error": "no publish targets configured: add [[publish.targets]] to config.toml",
    }
    assert done.stderr.rstrip().endswith(
        "copydesk: error: no publish targets configured: add [[publish.targets]] to config.toml"
    )


JSON_REPORTS = [
    ["init", "--json"],
    ["run", "--json"],
    ["feeds", "list", "--json"],
    ["feeds", "add", "https://news.example.org/rss.xml", "--json"],
    ["editor", "list", "--json"],
    ["stats", "--json"],
    ["discards", "--json"],
    ["publish", "--json"],
    ["watch", "--json"],
    ["replay", "--json"],
    ["audit", "--verify", "--json"],
    ["audit", "--feeds", "--json"],
    ["unchecked", "--json"],
]


@pytest.mark.parametrize(
    "args",
    JSON_REPORTS,
    ids=lambda args: "-".join(a for a in args if not a.startswith("http")),
)
def test_every_json_report_is_one_line(tmp_path, args):
    env = make_desk(tmp_path)
    done = run(args, tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    one_json_line(done.stdout)


# The commands the list above leaves out (they need a stored item, a file or a feed
# of their own), run in this order on one desk after a run.
OTHER_JSON_REPORTS = [
    ["migrate"],
    ["models"],
    ["doctor"],
    ["eval"],
    ["audit", "1"],
    ["audit", "--head"],
    ["submit", "http://10.20.30.40/story"],  # refused for its address: still a report
    ["extract", "page.html"],
    ["check", "source.txt", "draft.txt", "--url", "https://x.example.org/ferry"],
    ["feeds", "add", "https://news.example.org/wire.xml", "--name", "wire"],
    ["feeds", "rename", "wire", "agency"],
    ["feeds", "disable", "agency"],
    ["feeds", "enable", "agency"],
    ["feeds", "remove", "agency"],
]
# ...and those whose document is held to one line elsewhere: editor add, password and
# disable (test_editor_changes_json_are_one_line_each_naming_the_account), publish
# and retract (test_publish_and_retract_json_are_one_line_each), recheck
# (tests/test_rechecks.py: it needs a model to answer).
JSON_TESTED_ELSEWHERE = {"editor add", "editor password", "editor disable", "retract", "recheck"}


def test_the_other_json_reports_are_one_line_each(tmp_path):
    from tests.articles import FERRY, paragraphs_html

    env = make_desk(tmp_path)
    assert run_here(["run"], tmp_path, env=env).returncode == 0
    (tmp_path / "source.txt").write_text(FERRY, encoding="utf-8")
    (tmp_path / "draft.txt").write_text(FERRY.split(". ")[0] + ".", encoding="utf-8")
    (tmp_path / "page.html").write_text(
        f"<html><body><article>{paragraphs_html(FERRY)}</article></body></html>",
        encoding="utf-8",
    )
    for args in OTHER_JSON_REPORTS:
        done = run_here([*args, "--json"], tmp_path, env=env)
        assert done.returncode == 0, (args, done.stderr)
        one_json_line(done.stdout)


def test_every_command_with_json_has_its_one_line_test(tmp_path):
    """--json on every command that reports something (issue 22), each one checked
    by a test above: a command given --json later fails here until it is."""
    names = cli_commands()

    def command_of(args: list[str]) -> str:
        return max((n for n in names if args[: len(n.split())] == n.split()), key=len)

    tested = {command_of(args) for args in [*JSON_REPORTS, *OTHER_JSON_REPORTS]}
    with_json = {n for n in names if "--json" in run_here([*n.split(), "--help"], tmp_path).stdout}
    assert with_json == set(names) - {"demo", "review"}  # the two servers have none
    untested = with_json - tested - JSON_TESTED_ELSEWHERE
    assert not untested, sorted(untested)


def test_publish_and_retract_json_are_one_line_each(tmp_path):
    """The editor's withdrawal, as a script sees it: one document naming the targets told."""
    from store.db import open_store
    from tests.publish_helpers import approved_earlier

    env = make_desk(tmp_path)
    assert run_here(["run"], tmp_path, env=env).returncode == 0
    engine = open_store(f"sqlite:///{tmp_path / 'desk.db'}")
    try:
        (item_id,) = approved_earlier(engine, 1)  # out of the Undo window: publishable
    finally:
        engine.dispose()
    one_json_line(run_here(["publish", "--json"], tmp_path, env=env).stdout)
    done = run(
        ["retract", str(item_id), "--editor", "ann", "--reason", "wrong quay", "--json"],
        tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    document = one_json_line(done.stdout)
    assert str(item_id) in json.dumps(document) and "file" in json.dumps(document), document


def test_feeds_add_json_names_the_feed_and_whether_it_was_new(tmp_path):
    env = make_desk(tmp_path)
    url = "https://news.example.org/rss.xml"
    first = one_json_line(run_here(["feeds", "add", url, "--json"], tmp_path, env=env).stdout)
    again = run_here(["feeds", "add", url, "--name", "other", "--json"], tmp_path, env=env)
    assert first["url"] == url and first["added"] is True
    second = one_json_line(again.stdout)
    assert second["id"] == first["id"] and second["added"] is False
    assert second["name"] == first["name"]  # re-adding never renames


def test_editor_changes_json_are_one_line_each_naming_the_account(tmp_path):
    """`editor add`, `password` and `disable --json`: one document each, on stdout
    only, saying what was done to which account (never the password)."""
    env = make_desk(tmp_path)
    secret = "correct horse battery"
    added = run(
        ["editor", "add", "ines", "--role", "viewer", "--password-stdin", "--json"],
        tmp_path,
        env=env,
        stdin=secret + "\n",
    )
    assert added.returncode == 0, added.stderr
    assert one_json_line(added.stdout) == {
        "name": "ines",
        "role": "viewer",
        "enabled": True,
        "done": "added",
    }
    changed = run(
        ["editor", "password", "ines", "--password-stdin", "--json"],
        tmp_path,
        env=env,
        stdin="another long secret\n",
    )
    assert changed.returncode == 0, changed.stderr
    assert one_json_line(changed.stdout) == {
        "name": "ines",
        "role": "viewer",
        "enabled": True,
        "done": "password changed",
    }
    disabled = run_here(["editor", "disable", "ines", "--json"], tmp_path, env=env)
    assert disabled.returncode == 0, disabled.stderr
    assert one_json_line(disabled.stdout)["enabled"] is False
    assert secret not in added.stdout + added.stderr
    listed = one_json_line(run_here(["editor", "list", "--json"], tmp_path, env=env).stdout)
    assert [(e["name"], e["enabled"]) for e in listed] == [("ines", False)]


def test_editor_json_refusal_is_one_line_on_stderr_and_nothing_on_stdout(tmp_path):
    env = make_desk(tmp_path)
    done = run(["editor", "disable", "nobody", "--json"], tmp_path, env=env)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1


# --- log levels, version, completion ----------------------------------------------


def test_quiet_keeps_info_lines_off_and_verbose_adds_debug(tmp_path):
    def levels(args: list[str]) -> set[str]:
        done = run(["--log-format", "json", *args, "run", "--all", "--json"], tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        return {json.loads(line)["level"] for line in done.stderr.splitlines()}

    env = make_desk(tmp_path)
    assert "info" in levels([]) and "debug" not in levels([])
    assert levels(["--quiet"]) <= {"warning", "error"}
    assert "debug" in levels(["-v"])
    clash = run(["--quiet", "-v", "run"], tmp_path, env=env)
    assert clash.returncode == 2 and "--quiet" in clash.stderr


def test_version(tmp_path):
    done = run(["--version"], tmp_path)
    assert done.returncode == 0
    assert done.stdout == f"copydesk {copydesk.__version__}\n"


def test_shell_completion_completes_commands(tmp_path):
    # `--show-completion` finds the shell it prints a script for among its ancestor
    # processes (Typer asks shellingham, which walks the process tree), so it is asked
    # from a bash as a user asks it: the suite may run with no shell above it (started
    # detached, by cron or an IDE), where it printed "Shell  not supported.". The bash
    # runs it as a child, not by exec: the command after it keeps it from being the last.
    script = subprocess.run(
        ["bash", "-c", '"$0" --show-completion bash; status=$?; exit $status', COPYDESK],
        cwd=tmp_path,
        env=cli_env(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert script.returncode == 0, script.stderr
    assert "_COPYDESK_COMPLETE" in script.stdout
    env = cli_env(
        tmp_path, _COPYDESK_COMPLETE="complete_bash", COMP_WORDS="copydesk fe", COMP_CWORD="1"
    )
    done = run([], tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "feeds" in done.stdout.split()


# --- the database a command uses ---------------------------------------------------


def test_a_run_says_which_database_and_backend_it_uses(tmp_path):
    env = make_desk(tmp_path)
    done = run_here(["run"], tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    first = done.stderr.splitlines()[0]
    assert str(tmp_path / "desk.db") in first and "extractive" in first


def test_anthropic_backend_without_a_key_is_exit_3(tmp_path):
    env = make_desk(tmp_path, backend="anthropic")
    env.pop("ANTHROPIC_API_KEY", None)
    done = run_here(["run"], tmp_path, env=env)
    assert done.returncode == 3
    assert "ANTHROPIC_API_KEY" in done.stderr


# --- feeds ---------------------------------------------------------------------------


def feed_rows(folder: Path) -> list[tuple[str, str, int]]:
    with sqlite3.connect(folder / "desk.db") as conn:
        return list(conn.execute("SELECT name, url, enabled FROM feeds ORDER BY id"))


def test_feeds_rename_disable_enable_remove(tmp_path):
    env = make_desk(tmp_path)
    url = "https://news.example.org/rss.xml"
    assert run_here(["feeds", "add", url, "--name", "wire"], tmp_path, env=env).returncode == 0
    renamed = run_here(["feeds", "rename", "wire", "agency"], tmp_path, env=env)
    assert renamed.returncode == 0, renamed.stderr
    assert run_here(["feeds", "disable", "agency"], tmp_path, env=env).returncode == 0
    assert ("agency", url, 0) in feed_rows(tmp_path)
    assert run_here(["feeds", "enable", url], tmp_path, env=env).returncode == 0  # by URL too
    assert ("agency", url, 1) in feed_rows(tmp_path)
    removed = run_here(["feeds", "remove", "agency"], tmp_path, env=env)
    assert removed.returncode == 0, removed.stderr
    assert all(row[1] != url for row in feed_rows(tmp_path))
    missing = run_here(["feeds", "remove", "agency"], tmp_path, env=env)
    assert missing.returncode == 1 and "no feed named agency" in missing.stderr


def test_a_feed_declared_in_config_is_changed_there(tmp_path):
    env = make_desk(tmp_path)
    for args in (["remove", "local"], ["disable", "local"], ["rename", "local", "x"]):
        refused = run_here(["feeds", *args], tmp_path, env=env)
        assert refused.returncode == 1, refused.stderr
        assert "config.toml" in refused.stderr


def test_a_feed_with_items_is_kept_and_disable_suggested(tmp_path):
    env = make_desk(tmp_path)
    (tmp_path / "config.toml").write_text('[summarise]\nbackend = "extractive"\n')
    env["COPYDESK_DATABASE_URL"] = f"sqlite:///{tmp_path}/desk.db"
    added = run_here(
        ["feeds", "add", str(tmp_path / "feed.xml"), "--name", "copy"], tmp_path, env=env
    )
    assert added.returncode == 0, added.stderr
    assert run_here(["run", "--feed", "copy"], tmp_path, env=env).returncode == 0
    refused = run_here(["feeds", "remove", "copy"], tmp_path, env=env)
    assert refused.returncode == 1
    assert "feeds disable copy" in refused.stderr
    assert ("copy", str(tmp_path / "feed.xml"), 1) in feed_rows(tmp_path)


def test_re_adding_a_known_url_says_so_and_renames_nothing(tmp_path):
    env = make_desk(tmp_path)
    url = "https://news.example.org/rss.xml"
    assert run(["feeds", "add", url, "--name", "wire"], tmp_path, env=env).returncode == 0
    again = run(["feeds", "add", url, "--name", "other"], tmp_path, env=env)
    assert again.returncode == 0
    assert "already" in again.stdout + again.stderr and "wire" in again.stdout + again.stderr
    assert ("wire", url, 1) in feed_rows(tmp_path)


def test_a_feed_refused_for_its_private_address_names_allow_private(tmp_path):
    """The operator's own feed on an intranet address: the run refuses to fetch it
    and says, in the run's report and in `feeds list`, which setting lets it."""
    env = make_desk(tmp_path)
    url = "http://10.20.30.40/wire.xml"  # private (RFC 1918): never fetched, never reached
    assert run_here(["feeds", "add", url, "--name", "intranet"], tmp_path, env=env).returncode == 0
    ran = run_here(["run", "--feed", "intranet", "--json"], tmp_path, env=env)
    assert ran.returncode == 0, ran.stderr
    (reported,) = one_json_line(ran.stdout)["feeds"]
    listed = one_json_line(run_here(["feeds", "list", "--json"], tmp_path, env=env).stdout)
    (feed,) = [f for f in listed if f["name"] == "intranet"]
    for said in (json.dumps(reported), feed["last_error"]):
        assert "10.20.30.40" in said and "[ingest] allow_private" in said, said
