"""`copydesk editor ...` (accounts for the review queue) and `copydesk review` (the app).

Passwords are asked twice on a terminal, or read from the first line of stdin
with `--password-stdin` for scripts; they are never taken as an argument (it
would land in shell history and `ps`), never printed, never logged.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from copydesk.cli.context import (
    EXIT_OK,
    EXIT_UNABLE,
    EXIT_USAGE,
    connect,
    emit_json,
    err,
    fail,
    load,
    out,
)

if TYPE_CHECKING:
    from sqlmodel import Session

    from copydesk.config import Settings
    from store.models import Editor


editor_app = typer.Typer(
    help="Editor accounts for the review queue (editor: decides; viewer: reads).",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(editor_app, name="editor")
    app.command("review")(review_command)


def _read_password(password_stdin: bool, command: str = "copydesk editor add NAME") -> str:
    """The new password: from stdin's first line with --password-stdin, else asked
    twice on the terminal. Without a terminal there is no one to ask: say how to
    pass it instead of waiting or failing with a bare "Aborted!". A password the
    rules refuse is refused before it is asked again."""
    from store.editors import EditorError, check_password

    if password_stdin:
        line = sys.stdin.readline()
        password = line.rstrip("\r\n")
        if not password:
            fail("--password-stdin: no password on standard input", EXIT_USAGE)
        return password
    if not sys.stdin.isatty():
        fail(
            "no terminal to ask for the password: use --password-stdin, e.g. "
            f"printf '%s\\n' \"$PASSWORD\" | {command} --password-stdin",
            EXIT_USAGE,
        )
    password = typer.prompt("Password", hide_input=True)
    try:
        check_password(password)
    except EditorError as exc:
        fail(str(exc), EXIT_USAGE)
    if typer.prompt("Repeat for confirmation", hide_input=True) != password:
        fail("the two passwords do not match; nothing changed", EXIT_USAGE)
    return password


@editor_app.command("add")
def editor_add(
    cli: typer.Context,
    name: str = typer.Argument(..., help="sign-in name (with single sign-on: the e-mail)"),
    role: str = typer.Option(
        "editor",
        "--role",
        # store/editors.py ROLES (not imported for --help; tests/test_cli_imports.py checks)
        help="one of: editor, viewer",
    ),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="read the password from the first line of stdin"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the account as JSON"),
) -> None:
    """Create an account. Asks for the password twice unless --password-stdin."""

    from store.editors import ROLES, add_editor

    if role not in ROLES:
        fail(f"--role must be one of {', '.join(ROLES)}, not {role!r}", EXIT_USAGE)
    password = _read_password(password_stdin)
    account = _change_accounts(cli, lambda session: add_editor(session, name, password, role=role))
    _said(account, "added", as_json, f"added {account['role']} {account['name']}")


@editor_app.command("password")
def editor_password(
    cli: typer.Context,
    name: str = typer.Argument(...),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="read the password from the first line of stdin"
    ),
    enable: bool = typer.Option(False, "--enable", help="also re-enable a disabled account"),
    as_json: bool = typer.Option(False, "--json", help="print the account as JSON"),
) -> None:
    """Set a new password (also lifts a lock from repeated wrong passwords)."""
    from store.editors import set_password

    password = _read_password(password_stdin, "copydesk editor password NAME")
    account = _change_accounts(
        cli, lambda session: set_password(session, name, password, enable=enable)
    )
    line = f"password changed for {account['name']}" + (" (enabled)" if enable else "")
    _said(account, "password changed", as_json, line)


@editor_app.command("list")
def editor_list(
    cli: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="print the accounts as JSON"),
) -> None:
    """Every account with its role and state (never a password or its hash)."""
    from rich.table import Table
    from rich.text import Text

    from store.db import session_scope
    from store.editors import list_editors

    engine = connect(load(cli))
    with session_scope(engine) as session:
        editors = list_editors(session)
    if as_json:
        emit_json(
            [
                {
                    "name": e.name,
                    "role": e.role,
                    "enabled": e.enabled,
                    "last_login_at": e.last_login_at,
                    "failed_logins": e.failed_logins,
                }
                for e in editors
            ]
        )
        return
    if not editors:
        out.print(Text("no editor accounts yet: copydesk editor add NAME"))
        return
    table = Table()
    for column in ("name", "role", "enabled", "last sign-in (UTC)", "failed sign-ins"):
        table.add_column(column)
    for editor in editors:
        last = editor.last_login_at.strftime("%Y-%m-%d %H:%M") if editor.last_login_at else "-"
        table.add_row(
            Text(editor.name),
            Text(editor.role),
            Text("yes" if editor.enabled else "no"),
            Text(last),
            Text(str(editor.failed_logins)),
        )
    out.print(table)


@editor_app.command("disable")
def editor_disable(
    cli: typer.Context,
    name: str = typer.Argument(...),
    as_json: bool = typer.Option(False, "--json", help="print the account as JSON"),
) -> None:
    """Stop an account from signing in; a signed-in session ends at its next click."""
    from store.editors import disable_editor

    account = _change_accounts(cli, lambda session: disable_editor(session, name))
    _said(account, "disabled", as_json, f"disabled {account['name']}")


def _said(account: dict[str, Any], done: str, as_json: bool, line: str) -> None:
    """What an account command did: one JSON document (`--json`), or one line."""
    from rich.text import Text

    if as_json:
        emit_json(account | {"done": done})
    else:
        out.print(Text(line))  # a name is the operator's text: never markup


def _change_accounts(cli: typer.Context, change: Callable[[Session], Editor]) -> dict[str, Any]:
    """One transaction on the editors table, and the account as it is after it
    (name, role, enabled; never the password); a refusal (unknown name, weak
    password, duplicate) is a usage error in one line."""
    from store.db import session_scope
    from store.editors import EditorError

    engine = connect(load(cli))
    try:
        with session_scope(engine) as session:
            editor = change(session)
            account = {"name": editor.name, "role": editor.role, "enabled": editor.enabled}
    except EditorError as exc:
        fail(str(exc), EXIT_USAGE)
    return account


def review_command(
    cli: typer.Context,
    port: int | None = typer.Option(None, "--port", help="port (default: [review] port, 8501)"),
    host: str | None = typer.Option(None, "--host", help="address (default: [review] host)"),
) -> None:
    """Start the review queue (Streamlit) and wait until it is stopped (Ctrl-C)."""
    settings = load(cli)
    raise typer.Exit(launch_review(settings, port=port, host=host))


def app_path() -> Path:
    """copydesk/review_app.py wherever the package is installed (found, not
    imported: importing it would run the app)."""
    spec = importlib.util.find_spec("copydesk.review_app")
    if spec is None or spec.origin is None:
        raise RuntimeError("the copydesk package is not installed")
    return Path(spec.origin).resolve()


# Streamlit's settings for running the review queue in production, given on the
# command line so that no .streamlit/config.toml in the working directory can
# weaken them. Errors show no type, message or stack trace to the browser (they
# go to the server's log); the toolbar has no developer options; cross-site
# request forgery and cross-origin protection stay on.
PRODUCTION_SETTINGS = {
    "server.headless": "true",
    "browser.gatherUsageStats": "false",
    "server.fileWatcherType": "none",
    "server.runOnSave": "false",
    "server.enableXsrfProtection": "true",
    "server.enableCORS": "true",
    "global.developmentMode": "false",
    "client.showErrorDetails": "none",
    "client.toolbarMode": "minimal",
}


def streamlit_command(host: str, port: int) -> list[str]:
    flags = [part for key, value in PRODUCTION_SETTINGS.items() for part in (f"--{key}", value)]
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app_path()),
        "--server.address",
        host,
        "--server.port",
        str(port),
        *flags,
    ]


# What the review app may inherit from the shell that starts it. The app never
# calls the model, so the Anthropic key (and any other secret lying around in the
# environment: cloud credentials, tokens) stays behind: a bug or a plug-in in the
# web server cannot leak what it never had.
REVIEW_ENV_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "VIRTUAL_ENV",
        "PYTHONPATH",
        "PYTHONUTF8",
        "PYTHONIOENCODING",
        # Streamlit's single sign-on talks to the identity provider over HTTPS.
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
    }
)
# libpq settings (PGPASSWORD, PGSSLMODE...), locale, Streamlit's own, ours.
REVIEW_ENV_PREFIXES = ("PG", "LC_", "STREAMLIT_", "COPYDESK_", "XDG_")
# The schema owner's URL is for `copydesk migrate` alone: a web server that never
# had the owner's password cannot be made to alter the audit log's triggers.
REVIEW_ENV_WITHHELD = frozenset({"COPYDESK_MIGRATE_DATABASE_URL"})


def review_env(settings: Settings, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The app's environment: what Streamlit and the database need, nothing else
    (no ANTHROPIC_API_KEY). The app reads the same settings as this command:
    config file and database URL by environment."""
    source = os.environ if environ is None else environ
    env = {
        name: value
        for name, value in source.items()
        if (name in REVIEW_ENV_NAMES or name.startswith(REVIEW_ENV_PREFIXES))
        and name not in REVIEW_ENV_WITHHELD
    }
    env["COPYDESK_DATABASE_URL"] = settings.database.url
    if settings.source:
        env["COPYDESK_CONFIG"] = str(Path(settings.source).resolve())
    return env


