"""Issue 12, the audit trail: a source-gate discard says no draft was made (in the
review app and in `copydesk audit`), timestamps read in the editor's zone with UTC
at hand, empty cells are blank, and a failed quote shows the closest source wording."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.apptest_helpers import pick_item
from tests.cli_helpers import cli_env, run, run_here
from tests.conftest import Seeded
from tests.desk_helpers import NO_DRAFT, seed_audit_desk
from tests.review_seed import ARTICLES


@pytest.fixture
def audit_desk(sqlite_url: str, migrated: None, tmp_path: Path, seeded: Seeded) -> dict[str, Any]:
    ids = seeded(sqlite_url, "audit desk", seed_audit_desk)  # seeded once per test process
    env = cli_env(tmp_path, COPYDESK_DATABASE_URL=sqlite_url, TZ="Asia/Kolkata")
    return {"ids": ids, "env": env, "tmp": tmp_path, "url": sqlite_url}


def test_copydesk_audit_says_a_source_gate_discard_made_no_draft(
    audit_desk: dict[str, Any],
) -> None:
    item = str(audit_desk["ids"]["teaser"])
    text = run_here(["audit", item], audit_desk["tmp"], env=audit_desk["env"])
    assert text.returncode == 0, text.stderr
    assert NO_DRAFT in text.stdout and "source_length: source has" in text.stdout
    assert "headline: -" not in text.stdout and "summary: -" not in text.stdout
    doc = json.loads(
        run_here(["audit", item, "--json"], audit_desk["tmp"], env=audit_desk["env"]).stdout
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

    from review_ui.views.item_panel import draw_texts  # noqa: F401 - the code under test
    from tests.review_app_helpers import APP, sign_in
    from tests.review_seed import write_config

    monkeypatch.chdir(audit_desk["tmp"])
    config = write_config(audit_desk["tmp"] / "c.toml", audit_desk["url"])
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    monkeypatch.setenv("COPYDESK_DATABASE_URL", audit_desk["url"])
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    sign_in(at, "alice", "correct horse battery")
    at.sidebar.radio(key="view").set_value("Discarded")
    at.run()
    pick_item(at, audit_desk["ids"]["teaser"])
    # (the trail's tables, below, hold the same words among the item's facts)
    boxes = [
        str(e.value)
        for e in at.get("html")
        if NO_DRAFT in str(e.value) and 'class="cd-trail"' not in str(e.value)
    ]
    assert len(boxes) == 1 and "source_length: source has" in boxes[0]  # in place of the draft
    assert "Marks: " not in "".join(str(e.value) for e in at.get("html"))  # no empty draft box


def test_copydesk_audit_prints_local_times_and_utc_on_request(audit_desk: dict[str, Any]) -> None:
    item = str(audit_desk["ids"]["bridge"])
    local = run(["audit", item], audit_desk["tmp"], env=audit_desk["env"])  # TZ=Asia/Kolkata
    assert local.returncode == 0, local.stderr
    assert "at (local time)" in local.stdout and "+05:30" in local.stdout
    utc = run(["audit", item, "--utc"], audit_desk["tmp"], env=audit_desk["env"])
    assert "at (UTC)" in utc.stdout and "+05:30" not in utc.stdout
    assert " UTC" in utc.stdout


def test_copydesk_audit_shows_the_closest_source_wording_of_a_failed_quote(
    audit_desk: dict[str, Any],
) -> None:
    item = str(audit_desk["ids"]["misquote"])
    result = run_here(["audit", item], audit_desk["tmp"], env=audit_desk["env"])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    said = next(i for i, line in enumerate(lines) if "draft says:" in line)
    assert "\u201cpeople only buy from the farmer who grew it\u201d" in lines[said]
    assert "source says: \u201cPeople want to buy from the person who grew it" in lines[said + 1]
    doc = json.loads(
        run_here(["audit", item, "--json"], audit_desk["tmp"], env=audit_desk["env"]).stdout
    )
    (quotes,) = [v for v in doc["verdicts"] if v["gate"] == "quotes_verbatim"]
    closest = quotes["evidence"][0]["closest_in_source"]
    assert closest["text"].startswith("People want to buy from the person who grew it")


def test_the_review_apps_audit_trail_has_blank_cells_and_the_closest_quote(
    audit_desk: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.review_app_helpers import APP, sign_in
    from tests.review_seed import write_config

    monkeypatch.chdir(audit_desk["tmp"])
    config = write_config(audit_desk["tmp"] / "c.toml", audit_desk["url"])
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    monkeypatch.setenv("COPYDESK_DATABASE_URL", audit_desk["url"])
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    sign_in(at, "alice", "correct horse battery")
    at.sidebar.radio(key="view").set_value("Discarded")
    at.run()
    pick_item(at, audit_desk["ids"]["misquote"])
    assert not at.exception, at.exception
    quotes = next(d.value for d in at.dataframe if "closest source wording" in d.value.columns)
    assert list(quotes["the draft says"]) == ["people only buy from the farmer who grew it"]
    assert quotes["closest source wording"][0].startswith("People want to buy from the person")
    trail = "".join(str(e.value) for e in at.get("html") if "cd-trail" in str(e.value))
    assert "<td>None</td>" not in trail and "(born) → new" in trail
    assert 'title="' in trail and " UTC" in trail  # UTC on hover
