"""Today's models through the real SDK: requests built from each model's
capabilities, and the API's failures read by status and documented fields.

The fake (tests/anthropic_fake.py) refuses what the API refuses: sampling
parameters on the 4.7 generation and later, a forced tool choice on the 5.5
models, strict tools without structured outputs."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest

from summarise import prompt
from summarise.anthropic_backend import AnthropicSummariser
from summarise.anthropic_checker import AnthropicChecker
from summarise.base import Article, BackendUnavailable, SummaryFailed
from summarise.capabilities import Price, capabilities, cost_usd
from summarise.checks import FAILED, RAN, CheckSettings
from summarise.reply import Usage
from summarise.settings import SummariseSettings
from tests import anthropic_fake as fake_api
from tests.anthropic_fake import FakeAnthropic

KEY = "sk-ant-api03-TESTKEY-caps"

# About 600 words: its prefix passes 512 tokens whatever the tokenizer, and stays
# well under Haiku 4.5's 4,096.
_PARAGRAPH = (
    "The Quarry Hill ferry resumed its winter timetable on Tuesday after a refit at the "
    "Tolwen yard that took eleven weeks. The operator, Brannoc Crossings, said the vessel "
    "had new engines and a wider car deck, and that crossings would run every forty minutes "
    "until the end of March. Passengers on the first sailing said the crossing was quieter. "
)
LONG = Article(
    key="ferry", title="Ferry back", url="https://news.example.org/ferry", text=_PARAGRAPH * 10
)
SHORT = Article(key="short", title="Ferry", url="https://news.example.org/s", text=_PARAGRAPH)


@pytest.fixture(autouse=True)
def _no_sdk_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def summariser(fake: FakeAnthropic, **overrides: Any) -> AnthropicSummariser:
    settings = SummariseSettings(**({"model": "claude-haiku-4-5"} | overrides))
    return AnthropicSummariser(settings, api_key=KEY, http_client=fake.http_client(), max_retries=2)


def checker(fake: FakeAnthropic, **overrides: Any) -> AnthropicChecker:
    settings = CheckSettings(**({"model": "claude-haiku-4-5"} | overrides))
    return AnthropicChecker(settings, api_key=KEY, http_client=fake.http_client(), max_retries=1)


def good() -> fake_api.Reply:
    return fake_api.summary_reply("Ferry back", "The Quarry Hill ferry resumed its timetable.")


# --- today's models -------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["claude-haiku-5-5", "claude-opus-5-5", "claude-fable-5-1"])
def test_a_model_refusing_forced_tool_choice_gets_auto_and_the_summary_works(model: str) -> None:
    """Before: tool_choice "any" went to every model, and these answered 400: even
    temperature = "model-default" stopped the run."""
    fake = FakeAnthropic(good())
    backend = summariser(fake, model=model, temperature="model-default")
    backend.preflight()
    draft = backend.summarise(LONG)
    assert draft.summary.startswith("The Quarry Hill ferry")
    [sent] = fake.message_requests
    assert sent.json["tool_choice"]["type"] == "auto"
    assert "temperature" not in sent.json
    [call] = draft.calls
    assert call.ok and call.temperature is None and call.temperature_in_force is False


def test_a_forcing_model_gets_the_forced_choice() -> None:
    fake = FakeAnthropic(good())
    summariser(fake).summarise(LONG)
    assert fake.message_requests[0].json["tool_choice"]["type"] == "any"
    assert fake.message_requests[0].json["temperature"] == 0


@pytest.mark.parametrize("make,section", [(summariser, "summarise"), (checker, "checks")])
def test_temperature_zero_on_a_refusing_model_is_refused_before_the_run_naming_the_section(
    make: Any, section: str
) -> None:
    fake = FakeAnthropic()
    with pytest.raises(BackendUnavailable) as raised:
        make(fake, model="claude-haiku-5-5").preflight()
    message = str(raised.value)
    assert f"[{section}]" in message and 'temperature = "model-default"' in message
    assert fake.message_requests == []  # no call made, nothing dropped


def test_the_check_call_on_a_model_refusing_forced_tools_runs() -> None:
    """Before: the check call sent tool_choice "any" and failed with a 400 on Opus 5.5."""
    draft = "Ferry back\n\nThe Quarry Hill ferry resumed its winter timetable on Tuesday."
    fake = FakeAnthropic(
        fake_api.check_reply(fake_api.grounded_check(LONG.text, draft)), model_reply=None
    )
    outcome = checker(fake, model="claude-opus-5-5", temperature="model-default").check(LONG, draft)
    assert outcome.state == RAN, outcome.reason
    assert fake.message_requests[0].json["tool_choice"]["type"] == "auto"


def test_the_api_refusing_forced_tool_choice_fails_the_check_without_a_pass() -> None:
    """An unknown name whose version says it forces: the API's own 400 is a failure."""
    fake = FakeAnthropic(fake_api.forced_tool_refused())
    outcome = checker(fake, model="claude-nova-1").check(LONG, "Ferry\n\nIt sailed.")
    assert outcome.state == FAILED and not outcome.transient
    assert "rejected the request (400 invalid_request_error" in (outcome.reason or "")


