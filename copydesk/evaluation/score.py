"""Score the configured gate stack against the evaluation pack.

Every summary of the pack goes through every gate of the stack. Each verdict
gets one outcome, decided against the summary's key:

* clean summary: a finding is a `false_alarm`, a pass is `pass`;
* the gate designed for the summary's error: a finding whose reason or
  evidence mentions one of the key's evidence strings is `caught`, any other
  finding is `wrong_reason` (counted apart, never as a catch), a pass `missed`;
* any other gate on a summary with an error: a finding is `incidental`.

A designed gate that did not run (mode `off`, not in the stack, no model) is
recorded as `not_run` for that summary, never as a catch or a miss.

The run log holds every verdict with its evidence; the facts file holds the
headline numbers. `evals/verify.py` recomputes the facts from the log on its
own, so this module must never be the only judge of its own arithmetic.
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from copydesk.evaluation.pack import KINDS, Pack, Summary
from guards.checks import CheckReply
from guards.registry import (
    CHECK_GATES,
    DEFAULT_MODES,
    DRAFT_GATES,
    GateResult,
    run_checks,
    run_gates,
)
from summarise.base import Article, CallRecord
from summarise.checks import RAN, Checker, CheckReplyError, parse_check_input

SCRIPTED_LINE = (
    "Model checks: SCRIPTED replies shipped with the pack, not a model's:"
    " their figures test copydesk's verification code, not a judge."
)
FACTS_FILE = "facts.json"
LOG_FILE = "run.jsonl"


@dataclass(frozen=True)
class Record:
    """One line of the run log: one gate's verdict on one summary (or why it did not run)."""

    case: str
    article: str
    kind: str
    designed_gate: str | None
    gate: str
    outcome: str
    mode: str | None = None
    passed: bool | None = None
    reason: str = ""
    evidence: Any = None
    # The model calls behind a model check (on the first model-check line of a
    # summary only, so adding them up counts each call once) and their ledger ids.
    calls: list[dict[str, Any]] = field(default_factory=list)
    ledger_ids: list[int] = field(default_factory=list)
    run: int = 1
    type: str = "verdict"


# --- does a finding point at the planted error? -------------------------------

_QUOTE_STYLES = str.maketrans({c: "'" for c in "\u2018\u2019\u201a\u201b\u2032`"}) | str.maketrans(
    {c: '"' for c in "\u201c\u201d\u201e\u201f\u00ab\u00bb\u2033"}
)


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTE_STYLES).casefold()
    return " ".join(text.split())


def mentions(haystack: str, needle: str) -> bool:
    """`needle` occurs in `haystack` as whole words and whole numbers: "31" is not
    in "2,310" or "8.31", "merlin" is not in "merlins"; case, spacing and quotation
    style do not matter."""
    pattern = r"(?<!\w)(?<!\d[.,'])" + re.escape(_fold(needle)) + r"(?!\w)(?![.,']\d)"
    return re.search(pattern, _fold(haystack)) is not None


_PASSED_ENTRIES = ("supported", "faithful")


def finding_text(reason: str, evidence: Any) -> str:
    """The reason and every string of the evidence, except entries the gate itself
    marks as found or passed (a number or quotation it grounded, a claim it found
    supported, a sentence it verified faithful is not what it objects to)."""
    parts = [reason]

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, Mapping):
            if value.get("found") is True or value.get("outcome") in _PASSED_ENTRIES:
                return
            for item in value.values():
                walk(item)
        elif isinstance(value, Iterable) and not isinstance(value, bytes):
            for item in value:
                walk(item)

    walk(evidence)
    return "\n".join(parts)


def outcome(summary: Summary, gate: str, passed: bool, reason: str, evidence: Any) -> str:
    if summary.clean:
        return "pass" if passed else "false_alarm"
    if gate != summary.gate:
        return "pass" if passed else "incidental"
    if passed:
        return "missed"
    text = finding_text(reason, evidence)
    return "caught" if any(mentions(text, e) for e in summary.evidence) else "wrong_reason"


# --- running the stack ----------------------------------------------------------


@dataclass(frozen=True)
class Stack:
    """The deterministic gates with their configured modes."""

    modes: dict[str, str]

    @property
    def gates(self) -> tuple[str, ...]:
        return tuple(g for g in DRAFT_GATES if self.modes.get(g, "discard") != "off")

    def check(self, pack: Pack, summary: Summary) -> list[GateResult]:
        article = pack.article(summary.article)
        return run_gates(DRAFT_GATES, article.text, article.url, summary.text, modes=self.modes)

    def why_not_run(self, gate: str, model: ModelChecks | None) -> str:
        if gate in CHECK_GATES:
            return "no model" if model is None else "off"
        if gate not in DRAFT_GATES:
            return "not in the stack"
        return "off"


