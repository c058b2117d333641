"""`copydesk check --model`: the deterministic gates, then the model checks, through
the real SDK against the loopback fake API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from copydesk.cli import app
from tests import anthropic_fake as fake_api
from tests.anthropic_fake import FakeAnthropic
from tests.check_helpers import ARTICLE, GOOD, URL, pair, write_config

KEY = "sk-ant-api03-CLICHECK-a9b8c7d6e5"
HEADLINE, _, SUMMARY = GOOD.partition("\n\n")
S1, S2 = (
    "The harbour authority says 4,080 households joined its flood-warning text service in its "
    "first month, against a forecast of 2,500.",
    'Harbourmaster Ines Kalloway called the take-up "better than any of us dared hope".',
)
P1 = (
    "4,080 households had signed up for its new flood-warning text service in the first "
    "month, well ahead of the 2,500 it had forecast"
)
P2 = 'the take-up was "better than any of us dared hope"'


def judged(sentence: str, passage: str, *errors: str, wrong: bool = False) -> dict[str, Any]:
    return {
        "sentence": sentence,
        "errors": list(errors),
        "wrong_fact": wrong,
        "rewrite": sentence,
        "reader_draft": "r",
        "reader_rewrite": "r2" if errors else "r",
        "material": bool(errors),
        "passage": passage,
    }


def check_input(**override: Any) -> dict[str, Any]:
    value = {
        "claims": [
            {"claim": HEADLINE, "passage": P1, "supports": True},
            {"claim": S1, "passage": P1, "supports": True},
            {"claim": S2, "passage": P2, "supports": True},
        ],
        "sentences": [judged(HEADLINE, P1), judged(S1, P1), judged(S2, P2)],
    }
    return value | override


@pytest.fixture(autouse=True)
def _setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = write_config(tmp_path / "config.toml")
    config.write_text(config.read_text() + "\n[checks]\nmax_retries = 0\n")
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    monkeypatch.setenv("COPYDESK_DATABASE_URL", f"sqlite:///{tmp_path / 'unused.db'}")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeAnthropic, *args: str):
    src, dft = pair(tmp_path, GOOD)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with fake.serve() as base_url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        return CliRunner().invoke(app, ["check", src, dft, "--url", URL, "--model", *args])


def test_without_a_key_model_refuses_with_exit_3_naming_the_model(tmp_path: Path) -> None:
    src, dft = pair(tmp_path, GOOD)
    result = CliRunner().invoke(app, ["check", src, dft, "--url", URL, "--model"])
    assert result.exit_code == 3
    assert result.stderr.strip().splitlines() == [
        "copydesk: error: --model needs a checking model: ANTHROPIC_API_KEY is not set "
        "(model claude-haiku-4-5)"
    ]
    assert result.stdout == ""
    plain = CliRunner().invoke(app, ["check", src, dft, "--url", URL])
    assert plain.exit_code == 0 and "claims_supported" not in plain.stdout


def test_model_checks_pass_and_say_which_model(tmp_path, monkeypatch) -> None:
    fake = FakeAnthropic(fake_api.check_reply(check_input()), api_key=KEY)
    result = run(tmp_path, monkeypatch, fake, "--json")
    assert result.exit_code == 0, result.output
    assert "model checks: anthropic:claude-haiku-4-5" in result.stderr
    verdicts = {v["gate"]: v for v in json.loads(result.stdout)["verdicts"]}
    assert verdicts["claims_supported"]["passed"] and verdicts["faithfulness"]["passed"]
    [sent] = fake.message_requests
    assert ARTICLE.split("\n\n")[0][:60] in json.dumps(sent.json, ensure_ascii=False)


def test_a_verified_wrong_fact_fails_with_exit_1(tmp_path, monkeypatch) -> None:
    wrong = check_input(
        sentences=[judged(HEADLINE, P1), judged(S1, P1, "factual", wrong=True), judged(S2, P2)]
    )
    result = run(tmp_path, monkeypatch, FakeAnthropic(fake_api.check_reply(wrong)))
    assert result.exit_code == 1, result.output
    assert "faithfulness" in result.stdout and "FAILED" in result.stdout


def test_a_material_hedge_flags_but_exits_0(tmp_path, monkeypatch) -> None:
    hedge = check_input(
        sentences=[judged(HEADLINE, P1), judged(S1, P1, "modality"), judged(S2, P2)]
    )
    result = run(tmp_path, monkeypatch, FakeAnthropic(fake_api.check_reply(hedge)), "--json")
    assert result.exit_code == 0, result.output
    faith = {v["gate"]: v for v in json.loads(result.stdout)["verdicts"]}["faithfulness"]
    assert (faith["passed"], faith["mode"]) == (False, "flag")
    assert "modality" in faith["reason"]


def test_an_outage_is_exit_3_after_the_results(tmp_path, monkeypatch) -> None:
    result = run(tmp_path, monkeypatch, FakeAnthropic(fake_api.overloaded()))
    assert result.exit_code == 3, result.output
    assert "NOT RUN" in result.stdout or "FAILED" in result.stdout
    assert "the model checks did not run: failed" in result.stderr
    assert KEY not in result.output


def test_model_with_jsonl_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["check", "--jsonl", "-", "--model"], input="")
    assert result.exit_code == 2
