"""The deploy files as an operator installs them: deploy/cron.example's lines run by
/bin/sh as cron would, and deploy/systemd/ through `systemd-analyze verify` and
`systemd-analyze security`.

The systemd checks need systemd-analyze (Debian: the `systemd` package; .ci/run
installs it and sets COPYDESK_REQUIRE_SYSTEMD=1). Without it they are skipped, unless
COPYDESK_REQUIRE_SYSTEMD=1, then they fail.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.cli_helpers import COPYDESK, run

ROOT = Path(__file__).resolve().parent.parent
CRON = ROOT / "deploy" / "cron.example"
UNITS = ROOT / "deploy" / "systemd"
INSTALLED_SCRIPT = "/srv/copydesk/.venv/bin/copydesk"
MAX_EXPOSURE = 2.5
# What the operator's scheduled job is made of: each must be a unit of its own with a
# timer, so that one failing (a target down) never keeps another from running.
SCHEDULED = {
    "copydesk-run": ["run", "--publish"],
    "copydesk-watch": ["watch"],
    "copydesk-audit-verify": ["audit", "--verify"],
    "copydesk-feeds-check": ["feeds", "list", "--check"],
}


# --- cron ------------------------------------------------------------------------


def cron_jobs() -> list[str]:
    """The command of every job line of cron.example (five time fields, then it)."""
    jobs = []
    for line in CRON.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#") or re.match(r"^\w+=", line):
            continue
        fields = line.split(None, 5)
        assert len(fields) == 6, f"not a cron line: {line!r}"
        jobs.append(fields[5])
    return jobs


def installed(tmp_path: Path) -> tuple[Path, Path, dict[str, Path]]:
    """A copydesk installation as the comments of cron.example describe it, under
    tmp_path: the release with its .venv, /etc/copydesk/env with plain KEY=value lines,
    the log folder. Returns the release folder, the database and the replacements
    that move cron.example's paths here."""
    release = tmp_path / "srv"
    release.mkdir()
    (release / ".venv").symlink_to(Path(COPYDESK).parent.parent)
    state = tmp_path / "state"
    state.mkdir()
    (tmp_path / "log").mkdir()
    config = state / "config.toml"
    config.write_text(
        '[[publish.targets]]\nname = "file"\nkind = "jsonl"\npath = "items.jsonl"\n',
        encoding="utf-8",
    )
    database = state / "production.db"
    env_file = tmp_path / "env"
    # Plain lines, as systemd's EnvironmentFile= reads them: no `export`.
    env_file.write_text(
        f"COPYDESK_CONFIG={config}\nCOPYDESK_DATABASE_URL=sqlite:///{database}\n",
        encoding="utf-8",
    )
    paths = {
        "/srv/copydesk": release,
        "/etc/copydesk/env": env_file,
        "/var/log/copydesk": tmp_path / "log",
    }
    return release, database, paths


def cron_shell(command: str, paths: dict[str, Path], home: Path) -> subprocess.CompletedProcess:
    for old, new in paths.items():
        command = command.replace(old, str(new))
    # cron's environment: next to nothing (crontab(5)); nothing of copydesk's.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", "SHELL": "/bin/sh"}
    return subprocess.run(
        ["/bin/sh", "-c", command], env=env, capture_output=True, text=True, timeout=300
    )


def runs_in(database: Path) -> list[str]:
    with sqlite3.connect(database) as conn:
        return [row[0] for row in conn.execute("SELECT command FROM runs ORDER BY id")]


def test_cron_lines_give_copydesk_the_environment_file(tmp_path):
    release, database, paths = installed(tmp_path)
    assert run(["init"], tmp_path, env={**os.environ, **_env_of(paths)}).returncode == 0
    jobs = cron_jobs()
    assert jobs, "cron.example has no job lines"
    for job in jobs:
        done = cron_shell(job, paths, tmp_path)
        # Cron mails what a line prints: a job that did its job prints nothing.
        assert done.returncode == 0, (job, done.stdout, done.stderr)
        assert done.stdout == "" and done.stderr == "", (job, done.stdout, done.stderr)
    # The run used the database the environment file names, not ./copydesk.db
    # beside the release (what `. env` without `set -a` silently did).
    assert not (release / "copydesk.db").exists()
    assert "run" in runs_in(database)


