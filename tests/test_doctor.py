"""`copydesk doctor` offline and `doctor --live` against a loopback API (the real SDK)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from copydesk.cli import app
from tests import anthropic_fake as fake_api

KEY = "sk-ant-api03-TESTKEY-doctor"


def write(tmp_path: Path, summarise: str = "", checks: str = "") -> Path:
    """The config, and its database made as an operator makes it (only init creates one)."""
    config = tmp_path / "config.toml"
    config.write_text(
        f'[database]\nurl = "sqlite:///{tmp_path / "d.db"}"\n'
        f'[summarise]\nbackend = "auto"\nmax_retries = 0\n{summarise}\n'
        f"[checks]\nmax_retries = 0\n{checks}\n"
    )
    if not (tmp_path / "d.db").exists():
        assert CliRunner().invoke(app, ["--config", str(config), "init"]).exit_code == 0
    return config


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "COPYDESK_CONFIG"):
        monkeypatch.delenv(name, raising=False)


def invoke(config: Path, *args: str):
    return CliRunner().invoke(app, ["--config", str(config), "doctor", *args])


def test_offline_doctor_names_a_refused_temperature_and_exits_1(tmp_path) -> None:
    ok = invoke(write(tmp_path), "--json")
    assert ok.exit_code == 0, ok.output
    found = json.loads(ok.stdout)
    assert found["ok"] and found["live"] is None
    assert any(
        f["check"] == "ANTHROPIC_API_KEY" and f["detail"] == "not set" for f in found["findings"]
    )
    bad = invoke(write(tmp_path, checks='model = "claude-opus-5-5"'))
    assert bad.exit_code == 1
    assert "FAIL [checks] claude-opus-5-5" in bad.stdout and "[checks]" in bad.stdout


def test_live_without_a_key_is_one_line_exit_3(tmp_path) -> None:
    result = invoke(write(tmp_path), "--live")
    assert result.exit_code == 3 and "ANTHROPIC_API_KEY" in result.stderr


def test_live_doctor_makes_one_summary_and_one_check_and_says_what_happened(
    tmp_path, monkeypatch
) -> None:
    fake = fake_api.FakeAnthropic(responder=fake_api.first_sentences_responder(), api_key=KEY)
    config = write(tmp_path, summarise='model = "claude-haiku-5-5"\ntemperature = "model-default"')
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with fake.serve() as base_url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        result = invoke(config, "--live", "--json")
        text = invoke(config, "--live")
    assert result.exit_code == 0, result.output
    live = json.loads(result.stdout)["live"]
    summary, check = live["calls"]
    assert summary["purpose"] == "summary" and check["purpose"] == "checks"
    assert summary["temperature"] == 'not sent ("model-default")'
    assert check["temperature"] == "0 sent"
    assert summary["tool_choice"] == "auto" and check["tool_choice"] == "any"
    assert summary["schema"].startswith("strict tools")
    assert summary["input_tokens"] == 1200 and summary["output_tokens"] == 140
    assert summary["cost_usd"] == pytest.approx((1200 * 0.1 + 140 * 0.5) / 1e6)
    assert live["cost_usd"] == pytest.approx(summary["cost_usd"] + check["cost_usd"])
    assert {v["gate"] for v in live["verdicts"]} >= {"numbers_grounded", "faithfulness"}
    assert all(v["passed"] for v in live["verdicts"]), live["verdicts"]
    assert len(fake.message_requests) == 4  # two runs of the command, two calls each
    assert "summary: claude-haiku-4-5-20251001" in text.stdout or "summary: " in text.stdout
    assert "cache write" in text.stdout and "faithfulness: passed" in text.stdout


def test_live_doctor_reports_an_unknown_cost_as_unknown(tmp_path, monkeypatch) -> None:
    fake = fake_api.FakeAnthropic(responder=fake_api.first_sentences_responder(), api_key=KEY)
    config = write(tmp_path, summarise='model = "claude-nova-1"', checks='model = "claude-nova-1"')
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with fake.serve() as base_url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        result = invoke(config, "--live", "--json")
    live = json.loads(result.stdout)["live"]
    assert live["cost_usd"] is None
    assert all(c["cost_usd"] is None for c in live["calls"])
