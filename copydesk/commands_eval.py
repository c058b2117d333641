"""`copydesk eval`: what the gate stack catches, misses and falsely flags, in numbers.

It validates the pack (refusing a broken one with the reason), runs the
configured gate stack over every summary, writes a run log and a facts file
under `<out>/<date>_<hash>/`, and prints a table (or `--json`). Exit codes: 0 the
stack caught every planted error its gates are designed for with no false
alarm, 1 it did not, 2 bad usage (e.g. `--calibrate` without a model), 3 the
pack or the config could not be read.

`--compare RUN_A RUN_B` shows what changed between two stored runs, and
`--from-decisions` reads editors' decisions from the audit log instead.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from copydesk import evaluation as ev
from copydesk.context import EXIT_FAILED, EXIT_OK, EXIT_USAGE, fail, load, out
from copydesk.eval_pack import KINDS, PackError, default_pack_dir, load_pack
from guards.registry import DRAFT_GATES

DEFAULT_OUT = Path("eval-runs")
NO_MODEL_LINE = "Model checks: not run (no model). Scores below are for the deterministic gates."


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)


def eval_command(
    cli: typer.Context,
    pack_dir: Path | None = typer.Option(
        None, "--pack", help="the pack folder (default: evals/pack)", show_default=False
    ),
    out_dir: Path = typer.Option(DEFAULT_OUT, "--out", help="where run folders are written"),
    as_json: bool = typer.Option(False, "--json", help="print the facts as JSON"),
    runs: int = typer.Option(1, "--runs", min=1, help="repeat the model checks N times"),
    calibrate: bool = typer.Option(False, "--calibrate", help="calibrate the judge (model)"),
    compare: tuple[str, str] | None = typer.Option(
        None, "--compare", metavar="RUN_A RUN_B", help="what changed between two stored runs"
    ),
    from_decisions: bool = typer.Option(
        False, "--from-decisions", help="score the gates against editors' decisions"
    ),
    since: str | None = typer.Option(
        None, "--since", metavar="DATE", help="with --from-decisions: decisions from DATE on"
    ),
) -> None:
    """Score the configured gate stack against the evaluation pack's answer key."""
    if since is not None and not from_decisions:
        fail("--since goes with --from-decisions", EXIT_USAGE)
    if compare is not None:
        raise typer.Exit(compare_runs(out_dir, compare[0], compare[1], as_json))
    if from_decisions:
        from copydesk.eval_decisions import decisions_command

        raise typer.Exit(decisions_command(since, as_json))
    settings = load(cli)
    model = _model_available()
    if calibrate and model is None:
        fail("--calibrate needs a model: set ANTHROPIC_API_KEY (no model is configured)", 2)
    if runs > 1 and model is None:
        fail("--runs repeats the model checks and needs a model: set ANTHROPIC_API_KEY", 2)
    if model is not None and (calibrate or runs > 1):
        fail("the model checks are not wired into `copydesk eval` yet", EXIT_USAGE)
    try:
        pack = load_pack(pack_dir or default_pack_dir())
    except PackError as exc:
        fail(f"the evaluation pack is broken: {exc}")
    stack = ev.Stack({g: settings.gates.mode(g) for g in DRAFT_GATES})
    records = ev.score(pack, stack)
    identity = ev.run_identity(pack, {}, None, stack.modes)
    folder = ev.run_folder(out_dir, identity)
    header = _header(pack, stack, identity, folder)
    result = ev.facts(pack, records, header)
    try:
        ev.write_run(folder, header, records, result)
    except OSError as exc:
        fail(f"cannot write the run to {folder}: {exc.strerror or exc}")
    if as_json:
        typer.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print_report(result)
    short = ev.shortfalls(result, stack.gates)
    raise typer.Exit(EXIT_FAILED if short else EXIT_OK)


def _model_available() -> str | None:
    """The model the checks would use, or None when no key is set."""
    return "anthropic" if os.environ.get("ANTHROPIC_API_KEY") else None


def _header(pack: Any, stack: ev.Stack, identity: str, folder: Path) -> dict[str, Any]:
    return {
        "run_id": folder.name,
        "identity": identity,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "pack": {"name": pack.name, "version": pack.version, "digest": pack.digest},
        "stack": dict(stack.modes),
        "model": None,
        "model_checks": "not run (no model)",
        "prompt_versions": {},
        "folder": str(folder),
    }


# --- the report -------------------------------------------------------------------