@dataclass
class ModelChecks:
    """The model checks (claims_supported, faithfulness) on one reply per summary:
    the pack's scripted replies offline, or a live checker's."""

    modes: dict[str, str]
    scripted: Mapping[str, Any] = field(default_factory=dict)
    checker: Checker | None = None

    @property
    def label(self) -> str:
        return "scripted" if self.checker is None else self.checker.name

    def reply(self, pack: Pack, summary: Summary) -> tuple[CheckReply | None, str, str, list]:
        """(reply, why not, state, call records) for one summary."""
        if self.checker is not None:
            a = pack.article(summary.article)
            got = self.checker.check(Article(summary.id, a.title, a.url, a.text), summary.text)
            if got.state == RAN:
                return got.reply, "", RAN, got.calls
            return None, got.reason or got.state, got.state, got.calls
        raw = self.scripted.get(summary.id)
        if raw is None:
            return None, "no scripted reply", "not run", []
        try:
            return parse_check_input(raw), "", RAN, []
        except CheckReplyError as exc:
            return None, str(exc), "failed", []

    def check(self, pack: Pack, summary: Summary) -> tuple[list[GateResult], list[CallRecord]]:
        reply, why, state, calls = self.reply(pack, summary)
        source = pack.article(summary.article).text
        modes = {g: self.modes.get(g, DEFAULT_MODES[g]) for g in CHECK_GATES}
        results = run_checks(source, summary.text, reply, modes=modes, why_not=why, state=state)
        return results, calls


def _record(summary: Summary, result: GateResult, run: int) -> Record:
    v = result.verdict
    if not v.ran:
        return Record(
            summary.id,
            summary.article,
            summary.kind,
            summary.gate,
            v.gate,
            "not_run",
            result.mode,
            None,
            v.reason,
            v.evidence,
            run=run,
            type="not_run",
        )
    return Record(
        summary.id,
        summary.article,
        summary.kind,
        summary.gate,
        v.gate,
        outcome(summary, v.gate, v.passed, v.reason, v.evidence),
        result.mode,
        v.passed,
        v.reason,
        v.evidence,
        run=run,
    )


Ledger = Callable[[list[CallRecord]], list[int]]


def score(
    pack: Pack,
    stack: Stack,
    model: ModelChecks | None = None,
    run: int = 1,
    ledger: Ledger | None = None,
) -> list[Record]:
    """Every verdict of the stack on every summary of the pack, as log records.
    `ledger` stores a summary's model calls and returns their ledger ids."""
    records: list[Record] = []
    for summary in pack.summaries:
        results = stack.check(pack, summary)
        first_model_line = len(results)
        calls: list[CallRecord] = []
        if model is not None:
            checked, calls = model.check(pack, summary)
            results = results + checked
        lines = [_record(summary, r, run) for r in results]
        if calls and len(lines) > first_model_line:
            ids = ledger(calls) if ledger is not None else []
            lines[first_model_line] = replace(
                lines[first_model_line], calls=[_call(c) for c in calls], ledger_ids=ids
            )
        records += lines
        ran = {r.gate for r in results}
        if summary.gate is not None and summary.gate not in ran:
            why = stack.why_not_run(summary.gate, model)
            records.append(
                Record(
                    summary.id,
                    summary.article,
                    summary.kind,
                    summary.gate,
                    summary.gate,
                    "not_run",
                    reason=why,
                    run=run,
                    type="not_run",
                )
            )
    return records


def _call(call: CallRecord) -> dict[str, Any]:
    """What the run log keeps of one model call: enough to cost and audit it."""
    keep = ("purpose", "backend", "model", "ok", "error", "input_tokens", "output_tokens")
    keep += ("cache_read_tokens", "cache_creation_tokens", "cost_usd", "request_id")
    return {k: getattr(call, k, None) for k in keep}


# --- the headline numbers -------------------------------------------------------


def rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _gate_facts(records: list[Record]) -> dict[str, dict[str, Any]]:
    """Per gate that ran or was meant to run on these summaries (a designed gate
    missing from the stack has no mode and is left to the per-kind figures)."""
    gates: dict[str, dict[str, Any]] = {}
    for r in records:
        if r.mode is None:
            continue
        g = gates.setdefault(
            r.gate,
            {"mode": r.mode, "planted": 0, "caught": 0, "wrong_reason": 0, "missed": 0}
            | {"false_alarms": 0, "clean_checked": 0, "incidental": 0, "not_run": 0},
        )
        if r.outcome == "not_run":
            g["not_run"] += 1
        elif r.outcome in ("caught", "wrong_reason", "missed"):
            g["planted"] += 1
            g[r.outcome] += 1
        elif r.outcome == "incidental":
            g["incidental"] += 1
        if r.kind == "clean" and r.outcome != "not_run":
            g["clean_checked"] += 1
            g["false_alarms"] += r.outcome == "false_alarm"
    for g in gates.values():
        g["catch_rate"] = rate(g["caught"], g["planted"])
        g["false_alarm_rate"] = rate(g["false_alarms"], g["clean_checked"])
    return gates


