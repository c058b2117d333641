#!/usr/bin/env python3
"""Recompute every number of an eval run's facts file from its raw run log.

    python evals/verify.py RUN_DIR [--pack DIR]
    python evals/verify.py --selftest RUN_DIR [--pack DIR]

Standard library only, and on purpose sharing no code with the scorer
(`copydesk/evaluation/score.py`): it reads the pack's TOML files itself (its own copy
of every key and evidence string), reads the run log line by line, decides each
verdict's outcome with its own matching, adds up with its own arithmetic, and
compares the result with the facts file. Exit 0 when every figure agrees,
1 on any difference (each one named), 2 on bad usage or unreadable files.

`--selftest` plants four errors in copies of the run's facts file (an
inflated catch count, a false alarm dropped, a miss moved to another kind, a
rate that does not match its counts) and exits 0 only if all four are caught
and the untouched copy passes.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
import tempfile
import tomllib
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent


class Unreadable(Exception):
    pass


# --- the pack, read again from its files ------------------------------------------


def read_pack(pack_dir):
    """{summary id: (kind, gate, [evidence])}, {kind: designed gate}, and the pack digest."""
    manifest_path = pack_dir / "manifest.toml"
    try:
        manifest = tomllib.loads(manifest_path.read_text(encoding="utf-8"))
        digest = hashlib.sha256(manifest_path.read_bytes())
        keys = {}
        for name in manifest["articles"]:
            path = pack_dir / name
            digest.update(path.read_bytes())
            article = tomllib.loads(path.read_text(encoding="utf-8"))
            for s in article["summary"]:
                keys[s["id"]] = (s["key"], s.get("gate"), list(s.get("evidence", [])))
        for name in manifest.get("scripted", []):
            digest.update((pack_dir / name).read_bytes())
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise Unreadable(f"cannot read the pack at {pack_dir}: {exc}") from None
    return keys, dict(manifest["designed_gates"]), digest.hexdigest()


# --- matching evidence, written afresh -------------------------------------------

SINGLE = "\u2018\u2019\u201a\u201b\u2032`"
DOUBLE = "\u201c\u201d\u201e\u201f\u00ab\u00bb\u2033"


def normal(text):
    text = unicodedata.normalize("NFKC", text)
    chars = []
    for ch in text:
        if ch in SINGLE:
            ch = "'"
        elif ch in DOUBLE:
            ch = '"'
        chars.append(ch)
    return " ".join("".join(chars).casefold().split())


def is_word_char(ch):
    return ch.isalnum() or ch == "_"


def whole_occurrence(text, needle):
    """Is `needle` in `text` with no word character, and no digit joined by a
    separator, on either side?"""
    text, needle = normal(text), normal(needle)
    start = text.find(needle)
    while start != -1:
        end = start + len(needle)
        before = text[start - 1] if start > 0 else ""
        before2 = text[start - 2] if start > 1 else ""
        after = text[end] if end < len(text) else ""
        after2 = text[end + 1] if end + 1 < len(text) else ""
        joined_before = before in ".,'" and before2.isdigit()
        joined_after = after in ".,'" and after2.isdigit()
        if not is_word_char(before) and not is_word_char(after):
            if not joined_before and not joined_after:
                return True
        start = text.find(needle, start + 1)
    return False


def strings_of(value, into):
    """Every string of a verdict's evidence, skipping entries marked found."""
    if isinstance(value, str):
        into.append(value)
    elif isinstance(value, dict):
        passed_entry = value.get("found") is True or value.get("outcome") in (
            "supported",
            "faithful",
        )
        if not passed_entry:
            for v in value.values():
                strings_of(v, into)
    elif isinstance(value, list):
        for v in value:
            strings_of(v, into)
    return into


