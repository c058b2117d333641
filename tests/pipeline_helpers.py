"""Shared pieces for the `copydesk run` tests over a loopback feed: a config with
the extractive summariser (`write_config`), the same config switched to the
Anthropic backend (`config_for`), and `invoke`, which runs the real command line
against a loopback fake of the Anthropic API (tests/anthropic_fake.py).
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from copydesk.cli import app

KEY = "sk-ant-test-0123456789abcdef"


def write_config(
    tmp_path: Path, db_url: str, feed_url: str, *, init: bool = True, **extra: str
) -> Path:
    """config.toml in tmp_path: the database, the extractive summariser, loopback
    allowed, and one feed ("Gazette"); `extra` adds top-level keys (values as TOML).
    With `init`, the database is made as an operator makes it: `copydesk init` (no
    other command creates one)."""
    lines = [
        f'[database]\nurl = "{db_url}"',
        '[summarise]\nbackend = "extractive"\nretry_base_seconds = 0\nmax_attempts = 3',
        '[ingest]\nallow_private = ["127.0.0.0/8", "::1/128"]\nrespect_robots = false',
        f'[[feeds]]\nname = "Gazette"\nurl = "{feed_url}"',
    ]
    lines += [f"{k} = {v}" for k, v in extra.items()]
    path = tmp_path / "config.toml"
    path.write_text("\n\n".join(lines))
    if init:
        done = CliRunner().invoke(app, ["--config", str(path), "init"])
        assert done.exit_code == 0, done.output
    return path


def invoke(config, monkeypatch, base_url: str, *args: str, key: str = KEY):
    """`copydesk --config CONFIG ARGS...` with `key` and the fake API's address set."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
    return CliRunner().invoke(app, ["--config", str(config), *args], catch_exceptions=False)


def config_for(tmp_path, sqlite_url, feed_url, *extra: str):
    """`write_config` with the Anthropic backend (no retries, four calls at a time,
    Haiku's prices); `extra` lines go into [summarise]."""
    config = write_config(tmp_path, sqlite_url, feed_url)
    text = config.read_text().replace(
        'backend = "extractive"', 'backend = "auto"\nmax_retries = 0\nmax_concurrency = 4'
    )
    text = text.replace("[summarise]", "[summarise]\n" + "\n".join(extra))
    text += '\n\n[summarise.prices."claude-haiku-4-5"]\ninput = 1.0\noutput = 5.0\n'
    text += "cache_write = 1.25\ncache_read = 0.1\n"
    config.write_text(text)
    return config
