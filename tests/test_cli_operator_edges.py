"""Issue 22, the operator's rough edges, through the real `copydesk` console script:
`doctor` fails where `run` would (backend "anthropic" without a key, no database),
and a missing file under `--read-only` is named by its path, not an internal URI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import cli_env, run


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
    assert run(["init"], tmp_path, env).returncode == 0
    said = run(["doctor"], tmp_path, env)
    assert said.returncode == 1, said.stdout + said.stderr  # a check failed (exits.py)
    line = next(x for x in said.stdout.splitlines() if "ANTHROPIC_API_KEY" in x)
    assert line.startswith("FAIL") and "anthropic" in line and "exit 3" in line
    found = json.loads(run(["doctor", "--json"], tmp_path, env).stdout)
    assert found["ok"] is False
    key = next(f for f in found["findings"] if f["check"] == "ANTHROPIC_API_KEY")
    assert key["ok"] is False
    # The same run refuses: doctor said what run does.
    assert run(["run"], tmp_path, env).returncode == 3
    # "auto" without a key is the offline summariser: not a failure.
    _config(tmp_path, 'backend = "auto"')
    assert run(["doctor"], tmp_path, env).returncode == 0


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
