"""The `copydesk` command line (Typer only). Each group of commands lives in its
own module of this package and adds itself here through `register(app)`; this
file only wires them up. The work behind a command is in copydesk/services/
(and the stages), its text output in copydesk/render/."""

from __future__ import annotations

import logging
from pathlib import Path

import typer

import copydesk
from copydesk.cli import (
    audit,
    check,
    context,
    doctor,
    evaluate,
    exits,
    feeds,
    ingest,
    models,
    publish,
    review,
    run,
    stats,
)
from copydesk.logs import LogFormat, setup_logging

app = typer.Typer(
    name="copydesk",
    help=(
        "Short, faithful news summaries that ship only after an editor approves them.\n\n"
        "Environment: COPYDESK_MODEL sets the writer's model ([summarise] model) only; "
        "COPYDESK_CHECK_MODEL sets the checker's ([checks] model). Run `copydesk models` "
        "to see what is sent to each."
    ),
    no_args_is_help=True,
    # Typer's own shell completion: --install-completion, --show-completion
    # (https://typer.tiangolo.com/tutorial/options-autocompletion/).
    add_completion=True,
    pretty_exceptions_enable=False,
    # Help texts name config sections ("[checks]", "[review]"): plain text, not rich markup,
    # which would swallow them.
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"copydesk {copydesk.__version__}")
        raise typer.Exit(0)


@app.callback()
def _global(
    cli: typer.Context,
    config: Path | None = typer.Option(
        None,
        "--config",
        "-c",
        help="config.toml (default: $COPYDESK_CONFIG, else ./config.toml)",
    ),
    log_format: LogFormat = typer.Option(
        LogFormat.text, "--log-format", help="text for people, json lines for schedulers"
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="debug logging"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="warnings and errors only"),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="print the version and exit"
    ),
    read_only: bool = typer.Option(
        False,
        "--read-only",
        help="open the database read-only (an auditor: audit, stats, discards...); "
        "any write fails, nothing is migrated",
    ),
) -> None:
    """Short, faithful news summaries that ship only after an editor approves them."""
    if quiet and verbose:
        raise typer.BadParameter(
            "--quiet and --verbose contradict each other", param_hint="--quiet"
        )
    cli.obj = context.CliState(
        config_path=config, json_logs=log_format is LogFormat.json, read_only=read_only
    )
    level = logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO
    setup_logging(log_format.value, level)


for module in (run, feeds, ingest, check, evaluate, audit, stats, review, publish, models, doctor):
    module.register(app)
context.one_line_errors(app)
exits.document(app)


def main() -> None:  # pragma: no cover - console entry point
    app()
