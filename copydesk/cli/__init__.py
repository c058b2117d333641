"""The `copydesk` command line (Typer only). Each group of commands lives in its
own module of this package and adds itself here through `register(app)`; this
file only wires them up. The work behind a command is in copydesk/services/
(and the stages), its text output in copydesk/render/."""

from __future__ import annotations

from pathlib import Path

import typer

from copydesk.cli import (
    audit,
    check,
    context,
    doctor,
    evaluate,
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
    add_completion=False,
    pretty_exceptions_enable=False,
    # Help texts name config sections ("[checks]", "[review]"): plain text, not rich markup,
    # which would swallow them.
    rich_markup_mode=None,
)


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
    read_only: bool = typer.Option(
        False,
        "--read-only",
        help="open the database read-only (an auditor: audit, stats, discards...); "
        "any write fails, nothing is migrated",
    ),
) -> None:
    """Short, faithful news summaries that ship only after an editor approves them."""
    cli.obj = context.CliState(
        config_path=config, json_logs=log_format is LogFormat.json, read_only=read_only
    )
    setup_logging(log_format.value, verbose)


for module in (run, feeds, ingest, check, evaluate, audit, stats, review, publish, models, doctor):
    module.register(app)
context.one_line_errors(app)


def main() -> None:  # pragma: no cover - console entry point
    app()
