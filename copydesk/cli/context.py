"""What every command needs: settings and an up-to-date store, or a one-line error.

The global options (`--config`, `--log-format`) become a `CliState` that the
app's callback puts on Typer's context (`ctx.obj`); every command declares a
`cli: typer.Context` parameter and opens its settings and store through it:

    def my_command(cli: typer.Context, ...) -> None:
        ctx = cx.context(cli)      # a Desk: settings + engine (or cx.load(cli): settings only)
        ...
        cx.fail("one line", cx.EXIT_USAGE)

`fail` and `note` need no state: they write to the `copydesk.cli` logger, which
the callback set up for --log-format (a plain line, or a JSON record).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

# The exit codes, re-exported for the commands; each command's: copydesk/cli/exits.py.
from copydesk.cli.exits import EXIT_FAILED, EXIT_OK, EXIT_UNABLE, EXIT_USAGE  # noqa: F401
from copydesk.logs import TERMINAL

# Light on purpose: every command module imports this one, and `copydesk --help`
# imports every command module. The store, the settings (pydantic and every
# stage's types), the model SDK and rich's console are imported where a command
# uses them; tests/test_cli_imports.py checks what `--help` and `check` import.
if TYPE_CHECKING:
    from rich.console import Console
    from sqlalchemy.engine import Engine
    from sqlalchemy.exc import DBAPIError

    from copydesk.config import Settings
    from copydesk.services.compose import Desk
    from publish.service import Publisher
    from summarise.base import Summariser
    from summarise.checks import Checker


class _LazyConsole:
    """A rich Console made on first use (importing rich.console costs a tenth of a
    second that `--help` and `check --jsonl` do not need)."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr
        self._console: Console | None = None

    def _made(self) -> Console:
        if self._console is None:
            from rich.console import Console

            console = Console(stderr=self._stderr, soft_wrap=True, highlight=False)
            if not console.is_terminal and "COLUMNS" not in os.environ:
                console.width = 140  # pipes and logs: wide enough that tables stay readable
            self._console = console
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._made(), name)


# Results go to stdout; logs, progress and errors to stderr.
out: Console = _LazyConsole(stderr=False)  # type: ignore[assignment]
err: Console = _LazyConsole(stderr=True)  # type: ignore[assignment]


def stderr_console() -> Console:
    """The real stderr Console, for rich objects that drive it themselves (a
    progress bar enters it as a context manager, which no stand-in can be)."""
    return err._made()  # type: ignore[attr-defined]


lines = logging.getLogger(TERMINAL)  # what fail() and note() write; see copydesk/logs.py


@dataclass
class CliState:
    """What the global options set, shared with every command as `ctx.obj`."""

    config_path: Path | None = None  # --config
    json_logs: bool = False  # --log-format json
    read_only: bool = False  # --read-only


def state(cli: typer.Context) -> CliState:
    """The global options of the running command (defaults if the callback did not run)."""
    found = cli.find_object(CliState)
    return found if found is not None else CliState()


class Failed(typer.Exit):
    """The exit `fail` raises: it keeps the line said, for a command whose --json
    must say it on stdout too (`run --json`)."""

    def __init__(self, code: int, message: str):
        super().__init__(code)
        self.message = message


def fail(message: str, code: int = EXIT_UNABLE) -> NoReturn:
    """One line on stderr, then exit. Never a traceback for an expected failure."""
    lines.error(message, extra={"exit_status": code})
    raise Failed(code, message)


def note(message: str) -> None:
    """A line for the person at the terminal, or a log record for a scheduler."""
    lines.info(message)


def load(cli: typer.Context, *, database: bool = True) -> Settings:
    """The settings: --config, else $COPYDESK_CONFIG, else ./config.toml; then the
    environment. `database=False`: the command opens no database (`check`), so the
    audit anchor is not placed beside it (`load_settings`' `place_anchor`)."""
    from copydesk.config import ConfigError, load_settings

    try:
        return load_settings(state(cli).config_path, place_anchor=database)
    except ConfigError as exc:
        fail(str(exc))


def connect(settings: Settings, *, create: bool = False) -> Engine:
    """The store, up to date. Only `init` and `migrate` create a database (and `demo`
    its own, `create=True`): for every other command a database file that does not
    exist, or one without copydesk's tables, is exit 3 naming it and the fix (a
    mistyped path), not a new empty newsroom (issue 22)."""
    from copydesk.config import own_anchor
    from store import audit_chain
    from store.db import StoreError, open_store, where

    try:
        engine = open_store(settings.database.url, create=create)
    except StoreError as exc:
        fail(str(exc).splitlines()[0])
    logging.getLogger("copydesk").debug(
        "database %s (%s), config %s", where(engine), engine.dialect.name, settings.source
    )
    note_database(settings, engine)
    own_anchor(settings)
    if settings.runs.audit_anchor:  # every commit with an audit event advances it
        audit_chain.keep_anchor(engine, Path(settings.runs.audit_anchor))
    return engine


def database_origin(settings: Settings, environ: dict[str, str] | None = None) -> str | None:
    """Why this database, when the command found no project to tell it: no
    --config, no $COPYDESK_CONFIG, no config.toml in this folder and no
    $COPYDESK_DATABASE_URL, so it opens the default copydesk.db of whatever folder
    it runs in. None when the database was chosen (by a config file or the
    environment): there is nothing to wonder about then."""
    env = os.environ if environ is None else environ
    if settings.source or env.get("COPYDESK_DATABASE_URL"):
        return None
    return f"the default: no config.toml in {Path.cwd()}"


