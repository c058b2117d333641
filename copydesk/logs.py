"""Logging to stderr, as text for people or as JSON lines for schedulers."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from enum import StrEnum

_RESERVED = set(vars(logging.makeLogRecord({})))

# The one-line messages of a command (`context.fail`, `context.note`): plain lines
# for a person, JSON records for a scheduler, as --log-format says.
TERMINAL = "copydesk.cli"


class LogFormat(StrEnum):
    text = "text"
    json = "json"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        payload.update({k: v for k, v in vars(record).items() if k not in _RESERVED})
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str)


class TerminalFormatter(logging.Formatter):
    """A note as it is; an error as `copydesk: error: ...`."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        return f"copydesk: error: {message}" if record.levelno >= logging.ERROR else message


class StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is when a record is emitted, not to the one of
    set-up time: while the progress bar is drawn, Rich's Live display stands in for
    sys.stderr and prints each line above the bar instead of into it
    (https://rich.readthedocs.io/en/stable/live.html, "Redirecting stdout / stderr")."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self):  # type: ignore[no-untyped-def]
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:  # type: ignore[no-untyped-def]
        pass


def setup_logging(fmt: str = "text", level: int = logging.INFO) -> None:
    """Logs at `level` and above (--quiet: WARNING, -v: DEBUG) to stderr."""
    handler = StderrHandler()
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)-7s %(message)s", datefmt="%H:%M:%S")
        )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    terminal = StderrHandler()
    terminal.setFormatter(JsonFormatter() if fmt == "json" else TerminalFormatter())
    lines = logging.getLogger(TERMINAL)
    lines.handlers[:] = [terminal]
    lines.propagate = False
    lines.setLevel(max(level, logging.INFO))
    # Libraries that log request URLs or headers stay quiet unless asked.
    for noisy in ("httpx", "httpx2", "httpcore", "anthropic", "trafilatura", "urllib3", "alembic"):
        logging.getLogger(noisy).setLevel(level if level < logging.INFO else logging.WARNING)
