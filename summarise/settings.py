"""The summariser's settings type: `[summarise]` in config.toml (composed by
copydesk/config.py). The API key is not here: it comes from the environment only."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class SummariseSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["auto", "anthropic", "extractive"] = "auto"
    model: str = "claude-haiku-4-5"
    # 0, or "model-default" to accept the model's own sampling knowingly. Nothing
    # else: a summary that may vary from run to run cannot be audited.
    temperature: Literal[0, "model-default"] = 0
    max_tokens: int = Field(default=4096, gt=0)
    max_concurrency: int = Field(default=4, ge=1, le=64)
    max_attempts: int = Field(default=5, ge=1)  # failed runs before an item is discarded
    max_retries: int = Field(default=2, ge=0, le=10)  # the SDK's own retries of 429/529/5xx
    retry_base_seconds: float = Field(default=300, ge=0)  # backoff between runs: base * 2^n
    timeout_seconds: float = Field(default=60, gt=0)  # per HTTP attempt
    # A 429/529 asking to wait longer than this releases the item back to the queue
    # (it waits in `error`) instead of holding a worker asleep.
    retry_after_cap_seconds: float = Field(default=60, ge=0)
    # The circuit breaker: after this many transient model failures in a row, across
    # items, the run stops taking model work (exit 3) and the backlog waits.
    breaker_failures: int = Field(default=5, ge=1, le=1000)
    summary_sentences: int = Field(default=3, ge=1, le=10)
    # USD per million tokens, per model: input, output, cache_write, cache_read.
    prices: dict[str, dict[str, float]] = Field(default_factory=dict)