def port_free(host: str, port: int) -> bool:
    """Whether a server could listen on host:port now (a bind test, then let go)."""
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.bind((host, port))
    except OSError:
        return False
    return True


def free_port(host: str, taken: int) -> int:
    """A port to suggest instead of `taken`: the next free one above it, else any."""
    for port in range(taken + 1, min(taken + 50, 65536)):
        if port_free(host, port):
            return port
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def launch_review(settings: Settings, port: int | None = None, host: str | None = None) -> int:
    """Run the review app in the foreground; returns its exit code (0 after Ctrl-C)."""
    from rich.text import Text

    from store.db import StoreError, check_writable, open_store, safe_url, session_scope
    from store.editors import list_editors

    host = host or settings.review.host
    port = settings.review.port if port is None else port
    if not 0 < port < 65536:
        err.print(Text(f"copydesk: error: --port {port} is not a TCP port"))
        return EXIT_USAGE
    try:
        engine = open_store(settings.database.url, create=False)  # only init creates one
        check_writable(engine)
    except StoreError as exc:
        err.print(Text(f"copydesk: error: {str(exc).splitlines()[0]}"))
        return EXIT_UNABLE
    with session_scope(engine) as session:
        enabled = [e for e in list_editors(session) if e.enabled]
    where = safe_url(engine)
    engine.dispose()
    if not port_free(host, port):  # said before any URL is printed
        err.print(
            Text(
                f"copydesk: error: port {port} on {host} is taken (another review server?): "
                f"try --port {free_port(host, port)}"
            )
        )
        return EXIT_UNABLE
    if not enabled:
        err.print(
            Text("copydesk: no editor accounts yet: create one with copydesk editor add NAME")
        )
    err.print(Text(f"copydesk review: http://{host}:{port}  (database {where}; Ctrl-C stops it)"))
    process = subprocess.Popen(streamlit_command(host, port), env=review_env(settings))
    # SIGTERM (systemd's stop, `kill`) ends the server like Ctrl-C does: without this
    # handler Python dies at once and Streamlit, its child, keeps the port.
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        ended = process.wait()
    except (KeyboardInterrupt, Terminated):
        process.terminate()
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        return EXIT_OK
    finally:
        signal.signal(signal.SIGTERM, previous)
    if ended == 0:
        return EXIT_OK
    # Streamlit stopped by itself (a setting it refused, a port taken after the check
    # above): copydesk could not work, 3, whatever Streamlit's own code (its 1 would
    # read as copydesk's "needs a person").
    err.print(
        Text(f"copydesk: error: the review server (Streamlit) stopped with exit {ended}: see above")
    )
    return EXIT_UNABLE


STOP_SECONDS = 15  # Streamlit's own shutdown on SIGTERM takes a few seconds


class Terminated(Exception):
    """SIGTERM arrived while the review server ran."""


def _terminated(_signum: int, _frame: object) -> None:
    raise Terminated
