"""The behaviour snapshot of `copydesk demo --no-ui` on the bundled sample feed.

`snapshot(url)` reads, from a database the real pipeline filled, what a reader of
the audit trail relies on: every item with its status, every gate verdict (gate,
passed, mode, reason) and every audit event (from, to, kind of actor, reason).
`tests/test_behaviour_golden.py` compares a fresh demo run with the stored
snapshot in `tests/golden/sample_run.json`.

When a change of behaviour is intended (a new gate, a reworded reason),
regenerate the snapshot and review its diff like any other change:

    .venv/bin/python -m tests.golden --write
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from sqlmodel import Session, select
from typer.testing import CliRunner

GOLDEN = Path(__file__).parent / "golden" / "sample_run.json"


def actor_kind(actor: str) -> str:
    """`run:12` and `run:13` are the same kind of actor; ids differ from run to run."""
    return actor.split(":", 1)[0]


def snapshot(url: str) -> list[dict[str, Any]]:
    """Every item of the database, in dedup-key order, with its verdicts and events."""
    from store import verdicts as stored_verdicts
    from store.db import open_store
    from store.models import AuditEvent, Item

    engine = open_store(url)
    try:
        with Session(engine) as session:
            items = session.exec(select(Item).order_by(Item.dedup_key)).all()
            verdicts = stored_verdicts.every(session)
            events = session.exec(select(AuditEvent).order_by(AuditEvent.id)).all()
            return [_item(item, verdicts, events) for item in items]
    finally:
        engine.dispose()


def _item(item: Any, verdicts: list[Any], events: list[Any]) -> dict[str, Any]:
    return {
        "dedup_key": item.dedup_key,
        "title": item.title,
        "status": item.status,
        "summariser": item.summariser,
        "recorded_reply": item.recorded_reply,
        "verdicts": [
            {
                "stage": v.stage,
                "gate": v.gate,
                "passed": v.passed,
                "mode": v.mode,
                "reason": v.reason,
            }
            for v in verdicts
            if v.item_id == item.id
        ],
        "events": [
            {
                "from": e.from_status,
                "to": e.to_status,
                "actor": actor_kind(e.actor),
                "reason": e.reason,
            }
            for e in events
            if e.item_id == item.id
        ],
    }


def run_demo(directory: Path) -> str:
    """`copydesk demo --no-ui` into `directory`; returns the database URL."""
    from copydesk.cli import app

    result = CliRunner().invoke(
        app, ["demo", "--no-ui", "--dir", str(directory)], catch_exceptions=False
    )
    if result.exit_code != 0:
        raise RuntimeError(f"copydesk demo exited {result.exit_code}:\n{result.output}")
    return f"sqlite:///{(directory / 'demo.db').resolve()}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {GOLDEN}")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        current = snapshot(run_demo(Path(tmp) / "demo"))
    text = json.dumps(current, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if args.write:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
        print(f"wrote {GOLDEN} ({len(current)} items)")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