def decide(key, line):
    kind, gate, evidence = key
    if kind == "clean":
        return "pass" if line["passed"] else "false_alarm"
    if line["gate"] != gate:
        return "pass" if line["passed"] else "incidental"
    if line["passed"]:
        return "missed"
    texts = [line.get("reason") or ""] + strings_of(line.get("evidence"), [])
    hit = any(whole_occurrence(t, e) for t in texts for e in evidence)
    return "caught" if hit else "wrong_reason"


# --- the arithmetic ------------------------------------------------------------


def share(part, whole):
    if whole == 0:
        return None
    return round(part / whole, 4)


def read_log(path):
    try:
        lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    except (OSError, ValueError) as exc:
        raise Unreadable(f"cannot read the run log {path}: {exc}") from None
    if not lines or lines[0].get("type") != "run":
        raise Unreadable(f"{path}: the first line must be the run header")
    return lines[0], lines[1:]


def recompute(header, lines, keys, kind_names):
    problems = []
    gates, kinds = {}, {}
    for name, gate in kind_names.items():
        kinds[name] = {"gate": gate, "planted": 0, "caught": 0, "wrong_reason": 0}
        kinds[name].update({"missed": 0, "not_run": 0})
    for kind, _, _ in keys.values():
        if kind != "clean":
            kinds[kind]["planted"] += 1
    seen = set()
    caught_cases, flagged_cases, found_cases = set(), set(), set()
    for line in lines:
        case = line.get("case")
        if case not in keys:
            problems.append(f"run log: verdict for unknown summary {case!r}")
            continue
        seen.add(case)
        key = keys[case]
        gate = line["gate"]
        g = None
        if line.get("mode") is not None:
            g = gates.get(gate)
            if g is None:
                g = gates[gate] = {"mode": line.get("mode")}
                for name in ("planted", "caught", "wrong_reason", "missed", "false_alarms"):
                    g[name] = 0
                g["clean_checked"] = 0
                g["incidental"] = 0
                g["not_run"] = 0
        if line.get("type") == "not_run":
            if line.get("outcome") != "not_run":
                problems.append(f"run log: {case} {gate}: a check that did not run is not_run")
            if g is not None:
                g["not_run"] += 1
            if key[0] != "clean" and gate == key[1]:
                kinds[key[0]]["not_run"] += 1
            continue
        result = decide(key, line)
        if result != line.get("outcome"):
            problems.append(
                f"run log: {case} {line['gate']}: outcome {line.get('outcome')!r},"
                f" the verdict says {result!r}"
            )
        if g is None:
            problems.append(f"run log: {case} {gate}: a verdict without a mode")
            continue
        if key[0] == "clean":
            g["clean_checked"] += 1
            if result == "false_alarm":
                g["false_alarms"] += 1
                flagged_cases.add(case)
        elif result == "incidental":
            g["incidental"] += 1
            found_cases.add(case)
        elif result != "pass":
            g["planted"] += 1
            g[result] += 1
            kinds[key[0]][result] += 1
            if result == "caught":
                caught_cases.add(case)
            if result in ("caught", "wrong_reason"):
                found_cases.add(case)
    for missing in sorted(set(keys) - seen):
        problems.append(f"run log: no verdict at all for summary {missing}")
    for g in gates.values():
        g["catch_rate"] = share(g["caught"], g["planted"])
        g["false_alarm_rate"] = share(g["false_alarms"], g["clean_checked"])
    for k in kinds.values():
        k["catch_rate"] = share(k["caught"], k["planted"])
    clean = sum(1 for k, _, _ in keys.values() if k == "clean")
    planted = len(keys) - clean
    stack = {
        "planted": planted,
        "caught": len(caught_cases),
        "found_by_any_gate": len(found_cases),
        "not_run": sum(k["not_run"] for k in kinds.values()),
        "clean": clean,
        "clean_flagged": len(flagged_cases),
        "catch_rate": share(len(caught_cases), planted),
        "false_alarm_rate": share(len(flagged_cases), clean),
    }
    result = {"run": header_without_type(header), "summaries": len(keys), "stack": stack}
    result.update({"gates": gates, "kinds": kinds})
    return result, problems


