"""`copydesk eval`: what the gate stack catches, misses and falsely flags, in numbers.

It validates the pack (refusing a broken one with the reason), runs the
configured gate stack over every summary, writes a run log and a facts file
under `<out>/<date>_<hash>/` (`-2`, `-3`, ... for a later run of the same
identity that day: a run never overwrites another), and prints a table (or
`--json`). Exit codes: 0 the stack caught every planted error its gates are
designed for with no false alarm, 1 it did not, 2 bad usage (e.g. `--calibrate`
without a model), 3 the pack or the config could not be read.

`--compare RUN_A RUN_B` shows what changed between two stored runs, and
`--from-decisions` reads editors' decisions from the audit log instead.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from copydesk.cli.context import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    connect,
    context,
    emit_json,
    fail,
    load,
    out,
)

if TYPE_CHECKING:
    from rich.table import Table
    from sqlalchemy.engine import Engine

    from copydesk.config import Settings
    from copydesk.evaluation import score as ev
    from copydesk.evaluation.pack import Pack
    from summarise.base import CallRecord


DEFAULT_OUT = Path("eval-runs")
CALIBRATION_FILE = "calibration.json"


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
    from copydesk.evaluation import score as ev
    from copydesk.evaluation.calibrate import calibrate as calibrate_judge
    from copydesk.evaluation.pack import PackError, default_pack_dir, load_pack
    from guards.registry import DRAFT_GATES
    from summarise.prompt import CHECK_PROMPT_VERSION

    if since is not None and not from_decisions:
        fail("--since goes with --from-decisions", EXIT_USAGE)
    if compare is not None:
        raise typer.Exit(compare_runs(out_dir, compare[0], compare[1], as_json))
    if from_decisions:
        raise typer.Exit(decisions_command(cli, since, as_json))
    settings = load(cli)
    live = _has_key(settings)
    if calibrate and not live:
        fail("--calibrate needs a model: set ANTHROPIC_API_KEY (no model is configured)", 2)
    if runs > 1 and not live:
        fail("--runs repeats the model checks and needs a model: set ANTHROPIC_API_KEY", 2)
    try:
        pack = load_pack(pack_dir or default_pack_dir())
    except PackError as exc:
        fail(f"the evaluation pack is broken: {exc}")
    stack = ev.Stack({g: settings.gates.mode(g) for g in DRAFT_GATES})
    model = _model_checks(settings, pack, live)
    ledger = LedgerWriter(connect(settings), model.label) if live else None
    records: list[ev.Record] = []
    for run in range(1, max(runs, 2 if calibrate else 1) + 1):
        records += ev.score(pack, stack, model, run=run, ledger=ledger)
    model_name = settings.checks.model if live else None
    modes = stack.modes | model.modes
    identity = ev.run_identity(
        pack, {"checks": CHECK_PROMPT_VERSION}, model_name or model.label, modes
    )
    calibration = calibrate_judge(pack, model, records, ledger) if calibrate else None
    folder = _claim(out_dir, identity)
    header = _header(pack, modes, identity, folder, model, model_name)
    if ledger is not None:
        header["ledger"] = ledger.close()
    result = ev.facts_of_runs(pack, records, header)
    _write(folder, header, records, result, calibration)
    if as_json:
        emit_json(result | _maybe(calibration))
    else:
        print_report(result)
        if calibration is not None:
            print_calibration(calibration)
    short = ev.shortfalls(result, stack.gates)
    raise typer.Exit(EXIT_FAILED if short else EXIT_OK)


def _maybe(calibration: dict[str, Any] | None) -> dict[str, Any]:
    return {} if calibration is None else {"calibration": calibration}


def _claim(out_dir: Path, identity: str) -> Path:
    from copydesk.evaluation import score as ev

    try:
        return ev.claim_run_folder(out_dir, identity)
    except OSError as exc:
        fail(f"cannot write the run to {out_dir}/: {exc.strerror or exc}")


def _write(
    folder: Path,
    header: dict[str, Any],
    records: list[ev.Record],
    result: dict[str, Any],
    calibration: dict[str, Any] | None,
) -> None:
    from copydesk.evaluation import score as ev

    try:
        ev.write_run(folder, header, records, result)
        if calibration is not None:
            (folder / CALIBRATION_FILE).write_text(
                json.dumps(calibration, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
    except OSError as exc:
        fail(f"cannot write the run to {folder}: {exc.strerror or exc}")


class LedgerWriter:
    """Writes each model call of an eval run to the ledger (`model_calls`, no item),
    under one `runs` row, and hands back the ids for the run log."""

    def __init__(self, engine: Engine, backend: str):
        from store.db import session_scope
        from store.models import Run

        self.engine = engine
        with session_scope(engine) as session:
            run = Run(command="eval", backend=backend)
            session.add(run)
            session.flush()
            self.run_id = run.id

    def __call__(self, calls: list[CallRecord]) -> list[int]:
        from store import ledger
        from store.db import session_scope

        with session_scope(self.engine) as session:
            rows = ledger.add(session, calls, item_id=None, run_id=self.run_id)
            session.flush()
            return [row.id for row in rows if row.id is not None]

    def close(self) -> dict[str, Any]:
        """The run's calls and their cost, as the ledger has them."""
        from sqlalchemy import func
        from sqlmodel import select

        from store.db import session_scope
        from store.models import ModelCall, Run, utcnow

        with session_scope(self.engine) as session:
            run = session.get(Run, self.run_id)
            if run is not None:
                run.ended_at = utcnow()
                run.exit_status = 0
            calls, cost = session.exec(
                select(func.count(ModelCall.id), func.sum(ModelCall.cost_usd)).where(
                    ModelCall.run_id == self.run_id
                )
            ).one()
        return {"run_id": self.run_id, "calls": calls, "cost_usd": round(cost or 0, 6)}


