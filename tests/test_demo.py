"""`copydesk demo --no-ui`: the newcomer's first command, offline, into a fresh database."""

from __future__ import annotations

import json

from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
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
    engine = open_store(f"sqlite:///{tmp_path / 'demo' / 'demo.db'}")
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
        verdicts = session.exec(select(GateVerdict)).all()
        calls = session.exec(select(ModelCall)).all()
        events = session.exec(select(AuditEvent)).all()
    by_status: dict[str, list[Item]] = {}
    for item in items:
        by_status.setdefault(item.status, []).append(item)
    assert len(items) == 14  # 15 entries, one of them a tracking-decorated duplicate
    assert len(by_status["draft"]) >= 8
    failed = {v.gate for v in verdicts if not v.passed and v.mode == "discard"}
    assert failed == {"source_url", "source_length", "numbers_grounded", "quotes_verbatim"}
    assert len(by_status["discarded"]) == 4
    # Recorded replies are labelled on the item and in the ledger, never passed off as live.
    recorded = [i for i in items if i.recorded_reply]
    assert len(recorded) == 5
    assert all(i.summariser == "recorded reply (demo)" for i in recorded)
    assert {c.backend for c in calls} == {"recorded"}
    assert not any(c.model for c in calls)
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
