"""Ingestion's settings types: `[ingest]` and the `[[feeds]]` list in config.toml
(composed by copydesk/config.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class IngestSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_agent: str = "copydesk/0.1 (+https://github.com/copydesk/copydesk)"
    connect_timeout: float = Field(default=10, gt=0)
    timeout_seconds: float = Field(default=30, gt=0)
    max_bytes: int = Field(default=15_000_000, gt=0)  # other fetches (robots.txt, extract)
    # A feed and an article page are capped apart: a 20,000-entry feed of 25 MB is
    # ordinary, a 25 MB article page is not. A feed cut by its cap is reported.
    max_feed_bytes: int = Field(default=50_000_000, gt=0)
    max_page_bytes: int = Field(default=15_000_000, gt=0)
    # Markup handed to trafilatura once scripts, styles and comments are stripped:
    # keeps a run with 4 workers over 15 MB pages under 600 MB (bench/bench_scale.py).
    max_extract_bytes: int = Field(default=2_000_000, gt=0)
    max_redirects: int = Field(default=5, ge=0)
    per_host_concurrency: int = Field(default=2, ge=1)
    respect_robots: bool = True
    # Hosts or networks (CIDR) that may be fetched although they are private or loopback.
    allow_private: list[str] = Field(default_factory=list)
    feed_stale_hours: float = Field(default=48, gt=0)
    retry_base_seconds: float = Field(default=300, ge=0)  # a failing feed's first wait


class FeedSettings(BaseModel):
    """One `[[feeds]]` entry: a feed declared in config.toml."""

    model_config = ConfigDict(extra="forbid")

    url: str
    name: str | None = None
    enabled: bool = True