def _has_key(settings: Settings) -> bool:
    """A live checking model is available: a key, and `[checks]` not off."""
    key = (os.environ.get("ANTHROPIC_API_KEY") or "").strip()
    return bool(key) and settings.checks.backend != "off"


def _model_checks(settings: Settings, pack: Pack, live: bool) -> ev.ModelChecks:
    """The pack's scripted replies offline; with a key, the configured checking model."""
    from copydesk.evaluation import score as ev
    from guards.registry import CHECK_GATES

    modes = {g: settings.gates.mode(g) for g in CHECK_GATES}
    if not live:
        return ev.ModelChecks(modes, pack.scripted)
    from summarise.factory import make_checker

    return ev.ModelChecks(modes, checker=make_checker(settings.checks, os.environ))


def _header(
    pack: Pack,
    modes: dict[str, str],
    identity: str,
    folder: Path,
    model: ev.ModelChecks,
    model_name: str | None,
) -> dict[str, Any]:
    from copydesk.evaluation import score as ev
    from summarise.prompt import CHECK_PROMPT_VERSION

    scripted = model.checker is None
    return {
        "run_id": folder.name,
        "identity": identity,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "pack": {"name": pack.name, "version": pack.version, "digest": pack.digest},
        "stack": modes,
        "model": model_name,
        "scripted": scripted,
        "model_checks": ev.SCRIPTED_LINE if scripted else f"Model checks: {model_name}, live.",
        "prompt_versions": {"checks": CHECK_PROMPT_VERSION},
        "folder": str(folder),
    }


# --- the report -------------------------------------------------------------------


def _n(value: Any) -> str:
    return "-" if value is None else str(value)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def print_report(result: dict[str, Any]) -> None:
    run = result["run"]
    out.print(run["model_checks"], markup=False)
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
        f" ({_pct(s['catch_rate'])}) by the gate designed for them, {s['found_by_any_gate']}"
        f" flagged by some gate; {s['not_run']} were for checks that did not run;"
        f" {s['clean_flagged']} of {s['clean']} clean summaries flagged.",
        markup=False,
    )
    out.print(f"Run log and facts: {run['folder']}", markup=False)


def _gate_table(result: dict[str, Any]) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Per gate")
    for col in ("gate", "mode", "planted", "caught", "wrong reason", "missed", "false alarms"):
        table.add_column(col, justify="left" if col in ("gate", "mode") else "right")
    table.add_column("other findings", justify="right")
    table.add_column("not run", justify="right")
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
            str(g["not_run"]),
        )
    return table


def _kind_table(result: dict[str, Any]) -> Table:
    from rich.table import Table
    from rich.text import Text

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


