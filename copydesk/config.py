"""Settings: built-in defaults, then `config.toml`, then environment variables.

Secrets (the Anthropic key, database passwords) come from the environment only;
`Settings` never holds the API key, and `describe()` masks the database password.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from summarise.checks import CheckSettings

GateMode = Literal["discard", "flag", "off"]


class ConfigError(ValueError):
    """The configuration cannot be used; the message says what and where."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatabaseSettings(_Section):
    url: str = "sqlite:///copydesk.db"


class FeedSettings(_Section):
    url: str
    name: str | None = None
    enabled: bool = True


class SummariseSettings(_Section):
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
    summary_sentences: int = Field(default=3, ge=1, le=10)
    # USD per million tokens, per model: input, output, cache_write, cache_read.
    prices: dict[str, dict[str, float]] = Field(default_factory=dict)


class GateSettings(_Section):
    min_source_words: int = Field(default=150, ge=0)
    modes: dict[str, GateMode] = Field(default_factory=dict)

    @field_validator("modes")
    @classmethod
    def _known_gates(cls, modes: dict[str, str]) -> dict[str, str]:
        from guards.registry import ALL_GATES

        unknown = sorted(set(modes) - set(ALL_GATES))
        if unknown:
            raise ValueError(f"unknown gate(s) {unknown}; known: {sorted(ALL_GATES)}")
        return modes

    def mode(self, gate: str) -> str:
        from guards.registry import DEFAULT_MODES

        return self.modes.get(gate, DEFAULT_MODES.get(gate, "discard"))

    def all_modes(self) -> dict[str, str]:
        """The mode of every known gate, defaults filled in."""
        from guards.registry import ALL_GATES

        return {gate: self.mode(gate) for gate in ALL_GATES}


class IngestSettings(_Section):
    user_agent: str = "copydesk/0.1 (+https://github.com/copydesk/copydesk)"
    connect_timeout: float = Field(default=10, gt=0)
    timeout_seconds: float = Field(default=30, gt=0)
    max_bytes: int = Field(default=15_000_000, gt=0)
    max_redirects: int = Field(default=5, ge=0)
    per_host_concurrency: int = Field(default=2, ge=1)
    respect_robots: bool = True
    # Hosts or networks (CIDR) that may be fetched although they are private or loopback.
    allow_private: list[str] = Field(default_factory=list)
    feed_stale_hours: float = Field(default=48, gt=0)
    retry_base_seconds: float = Field(default=300, ge=0)  # a failing feed's first wait


class ReviewSettings(_Section):
    host: str = "127.0.0.1"
    port: int = 8501
    auth: Literal["password", "oidc"] = "password"


class Settings(_Section):
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    summarise: SummariseSettings = Field(default_factory=SummariseSettings)
    gates: GateSettings = Field(default_factory=GateSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    review: ReviewSettings = Field(default_factory=ReviewSettings)
    checks: CheckSettings = Field(default_factory=CheckSettings)
    feeds: list[FeedSettings] = Field(default_factory=list)
    source: str | None = None  # the file these settings came from, for messages


ENV_OVERRIDES = {
    "COPYDESK_DATABASE_URL": ("database", "url"),
    "COPYDESK_BACKEND": ("summarise", "backend"),
    "COPYDESK_MODEL": ("summarise", "model"),
    "COPYDESK_CHECK_MODEL": ("checks", "model"),
}


def find_config(explicit: str | Path | None = None) -> Path | None:
    """`--config`, else $COPYDESK_CONFIG, else ./config.toml if it exists."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("COPYDESK_CONFIG")
    if env:
        return Path(env)
    default = Path("config.toml")
    return default if default.exists() else None


def load_settings(path: str | Path | None = None, env: dict[str, str] | None = None) -> Settings:
    env = dict(os.environ if env is None else env)
    found = find_config(path)
    data: dict[str, Any] = {}
    if found is not None:
        try:
            data = tomllib.loads(found.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"config file {found} does not exist") from None
        except IsADirectoryError:
            raise ConfigError(f"config file {found} is a directory, not a file") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"config file {found} is not UTF-8 text (byte {exc.start}): save it as UTF-8"
            ) from None
        except OSError as exc:
            raise ConfigError(f"config file {found} cannot be read: {exc.strerror}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{found} is not valid TOML: {exc}") from None
    for var, (section, key) in ENV_OVERRIDES.items():
        if env.get(var):
            data.setdefault(section, {})[key] = env[var]
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{found or 'settings'}: {where}: {first['msg']}") from None
    settings.source = str(found) if found else None
    if not settings.checks.prices:  # the same price table unless [checks.prices] says otherwise
        settings.checks.prices = settings.summarise.prices
    if found is not None:
        _anchor_relative_paths(settings, found.resolve().parent, data, env)
    return settings


def _anchor_relative_paths(
    settings: Settings, base: Path, data: dict[str, Any], env: dict[str, str]
) -> None:
    """Relative paths in config.toml mean "next to config.toml", not "wherever the
    command happens to run": a cron job with `-c /srv/desk/config.toml` must find
    the same database and feed files as a person in /srv/desk."""
    url = settings.database.url
    from_file = not env.get("COPYDESK_DATABASE_URL")
    prefix = "sqlite:///"
    if from_file and url.startswith(prefix) and not url.startswith(prefix + "/"):
        path = url[len(prefix) :]
        if path and path != ":memory:":
            settings.database.url = prefix + str(base / path)
    for feed in settings.feeds:
        if "://" not in feed.url and not Path(feed.url).is_absolute():
            feed.url = str(base / feed.url)
