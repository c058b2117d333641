"""The store's settings type: `[database]` in config.toml (composed by copydesk/config.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class DatabaseSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = "sqlite:///copydesk.db"
