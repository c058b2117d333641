"""Estimated cost of a model call, from its token usage and the config price table.

Prices live in config.toml (`[summarise.prices."<model>"]`, USD per million
tokens: input, output, cache_write, cache_read) because they change and differ
per contract. No price, no estimate: the ledger shows `None` rather than a
guess.
"""

from __future__ import annotations

from collections.abc import Mapping

from summarise import capabilities
from summarise.reply import Usage

# usage field -> price key
_PRICED = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_creation_tokens": "cache_write",
    "cache_read_tokens": "cache_read",
}


def price_for(
    prices: Mapping[str, Mapping[str, float]], *models: str | None
) -> Mapping[str, float] | None:
    """The first of `models` with a price entry: the configured name (e.g. an alias
    like `claude-haiku-4-5`), then the exact model id the API answered with."""
    for model in models:
        if model and model in prices:
            return prices[model]
    return None


def cost_usd(usage: Usage, price: Mapping[str, float] | None) -> float | None:
    """USD for one call; None when there is no price, or when tokens were used of a
    kind the price entry does not cover (a partial sum would understate the cost)."""
    if price is None:
        return None
    return capabilities.cost_usd(usage, capabilities.Price.from_mapping(price))
