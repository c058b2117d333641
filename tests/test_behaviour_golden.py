"""Behaviour preservation: `copydesk demo --no-ui` on the bundled sample feed
produces the same items, statuses, gate verdicts (gate, passed, mode, reason)
and audit events (from, to, kind of actor, reason) as the stored snapshot.

A refactor must keep this test green without touching the snapshot. When
behaviour changes on purpose (a new gate, a reworded reason, a new status),
regenerate the snapshot and let the reviewer read its diff:

    .venv/bin/python -m tests.golden --write

(see tests/golden.py).
"""

from __future__ import annotations

import json

from tests.golden import GOLDEN, run_demo, snapshot


def test_demo_matches_the_stored_snapshot(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-must-not-be-used")  # the demo stays offline
    current = snapshot(run_demo(tmp_path / "demo"))
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert [i["dedup_key"] for i in current] == [i["dedup_key"] for i in golden]
    for now, then in zip(current, golden, strict=True):
        assert now == then, (
            f"item {then['dedup_key']} changed (if meant: python -m tests.golden --write)"
        )


def test_snapshot_sees_a_changed_reason(tmp_path, monkeypatch):
    """The comparison is not blind: one reworded verdict reason makes it differ."""
    monkeypatch.chdir(tmp_path)
    url = run_demo(tmp_path / "demo")
    before = snapshot(url)
    from sqlmodel import Session, select

    from store.db import open_store
    from store.models import VerdictSet
    from store.packing import pack_json, unpack_json

    engine = open_store(url)
    with Session(engine) as session:  # a failed verdict's reason, inside its packed set
        stored = session.exec(select(VerdictSet).where(VerdictSet.failed_gates != None)).first()  # noqa: E711
        packed = unpack_json(stored.verdicts)
        failed = next(v for v in packed if not v[2])  # [stage, gate, passed, mode, reason, ...]
        failed[4] += " (reworded)"
        stored.verdicts = pack_json(packed)
        session.add(stored)
        session.commit()
    engine.dispose()
    assert snapshot(url) != before