# --- schema enforcement and caching ----------------------------------------------------------


def test_strict_tools_where_the_model_offers_structured_outputs_and_not_elsewhere() -> None:
    fake = FakeAnthropic(good(), good(), model_reply=None)
    backend = summariser(fake)
    backend.summarise(LONG)
    assert all(t.get("strict") is True for t in fake.message_requests[0].json["tools"])

    # The Models API says this deployment has no structured outputs: none are asked for.
    fake.model_reply = fake_api.model_card("claude-haiku-4-5", structured_outputs=False)
    other = summariser(fake)
    other.preflight()
    other.summarise(LONG)
    assert not any("strict" in t for t in fake.message_requests[-1].json["tools"])
    assert other.caps.sources["structured_outputs"] == "models api"


def test_cache_breakpoint_only_where_the_prefix_reaches_the_models_minimum() -> None:
    """The prefix is tools + system + article: on a 512-token model the tools alone
    reach it; on Haiku 4.5 (4,096) a short article's prefix cannot, a long one's can."""
    huge = Article(
        key="huge", title="Ferry", url="https://news.example.org/h", text=_PARAGRAPH * 60
    )
    fake = FakeAnthropic(good(), good(), good(), good())
    summariser(fake, model="claude-haiku-5-5", temperature="model-default").summarise(SHORT)
    summariser(fake).summarise(SHORT)
    summariser(fake).summarise(huge)

    def breakpoints(body: dict[str, Any]) -> int:
        return json.dumps(body).count("cache_control")

    short_512, short_4096, huge_4096 = (r.json for r in fake.message_requests)
    assert breakpoints(short_512) == 1
    assert short_512["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert breakpoints(short_4096) == 0  # the 1.25x write would buy nothing
    assert breakpoints(huge_4096) == 1


def test_summary_and_check_share_the_prefix_on_a_512_token_model() -> None:
    draft = "Ferry back\n\nThe Quarry Hill ferry resumed its winter timetable on Tuesday."
    fake = FakeAnthropic(good(), fake_api.check_reply(fake_api.grounded_check(LONG.text, draft)))
    summariser(fake, model="claude-haiku-5-5", temperature="model-default").summarise(LONG)
    checker(fake, model="claude-haiku-5-5", temperature="model-default").check(LONG, draft)
    one, two = (r.json for r in fake.message_requests)

    def prefix(body: dict[str, Any]) -> str:
        return json.dumps([body["tools"], body["system"], body["messages"][0]["content"][0]])

    assert prefix(one) == prefix(two) and one["tool_choice"] == two["tool_choice"]


# --- failures by status and documented fields ------------------------------------------------


def test_the_spend_cap_stops_at_once_and_is_not_retried() -> None:
    """Before: a 429 was retried by the SDK (3 attempts) and the item went to
    `error` as an outage; the spend cap never resets within a run."""
    fake = FakeAnthropic(fake_api.spend_cap(), good(), good())
    with pytest.raises(BackendUnavailable) as raised:
        summariser(fake).summarise(LONG)
    assert raised.value.kind == "spend_cap"
    assert "spend cap" in str(raised.value) and "\n" not in str(raised.value)
    assert len(fake.message_requests) == 1
    assert len(raised.value.calls) == 1


def test_a_rate_limit_429_is_transient() -> None:
    fake = FakeAnthropic(fake_api.rate_limited(), fake_api.rate_limited(), fake_api.rate_limited())
    with pytest.raises(SummaryFailed) as raised:
        summariser(fake).summarise(LONG)
    assert raised.value.transient and raised.value.kind == "transient"
    assert len(fake.message_requests) == 3  # the SDK's own retries


def test_a_retry_after_beyond_the_cap_releases_the_item_instead_of_holding_a_worker() -> None:
    """Before: the SDK slept as long as the server asked (here two minutes)."""
    fake = FakeAnthropic(fake_api.rate_limited_for(120), good())
    with pytest.raises(SummaryFailed) as raised:
        summariser(fake).summarise(LONG)
    assert raised.value.transient and raised.value.retry_after == 120
    assert len(fake.message_requests) == 1


@pytest.mark.parametrize("status,kind", [(500, "api_error"), (529, "overloaded_error")])
def test_server_errors_are_transient_whatever_they_say(status: int, kind: str) -> None:
    steps = [fake_api.error(status, kind, "prompt is too long and blocked")] * 3
    with pytest.raises(SummaryFailed) as raised:
        summariser(FakeAnthropic(*steps)).summarise(LONG)
    assert raised.value.transient


# --- the table, the Models API, prices --------------------------------------------------------


def test_lifecycle_warnings_name_the_date() -> None:
    assert "legacy" in (capabilities("claude-haiku-4-5").lifecycle_warning() or "")
    retiring = capabilities(
        "claude-sonnet-4-5", models_api={"id": "claude-sonnet-4-5", "retires_at": "2027-02-01"}
    )
    assert retiring.retires_on == date(2027, 2, 1)
    assert "retires on 2027-02-01" in (retiring.lifecycle_warning() or "")
    assert capabilities("claude-haiku-5-5").lifecycle_warning() is None


def test_a_retired_model_is_refused_before_the_run() -> None:
    fake = FakeAnthropic(model_reply=fake_api.model_card("claude-haiku-4-5", lifecycle="retired"))
    with pytest.raises(BackendUnavailable, match=r"retired.*\[checks\]"):
        checker(fake).preflight()


def test_unknown_price_is_none_never_zero() -> None:
    usage = Usage(
        input_tokens=1000, output_tokens=100, cache_creation_tokens=0, cache_read_tokens=0
    )
    assert cost_usd(usage, capabilities("claude-nova-1").price) is None
    assert cost_usd(usage, capabilities("claude-fable-5-1").price) is None
    # A config price lacking cache_read: a call that read the cache has no cost.
    partial = Price.from_mapping({"input": 1.0, "output": 5.0, "cache_write": 1.25})
    read = Usage(input_tokens=10, output_tokens=10, cache_creation_tokens=0, cache_read_tokens=900)
    assert cost_usd(read, partial) is None
    assert cost_usd(usage, partial) == pytest.approx((1000 + 500) / 1e6)


def test_haiku_5_5_costs_a_tenth_of_haiku_4_5_and_long_prompts_use_their_tier() -> None:
    usage = Usage(
        input_tokens=1000, output_tokens=200, cache_creation_tokens=0, cache_read_tokens=0
    )
    old = cost_usd(usage, capabilities("claude-haiku-4-5").price)
    new = cost_usd(usage, capabilities("claude-haiku-5-5").price)
    assert old is not None and new == pytest.approx(old / 10)
    long_prompt = Usage(input_tokens=250_000, output_tokens=0)
    assert cost_usd(long_prompt, capabilities("claude-sonnet-4-5").price) == pytest.approx(1.5)


def test_config_prices_override_the_table() -> None:
    caps = capabilities(
        "claude-haiku-4-5",
        config_prices={
            "claude-haiku-4-5": {"input": 2, "output": 4, "cache_write": 2.5, "cache_read": 0.2}
        },
    )
    assert caps.price is not None and caps.price.input == 2 and caps.sources["price"] == "config"


def test_prompt_hash_tells_the_request_forms_apart() -> None:
    purpose = prompt.summary_purpose(3)
    forms = {
        prompt.prompt_hash(purpose),
        prompt.prompt_hash(purpose, forced_tool=False),
        prompt.prompt_hash(purpose, strict=True),
    }
    assert len(forms) == 3


# --- replies that are valid but meaningless ---------------------------------------------------


def test_two_write_summary_calls_in_one_reply_fail_the_summary_closed() -> None:
    """Before: the last call silently won."""
    two = fake_api.message(
        [
            fake_api.tool_use("First", "The ferry sank."),
            fake_api.tool_use("Ferry back", "It sails."),
        ]
    )
    with pytest.raises(SummaryFailed) as raised:
        summariser(FakeAnthropic(two)).summarise(LONG)
    assert "called write_summary 2 times" in raised.value.reason


def test_two_record_checks_calls_in_one_reply_fail_the_check_closed() -> None:
    draft = "Ferry back\n\nThe Quarry Hill ferry resumed its winter timetable on Tuesday."
    good_check = fake_api.grounded_check(LONG.text, draft)
    lenient = {"claims": [], "sentences": []}
    two = fake_api.message([fake_api.check_tool_use(good_check), fake_api.check_tool_use(lenient)])
    outcome = checker(FakeAnthropic(two)).check(LONG, draft)
    assert outcome.state == FAILED and outcome.reply is None
    assert "called record_checks 2 times" in (outcome.reason or "")


# --- copydesk models ---------------------------------------------------------------------------


def _cli(tmp_path, monkeypatch, sections: str):  # type: ignore[no-untyped-def]
    """`copydesk` with a config of these model sections (and a database), as a
    function of its arguments."""
    from typer.testing import CliRunner

    from copydesk.cli import app

    config = tmp_path / "config.toml"
    config.write_text(f'[database]\nurl = "sqlite:///{tmp_path / "x.db"}"\n' + sections)
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    return lambda *args: CliRunner().invoke(app, list(args))


def test_copydesk_models_says_what_each_configured_model_gets(tmp_path, monkeypatch) -> None:
    cli = _cli(
        tmp_path,
        monkeypatch,
        '[summarise]\nmodel = "claude-haiku-5-5"\ntemperature = "model-default"\n'
        '[checks]\nmodel = "claude-opus-4-7"\n',
    )
    result = cli("models", "--json")
    assert result.exit_code == 0, result.output
    writer, judge = json.loads(result.stdout)
    assert writer["temperature"].startswith('not sent: temperature = "model-default"')
    assert writer["tool_choice"].startswith("auto")
    assert writer["price"]["input"] == pytest.approx(0.1)
    assert "refused at run start" in judge["temperature"] and "[checks]" in judge["temperature"]
    assert judge["tool_choice"].startswith("any")
    text = cli("models").stdout
    assert "[summarise] claude-haiku-5-5" in text and "512 tokens" in text


@pytest.mark.parametrize(
    ("variable", "writer", "checker"),
    [
        ("COPYDESK_MODEL", "claude-haiku-5-5", "claude-opus-4-7"),  # the writer only
        ("COPYDESK_CHECK_MODEL", "claude-sonnet-4-6", "claude-haiku-5-5"),  # the checker
    ],
)
def test_each_model_variable_reaches_its_own_section_only(
    tmp_path, monkeypatch, variable: str, writer: str, checker: str
) -> None:
    # Issue 19 §1: COPYDESK_MODEL's reach is the writer's model, as --help says; the
    # checker's has its own variable.
    cli = _cli(
        tmp_path,
        monkeypatch,
        '[summarise]\nmodel = "claude-sonnet-4-6"\ntemperature = "model-default"\n'
        '[checks]\nmodel = "claude-opus-4-7"\ntemperature = "model-default"\n',
    )
    for name in ("COPYDESK_MODEL", "COPYDESK_CHECK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, "claude-haiku-5-5")
    result = cli("models", "--json")
    assert result.exit_code == 0, result.output
    shown = {plan["section"]: plan["model"] for plan in json.loads(result.stdout)}
    assert shown == {"summarise": writer, "checks": checker}
    assert variable in " ".join(cli("--help").stdout.split())