def _n(value: Any) -> str:
    return "-" if value is None else str(value)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def print_report(result: dict[str, Any]) -> None:
    run = result["run"]
    out.print(NO_MODEL_LINE if run.get("model") is None else run["model_checks"], markup=False)
    s = result["stack"]
    out.print(
        f"Pack {run['pack']['name']} v{run['pack']['version']}: {result['summaries']} summaries,"
        f" {s['planted']} with one planted error, {s['clean']} clean. Run {run['run_id']}.",
        markup=False,
    )
    out.print(_gate_table(result))
    out.print(_kind_table(result))
    out.print(
        f"Whole stack: caught {s['caught']} of {s['planted']} planted errors"
        f" ({_pct(s['catch_rate'])}); {s['not_run']} were for checks that did not run;"
        f" {s['clean_flagged']} of {s['clean']} clean summaries flagged.",
        markup=False,
    )
    out.print(f"Run log and facts: {run['folder']}", markup=False)


def _gate_table(result: dict[str, Any]) -> Table:
    table = Table(title="Per gate")
    for col in ("gate", "mode", "planted", "caught", "wrong reason", "missed", "false alarms"):
        table.add_column(col, justify="left" if col in ("gate", "mode") else "right")
    table.add_column("other findings", justify="right")
    for name, g in result["gates"].items():
        bad = g["missed"] or g["false_alarms"] or g["wrong_reason"]
        table.add_row(
            Text(name, style="bold red" if bad else ""),
            Text(g["mode"] or "-"),
            str(g["planted"]),
            str(g["caught"]),
            str(g["wrong_reason"]),
            str(g["missed"]),
            f"{g['false_alarms']} of {g['clean_checked']}",
            str(g["incidental"]),
        )
    return table


def _kind_table(result: dict[str, Any]) -> Table:
    table = Table(title="Per kind of error")
    for col in ("kind", "designed for", "planted", "caught", "wrong reason", "missed", "not run"):
        table.add_column(col, justify="left" if col in ("kind", "designed for") else "right")
    for kind, k in result["kinds"].items():
        table.add_row(
            Text(kind),
            Text(k["gate"]),
            str(k["planted"]),
            str(k["caught"]),
            str(k["wrong_reason"]),
            str(k["missed"]),
            str(k["not_run"]),
        )
    return table


# --- comparing two runs -------------------------------------------------------------


def _read_facts(out_dir: Path, run: str) -> dict[str, Any]:
    folder = Path(run) if Path(run).is_dir() else out_dir / run
    path = folder / ev.FACTS_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        fail(f"no stored run {run!r} (looked for {path})", EXIT_FAILED)
    except (OSError, ValueError) as exc:
        fail(f"cannot read {path}: {exc}", EXIT_FAILED)


COMPARED = ("caught", "wrong_reason", "missed", "false_alarms", "not_run")


def diff_facts(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """Every figure that differs between two runs' facts, per gate and per kind."""
    changes = []
    for section in ("gates", "kinds"):
        names = list(a.get(section, {})) + [n for n in b.get(section, {}) if n not in a[section]]
        for name in names:
            left, right = a[section].get(name, {}), b[section].get(name, {})
            for fig in COMPARED:
                x, y = left.get(fig), right.get(fig)
                if x != y:
                    changes.append(
                        {"section": section, "name": name, "figure": fig, "a": x, "b": y}
                    )
    return changes


def compare_runs(out_dir: Path, run_a: str, run_b: str, as_json: bool) -> int:
    a, b = _read_facts(out_dir, run_a), _read_facts(out_dir, run_b)
    changes = diff_facts(a, b)
    if as_json:
        typer.echo(json.dumps({"a": run_a, "b": run_b, "changes": changes}, indent=2))
        return EXIT_OK
    for label, facts in (("A", a), ("B", b)):
        run = facts.get("run", {})
        out.print(
            f"{label}: {run.get('run_id')} model={run.get('model')}"
            f" prompts={run.get('prompt_versions')} stack={run.get('stack')}",
            markup=False,
        )
    if not changes:
        out.print("No figure changed.", markup=False)
        return EXIT_OK
    table = Table(title="What changed")
    for col in ("per", "name", "figure", "A", "B"):
        table.add_column(col)
    for c in changes:
        table.add_row(c["section"], c["name"], c["figure"], _n(c["a"]), _n(c["b"]))
    out.print(table)
    return EXIT_OK


__all__ = ["KINDS", "eval_command", "register"]
