"""`copydesk demo --no-ui`: the newcomer's first command, offline, into a fresh database."""

from __future__ import annotations

import json

from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from store import verdicts as stored_verdicts
from store.db import open_store
from store.models import AuditEvent, GateVerdict, Item, ModelCall


def run_demo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-must-not-be-used")  # the demo stays offline
    return CliRunner().invoke(app, ["demo", "--no-ui", "--dir", "demo"], catch_exceptions=False)


def test_demo_shows_drafts_and_every_kind_of_discard(tmp_path, monkeypatch):
    result = run_demo(tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output
    assert "RECORDED model replies" in result.stdout
    # The closing table counts the drafts whose model checks did not run (or failed).
    assert "checks not run / failed" in result.stdout and " 7 / 0 │" in result.stdout
    assert "model checks did not run on 7 item(s) and failed on 0" in result.stdout
    engine = open_store(f"sqlite:///{tmp_path / 'demo' / 'demo.db'}")
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
        verdicts = stored_verdicts.every(session)
        calls = session.exec(select(ModelCall)).all()
        events = session.exec(select(AuditEvent)).all()
    by_status: dict[str, list[Item]] = {}
    for item in items:
        by_status.setdefault(item.status, []).append(item)
    assert len(items) == 14  # 15 entries, one of them a tracking-decorated duplicate
    assert len(by_status["draft"]) >= 8
    failed = {v.gate for v in verdicts if not v.passed and v.mode == "discard"}
    assert failed == {
        "source_url",
        "source_length",
        "numbers_grounded",
        "quotes_verbatim",
        "faithfulness",
    }
    assert len(by_status["discarded"]) == 5
    # Recorded replies are labelled on the item and in the ledger, never passed off as live.
    recorded = [i for i in items if i.recorded_reply]
    assert len(recorded) == 7
    assert all(i.summariser == "recorded reply (demo)" for i in recorded)
    assert {c.backend for c in calls} == {"recorded"}
    assert not any(c.model for c in calls)
    # The recorded check replies: a claims table, a wrong fact that discards, a dropped
    # hedge that flags; every other draft says its model checks did not run.
    by_url = {i.source_url: i for i in items}
    checks = [v for v in verdicts if v.stage == "check"]

    def check_of(url: str, gate: str) -> GateVerdict:
        item = by_url[f"https://news.example.org/{url}"]
        return next(v for v in checks if v.item_id == item.id and v.gate == gate)

    budget = check_of("politics/council-budget-gap", "claims_supported")
    assert budget.passed and len(budget.evidence) == 6  # the headline has its claim
    assert all(e["outcome"] == "supported" for e in budget.evidence)
    wrong = by_url["https://news.example.org/politics/coldhithe-by-election-result"]
    assert wrong.status == "discarded"
    assert not check_of("politics/coldhithe-by-election-result", "faithfulness").passed
    hedge = by_url["https://news.example.org/education/upper-wystan-school-consultation"]
    assert hedge.status == "draft"
    judged = check_of("education/upper-wystan-school-consultation", "faithfulness")
    assert (judged.passed, judged.mode) == (False, "flag") and "modality" in judged.reason
    unchecked = [v for v in checks if v.reason == "not run (no model)"]
    assert unchecked and all(v.mode == "flag" and not v.passed for v in unchecked)
    assert {c.purpose for c in calls} == {"summary", "checks"}
    # No item without its birth event and its last move.
    for item in items:
        trail = [e for e in events if e.item_id == item.id]
        assert trail[0].to_status == "new" and trail[-1].to_status == item.status


def test_demo_starts_fresh_each_time(tmp_path, monkeypatch):
    run_demo(tmp_path, monkeypatch)
    again = run_demo(tmp_path, monkeypatch)
    assert again.exit_code == 0
    engine = open_store(f"sqlite:///{tmp_path / 'demo' / 'demo.db'}")
    with Session(engine) as session:
        assert len(session.exec(select(Item)).all()) == 14


def test_discards_explain_the_demo(tmp_path, monkeypatch):
    run_demo(tmp_path, monkeypatch)
    monkeypatch.setenv("COPYDESK_DATABASE_URL", f"sqlite:///{tmp_path / 'demo' / 'demo.db'}")
    result = CliRunner().invoke(app, ["discards", "--json"])
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    text = json.dumps(report)
    for reason in ("no source URL", "fewer than 150", "1,400", "not in the source"):
        assert reason in text
    faithfulness = CliRunner().invoke(app, ["discards", "--gate", "faithfulness", "--json"])
    assert faithfulness.exit_code == 0
    assert "up from 31.8%" in faithfulness.stdout and "1,400" not in faithfulness.stdout


def test_stats_count_model_checks_that_did_not_run(tmp_path, monkeypatch):
    run_demo(tmp_path, monkeypatch)
    monkeypatch.setenv("COPYDESK_DATABASE_URL", f"sqlite:///{tmp_path / 'demo' / 'demo.db'}")
    result = CliRunner().invoke(app, ["stats", "--json"])
    assert result.exit_code == 0, result.output
    checks = json.loads(result.stdout)["model_checks"]
    # 9 drafts and 1 faithfulness discard reached the checks: 3 with recorded check
    # replies (one clean, one hedge, one wrong fact), 7 not run (no model).
    assert checks["faithfulness"] == {
        "passed": 1,
        "problems found": 2,
        "not run": 7,
        "failed to run": 0,
    }
    assert checks["claims_supported"]["not run"] == 7


def test_audit_shows_the_model_checks_as_the_editor_sees_them(tmp_path, monkeypatch):
    run_demo(tmp_path, monkeypatch)
    monkeypatch.setenv("COPYDESK_DATABASE_URL", f"sqlite:///{tmp_path / 'demo' / 'demo.db'}")
    hedge = "https://news.example.org/education/upper-wystan-school-consultation"
    wrong = "https://news.example.org/politics/coldhithe-by-election-result"
    doc = json.loads(CliRunner().invoke(app, ["audit", hedge, "--json"]).stdout)
    claims, judge = doc["model_checks"]
    assert (claims["gate"], claims["state"], judge["gate"], judge["state"]) == (
        "claims_supported", "ran", "faithfulness", "ran",
    )  # fmt: skip
    outcomes = [c["outcome"] for c in claims["claims"]]
    # One claim the model says is unsupported; the headline's claim added for coverage (issue 19).
    assert outcomes.count("not supported") == 1 and outcomes.count("supported") == 4
    assert all(c["passage"] and c["claim"] for c in claims["claims"])
    flagged = [s for s in judge["sentences"] if s["material"]]
    assert [s["kinds"] for s in flagged] == [["modality"], ["modality", "time"]]
    assert all(s["rewrite"] and s["passage"] for s in flagged)

    text = CliRunner().invoke(app, ["audit", hedge]).stdout
    section = text.split("Model checks, as the editor sees them (2)")[1].split("Model calls")[0]
    rows = section.split("faithfulness (flag)")[0]  # the claims table (cells may wrap)
    assert rows.count("│ not supported:") == 1 and rows.count("│ supported ") == 4
    assert "Vell County Council proposed" in rows and "The consultation closes on 18" in rows
    assert "outcome: material error · modality, time\n" in section
    assert "rewrite (reference only: never replaces the draft, never shipped)" in section
    assert "no decision has been taken." in section  # the rewrite itself
    assert section.count("outcome: faithful · no error") == 2
    assert '{"claim":' not in text  # the table replaced the JSON lines

    discarded = CliRunner().invoke(app, ["audit", wrong]).stdout
    assert "outcome: wrong fact · factual\n" in discarded
    assert "up from 31.8%" in discarded.split("Model checks, as the editor")[1]
    engine = open_store(f"sqlite:///{tmp_path / 'demo' / 'demo.db'}")
    with Session(engine) as session:
        not_run = next(
            v for v in stored_verdicts.every(session) if v.reason == "not run (no model)"
        )
    unchecked = json.loads(
        CliRunner().invoke(app, ["audit", str(not_run.item_id), "--json"]).stdout
    )
    assert [c["state"] for c in unchecked["model_checks"]] == ["not run", "not run"]
    assert all("claims" not in c and "sentences" not in c for c in unchecked["model_checks"])
    plain_text = CliRunner().invoke(app, ["audit", str(not_run.item_id)]).stdout
    assert plain_text.count("NOT RUN: not run (no model): never counts as a pass") == 2


def test_audit_model_checks_print_model_text_literally():
    from rich.console import Console

    from copydesk.render.audit_checks import model_checks, render_model_checks

    hostile = "[bold red]APPROVED[/bold red] <script>alert(1)</script>"
    verdicts = [
        GateVerdict(item_id=1, stage="check", gate="claims_supported", passed=False,
                    mode="flag", reason="1 of 1 claims not supported",
                    evidence=[{"claim": hostile, "passage": hostile, "outcome": "not supported",
                               "rule": "passage not in the source"}]),
        GateVerdict(item_id=1, stage="check", gate="faithfulness", passed=False, mode="flag",
                    reason="1 material error(s): framing",
                    evidence={"sentences": [{"sentence": hostile, "errors": ["framing"],
                                             "material": True, "outcome": "material error",
                                             "rewrite": hostile, "passage": None}],
                              "not_judged": []}),
    ]  # fmt: skip
    console = Console(record=True, width=200)
    render_model_checks(console, model_checks(verdicts))
    shown = console.export_text()
    assert shown.count("[bold red]APPROVED[/bold red] <script>alert(1)</script>") == 4
    assert "passage not in the source" in shown and "source passage: (none)" in shown
