"""`copydesk eval --calibrate`: how far to trust the judge (a live model only).

Four dimensions, each from the pack:

* clear-cut accuracy: every clean summary with a fabricated sentence carrying
  an invented figure appended must be flagged by the judge, and every clean
  summary as it is must pass;
* hard cases: the pack's ambiguous summaries, each against the verdict a
  careful editor settled on;
* false negatives: the planted subtle errors (modality, scope, time, framing,
  relation, attribution...) the judge missed or flagged for the wrong reason;
* stability: the share of summaries whose model-check verdicts were identical
  in every run (at least two).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from copydesk.evaluation.pack import Pack, Summary
from copydesk.evaluation.score import Ledger, ModelChecks, Record, rate
from guards.numbers import tokenise
from guards.registry import CHECK_GATES

JUDGE = "faithfulness"


def fabricated_figure(source: str) -> str:
    """A figure the source never writes (tried in order until one is absent)."""
    present = {t.value for t in tokenise(source)}
    for n in range(7391, 10**6, 1117):
        if str(n) not in present:
            return f"{n:,}"
    raise AssertionError("unreachable: the source cannot hold every figure")


def fabricate(pack: Pack, summary: Summary) -> Summary:
    """The clean summary with a sentence it never had, carrying an invented figure."""
    figure = fabricated_figure(pack.article(summary.article).text)
    extra = f" Officials said a further {figure} residents would be affected by the change."
    return Summary(
        f"{summary.id}-fabricated",
        summary.article,
        summary.text + extra,
        "fabricated",
        JUDGE,
        (figure,),
        None,
        "a fabricated sentence with an invented figure",
    )


def _judge(pack: Pack, model: ModelChecks, summary: Summary, ledger: Ledger | None) -> dict:
    results, calls = model.check(pack, summary)
    ids = ledger(calls) if ledger is not None and calls else []
    verdict = next((r.verdict for r in results if r.gate == JUDGE), None)
    if verdict is None or not verdict.ran:
        state = "not run"
    else:
        state = "faithful" if verdict.passed else "unfaithful"
    reason = verdict.reason if verdict is not None else "faithfulness is off"
    return {"id": summary.id, "judge": state, "reason": reason, "ledger_ids": ids}


def clear_cut(pack: Pack, model: ModelChecks, records: list[Record], ledger: Ledger | None):
    clean = [s for s in pack.summaries if s.clean]
    first = {r.case: r for r in records if r.run == 1 and r.gate == JUDGE}
    passed = [s.id for s in clean if first.get(s.id) and first[s.id].outcome == "pass"]
    fabricated = [_judge(pack, model, fabricate(pack, s), ledger) for s in clean]
    flagged = [f for f in fabricated if f["judge"] == "unfaithful"]
    return {
        "clean": len(clean),
        "clean_passed": len(passed),
        "fabricated": len(fabricated),
        "fabricated_flagged": len(flagged),
        "accuracy": rate(len(passed) + len(flagged), 2 * len(clean)),
        "fabricated_not_flagged": [f["id"] for f in fabricated if f["judge"] != "unfaithful"],
    }


def hard_cases(pack: Pack, model: ModelChecks, ledger: Ledger | None) -> dict[str, Any]:
    rows = []
    for article in pack.articles:
        for case in article.hard_cases:
            as_summary = Summary(case.id, article.id, case.text, "hard", None, (), None, case.why)
            judged = _judge(pack, model, as_summary, ledger)
            rows.append(
                judged
                | {
                    "editor": case.verdict,
                    "why": case.why,
                    "agrees": judged["judge"] == case.verdict,
                }
            )
    agree = sum(r["agrees"] for r in rows)
    return {"cases": len(rows), "agree": agree, "agreement": rate(agree, len(rows)), "rows": rows}


def false_negatives(pack: Pack, records: list[Record]) -> list[dict[str, str]]:
    subtle = {s.id: s for s in pack.summaries if s.gate == JUDGE}
    return [
        {
            "id": r.case,
            "kind": subtle[r.case].kind,
            "outcome": r.outcome,
            "note": subtle[r.case].note,
        }
        for r in records
        if r.run == 1 and r.case in subtle and r.gate == JUDGE and r.outcome != "caught"
    ]


def stability(records: list[Record]) -> dict[str, Any]:
    seen: dict[str, dict[int, list[tuple]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        if r.gate in CHECK_GATES:
            seen[r.case][r.run].append((r.gate, r.type, r.passed))
    runs = max((len(v) for v in seen.values()), default=0)
    same = [case for case, by_run in seen.items() if len({tuple(v) for v in by_run.values()}) == 1]
    return {
        "runs": runs,
        "summaries": len(seen),
        "identical": len(same),
        "share": rate(len(same), len(seen)),
    }


def calibrate(
    pack: Pack, model: ModelChecks, records: list[Record], ledger: Ledger | None
) -> dict[str, Any]:
    return {
        "clear_cut": clear_cut(pack, model, records, ledger),
        "hard_cases": hard_cases(pack, model, ledger),
        "false_negatives": false_negatives(pack, records),
        "stability": stability(records),
    }


def headline(calibration: dict[str, Any]) -> dict[str, Any]:
    """The calibration's figures that two runs are compared on."""
    c, h, st = calibration["clear_cut"], calibration["hard_cases"], calibration["stability"]
    return {
        "clean_passed": c["clean_passed"],
        "fabricated_flagged": c["fabricated_flagged"],
        "clear_cut_accuracy": c["accuracy"],
        "hard_cases_agree": h["agree"],
        "hard_case_agreement": h["agreement"],
        "false_negatives": len(calibration["false_negatives"]),
        "stable_share": st["share"],
    }
