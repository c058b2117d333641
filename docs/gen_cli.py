"""Write docs/cli.md, the command-line reference, from the Typer app itself.

Run by `make docs`. tests/test_docs.py fails when a command, subcommand or option
is missing from docs/cli.md, so the reference cannot fall behind the code.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main

OUT = Path(__file__).resolve().parent / "cli.md"


def root_command() -> Any:
    from copydesk.cli import app

    return typer.main.get_command(app)


def walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command with its full path (`copydesk feeds add`), parents first.
    (Typer carries its own copy of click, so commands are told apart by what they
    have, not by their class.)"""
    yield path, command
    if hasattr(command, "commands"):
        for name in sorted(command.commands):
            sub = command.commands[name]
            if not sub.hidden:
                yield from walk(sub, (*path, name))


def _param_row(param: Any) -> str:
    if param.param_type_name == "argument":
        name = f"`{param.name.upper()}`"
        kind = "argument" + ("" if param.required else ", optional")
        help_text = getattr(param, "help", None) or ""
    else:
        flags = [*param.opts, *param.secondary_opts]
        name = ", ".join(f"`{flag}`" for flag in flags)
        kind = "flag" if param.is_flag else "option"
        if param.required:
            kind += ", required"
        help_text = param.help or ""
        default = param.default
        if not param.is_flag and default not in (None, (), [], "") and not callable(default):
            help_text += f" (default: `{getattr(default, 'value', default)}`)"
    cell = help_text.replace("|", "\\|").replace("\n", " ").strip()
    return f"| {name} | {kind} | {cell} |"


def render() -> str:
    lines = [
        "# copydesk command-line reference",
        "",
        "Generated from the Typer app by `make docs` (docs/gen_cli.py): do not edit by hand.",
        "Exit codes: 0 did its job, 1 a check failed or nothing matched, 2 bad usage,",
        "3 could not work (config, database, model key), with one line on stderr.",
        "",
    ]
    for path, command in walk(root_command(), ("copydesk",)):
        lines += [f"{'#' * min(len(path) + 1, 4)} `{' '.join(path)}`", ""]
        help_text = (command.help or "").strip()
        if help_text:
            lines += [help_text, ""]
        params = [p for p in command.params if not getattr(p, "hidden", False)]
        if params:
            lines += ["| name | kind | what it does |", "| --- | --- | --- |"]
            lines += [_param_row(p) for p in params]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    OUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
