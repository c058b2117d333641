"""The model checks as the auditor sees them: the same as the editor's queue shows.

For each stored model-check verdict (`claims_supported`, `faithfulness`): whether
it ran (a check that did not run or failed says so, with its reason, and never
counts as a pass), the claims table (claim, passage, outcome and the rule that
failed) and every judged sentence (error kinds, wrong fact, material, the
settling passage, and the rewrite, which is a reference only: it never replaces
the draft and is never shipped).

`model_checks` is the structured view (`copydesk audit --json` carries it under
"model_checks"); `render_model_checks` prints it for `copydesk audit`. Everything
shown is model output or article text, printed as plain text, never as markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from guards.registry import CHECK_GATES
from store.history import iso
from store.models import GateVerdict

REWRITE_NOTE = "reference only: never replaces the draft, never shipped"


def _claims(evidence: Any) -> list[dict[str, Any]]:
    entries = evidence if isinstance(evidence, list) else []
    return [
        {
            "claim": e.get("claim"),
            "passage": e.get("passage"),
            "outcome": e.get("outcome"),
            "rule": e.get("rule"),
            "detail": e.get("detail"),
            "source_span": e.get("source_span"),
        }
        for e in entries
        if isinstance(e, Mapping)
    ]


def _sentences(evidence: Any) -> tuple[list[dict[str, Any]], list[Any]]:
    evidence = evidence if isinstance(evidence, Mapping) else {}
    sentences = [
        {
            "sentence": e.get("sentence"),
            "kinds": list(e.get("errors") or []),
            "wrong_fact": bool(e.get("wrong_fact")),
            "material": bool(e.get("material")),
            "outcome": e.get("outcome"),
            "why": e.get("why"),
            "passage": e.get("passage"),
            "source_span": e.get("source_span"),
            "rewrite": e.get("rewrite"),
            "reader_draft": e.get("reader_draft"),
            "reader_rewrite": e.get("reader_rewrite"),
        }
        for e in evidence.get("sentences") or []
        if isinstance(e, Mapping)
    ]
    return sentences, list(evidence.get("not_judged") or [])


def model_checks(verdicts: Sequence[GateVerdict]) -> list[dict[str, Any]]:
    """Every stored model-check verdict of an item, oldest first, as the editor sees it."""
    shown = []
    for v in verdicts:
        if v.gate not in CHECK_GATES:
            continue
        state = v.check_state
        entry: dict[str, Any] = {
            "gate": v.gate,
            "mode": v.mode,
            "at": iso(v.created_at),
            "state": state,
            "passed": v.passed,
            "reason": v.reason,
        }
        if state == "ran" and v.gate == "claims_supported":
            entry["claims"] = _claims(v.evidence)
        elif state == "ran":
            entry["sentences"], entry["not_judged"] = _sentences(v.evidence)
        shown.append(entry)
    return shown


def _outcome(entry: Mapping[str, Any]) -> str:
    text = str(entry.get("outcome") or "-")
    if entry.get("rule"):
        text += f": {entry['rule']}" + (f" ({entry['detail']})" if entry.get("detail") else "")
    return text


def _claims_table(claims: list[dict[str, Any]]) -> Table:
    table = Table(show_lines=True)
    for column in ("#", "claim", "source passage (as the model gave it)", "outcome"):
        table.add_column(column, overflow="fold")
    for n, c in enumerate(claims, 1):
        table.add_row(
            str(n), Text(str(c["claim"] or "(none)")), Text(str(c["passage"] or "(none)")),
            Text(_outcome(c)),
        )  # fmt: skip
    return table


def _sentence_lines(n: int, s: Mapping[str, Any]) -> list[Text]:
    kinds = ", ".join(str(k) for k in s["kinds"]) or "no error"
    outcome = str(s["outcome"] or "-")
    if s["outcome"] == "not verified" and s["why"]:
        outcome += f" ({s['why']})"
    # The outcome already says "wrong fact" or "material error"; say it again only when not.
    flags = (" · wrong fact" if s["wrong_fact"] and s["outcome"] != "wrong fact" else "") + (
        " · material"
        if s["material"] and s["outcome"] not in ("wrong fact", "material error")
        else ""
    )
    rows = [
        ("sentence", s["sentence"]),
        ("outcome", f"{outcome} · {kinds}{flags}"),
        ("source passage", s["passage"]),
        (f"rewrite ({REWRITE_NOTE})", s["rewrite"]),
        ("a reader of the draft concludes", s["reader_draft"]),
        ("a reader of the rewrite concludes", s["reader_rewrite"]),
    ]
    lines = [Text(f"    {n}. ", style="bold")]
    lines[0].append(Text(str(s["sentence"] or "(none)")))
    for label, value in rows[1:]:
        lines.append(Text.assemble(("       " + label + ": ", "dim"), str(value or "(none)")))
    return lines


def render_model_checks(console: Console, checks: list[dict[str, Any]]) -> None:
    """The model checks section of `copydesk audit`."""
    if not checks:
        console.print(Text("  none recorded", style="dim"))
        return
    for c in checks:
        head = Text(f"  {c['gate']} ({c['mode']}) at {c['at']}: ", style="bold")
        if c["state"] != "ran":
            head.append(Text(f"{c['state'].upper()}: ", style="bold red"))
            head.append(Text(f"{c['reason']}: never counts as a pass; read the draft against "
                             "the source", style="red"))  # fmt: skip
            console.print(head)
            continue
        head.append(Text(str(c["reason"] or ""), style="" if c["passed"] else "yellow"))
        console.print(head)
        if "claims" in c:
            if c["claims"]:
                console.print(_claims_table(c["claims"]))
            continue
        for n, s in enumerate(c["sentences"], 1):
            for line in _sentence_lines(n, s):
                console.print(line)
        for gap in c["not_judged"]:
            console.print(Text(f"    not judged by the model: {gap}", style="yellow"))
