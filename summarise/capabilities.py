"""What each Claude model accepts and costs, and so what copydesk sends it.

The request a model gets is built from its capabilities, never from hope:

- sampling: since the 4.7 generation (Opus 4.7, 4.8, 5, 5.5; Sonnet 5, 5.5;
  Haiku 5.5; Fable) a model refuses `temperature`, `top_p` and `top_k` with a
  400 invalid_request_error ("`temperature` is deprecated for this model"),
  per Anthropic's "Migrating to Claude Opus 4.7" guide and each model's
  "What's new" page. copydesk sends temperature 0 wherever it is accepted; on
  a model that refuses it, the run goes ahead only with the explicit, audited
  `temperature = "model-default"`.
- forced tool choice: `tool_choice` {"type": "any"} or {"type": "tool"} forces a
  tool call (docs: "Forcing tool use"); Opus 5.5 and Fable 5.1 answer it with
  a 400 ("What's new in Claude Opus 5.5": forced tool use is not supported), as
  do the later 5.5 models. Where refused, copydesk sends {"type": "auto"} and
  the reply parser fails closed on a reply without exactly one call of the tool.
- structured outputs: strict tool use (`tools[].strict: true`) makes the API
  validate the tool input against its schema (docs: "Structured outputs",
  "Strict tool use"). The Models API reports it as
  `capabilities.structured_outputs.supported` (GET /v1/models/{model_id},
  ModelInfo.capabilities, documented in the API reference "Get a Model").
- minimum cacheable prompt: a `cache_control` breakpoint on a prefix shorter
  than the model's minimum caches nothing (docs: "Prompt caching", minimum
  cacheable prompt length: 4,096 tokens for Haiku 4.5 and Opus 4.5-4.7, 2,048
  for Sonnet 4.6, 1,024 for Sonnet 4.5 and 5, 512 for Opus 5 and the 5.5 models).
- maximum output: `max_tokens` as the Models API reports it (ModelInfo.max_tokens).
- prices: USD per million tokens, base input, output, cache write (5-minute,
  1.25x input) and cache read (0.1x input), from the models' pricing pages;
  where a price depends on prompt length (long context), a tier.
- lifecycle: active, legacy, deprecated (with a retirement date) or retired,
  from Anthropic's model deprecations page; a retired model is refused before
  the run, a deprecated one warned about at every run start.

The table below is the shipped knowledge; the Models API's answer overrides
what it reports (max_tokens, structured outputs); config.toml prices override
the table's. A model in neither is "unknown": the version rule decides about
sampling and forcing, and its price is unknown (warned, never 0.0).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

PER_TOKENS = 1_000_000


@dataclass(frozen=True)
class Price:
    """USD per million tokens. `tiers`: (prompt tokens above which, price) pairs,
    the highest threshold that the call's prompt exceeds applies."""

    input: float | None
    output: float | None
    cache_write: float | None
    cache_read: float | None
    tiers: tuple[tuple[int, Price], ...] = ()

    @classmethod
    def from_mapping(cls, value: Mapping[str, float]) -> Price | None:
        """A config.toml price table; a kind it lacks is None, and a call that
        used tokens of that kind has an unknown cost (a partial sum would
        understate it)."""
        try:
            kinds = [value.get(k) for k in ("input", "output", "cache_write", "cache_read")]
            return cls(*(None if v is None else float(v) for v in kinds))
        except (AttributeError, TypeError, ValueError):
            return None

    def for_prompt(self, prompt_tokens: int) -> Price:
        chosen = self
        for above, tier in sorted(self.tiers):
            if prompt_tokens > above:
                chosen = tier
        return chosen

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "input": self.input,
            "output": self.output,
            "cache_write": self.cache_write,
            "cache_read": self.cache_read,
        }
        if self.tiers:
            out["tiers"] = [{"above_prompt_tokens": a, **t.as_dict()} for a, t in self.tiers]
        return out


def _price(inp: float, out: float, *tiers: tuple[int, Price]) -> Price:
    # Cache write (5-minute) is 1.25x base input, cache read 0.1x (docs: "Prompt
    # caching", pricing).
    return Price(inp, out, round(inp * 1.25, 6), round(inp * 0.1, 6), tuple(tiers))


