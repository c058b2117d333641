"""Choosing the summariser and the model checker a run uses, and saying which."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from summarise.base import Summariser
from summarise.checks import Checker, CheckSettings, NoChecker
from summarise.extractive import ExtractiveSummariser
from summarise.settings import SummariseSettings


class BackendChoiceError(RuntimeError):
    """The configured backend cannot be used (no key, model refuses temperature 0...)."""


def choose_backend(settings: SummariseSettings, env: Mapping[str, str] | None = None) -> str:
    """`auto` means Anthropic when a key is set, the extractive summariser otherwise."""
    env = os.environ if env is None else env
    if settings.backend == "auto":
        return "anthropic" if env.get("ANTHROPIC_API_KEY") else "extractive"
    return settings.backend


def make_summariser(
    settings: SummariseSettings, env: Mapping[str, str] | None = None, **client_options: object
) -> Summariser:
    """Build the backend and check, before any item is touched, that it can work."""
    env = os.environ if env is None else env
    backend = choose_backend(settings, env)
    if backend == "extractive":
        return ExtractiveSummariser(sentences=settings.summary_sentences)
    key = env.get("ANTHROPIC_API_KEY", "").strip()
    if not key:
        raise BackendChoiceError(
            "backend is anthropic but ANTHROPIC_API_KEY is not set "
            '(set it, or choose backend = "extractive" in config.toml)'
        )
    from summarise.anthropic_backend import AnthropicSummariser, BackendUnavailable

    summariser = AnthropicSummariser(settings, api_key=key, **client_options)
    try:
        summariser.preflight()
    except BackendUnavailable as exc:
        raise BackendChoiceError(str(exc)) from None
    return summariser


def make_checker(settings: CheckSettings, env: Mapping[str, str], **client_options: Any) -> Checker:
    """The checker `[checks]` asks for: Anthropic with a key, else none (not run)."""
    if settings.backend == "off":
        return NoChecker("off in config.toml")
    key = (env.get("ANTHROPIC_API_KEY") or "").strip()
    if not key:
        return NoChecker("no model")
    from summarise.anthropic_backend import BackendUnavailable
    from summarise.anthropic_checker import AnthropicChecker  # the SDK only when used

    checker = AnthropicChecker(settings, api_key=key, **client_options)
    try:  # preflighted as the summariser is; its messages name [checks]
        checker.preflight()
    except BackendUnavailable as exc:
        raise BackendChoiceError(str(exc)) from None
    return checker


def run_start_warnings(backend: object) -> list[str]:
    """What a run start warns about a model backend: a deprecated, retiring or
    legacy model (with its date), and a model without a price (its cost unknown)."""
    caps = getattr(backend, "caps", None)
    if caps is None:
        return []
    section = getattr(backend, "section", "summarise")
    warnings = []
    lifecycle = caps.lifecycle_warning()
    if lifecycle:
        warnings.append(f"warning: {lifecycle} ([{section}] model)")
    if caps.price is None:
        warnings.append(
            f"warning: model {caps.model} has no price: its cost is unknown (set "
            f'[{section}.prices."{caps.model}"] in config.toml)'
        )
    return warnings
