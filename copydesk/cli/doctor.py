"""`copydesk doctor`: the day-one command. Offline it checks the configuration, the
database, the key's presence, the models and their prices; with `--live` it makes
one summary and one check of a bundled (invented) article with the configured
models and prints what the API did: model ids, temperature sent or why not, the
schema enforcement used, tokens (input, cache write, cache read, output), cost,
latency and the verdicts."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import typer

from copydesk.cli import context as cx

if TYPE_CHECKING:
    from summarise.base import CallRecord


EXIT_OK, EXIT_FAILED, EXIT_UNABLE = 0, 1, 3

# Invented, like every sample text of copydesk (summarise.base.Article's fields; made
# into one in `_live`, so that `--help` need not import the model side).
ARTICLE = dict(
    key="doctor",
    title="Marrowby ferry to run a winter timetable",
    url="https://doctor.copydesk.invalid/marrowby-ferry",
    text=(
        "The Marrowby ferry will run a reduced winter timetable from 4 January, its "
        "operator, Tidewell Crossings, said on Monday. Sailings will leave every 50 "
        "minutes instead of every 30 while the second vessel, the Gull Rock, is in dry "
        "dock for 9 weeks.\n\n"
        "The company said about 1,900 passengers use the crossing on a winter weekday. "
        "Its operations manager, Petra Lindgaard, said the refit could not wait another "
        'year. "The hull survey left us no choice," she said.\n\n'
        "Marrowby council asked the operator to keep the first sailing at 6.10am so that "
        "hospital staff can reach the early shift. The operator said it would publish the "
        "full timetable on its website by 20 December."
    ),
)


def doctor(
    cli: typer.Context,
    live: bool = typer.Option(
        False, "--live", help="make one summary and one check with the configured models"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the findings as JSON"),
) -> None:
    """Check that copydesk can work here: configuration, database, key, models and
    prices (offline); with --live, one summary and one check of a bundled article
    through the API. Exit 0 all well, 1 a check failed (backend "anthropic" without
    a key), 3 could not check (no database: every finding is still shown)."""
    from summarise.capabilities import request_plan

    settings = cx.load(cli)
    env = dict(os.environ)
    key = bool((env.get("ANTHROPIC_API_KEY") or "").strip())
    if live and not key:
        cx.fail("doctor --live needs ANTHROPIC_API_KEY")
    findings: list[dict[str, Any]] = [
        {"check": "configuration", "ok": True, "detail": "loaded"},
        _database(cli, settings),
        _key(settings, env, key),
    ]
    for section, cfg in (("summarise", settings.summarise), ("checks", settings.checks)):
        plan = request_plan(cfg.model, cfg.temperature, section, config_prices=cfg.prices)
        refused = plan["temperature"].startswith("refused")
        findings.append({"check": f"[{section}] {cfg.model}", "ok": not refused, "plan": plan})
    live_part: dict[str, Any] | None = None
    if live:
        live_part = _live(settings, env)
        findings.append(
            {"check": "live", "ok": live_part["ok"], "detail": live_part.get("error") or "done"}
        )
    ok = all(f["ok"] for f in findings)
    if as_json:
        cx.emit_json({"ok": ok, "findings": findings, "live": live_part})
    else:
        _print(findings, live_part)
    if not findings[1]["ok"]:  # no database: 3, as every other command says it
        cx.fail(findings[1]["detail"])
    raise typer.Exit(EXIT_OK if ok else EXIT_FAILED)


def _database(cli: typer.Context, settings: Any) -> dict[str, Any]:
    """The database opens as every other command opens it: a missing file or one
    without copydesk's tables is a failed check naming it and `copydesk init`
    (doctor creates nothing), shown with the other findings before exit 3."""
    from store.db import StoreError, open_read_only, open_store

    try:
        if cx.state(cli).read_only:
            engine = open_read_only(settings.database.url)
        else:
            engine = open_store(settings.database.url, create=False)
    except StoreError as exc:
        return {"check": "database", "ok": False, "detail": str(exc).splitlines()[0]}
    engine.dispose()
    return {"check": "database", "ok": True, "detail": engine.url.get_backend_name()}


def _key(settings: Any, env: dict[str, str], key: bool) -> dict[str, Any]:
    """The key's presence, a failure where a run needs it: backend "anthropic"
    without a key is `copydesk run` exit 3 (summarise/factory.py), so doctor fails
    too. With "auto" and no key a run uses the offline summariser: not a failure."""
    from summarise.factory import choose_backend

    if key:
        return {"check": "ANTHROPIC_API_KEY", "ok": True, "detail": "set"}
    if choose_backend(settings.summarise, env) == "anthropic":
        detail = (
            'not set, and [summarise] backend = "anthropic" needs it: `copydesk run` would '
            'exit 3 (set it, or choose backend = "extractive")'
        )
        return {"check": "ANTHROPIC_API_KEY", "ok": False, "detail": detail}
    return {"check": "ANTHROPIC_API_KEY", "ok": True, "detail": "not set"}


def _live(settings: Any, env: dict[str, str]) -> dict[str, Any]:
    """One summary and one check with the configured models, and what they cost."""
    from guards.registry import DRAFT_GATES, run_checks, run_gates
    from summarise.base import Article, BackendUnavailable, SummaryFailed
    from summarise.checks import NoChecker
    from summarise.factory import BackendChoiceError, make_checker, make_summariser

    article = Article(**ARTICLE)
    try:
        summariser = make_summariser(settings.summarise, env)
        checker = make_checker(settings.checks, env)
    except BackendChoiceError as exc:
        return {"ok": False, "error": str(exc), "calls": []}
    try:
        draft = summariser.summarise(article)
    except (SummaryFailed, BackendUnavailable) as exc:
        calls = getattr(exc, "calls", [])
        return {"ok": False, "error": f"summary failed: {exc}", "calls": _calls(calls)}
    calls = list(draft.calls)
    modes = settings.gates.all_modes()
    verdicts = run_gates(DRAFT_GATES, article.text, article.url, draft.text, modes=modes)
    if isinstance(checker, NoChecker):
        check_state, reason = "not run", checker.why
    else:
        outcome = checker.check(article, draft.text)
        calls += outcome.calls
        check_state, reason = outcome.state, outcome.reason
        verdicts += run_checks(
            article.text,
            draft.text,
            outcome.reply,
            modes=modes,
            why_not=outcome.reason or "",
            state=outcome.state,
        )
    return {
        "ok": check_state == "ran",
        "error": None if check_state == "ran" else f"check {check_state}: {reason}",
        "headline": draft.headline,
        "summary": draft.summary,
        "calls": _calls(calls),
        "cost_usd": _total(calls),
        "verdicts": [
            {"gate": r.gate, "passed": r.verdict.passed, "reason": r.verdict.reason}
            for r in verdicts
        ],
    }


def _calls(calls: list[CallRecord]) -> list[dict[str, Any]]:
    out = []
    for call in calls:
        sent = call.request_json or {}
        strict = any(t.get("strict") for t in sent.get("tools", []) if isinstance(t, dict))
        out.append(
            {
                "purpose": call.purpose,
                "model": call.model,
                "ok": call.ok,
                "temperature": (
                    f"{call.temperature:g} sent"
                    if call.temperature_in_force and call.temperature is not None
                    else 'not sent ("model-default")'
                ),
                "schema": "strict tools (enforced by the API)" if strict else "copydesk only",
                "tool_choice": (sent.get("tool_choice") or {}).get("type"),
                "input_tokens": call.input_tokens,
                "cache_write_tokens": call.cache_creation_tokens,
                "cache_read_tokens": call.cache_read_tokens,
                "output_tokens": call.output_tokens,
                "cost_usd": call.cost_usd,
                "latency_ms": call.latency_ms,
                "error": call.error,
            }
        )
    return out


def _total(calls: list[CallRecord]) -> float | None:
    """The calls' cost; None (unknown) as soon as one answered call has no price."""
    costs = [c.cost_usd for c in calls if c.ok]
    if any(c is None for c in costs):
        return None
    return round(sum(c for c in costs if c is not None), 8)