def test_cron_schedules_the_whole_job_each_on_its_own_line():
    jobs = cron_jobs()
    for name, words in SCHEDULED.items():
        matching = [j for j in jobs if " ".join(words) in j]
        assert len(matching) == 1, f"{name}: {' '.join(words)} is not one cron line of its own"
        assert "set -a" in matching[0], f"{name}: the environment file is not exported"
    # `run --publish && watch` skipped watch exactly when a target was down.
    assert not any("run" in j and " watch" in j for j in jobs)


def test_cron_line_of_a_failing_command_prints_one_line(tmp_path):
    """A command that fails: cron gets one line to mail, the log gets the reason."""
    _release, _database, paths = installed(tmp_path)
    env = {**os.environ, **_env_of(paths)}
    assert run(["init"], tmp_path, env=env).returncode == 0
    Path(env["COPYDESK_CONFIG"]).write_text("", encoding="utf-8")  # no publish targets: exit 3
    job = next(j for j in cron_jobs() if "run --publish" in j)
    done = cron_shell(job, paths, tmp_path)
    assert done.returncode == 0, done.stderr  # the `|| echo` took the exit code
    log = tmp_path / "log" / "run.log"
    assert done.stdout == f"copydesk run --publish: exit 3, see {log}\n"
    assert "no publish targets configured" in log.read_text(encoding="utf-8")


def _env_of(paths: dict[str, Path]) -> dict[str, str]:
    pairs = paths["/etc/copydesk/env"].read_text(encoding="utf-8").splitlines()
    return dict(line.split("=", 1) for line in pairs if line)


# --- systemd ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        if os.environ.get("COPYDESK_REQUIRE_SYSTEMD") == "1":
            pytest.fail("COPYDESK_REQUIRE_SYSTEMD=1 but systemd-analyze is missing", pytrace=False)
        pytest.skip("systemd-analyze is not installed (Debian: apt-get install systemd)")
    return found


@pytest.fixture
def unit_dir(tmp_path) -> Path:
    """deploy/systemd/ as installed, with the console script where this test's venv has
    it (verify checks that ExecStart= names an executable file)."""
    target = tmp_path / "units"
    shutil.copytree(UNITS, target)
    for path in target.glob("*.service"):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(INSTALLED_SCRIPT, COPYDESK), encoding="utf-8")
    return target


def unit_files(kind: str) -> list[Path]:
    return sorted(UNITS.glob(f"*.{kind}"))


def settings(path: Path) -> dict[str, list[str]]:
    """Every KEY=value of a unit file (and of its drop-ins for services), in order."""
    found: dict[str, list[str]] = {}
    files = [path]
    if path.suffix == ".service":
        files += sorted((UNITS / "copydesk-.service.d").glob("*.conf"))
    for file in files:
        for line in file.read_text(encoding="utf-8").splitlines():
            if "=" in line and not line.startswith(("#", "[")):
                key, value = line.split("=", 1)
                found.setdefault(key.strip(), []).append(value.strip())
    return found