def print_calibration(calibration: dict[str, Any]) -> None:
    c, h = calibration["clear_cut"], calibration["hard_cases"]
    st, fn = calibration["stability"], calibration["false_negatives"]
    lines = [
        "Calibrating the judge:",
        f"  clear-cut: {c['fabricated_flagged']} of {c['fabricated']} fabricated sentences flagged,"
        f" {c['clean_passed']} of {c['clean']} clean summaries passed"
        f" (accuracy {_pct(c['accuracy'])})",
        f"  hard cases: the judge agrees with the editor on {h['agree']} of {h['cases']}",
        f"  false negatives: {len(fn)} planted subtle errors missed or caught for the wrong reason",
        *(f"    {f['id']} {f['kind']} ({f['outcome']}): {f['note']}" for f in fn),
        f"  stability: {st['identical']} of {st['summaries']} summaries judged identically"
        f" in {st['runs']} runs ({_pct(st['share'])})",
    ]
    for line in lines:
        out.print(line, markup=False)


# --- comparing two runs -------------------------------------------------------------


def _read_facts(out_dir: Path, run: str) -> dict[str, Any]:
    from copydesk.evaluation import score as ev

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


def _calibration_of(out_dir: Path, run: str) -> dict[str, Any] | None:
    from copydesk.evaluation.calibrate import headline

    folder = Path(run) if Path(run).is_dir() else out_dir / run
    try:
        return headline(json.loads((folder / CALIBRATION_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def compare_runs(out_dir: Path, run_a: str, run_b: str, as_json: bool) -> int:
    from rich.table import Table
    from rich.text import Text

    a, b = _read_facts(out_dir, run_a), _read_facts(out_dir, run_b)
    changes = diff_facts(a, b)
    cal_a, cal_b = _calibration_of(out_dir, run_a), _calibration_of(out_dir, run_b)
    if cal_a is not None and cal_b is not None:
        changes += [
            {"section": "calibration", "name": "judge", "figure": k, "a": cal_a[k], "b": cal_b[k]}
            for k in cal_a
            if cal_a[k] != cal_b.get(k)
        ]
    if as_json:
        emit_json({"a": run_a, "b": run_b, "changes": changes})
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
        cells = (c["section"], c["name"], c["figure"], _n(c["a"]), _n(c["b"]))
        table.add_row(*(Text(str(cell)) for cell in cells))  # read from files: never markup
    out.print(table)
    return EXIT_OK


__all__ = ["eval_command", "register"]


# --------------------------------------------------------------------------- --from-decisions


def _decisions_since(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError:
        fail(f"--since {value!r} is not a date (YYYY-MM-DD)", EXIT_USAGE)
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def decisions_command(cli: typer.Context, since: str | None, as_json: bool) -> int:
    from sqlmodel import Session

    from copydesk.evaluation.decisions import load_decided, tally

    start = _decisions_since(since)
    cx = context(cli)
    with Session(cx.engine) as session:
        report = tally(load_decided(session, start))
    report["since"] = since
    if as_json:
        emit_json(report)
        return EXIT_OK
    _print_decisions(report)
    return EXIT_OK


def _print_decisions(report: dict[str, Any]) -> None:
    from rich.table import Table
    from rich.text import Text

    since = f" since {report['since']}" if report["since"] else ""
    out.print(f"Editors decided {report['decided']} drafts{since}.", markup=False)
    table = Table(title="Flagged drafts, per flagging gate")
    cols = ("gate", "flagged", "approved unchanged (likely false alarm)", "rejected")
    for col in cols + ("edited where the flag pointed", "edited elsewhere"):
        table.add_column(col, justify="left" if col == "gate" else "right")
    for gate, c in report["gates"].items():
        table.add_row(
            Text(gate),
            str(c["flagged"]),
            str(c["approved_unchanged"]),
            str(c["rejected"]),
            str(c["edited_at_flag"]),
            str(c["edited_elsewhere"]),
        )
    out.print(table)
    u = report["unflagged"]
    out.print(
        f"Unflagged drafts: {u['decided']} decided; {u['rejected']} rejected and"
        f" {u['edited_number_name_or_quote']} edited in a number, name or quotation"
        f" (likely misses: {u['likely_misses']}); {u['approved_unchanged']} approved unchanged.",
        markup=False,
    )