def _kind_facts(pack: Pack, records: list[Record]) -> dict[str, dict[str, Any]]:
    """Per kind of error: what its designed gate made of it."""
    kinds = {
        kind: {"gate": gate, "planted": 0, "caught": 0, "wrong_reason": 0, "missed": 0}
        | {"not_run": 0}
        for kind, gate in KINDS.items()
    }
    for s in pack.summaries:
        if not s.clean:
            kinds[s.kind]["planted"] += 1
    for r in records:
        if r.kind != "clean" and r.gate == r.designed_gate:
            kinds[r.kind][r.outcome] += 1
    for k in kinds.values():
        k["catch_rate"] = rate(k["caught"], k["planted"])
    return kinds


def facts(pack: Pack, records: list[Record], run: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of one run, every one recomputable from the log."""
    summaries = pack.summaries
    clean_total = sum(s.clean for s in summaries)
    kinds = _kind_facts(pack, records)
    alarmed = {r.case for r in records if r.outcome == "false_alarm"}
    caught = {r.case for r in records if r.outcome == "caught"}
    found = {r.case for r in records if r.outcome in ("caught", "wrong_reason", "incidental")}
    planted = len(summaries) - clean_total
    stack = {
        "planted": planted,
        "caught": len(caught),
        "found_by_any_gate": len(found),
        "not_run": sum(k["not_run"] for k in kinds.values()),
        "clean": clean_total,
        "clean_flagged": len(alarmed),
    }
    stack["catch_rate"] = rate(stack["caught"], planted)
    stack["false_alarm_rate"] = rate(stack["clean_flagged"], clean_total)
    return {
        "run": run,
        "summaries": len(summaries),
        "stack": stack,
        "gates": _gate_facts(records),
        "kinds": kinds,
    }


SPREAD_GATE_FIGURES = ("caught", "wrong_reason", "missed", "false_alarms", "incidental", "not_run")
SPREAD_KIND_FIGURES = ("caught", "wrong_reason", "missed", "not_run")


def _spread(values: list[int]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def facts_of_runs(pack: Pack, records: list[Record], run: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of run 1, and for the model checks the spread (min,
    median, max) of each figure over every run, with the calls and their cost."""
    runs = sorted({r.run for r in records}) or [1]
    per_run = [facts(pack, [r for r in records if r.run == i], run) for i in runs]
    result = per_run[0]
    gates = {
        g: {f: _spread([p["gates"][g][f] for p in per_run]) for f in SPREAD_GATE_FIGURES}
        for g in CHECK_GATES
        if all(g in p["gates"] for p in per_run)
    }
    kinds = {
        k: {f: _spread([p["kinds"][k][f] for p in per_run]) for f in SPREAD_KIND_FIGURES}
        for k, gate in KINDS.items()
        if gate in CHECK_GATES
    }
    calls = [c for r in records for c in r.calls]
    cost = sum(c.get("cost_usd") or 0 for c in calls)
    result["runs"] = len(runs)
    result["spread"] = {"gates": gates, "kinds": kinds}
    result["cost"] = {"calls": len(calls), "cost_usd": round(cost, 6)}
    return result


def shortfalls(result: dict[str, Any], gates: Iterable[str]) -> list[str]:
    """What the named gates missed or falsely flagged, one line each (empty: none)."""
    lines = []
    for name in gates:
        g = result["gates"].get(name)
        if g is None:
            continue
        for field_name in ("missed", "wrong_reason", "false_alarms"):
            if g[field_name]:
                lines.append(f"{name}: {g[field_name]} {field_name.replace('_', ' ')}")
    return lines


# --- where a run is written ---------------------------------------------------


def run_identity(
    pack: Pack,
    prompt_versions: Mapping[str, str],
    model: str | None,
    modes: Mapping[str, str],
) -> str:
    """A short hash of the pack, the prompt versions, the model and the gate modes."""
    blob = json.dumps(
        {
            "pack": pack.digest,
            "prompts": dict(prompt_versions),
            "model": model,
            "modes": dict(modes),
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:10]


def run_folder(out: Path, identity: str, now: datetime | None = None) -> Path:
    day = (now or datetime.now(UTC)).strftime("%Y-%m-%d")
    return out / f"{day}_{identity}"


def claim_run_folder(out: Path, identity: str, now: datetime | None = None) -> Path:
    """Create and return a new, empty run folder: `<date>_<hash>`, or `<date>_<hash>-N`
    when that day already holds N-1 runs of the same identity. A run never overwrites
    another: the folder is created exclusively, so two evals started at once get two."""
    base = run_folder(out, identity, now)
    out.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        folder = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            n += 1


def write_run(folder: Path, header: dict[str, Any], records: list[Record], result: dict) -> None:
    """The run log (JSON Lines: a header, then every verdict) and the facts file."""
    with (folder / LOG_FILE).open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "run"} | header, ensure_ascii=False) + "\n")
        for r in records:
            fh.write(json.dumps(asdict(r), ensure_ascii=False, default=str) + "\n")
    (folder / FACTS_FILE).write_text(
        json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