def test_systemd_verify_is_clean(analyze, unit_dir):
    names = sorted(str(p) for p in unit_dir.iterdir() if p.suffix in (".service", ".timer"))
    done = subprocess.run(
        [analyze, "verify", "--man=no", *names], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout == "" and done.stderr == "", (
        done.stdout + done.stderr
    )


def test_systemd_verify_catches_a_mistake(analyze, unit_dir):
    """The check above can fail: a misspelt setting is reported."""
    timer = unit_dir / "copydesk-watch.timer"
    timer.write_text(timer.read_text().replace("OnCalendar=", "OnCalender="), encoding="utf-8")
    done = subprocess.run(
        [analyze, "verify", "--man=no", str(timer)], capture_output=True, text=True, timeout=120
    )
    assert "OnCalender" in done.stdout + done.stderr


@pytest.mark.parametrize("service", [p.name for p in unit_files("service")])
def test_systemd_exposure_at_most_2_5(analyze, unit_dir, service):
    done = subprocess.run(
        [analyze, "security", "--offline=true", "--no-pager", str(unit_dir / service)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d)", done.stdout)
    assert match, done.stdout + done.stderr
    assert float(match.group(1)) <= MAX_EXPOSURE, done.stdout


def test_systemd_exposure_without_the_drop_in_is_unsafe(analyze, unit_dir):
    """The score above comes from copydesk-.service.d/: without it a unit is exposed."""
    shutil.rmtree(unit_dir / "copydesk-.service.d")
    done = subprocess.run(
        [
            analyze,
            "security",
            "--offline=true",
            "--no-pager",
            str(unit_dir / "copydesk-run.service"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d)", done.stdout)
    assert match and float(match.group(1)) > 5, done.stdout


def test_systemd_schedules_the_whole_job():
    for name, words in SCHEDULED.items():
        service = settings(UNITS / f"{name}.service")
        assert (UNITS / f"{name}.timer").exists(), f"{name} has no timer"
        (exec_start,) = service["ExecStart"]
        assert exec_start.split()[0] == INSTALLED_SCRIPT
        assert " ".join(words) in exec_start, exec_start
        assert service["Type"] == ["oneshot"]
        assert service["EnvironmentFile"] == ["/etc/copydesk/env"]


@pytest.mark.parametrize("service", [p.name for p in unit_files("service")])
def test_systemd_every_service_has_a_start_timeout_and_an_alert(service):
    found = settings(UNITS / service)
    assert found.get("TimeoutStartSec"), f"{service}: no TimeoutStartSec="
    assert found["NoNewPrivileges"] == ["yes"] and found["ProtectSystem"] == ["strict"]
    if service == "copydesk-failure@.service":
        assert "OnFailure" not in found  # an alert that fails starts no other
    else:
        assert found.get("OnFailure") == ["copydesk-failure@%n.service"], service


@pytest.mark.parametrize("timer", [p.name for p in unit_files("timer")])
def test_systemd_persistent_only_with_on_calendar(timer):
    found = settings(UNITS / timer)
    if found.get("Persistent") == ["true"]:
        assert found.get("OnCalendar"), f"{timer}: Persistent= does nothing without OnCalendar="


@pytest.mark.parametrize("name", [*SCHEDULED, "copydesk-review"])
def test_systemd_exec_start_is_a_valid_command_line(tmp_path, name):
    """What ExecStart= runs is accepted by the CLI (a misspelt option would be exit 2)."""
    (exec_start,) = settings(UNITS / f"{name}.service")["ExecStart"]
    assert exec_start.startswith(INSTALLED_SCRIPT)
    done = run([*exec_start.split()[1:], "--help"], tmp_path)
    assert done.returncode == 0, done.stderr


def seconds(span: str) -> float:
    """A systemd time span of one unit ("100ms", "5s", "10min"; systemd.time(7))."""
    number, unit = re.fullmatch(r"(\d+)\s*(ms|s|min|h)?", span).groups()  # type: ignore[union-attr]
    return int(number) * {"ms": 0.001, "s": 1, None: 1, "min": 60, "h": 3600}[unit]


@pytest.mark.parametrize("service", [p.name for p in unit_files("service")])
def test_systemd_a_restarting_service_gives_up_and_alerts(service):
    """A service that restarts itself (the review server) and fails at once every
    time (the port taken: exit 3) must reach its start limit, enter the failed state
    and start the alert: with RestartSec=5s, systemd's default limit (5 starts in
    10 s) is never reached and it would restart forever, unseen (systemd.unit(5),
    StartLimitIntervalSec=, StartLimitBurst=)."""
    found = settings(UNITS / service)
    if not found.get("Restart") or found["Restart"] == ["no"]:
        return
    (interval,) = found.get("StartLimitIntervalSec", ["10s"])
    (burst,) = found.get("StartLimitBurst", ["5"])
    (pause,) = found.get("RestartSec", ["100ms"])
    assert seconds(interval) > int(burst) * seconds(pause), (interval, burst, pause)
    assert found.get("OnFailure") == ["copydesk-failure@%n.service"]