@dataclass(frozen=True)
class ModelCapabilities:
    model: str
    known: bool  # in the shipped table, or reported by the Models API
    sampling: bool  # accepts temperature / top_p / top_k
    forced_tool_choice: bool  # accepts tool_choice "any" and a named tool
    structured_outputs: bool  # strict tool schemas (and output_config.format)
    min_cacheable_tokens: int | None
    max_output_tokens: int | None
    price: Price | None
    lifecycle: str = "active"  # active, legacy, deprecated, retired
    retires_on: date | None = None
    # Where each fact came from: "table", "models api", "config", "version rule".
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def deprecated(self) -> bool:
        return self.lifecycle in ("deprecated", "retired") or self.retires_on is not None

    def lifecycle_warning(self) -> str | None:
        """The line a run start prints about this model's lifecycle, or None."""
        if self.lifecycle == "retired":
            return f"model {self.model} is retired: requests to it fail"
        if self.retires_on is not None:
            return f"model {self.model} is deprecated and retires on {self.retires_on.isoformat()}"
        if self.lifecycle == "deprecated":
            return f"model {self.model} is deprecated"
        if self.lifecycle == "legacy":
            return f"model {self.model} is a legacy model (still served; newer models exist)"
        return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "known": self.known,
            "sampling": self.sampling,
            "forced_tool_choice": self.forced_tool_choice,
            "structured_outputs": self.structured_outputs,
            "min_cacheable_tokens": self.min_cacheable_tokens,
            "max_output_tokens": self.max_output_tokens,
            "price": self.price.as_dict() if self.price else None,
            "lifecycle": self.lifecycle,
            "retires_on": self.retires_on.isoformat() if self.retires_on else None,
            "sources": dict(self.sources),
        }


_SONNET_45_LONG = _price(6.0, 22.5)  # prompts over 200k tokens (long context pricing)
_SONNET_45 = _price(3.0, 15.0, (200_000, _SONNET_45_LONG))

# The shipped table, by alias, one row a model: alias, sampling, forced tool choice,
# structured outputs, minimum cacheable tokens, maximum output tokens, price (None: not
# in the shipped table, set [summarise.prices] to count cost), lifecycle. Dated ids
# (claude-haiku-4-5-20251001) resolve to their alias (see `_alias`).
_ROWS: tuple[tuple[str, bool, bool, bool, int, int, Price | None, str], ...] = (
    ("claude-haiku-4-5", True, True, True, 4096, 64_000, _price(1.0, 5.0), "legacy"),
    ("claude-sonnet-4-5", True, True, True, 1024, 64_000, _SONNET_45, "legacy"),
    ("claude-sonnet-4-6", True, True, True, 2048, 64_000, _price(3.0, 15.0), "active"),
    ("claude-opus-4-7", False, True, True, 4096, 128_000, _price(5.0, 25.0), "active"),
    ("claude-sonnet-5", False, True, True, 1024, 128_000, _price(3.0, 15.0), "active"),
    ("claude-opus-5", False, True, True, 512, 128_000, _price(5.0, 25.0), "active"),
    ("claude-opus-5-5", False, False, True, 512, 128_000, _price(4.0, 20.0), "active"),
    ("claude-sonnet-5-5", False, False, True, 512, 128_000, None, "active"),
    # Haiku 5.5: a tenth of Haiku 4.5's price.
    ("claude-haiku-5-5", False, False, True, 512, 64_000, _price(0.1, 0.5), "active"),
    ("claude-fable-5-1", False, False, True, 512, 128_000, None, "active"),
)
TABLE: dict[str, ModelCapabilities] = {
    row[0]: ModelCapabilities(row[0], True, *row[1:]) for row in _ROWS
}

# claude-<family>-<major>[-<minor>] and the older claude-<major>[-<minor>]-<family>.
_MODEL_NAME = re.compile(
    r"claude-(?:(?P<family>[a-z]+)-)?(?P<major>\d+)(?:[-.](?P<minor>\d{1,2})(?!\d))?"
    r"(?:-(?P<family_after>[a-z]+))?",
    re.IGNORECASE,
)
_DATED = re.compile(r"-\d{8}$")


def _alias(model: str) -> str:
    return _DATED.sub("", model.strip())


def _version(model: str) -> tuple[str, tuple[int, int]] | None:
    match = _MODEL_NAME.search(model)
    if not match:
        return None
    family = (match["family"] or match["family_after"] or "").lower()
    return family, (int(match["major"]), int(match["minor"] or 0))


def rejects_sampling_parameters(model: str) -> bool:
    """The version rule for a model the table does not know: the 4.7 generation
    and later refuse sampling parameters (Opus 4.7 first; generation 5 all)."""
    known = TABLE.get(_alias(model))
    if known is not None:
        return not known.sampling
    found = _version(model)
    if found is None:
        return False  # an unknown shape: the API's own 400 then stops the run
    family, version = found
    return version[0] >= 5 or (family == "opus" and version >= (4, 7))


def _refuses_forcing(model: str) -> bool:
    found = _version(model)
    return found is not None and found[1] >= (5, 5)


