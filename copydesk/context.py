"""What every command needs: settings and an up-to-date store, or a one-line error."""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import typer
from rich.console import Console
from sqlalchemy.engine import Engine

from copydesk.config import ConfigError, Settings, load_settings
from store.db import StoreError, open_store

# Results go to stdout; logs, progress and errors to stderr.
out = Console(soft_wrap=True, highlight=False)
err = Console(stderr=True, soft_wrap=True, highlight=False)
for _console in (out, err):
    if not _console.is_terminal and "COLUMNS" not in os.environ:
        _console.width = 140  # pipes and logs: wide enough that tables stay readable

EXIT_OK = 0
EXIT_FAILED = 1  # the command ran and found something that needs a person (e.g. a hard gate)
EXIT_USAGE = 2
EXIT_UNABLE = 3  # the command could not do its job: bad config, database unreachable


JSON_LOGS = False  # set by the global --log-format option
log = logging.getLogger("copydesk")


def fail(message: str, code: int = EXIT_UNABLE) -> NoReturn:
    """One line on stderr, then exit. Never a traceback for an expected failure."""
    if JSON_LOGS:
        log.error(message, extra={"exit_status": code})
    else:
        err.print(f"copydesk: error: {message}", markup=False)
    raise typer.Exit(code)


def note(message: str) -> None:
    """A line for the person at the terminal, or a log record for a scheduler."""
    if JSON_LOGS:
        log.info(message)
    else:
        err.print(message, markup=False)


@dataclass
class Context:
    settings: Settings
    engine: Engine


CONFIG_PATH: Path | None = None  # set by the global --config option


def load(config: Path | None = None) -> Settings:
    try:
        return load_settings(config or CONFIG_PATH)
    except ConfigError as exc:
        fail(str(exc))


def connect(settings: Settings) -> Engine:
    try:
        return open_store(settings.database.url)
    except StoreError as exc:
        fail(str(exc).splitlines()[0])


def context(config: Path | None = None) -> Context:
    settings = load(config)
    return Context(settings, connect(settings))


def is_tty() -> bool:
    return sys.stderr.isatty()
