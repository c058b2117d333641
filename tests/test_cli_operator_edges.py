"""Issue 22, the operator's rough edges, through the real `copydesk` console script
(doctor's findings in this process, `run_here`: they are the same):
`doctor` fails where `run` would (backend "anthropic" without a key, no database),
and a missing file under `--read-only` is named by its path, not an internal URI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import cli_env, run, run_here


def _config(folder: Path, summarise: str = "") -> Path:
    config = folder / "config.toml"
    config.write_text(
        f'[database]\nurl = "sqlite:///desk.db"\n[summarise]\n{summarise}\n', encoding="utf-8"
    )
    return config


def _env(folder: Path) -> dict[str, str]:
    env = cli_env(folder)
    env.pop("ANTHROPIC_API_KEY", None)
    return env


def test_doctor_fails_like_run_for_backend_anthropic_without_a_key(tmp_path: Path) -> None:
    _config(tmp_path, 'backend = "anthropic"')
    env = _env(tmp_path)
    assert run_here(["init"], tmp_path, env).returncode == 0
    said = run_here(["doctor"], tmp_path, env)
    assert said.returncode == 1, said.stdout + said.stderr  # a check failed (exits.py)
    line = next(x for x in said.stdout.splitlines() if "ANTHROPIC_API_KEY" in x)
    assert line.startswith("FAIL") and "anthropic" in line and "exit 3" in line
    found = json.loads(run_here(["doctor", "--json"], tmp_path, env).stdout)
    assert found["ok"] is False
    key = next(f for f in found["findings"] if f["check"] == "ANTHROPIC_API_KEY")
    assert key["ok"] is False
    # The same run refuses: doctor said what run does.
    assert run_here(["run"], tmp_path, env).returncode == 3
    # "auto" without a key is the offline summariser: not a failure.
    _config(tmp_path, 'backend = "auto"')
    assert run_here(["doctor"], tmp_path, env).returncode == 0


def test_doctor_on_a_missing_database_names_init_and_creates_nothing(tmp_path: Path) -> None:
    _config(tmp_path)
    said = run(["doctor"], tmp_path, _env(tmp_path))
    assert said.returncode == 3, said.stdout + said.stderr  # as every command without one
    line = next(x for x in said.stdout.splitlines() if x.startswith("FAIL database"))
    assert str(tmp_path / "desk.db") in line and "copydesk init" in line
    assert "ok   ANTHROPIC_API_KEY" in said.stdout  # the other findings are still made
    error = said.stderr.strip().splitlines()
    assert len(error) == 1 and str(tmp_path / "desk.db") in error[0]
    assert "Traceback" not in said.stdout + said.stderr
    assert not (tmp_path / "desk.db").exists()


def test_read_only_on_a_missing_file_names_the_file_not_the_uri(tmp_path: Path) -> None:
    _config(tmp_path)
    said = run(["--read-only", "stats"], tmp_path, _env(tmp_path))
    assert said.returncode == 3
    lines = said.stderr.strip().splitlines()
    assert len(lines) == 1, said.stderr
    assert str(tmp_path / "desk.db") in lines[0] and "copydesk init" in lines[0]
    assert "file:" not in lines[0] and "mode=ro" not in lines[0]
    assert not (tmp_path / "desk.db").exists()


def test_extract_of_a_file_that_is_not_html_is_one_line_and_exit_1(tmp_path: Path) -> None:
    picture = tmp_path / "photo.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10")
    said = run(["extract", str(picture)], tmp_path, _env(tmp_path))
    assert said.returncode == 1, said.stdout + said.stderr  # exits.py: extract 1
    lines = said.stderr.strip().splitlines()
    assert len(lines) == 1, said.stderr
    assert str(picture) in lines[0] and "not an HTML page" in lines[0]
    assert "parsed tree" not in said.stdout + said.stderr  # trafilatura's own log line
    assert said.stdout == ""


def test_run_on_a_read_only_database_is_one_plain_line_naming_it(tmp_path: Path) -> None:
    _config(tmp_path)
    env = _env(tmp_path)
    assert run(["init"], tmp_path, env).returncode == 0
    database = tmp_path / "desk.db"
    env["COPYDESK_DATABASE_URL"] = f"sqlite:///file:{database}?mode=ro&uri=true"
    said = run(["run"], tmp_path, env)
    assert said.returncode == 3, said.stdout + said.stderr
    errors = [x for x in said.stderr.splitlines() if "error" in x.lower()]
    assert len(errors) == 1, said.stderr
    assert str(database) in errors[0] and "cannot be written" in errors[0]
    assert "write permission" in errors[0]  # the fix
    assert "OperationalError" not in said.stderr and "crashed" not in said.stderr
    assert "file:" not in errors[0] and "Traceback" not in said.stderr


def test_init_in_an_empty_folder_says_one_line_and_no_library_warning(tmp_path: Path) -> None:
    """A newcomer's first command: `database ready: ...` and nothing else, not
    SQLAlchemy's reflection warning with a path into the standard library."""
    done = run(["init"], tmp_path, _env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr and ".py:" not in done.stderr, done.stderr
    assert done.stdout.strip() == "database ready: sqlite:///copydesk.db"