def note_database(settings: Settings, engine: Engine) -> None:
    """One line on stderr naming the database a command opened outside the project
    folder, so that a newcomer in another folder sees why the demo editor's
    password fails there (another, empty database). Never on stdout: output
    stays machine-readable."""
    origin = database_origin(settings)
    if origin is None:
        return
    where = engine.url.render_as_string(hide_password=True)
    if engine.url.get_backend_name() == "sqlite" and engine.url.database:
        where = str(Path(engine.url.database).resolve())
    note(f"database: {where} (from {origin})")


def context(cli: typer.Context) -> Desk:
    """Settings and an up-to-date store, as the composition root that builds the
    rest (copydesk/services/compose.py). With --read-only, the database is opened
    so that nothing can be written through it, and never migrated."""
    from copydesk.services.compose import Desk

    settings = load(cli)
    if state(cli).read_only:
        return Desk(settings, connect_read_only(settings))
    return Desk(settings, connect(settings))


def connect_read_only(settings: Settings) -> Engine:
    """An auditor's engine: a write fails in the database itself ("read-only")."""
    from store.db import StoreError, open_read_only

    try:
        engine = open_read_only(settings.database.url)
    except StoreError as exc:
        fail(str(exc).splitlines()[0])
    note_database(settings, engine)
    return engine


def summariser(desk: Desk, *, command: str) -> Summariser:
    """The run's summariser, said out loud; a refusal is one line (and a run row
    that says why nothing was touched)."""
    from store.db import where
    from summarise.factory import BackendChoiceError, run_start_warnings

    backend = desk.backend_choice()
    why = {
        "auto": " (ANTHROPIC_API_KEY is set)"
        if backend == "anthropic"
        else " (no ANTHROPIC_API_KEY: offline extractive summariser)",
    }.get(desk.settings.summarise.backend, "")
    try:
        chosen = desk.summariser(command=command)
    except BackendChoiceError as exc:
        fail(str(exc))
    # Said first, so that a run's log shows which newsroom it worked on and how: a
    # missing environment file (the default database, the offline summariser) shows.
    note(f"database: {where(desk.engine)}; summariser: {chosen.name}{why}")
    for warning in run_start_warnings(chosen):
        note(warning)
    return chosen


def checker(desk: Desk) -> Checker:
    """The model checks of this run, said out loud (which model, or why not)."""
    from summarise.checks import NoChecker
    from summarise.factory import BackendChoiceError, run_start_warnings

    try:
        chosen = desk.checker()
    except BackendChoiceError as exc:
        fail(str(exc))
    if isinstance(chosen, NoChecker):
        note(f"model checks: not run ({chosen.why})")
    else:
        note(f"model checks: {chosen.name}")
        for warning in run_start_warnings(chosen):
            note(warning)
    return chosen


def publisher(desk: Desk, actor: str) -> Publisher:
    """The configured targets, or a one-line exit 3 (no targets, no webhook secret)."""
    from copydesk.services.compose import NoPublishTargets

    try:
        return desk.publisher(actor)
    except NoPublishTargets as exc:
        fail(str(exc))


def one_line_errors(app: typer.Typer) -> None:
    """Wrap every command of `app` (and of its sub-groups) so that a database that
    fails mid-command (read-only, gone, out of space) or a store error ends as one
    line and exit 3, never a traceback. Called once, after every command is
    registered; commands added later are covered too (a test runs them all)."""
    for info in app.registered_commands:
        if info.callback is not None:
            info.callback = _one_line(info.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            one_line_errors(group.typer_instance)


def _one_line(command: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(command)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except Exception as exc:
            line = _store_failure(exc)
            if line is None:
                raise
            fail(line)

    return guarded


def _store_failure(exc: Exception) -> str | None:
    """The one line for a database or store error, None for anything else. Only
    modules already imported are looked at: an exception of a module the command
    never imported cannot have been raised."""
    if "sqlalchemy" in sys.modules:
        from sqlalchemy import exc as sa_exc

        if isinstance(exc, sa_exc.DBAPIError):
            logging.getLogger("copydesk").debug("database error", exc_info=True)
            return f"database error: {database_problem(exc)}"
    if "store.db" in sys.modules:
        from store.db import StoreError

        if isinstance(exc, StoreError):
            return str(exc).splitlines()[0]
    return None


def database_problem(exc: DBAPIError) -> str:
    """The driver's own first line ("attempt to write a readonly database"),
    without SQLAlchemy's statement and parameters (they may hold article text);
    PostgreSQL's "permission denied" with the fix (`copydesk migrate`)."""
    from store.db import explain

    original = exc.orig if exc.orig is not None else exc
    return explain(original) or type(original).__name__


def emit_json(document: Any) -> None:
    """The one JSON document of a --json invocation: compact, on one line of stdout,
    nothing else there (a scheduler reads it with one json.loads per line)."""
    out.file.write(json.dumps(document, separators=(",", ":"), ensure_ascii=False, default=str))
    out.file.write("\n")
    out.file.flush()


def is_tty() -> bool:
    return sys.stderr.isatty()
