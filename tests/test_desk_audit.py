"""Issue 12, the audit trail: a source-gate discard says no draft was made (in the
review app and in `copydesk audit`), timestamps read in the editor's zone with UTC
at hand, empty cells are blank, and a failed quote shows the closest source wording."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from store.db import open_store
from tests.review_seed import ARTICLES, Article, seed_article, seed_editor, seed_queue
from tests.test_desk_cli import _env, run

TEASER = Article(
    "teaser",
    "Vell Valley council to vote on library hours",
    "The Vell Valley council will vote on library opening hours next week.",  # too short
    "Vell Valley library hours vote",
    "The council votes next week.",
)


def seed_audit_desk(engine: Any) -> dict[str, int]:
    """A source-gate discard (too short to summarise), a misquote that the quotes
    gate discards, and a clean draft, through the real pipeline."""
    ids = seed_queue(engine, ("bridge", "misquote"), modes={"quotes_verbatim": "discard"})
    ids["teaser"] = seed_article(engine, TEASER)
    seed_editor(engine, "alice")
    return ids


@pytest.fixture
def audit_desk(sqlite_url: str, tmp_path: Path) -> dict[str, Any]:
    engine = open_store(sqlite_url)
    ids = seed_audit_desk(engine)
    engine.dispose()
    env = _env(tmp_path, COPYDESK_DATABASE_URL=sqlite_url, TZ="Asia/Kolkata")
    return {"ids": ids, "env": env, "tmp": tmp_path, "url": sqlite_url}


NO_DRAFT = "No draft was made: the source gate discarded this item before summarising"


def test_copydesk_audit_says_a_source_gate_discard_made_no_draft(
    audit_desk: dict[str, Any],
) -> None:
    item = str(audit_desk["ids"]["teaser"])
    text = run(["audit", item], audit_desk["tmp"], env=audit_desk["env"])
    assert text.returncode == 0, text.stderr
    assert NO_DRAFT in text.stdout and "source_length: source has" in text.stdout
    assert "headline: -" not in text.stdout and "summary: -" not in text.stdout
    doc = json.loads(
        run(["audit", item, "--json"], audit_desk["tmp"], env=audit_desk["env"]).stdout
    )
    assert doc["draft"]["not_made"].startswith(NO_DRAFT)
    assert doc["draft"]["headline"] is None
    # A drafted item has no such line.
    drafted = run(
        ["audit", str(audit_desk["ids"]["bridge"])], audit_desk["tmp"], env=audit_desk["env"]
    )
    assert "No draft was made" not in drafted.stdout
    assert ARTICLES["bridge"].headline in drafted.stdout


def test_the_review_app_says_a_source_gate_discard_made_no_draft(
    audit_desk: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from review_ui.item_panel import draw_texts  # noqa: F401 - the code under test
    from tests.review_seed import write_config
    from tests.test_review_app import APP, sign_in

    monkeypatch.chdir(audit_desk["tmp"])
    config = write_config(audit_desk["tmp"] / "c.toml", audit_desk["url"])
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    monkeypatch.setenv("COPYDESK_DATABASE_URL", audit_desk["url"])
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    sign_in(at, "alice", "correct horse battery")
    at.sidebar.radio(key="view").set_value("Discarded")
    at.run()
    listing = at.dataframe[0].value
    row = list(listing["#"]).index(audit_desk["ids"]["teaser"])
    at.session_state[at.dataframe[0].key] = {"selection": {"rows": [row], "columns": []}}
    at.run()
    boxes = [str(e.value) for e in at.get("html") if NO_DRAFT in str(e.value)]
    assert len(boxes) == 1 and "source_length: source has" in boxes[0]  # in place of the draft
    assert "Marks: " not in "".join(str(e.value) for e in at.get("html"))  # no empty draft box