def header_without_type(header):
    return {k: v for k, v in header.items() if k != "type"}


def differences(expected, stated, path=""):
    """Every leaf where the stated facts differ from the recomputed ones."""
    found = []
    if isinstance(expected, dict) and isinstance(stated, dict):
        for name in list(expected) + [n for n in stated if n not in expected]:
            where = f"{path}.{name}" if path else name
            if name not in stated:
                found.append(f"{where}: missing from the facts (recomputed {expected[name]!r})")
            elif name not in expected:
                found.append(
                    f"{where}: {stated[name]!r} in the facts, not recomputable from the log"
                )
            else:
                found += differences(expected[name], stated[name], where)
    elif expected != stated or type(expected) is not type(stated):
        found.append(f"{path}: facts say {stated!r}, the run log gives {expected!r}")
    return found


def verify(run_dir, pack_dir, facts_path=None, log_path=None):
    """The list of differences between the facts and the run log (empty: all agree)."""
    keys, kind_names, digest = read_pack(pack_dir)
    header, lines = read_log(log_path or run_dir / "run.jsonl")
    facts_path = facts_path or run_dir / "facts.json"
    try:
        stated = json.loads(facts_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise Unreadable(f"cannot read the facts file {facts_path}: {exc}") from None
    problems = []
    if header.get("pack", {}).get("digest") != digest:
        problems.append("run log: the run was made with a different pack than the one read here")
    expected, log_problems = recompute_runs(header, lines, keys, kind_names)
    return problems + log_problems + differences(expected, stated)


GATE_SPREAD = ("caught", "wrong_reason", "missed", "false_alarms", "incidental", "not_run")
KIND_SPREAD = ("caught", "wrong_reason", "missed", "not_run")
MODEL_CHECKS = ("claims_supported", "faithfulness")


def low_mid_high(values):
    ordered = sorted(values)
    n = len(ordered)
    middle = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    return {"min": ordered[0], "median": middle, "max": ordered[-1]}


def recompute_runs(header, lines, keys, kind_names):
    """Run 1's figures, the spread of the model checks' figures over every run,
    and the model calls with their cost."""
    run_numbers = sorted({line.get("run", 1) for line in lines}) or [1]
    problems, per_run = [], []
    for number in run_numbers:
        mine = [line for line in lines if line.get("run", 1) == number]
        figures, found = recompute(header, mine, keys, kind_names)
        per_run.append(figures)
        problems += found if number == run_numbers[0] else []
    result = per_run[0]
    gates = {}
    for gate in MODEL_CHECKS:
        if all(gate in figures["gates"] for figures in per_run):
            gates[gate] = {
                f: low_mid_high([figures["gates"][gate][f] for figures in per_run])
                for f in GATE_SPREAD
            }
    kinds = {}
    for kind in kind_names:
        if result["kinds"][kind]["gate"] in MODEL_CHECKS:
            kinds[kind] = {
                f: low_mid_high([figures["kinds"][kind][f] for figures in per_run])
                for f in KIND_SPREAD
            }
    calls = [call for line in lines for call in line.get("calls") or []]
    total = 0
    for call in calls:
        total += call.get("cost_usd") or 0
    result["runs"] = len(run_numbers)
    result["spread"] = {"gates": gates, "kinds": kinds}
    result["cost"] = {"calls": len(calls), "cost_usd": round(total, 6)}
    return result, problems


# --- the selftest ----------------------------------------------------------------


def _with_rate(section):
    section["catch_rate"] = share(section["caught"], section["planted"])


def _add_event(lines, keys, want):
    """Change one verdict in a copy of the log so that an event of kind `want`
    exists (a false alarm, or a miss), as if the run had produced it."""
    lines = copy.deepcopy(lines)
    for line in lines:
        if line.get("type") == "not_run":
            continue
        kind, gate, _ = keys[line["case"]]
        if want == "false_alarm" and kind == "clean" and line["passed"]:
            line.update(passed=False, reason="planted finding", outcome="false_alarm")
            return lines
        if want == "missed" and kind != "clean" and line["gate"] == gate and not line["passed"]:
            line.update(passed=True, reason="planted pass", evidence=[], outcome="missed")
            return lines
    raise Unreadable(f"the run has no verdict that could be turned into a {want}")


def plants(header, lines, facts, keys, kind_names):
    """(name, facts copy, log lines) for each of the four planted errors."""
    out = []
    f = copy.deepcopy(facts)
    name = next(n for n, g in f["gates"].items() if g["caught"] > 0)
    f["gates"][name]["caught"] += 1
    _with_rate(f["gates"][name])
    f["stack"]["caught"] += 1
    f["stack"]["catch_rate"] = share(f["stack"]["caught"], f["stack"]["planted"])
    out.append(("an inflated catch count", f, lines))

    noisy = _add_event(lines, keys, "false_alarm")
    out.append(("a false alarm dropped", copy.deepcopy(facts), noisy))

    missing = _add_event(lines, keys, "missed")
    truth, _ = recompute_runs(header, missing, keys, kind_names)
    moved = copy.deepcopy(truth)
    source = next(k for k, v in moved["kinds"].items() if v["missed"] > 0)
    target = next(k for k in moved["kinds"] if k != source and moved["kinds"][k]["planted"])
    moved["kinds"][source]["missed"] -= 1
    moved["kinds"][target]["missed"] += 1
    out.append(("a miss moved to another kind", moved, missing))

    f = copy.deepcopy(facts)
    name = next(iter(f["gates"]))
    rate = f["gates"][name]["catch_rate"] or 0.0
    f["gates"][name]["catch_rate"] = round(min(1.0, rate + 0.05) if rate < 1 else 0.95, 4)
    out.append(("a rate that does not match its counts", f, lines))
    return out


def selftest(run_dir, pack_dir):
    keys, kind_names, _ = read_pack(pack_dir)
    header, lines = read_log(run_dir / "run.jsonl")
    facts = json.loads((run_dir / "facts.json").read_text(encoding="utf-8"))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cases = [("the untouched copy", copy.deepcopy(facts), lines)]
        cases += plants(header, lines, facts, keys, kind_names)
        for i, (name, planted, log_lines) in enumerate(cases):
            facts_path, log_path = tmp / f"facts{i}.json", tmp / f"run{i}.jsonl"
            facts_path.write_text(json.dumps(planted), encoding="utf-8")
            rows = [json.dumps(header)] + [json.dumps(x) for x in log_lines]
            log_path.write_text("\n".join(rows) + "\n", encoding="utf-8")
            found = verify(run_dir, pack_dir, facts_path, log_path)
            ok = not found if i == 0 else bool(found)
            failures += not ok
            verdict = "ok" if ok else "NOT CAUGHT" if i else "FAILED"
            detail = found[0] if found else "no difference"
            print(f"{verdict:10} {name}: {detail}")
    return 1 if failures else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="a run folder written by `copydesk eval`")
    parser.add_argument("--pack", type=Path, default=HERE / "pack", help="the pack folder")
    parser.add_argument("--selftest", action="store_true", help="plant four errors, catch all")
    args = parser.parse_args(argv)
    try:
        if args.selftest:
            return selftest(args.run_dir, args.pack)
        found = verify(args.run_dir, args.pack)
    except Unreadable as exc:
        print(f"verify: error: {exc}", file=sys.stderr)
        return 2
    for line in found:
        print(f"DIFFERENCE {line}")
    if found:
        print(f"verify: {len(found)} difference(s) between the facts and the run log")
        return 1
    print(f"verify: every figure in {args.run_dir / 'facts.json'} agrees with the run log")
    return 0


if __name__ == "__main__":
    sys.exit(main())
