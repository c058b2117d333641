"""Reading model replies defensively, and pricing them: pure functions, no SDK."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from summarise.pricing import cost_usd, price_for
from summarise.reply import (
    NoUsableSummary,
    Usage,
    error_summary,
    json_values,
    parse_summary,
    stop_reason,
    usage,
)


def reply(*blocks: dict[str, Any], stop: str = "tool_use") -> dict[str, Any]:
    return {"type": "message", "content": list(blocks), "stop_reason": stop}


def tool(value: Any, name: str = "write_summary") -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_1", "name": name, "input": value}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


GOOD = {"headline": "Bridge reopens", "summary": "The Tollin bridge reopened on Friday."}


# --- parse_summary ------------------------------------------------------------------------


def test_tool_input_is_taken_and_trimmed() -> None:
    parsed = parse_summary(reply(tool({"headline": " Bridge reopens ", "summary": "It did.\n"})))
    assert (parsed.headline, parsed.summary, parsed.source) == (
        "Bridge reopens",
        "It did.",
        "tool_use",
    )


def test_tool_input_wins_over_text() -> None:
    other = json.dumps({"headline": "Other", "summary": "Other text."})
    parsed = parse_summary(reply(text(other), tool(GOOD)))
    assert parsed.headline == "Bridge reopens" and parsed.source == "tool_use"


def test_tool_input_sent_as_a_json_string_is_accepted() -> None:
    assert parse_summary(reply(tool(json.dumps(GOOD)))).summary == GOOD["summary"]


def test_a_tool_of_another_name_is_ignored_and_named_in_the_reason() -> None:
    # Every purpose offers the whole shared tool list (summarise.prompt.TOOLS), so a
    # model asked for a summary could still call, say, a claims tool: not a summary.
    with pytest.raises(NoUsableSummary, match="the model called list_claims instead"):
        parse_summary(reply(tool(GOOD, name="list_claims")))


def test_the_purposes_tool_is_the_one_taken() -> None:
    other = {"headline": "Not this", "summary": "Not this one."}
    both = reply(tool(other, name="write_summary"), tool(GOOD, name="rewrite_summary"))
    assert parse_summary(both, tool="rewrite_summary").headline == "Bridge reopens"
    assert parse_summary(both).headline == "Not this"


def test_invalid_tool_input_falls_back_to_json_in_text() -> None:
    parsed = parse_summary(reply(tool({"headline": "Only a headline"}), text(json.dumps(GOOD))))
    assert parsed.source == "text" and parsed.headline == "Bridge reopens"


def test_two_summaries_in_text_fail_closed() -> None:
    """Before: the last one silently won."""
    first = json.dumps({"headline": "First", "summary": "First try."})
    last = json.dumps({"headline": "Second", "summary": "Second try."})
    with pytest.raises(NoUsableSummary, match="2 summaries"):
        parse_summary(reply(text(f"{first} and then {last}"), stop="end_turn"))


def test_the_last_usable_value_wins_over_a_later_unusable_one() -> None:
    good = json.dumps(GOOD)
    parsed = parse_summary(reply(text(f'{good}\n{{"note": "done"}}'), stop="end_turn"))
    assert parsed.headline == "Bridge reopens"


def test_json_in_a_code_fence_among_prose() -> None:
    fenced = f"Sure! Here it is:\n```json\n{json.dumps(GOOD, indent=2)}\n```\nAnything else?"
    assert parse_summary(reply(text(fenced), stop="end_turn")).summary == GOOD["summary"]


def test_json_split_across_text_blocks_is_joined() -> None:
    raw = json.dumps(GOOD)
    parsed = parse_summary(reply(text(raw[:20]), text(raw[20:]), stop="end_turn"))
    assert (parsed.headline, parsed.summary) == (GOOD["headline"], GOOD["summary"])


@pytest.mark.parametrize(
    ("response", "why"),
    [
        ({}, "no content blocks"),
        ({"content": "a string"}, "no content blocks"),
        (reply(), "no content blocks"),
        (reply(text("")), "no write_summary call and no text"),
        (reply(text("The bridge reopened.")), "holds no JSON"),
        (reply(text('{"headline": "x"}')), "JSON without a headline and summary"),
        (reply(tool({"headline": "x", "summary": 3})), "lacks a non-empty headline and summary"),
        (reply(tool({"headline": "", "summary": "Something."})), "lacks"),
        (reply(tool(None)), "lacks"),
        ("not even a dict", "no content blocks"),
    ],
)
def test_no_usable_value_raises_with_a_reason(response: Any, why: str) -> None:
    with pytest.raises(NoUsableSummary, match=why):
        parse_summary(response)


json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
json_like = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(blocks=st.lists(json_like | st.builds(text, st.text(max_size=60)), max_size=4))
def test_any_reply_either_parses_or_raises_no_usable_summary(blocks: list[Any]) -> None:
    try:
        parsed = parse_summary({"content": blocks})
    except NoUsableSummary:
        return
    assert parsed.headline.strip() and parsed.summary.strip()


def test_json_values_skips_braces_that_are_not_json() -> None:
    found = json_values('Set {x} aside. {"a": {"b": 1}} then {broken and {"c": 2}')
    assert found == [{"a": {"b": 1}}, {"c": 2}]


# --- usage, stop reason, errors --------------------------------------------------------------


def test_usage_reads_all_four_token_counts() -> None:
    raw = {
        "usage": {
            "input_tokens": 12,
            "output_tokens": 34,
            "cache_creation_input_tokens": 560,
            "cache_read_input_tokens": 78,
        }
    }
    assert usage(raw) == Usage(12, 34, 560, 78)


@pytest.mark.parametrize("raw", [{}, {"usage": None}, {"usage": {"input_tokens": "12"}}, "text"])
def test_usage_tolerates_missing_or_odd_values(raw: Any) -> None:
    assert usage(raw) == Usage()


def test_stop_reason_and_error_summary() -> None:
    assert stop_reason({"stop_reason": "refusal"}) == "refusal"
    assert stop_reason({"stop_reason": None}) is None and stop_reason("x") is None
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert error_summary(body) == ("overloaded_error", "Overloaded")
    assert error_summary("<html>") == (None, None)


# --- pricing -----------------------------------------------------------------------------------

PRICE = {"input": 1.0, "output": 5.0, "cache_write": 1.25, "cache_read": 0.1}


def test_cost_sums_every_kind_of_token_at_its_price() -> None:
    used = Usage(
        input_tokens=2_000,
        output_tokens=300,
        cache_creation_tokens=10_000,
        cache_read_tokens=50_000,
    )
    expected = (2_000 * 1.0 + 300 * 5.0 + 10_000 * 1.25 + 50_000 * 0.1) / 1_000_000
    assert cost_usd(used, PRICE) == pytest.approx(expected)
    assert cost_usd(used, PRICE) == pytest.approx(0.021)


def test_no_price_no_estimate() -> None:
    assert cost_usd(Usage(10, 10), None) is None


def test_a_price_entry_missing_a_used_kind_gives_no_estimate_rather_than_too_little() -> None:
    partial = {"input": 1.0, "output": 5.0}
    assert cost_usd(Usage(100, 10), partial) == pytest.approx(150 / 1_000_000)
    assert cost_usd(Usage(100, 10, cache_read_tokens=1_000), partial) is None


def test_price_lookup_prefers_the_configured_name_then_the_served_model() -> None:
    prices = {"claude-haiku-4-5": PRICE, "claude-haiku-4-5-20251001": {"input": 9.0}}
    assert price_for(prices, "claude-haiku-4-5", "claude-haiku-4-5-20251001") is PRICE
    assert price_for(prices, "alias-unknown", "claude-haiku-4-5-20251001") == {"input": 9.0}
    assert price_for(prices, "nothing", None) is None