def capabilities(
    model: str,
    *,
    models_api: Mapping[str, Any] | None = None,
    config_prices: Mapping[str, Mapping[str, float]] | None = None,
) -> ModelCapabilities:
    """What copydesk knows of `model`: the table, then what the Models API
    reported (`models_api`: the GET /v1/models/{id} JSON), then config prices."""
    base = TABLE.get(_alias(model))
    sources: dict[str, str] = {}
    if base is None:
        caps = ModelCapabilities(
            model,
            False,
            sampling=not rejects_sampling_parameters(model),
            forced_tool_choice=not _refuses_forcing(model),
            structured_outputs=False,
            min_cacheable_tokens=None,
            max_output_tokens=None,
            price=None,
        )
        sources.update(sampling="version rule", forced_tool_choice="version rule")
    else:
        caps = replace(base, model=model)
        sources.update(
            {k: "table" for k in ("sampling", "forced_tool_choice", "structured_outputs")}
            | {"min_cacheable_tokens": "table", "max_output_tokens": "table", "lifecycle": "table"}
        )
        if base.price:
            sources["price"] = "table"
    if isinstance(models_api, Mapping):
        caps, sources = _merge_models_api(caps, sources, models_api)
    if config_prices:
        for name in (model, _alias(model), (models_api or {}).get("id")):
            if isinstance(name, str) and name in config_prices:
                configured = Price.from_mapping(config_prices[name])
                if configured is not None:
                    caps = replace(caps, price=configured)
                    sources["price"] = "config"
                break
    return replace(caps, sources=sources)


def _merge_models_api(
    caps: ModelCapabilities, sources: dict[str, str], info: Mapping[str, Any]
) -> tuple[ModelCapabilities, dict[str, str]]:
    """Overlay what the Models API reports. Documented ModelInfo fields:
    `max_tokens` and `capabilities.<name>.supported` (API reference, "Get a
    Model"); `lifecycle` and `retires_at` are read when a deployment sends them."""
    changes: dict[str, Any] = {}
    limit = info.get("max_tokens")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        changes["max_output_tokens"] = limit
        sources["max_output_tokens"] = "models api"
    reported = info.get("capabilities")
    if isinstance(reported, Mapping):
        structured = reported.get("structured_outputs")
        if isinstance(structured, Mapping) and isinstance(structured.get("supported"), bool):
            changes["structured_outputs"] = structured["supported"]
            sources["structured_outputs"] = "models api"
    lifecycle = info.get("lifecycle")
    if isinstance(lifecycle, str) and lifecycle:
        changes["lifecycle"] = lifecycle
        sources["lifecycle"] = "models api"
    retires = info.get("retires_at") or info.get("retirement_date")
    if isinstance(retires, str):
        try:
            changes["retires_on"] = date.fromisoformat(retires[:10])
            sources["retires_on"] = "models api"
        except ValueError:
            pass
    if changes:
        caps = replace(caps, known=True, **changes)
    return caps, sources


def cost_usd(usage: Any, price: Price | None) -> float | None:
    """USD for one call from its usage (input, output, cache write, cache read
    tokens); None when there is no price. The tier is chosen by the prompt's
    length (input + cache write + cache read tokens)."""
    if price is None:
        return None
    fields = {
        "input": usage.input_tokens or 0,
        "output": usage.output_tokens or 0,
        "cache_write": usage.cache_creation_tokens or 0,
        "cache_read": usage.cache_read_tokens or 0,
    }
    tier = price.for_prompt(fields["input"] + fields["cache_write"] + fields["cache_read"])
    total = 0.0
    for kind, tokens in fields.items():
        if not tokens:
            continue
        rate = getattr(tier, kind)
        if rate is None:
            return None
        total += tokens * rate
    return round(total / PER_TOKENS, 8)


def request_plan(
    model: str,
    temperature: float | str,
    section: str,
    *,
    config_prices: Mapping[str, Mapping[str, float]] | None = None,
    models_api: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What copydesk sends `model` and why, in words (`copydesk models`, doctor)."""
    caps = capabilities(model, models_api=models_api, config_prices=config_prices)
    if temperature == "model-default":
        why = "the model refuses it" if not caps.sampling else "accepted knowingly in config.toml"
        sent = f'not sent: temperature = "model-default" ({why}; recorded on every ledger row)'
    elif caps.sampling:
        sent = f"{float(temperature):g}"
    else:
        sent = (
            f"refused at run start: {model} does not accept temperature; set "
            f'temperature = "model-default" in [{section}]'
        )
    return {
        "section": section,
        "model": model,
        "temperature": sent,
        "tool_choice": "any (a tool call is forced)"
        if caps.forced_tool_choice
        else "auto (the model refuses a forced tool choice; one call of the tool required)",
        "schema": "enforced by the API (strict tool schemas)"
        if caps.structured_outputs
        else "checked by copydesk only (no structured outputs)",
        "cache": f"breakpoint when the prefix reaches {caps.min_cacheable_tokens} tokens"
        if caps.min_cacheable_tokens
        else "breakpoint always (minimum unknown)",
        "max_output_tokens": caps.max_output_tokens,
        "price": caps.price.as_dict() if caps.price else None,
        "lifecycle": caps.lifecycle_warning() or caps.lifecycle,
        "sources": dict(caps.sources),
    }
