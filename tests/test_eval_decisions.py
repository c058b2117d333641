"""`copydesk eval --from-decisions`: editors' decisions, read from the audit log,
scored against the gates' flags. Decisions go through the review queue's own
decision functions on a real database."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from sqlmodel import Session, func, select
from typer.testing import CliRunner

from copydesk.cli import app
from review_ui.desk import decisions as rd
from store.db import open_store, session_scope
from store.models import AuditEvent, GateVerdict, Item, utcnow
from tests.review_seed import MARKET, Article, seed_article, seed_editor, variant, write_config

EDITOR = rd.Reviewer("maren", "editor")
MODES = {"numbers_grounded": "flag", "quotes_verbatim": "flag"}


def _article(key: str, summary: str) -> Article:
    return Article(key, "Dunmere market", MARKET, "Dunmere market adds Sundays", summary)


RIGHT = "Traders voted 31 to 9 to open the Dunmere market on Sundays; it has 74 regular traders."
WRONG = RIGHT.replace("74", "47")  # numbers_grounded flags 47


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'decisions.db'}"
    config = write_config(tmp_path / "config.toml", url, modes=MODES)
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    monkeypatch.chdir(tmp_path)
    return url


def _seed(url: str, key: str, summary: str) -> int:
    """A draft made by the real pipeline; each its own story (own URL and text)."""
    n = int(key[1:]) + (0 if key.startswith("f") else 10)
    return seed_article(open_store(url), variant(_article(key, summary), n, key), modes=MODES)


def _check_verdict(url: str, item_id: int, evidence: dict, reason: str) -> None:
    """A model check's verdict, stored as the pipeline stores it (stage `check`)."""
    with session_scope(open_store(url)) as session:
        session.add(
            GateVerdict(
                item_id=item_id,
                stage="check",
                gate="faithfulness",
                passed=False,
                mode="flag",
                reason=reason,
                evidence=evidence,
            )
        )


def _version(session: Session, item_id: int) -> int:
    return session.get(Item, item_id).version


def _act(url: str, item_id: int, *steps: tuple[str, str]) -> None:
    engine = open_store(url)
    for action, arg in steps:
        with session_scope(engine) as s:
            v = _version(s, item_id)
            if action == "edit":
                rd.edit(
                    s,
                    EDITOR,
                    item_id,
                    v,
                    "Dunmere market adds Sundays",
                    arg,
                    gate_modes=MODES,
                    min_source_words=40,
                )
            elif action == "approve":
                rd.approve(s, EDITOR, item_id, v, off=())
            else:
                rd.reject(s, EDITOR, item_id, v, arg)


def test_decisions_are_scored_per_flagging_gate_and_for_unflagged_drafts(db):
    seed_editor(open_store(db), EDITOR.name)
    flagged = [_seed(db, f"f{i}", WRONG) for i in range(4)]
    clean = [_seed(db, f"c{i}", RIGHT) for i in range(4)]
    judged = {"sentence": WRONG, "outcome": "material error", "errors": ["scope"]}
    _check_verdict(db, flagged[1], {"sentences": [judged], "not_judged": []}, "1 material error")
    _check_verdict(db, clean[0], {"state": "not run", "why": "no model"}, "not run (no model)")
    _act(db, flagged[0], ("approve", ""))  # a likely false alarm
    _act(db, flagged[1], ("edit", RIGHT), ("approve", ""))  # edited where the flag pointed
    _act(db, flagged[2], ("edit", WRONG + " Stewards help."), ("approve", ""))  # elsewhere
    _act(db, flagged[3], ("reject", "wrong figure"))
    _act(db, clean[0], ("approve", ""))
    _act(db, clean[1], ("reject", "invented cause"))  # a likely miss
    _act(db, clean[2], ("edit", RIGHT.replace("31 to 9", "31 votes to 9")), ("approve", ""))
    _act(
        db,
        clean[3],
        ("edit", RIGHT.replace("Dunmere", "Dunmore")),
        ("approve", ""),
    )
    engine = open_store(db)
    with Session(engine) as s:
        events_before = s.exec(select(func.count()).select_from(AuditEvent)).one()

    result = CliRunner().invoke(app, ["eval", "--from-decisions", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["decided"] == 8
    assert report["gates"] == {
        # The judge flagged the sentence the edit then replaced; a check that did
        # not run (clean[0]) is no flag.
        "faithfulness": {
            "flagged": 1,
            "approved_unchanged": 0,
            "rejected": 0,
            "edited_at_flag": 1,
            "edited_elsewhere": 0,
        },
        "numbers_grounded": {
            "flagged": 4,
            "approved_unchanged": 1,
            "rejected": 1,
            "edited_at_flag": 1,
            "edited_elsewhere": 1,
        },
    }
    # "31 votes to 9" keeps the numbers: wording only. "Dunmore" changes a name.
    assert report["unflagged"] == {
        "decided": 4,
        "approved_unchanged": 1,
        "rejected": 1,
        "edited_number_name_or_quote": 1,
        "edited_otherwise": 1,
        "likely_misses": 2,
    }
    with Session(engine) as s:  # it changes nothing
        assert s.exec(select(func.count()).select_from(AuditEvent)).one() == events_before

    table = CliRunner().invoke(app, ["eval", "--from-decisions"])
    assert "numbers_grounded" in table.stdout and "likely misses: 2" in table.stdout
    tomorrow = (utcnow() + timedelta(days=1)).date().isoformat()
    later = CliRunner().invoke(app, ["eval", "--from-decisions", "--since", tomorrow, "--json"])
    assert json.loads(later.stdout)["decided"] == 0


def test_since_needs_a_date_and_goes_with_from_decisions(db):
    bad = CliRunner().invoke(app, ["eval", "--from-decisions", "--since", "last week"])
    assert bad.exit_code == 2 and "is not a date" in bad.stderr
    alone = CliRunner().invoke(app, ["eval", "--since", "2026-01-01"])
    assert alone.exit_code == 2 and "--since goes with --from-decisions" in alone.stderr