def _print(findings: list[dict[str, Any]], live: dict[str, Any] | None) -> None:
    for f in findings:
        mark = "ok  " if f["ok"] else "FAIL"
        if "plan" in f:
            plan = f["plan"]
            cx.out.print(f"{mark} {f['check']}", markup=False)
            for label in ("temperature", "tool_choice", "schema", "cache", "lifecycle"):
                cx.out.print(f"       {label}: {plan[label]}", markup=False)
            if plan["price"] is None:
                cx.out.print("       price: unknown (cost shown as unknown)", markup=False)
        else:
            cx.out.print(f"{mark} {f['check']}: {f['detail']}", markup=False)
    if not live:
        return
    for call in live["calls"]:
        cost = "unknown" if call["cost_usd"] is None else f"${call['cost_usd']:.6f}"
        cx.out.print(
            f"  {call['purpose']}: {call['model']}, temperature {call['temperature']}, "
            f"schema {call['schema']}, tool_choice {call['tool_choice']}; tokens in "
            f"{call['input_tokens']}, cache write {call['cache_write_tokens']}, cache read "
            f"{call['cache_read_tokens']}, out {call['output_tokens']}; cost {cost}; "
            f"{call['latency_ms']} ms" + (f"; error: {call['error']}" if call["error"] else ""),
            markup=False,
        )
    for v in live.get("verdicts", []):
        cx.out.print(
            f"  {v['gate']}: {'passed' if v['passed'] else 'FAILED'} ({v['reason']})",
            markup=False,
        )
    total = live.get("cost_usd")
    if "cost_usd" in live:
        cx.out.print(f"  total: {'unknown' if total is None else f'${total:.6f}'}", markup=False)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
