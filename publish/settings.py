"""The [publish] section of config.toml: the targets, in the order they are sent to.

    [[publish.targets]]
    kind = "atom"                    # "atom", "jsonl" or "webhook"
    path = "published/feed.xml"

The webhook's secret never sits in config.toml: `secret_env` names the environment
variable that holds it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _FileTarget(_Section):
    # Permission bits of the written file, as octal digits: the default lets a web
    # server running as another user read it ("0640" with a shared group, say).
    file_mode: str = "0644"

    @field_validator("file_mode")
    @classmethod
    def _octal(cls, value: str) -> str:
        try:
            bits = int(value, 8)
        except ValueError:
            bits = -1
        if not 0 <= bits <= 0o777:
            raise ValueError(f"file_mode {value!r} is not permission bits in octal, like 0644")
        return value

    @property
    def mode(self) -> int:
        return int(self.file_mode, 8)


class AtomTargetSettings(_FileTarget):
    kind: Literal["atom"] = "atom"
    name: str = "atom"
    path: Path = Path("published/feed.xml")
    title: str = "copydesk: approved summaries"
    # The feed's own stable id (an Atom id is an IRI; a tag: URI needs no domain we own).
    feed_id: str = "tag:copydesk,2026:feed"
    link: str | None = None  # where the feed is served, for rel="self"
    language: str = Field(default="en", pattern=r"^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$")
    max_entries: int = Field(default=50, ge=1)


class JsonlTargetSettings(_FileTarget):
    kind: Literal["jsonl"] = "jsonl"
    name: str = "jsonl"
    path: Path = Path("published/items.jsonl")


class WebhookTargetSettings(_Section):
    kind: Literal["webhook"] = "webhook"
    name: str = "webhook"
    url: str
    secret_env: str = "COPYDESK_WEBHOOK_SECRET"  # noqa: S105 - a variable name, not a secret
    timeout_seconds: float = Field(default=10, gt=0)
    attempts: int = Field(default=3, ge=1, le=10)  # tries within one publish
    backoff_seconds: float = Field(default=1.0, ge=0)  # doubles after each try
    max_backoff_seconds: float = Field(default=30.0, ge=0)  # the wait between tries, at most


TargetSettings = Annotated[
    AtomTargetSettings | JsonlTargetSettings | WebhookTargetSettings,
    Field(discriminator="kind"),
]


class PublishSettings(_Section):
    targets: list[TargetSettings] = Field(default_factory=list)
    watch_days: float = Field(default=7, gt=0)  # `watch` re-reads sources published since
    lease_seconds: float = Field(default=300, gt=0)  # a worker's claim on one delivery
    # A delivery that failed for a passing reason (5xx, 408, 429, a timeout, a file
    # that could not be written) is tried again by the first publish after
    # retry_seconds, doubling after each failure, at most retry_max_seconds apart.
    retry_seconds: float = Field(default=30, ge=0)
    retry_max_seconds: float = Field(default=3600, ge=0)
    # Published ids are tag URIs (RFC 4151): tag:<id_authority>,<date>:<installation>/item/<n>.
    # id_authority: a domain name (or e-mail address) the newsroom owns; the date is
    # the day the installation was made. Set it once: changing it changes every id.
    id_authority: str = Field(default="copydesk", pattern=r"^[A-Za-z0-9.@-]+$")

    @model_validator(mode="after")
    def _unique_names(self) -> PublishSettings:
        names = [t.name for t in self.targets]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"publish target names must be unique: {twice} used twice")
        return self

    def anchor(self, base: Path) -> None:
        """Relative file paths mean "next to config.toml"."""
        for target in self.targets:
            if isinstance(target, AtomTargetSettings | JsonlTargetSettings):
                if not target.path.is_absolute():
                    target.path = base / target.path
