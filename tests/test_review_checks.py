"""The model checks in the review queue (AppTest): the claims table, picking a claim
highlights its passage in the source, judged sentences, the banner when the checks
did not run, `[checks] require`, and model output kept inert."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session
from streamlit.testing.v1 import AppTest

from guards.registry import CHECK_GATES
from review_ui.desk import decisions
from review_ui.desk.decisions import Blocked, Reviewer
from review_ui.desk.queries import QueueFilter, flagged_ids, item_view, queue_count, queue_page
from store.db import open_store, session_scope
from store.models import Item
from tests.conftest import Seeded
from tests.review_app_helpers import APP, open_item
from tests.review_checks_material import BRIDGE, CHECK, P_COST, H
from tests.review_seed import (
    ARTICLES,
    IMG,
    PASSWORD,
    SCRIPT,
    decision_button,
    seed_checks,
    seed_editor,
    seed_queue,
    write_config,
)


def sign_in(at: AppTest) -> None:
    at.text_input(key="login_name").input("alice")
    at.text_input(key="login_password").input(PASSWORD)
    at.button(key="login_submit").click()
    at.run()
    assert not at.exception, at.exception


def html(at: AppTest) -> str:
    return "\n".join(str(e.value) for e in at.html)


@pytest.fixture
def desk(
    db_url: str, migrated: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seeded: Seeded
):
    def seed(engine: Engine, require: bool, check: Any) -> dict[str, int]:
        ids = seed_queue(engine, ("bridge", "school"))
        with session_scope(engine) as session:
            seed_checks(session, ids["bridge"], check)
            seed_checks(session, ids["school"], None, require=require)
        seed_editor(engine, "alice")
        return ids

    def make(require: bool = False, check: Any = CHECK) -> tuple[Any, dict[str, int], AppTest]:
        """Called once per test: the seed for `require` and `check` is made once per
        test process and backend, and copied into the test's database."""
        key = ("review checks", require, json.dumps(check, sort_keys=True))
        ids = seeded(db_url, key, lambda engine: seed(engine, require, check))
        engine = open_store(db_url)
        monkeypatch.chdir(tmp_path)
        config = write_config(tmp_path / "c.toml", db_url)
        if require:
            config.write_text(config.read_text() + "\n[checks]\nrequire = true\n")
        monkeypatch.setenv("COPYDESK_CONFIG", str(config))
        monkeypatch.setenv("COPYDESK_DATABASE_URL", db_url)
        at = AppTest.from_file(str(APP), default_timeout=60)
        at.run()
        sign_in(at)
        return engine, ids, at

    return make


def test_claims_table_judged_sentences_and_picking_a_claim(desk) -> None:
    engine, ids, at = desk()
    assert at.session_state["open_id"] == ids["bridge"]
    page = html(at)
    # The claims table: every claim with its passage and outcome, model text escaped.
    assert page.count('class="cd-claim"') == 3
    assert "The footbridge closes for 14 weeks from March." in page
    assert "not supported: passage not in the source" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and SCRIPT not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and IMG not in page
    # The judged sentences: kinds, rewrite (reference only), reader conclusions, passage.
    assert page.count('class="cd-judged"') == 3
    assert "material error · modality · material" in page
    assert "rewrite (reference only: never replaces the draft, never shipped)" in page
    assert "the ferry is planned" in page
    assert "faithfulness judge: failed (flag): 1 material error(s): modality" in page
    assert "Model checks did not run" not in page
    # The passage that settles the judged sentence is marked in the source pane too.
    settles = page.split('title="faithfulness: settles sentence 3 (material error)">', 1)[1]
    assert 'class="cd-flagged"' in page and settles.split("</mark>", 1)[0] == P_COST
    # Nothing picked yet: no passage is marked as picked.
    assert "cd-selected" not in page
    [picker] = at.segmented_control
    assert picker.label == "Highlight a claim's passage in the source"
    assert picker.key.startswith(f"claim_pick_{ids['bridge']}_")
    picker.set_value(2).run()
    assert not at.exception, at.exception
    page = html(at)
    marked = page.split('class="cd-selected"', 1)[1].split("</mark>", 1)[0]
    assert marked.endswith(">Engineers found corrosion in 38 of the bridge&#x27;s steel hangers")
    # The rewrite never replaced the draft.
    with Session(engine) as session:
        from store.models import Item

        assert session.get(Item, ids["bridge"]).summary == BRIDGE.summary  # type: ignore[union-attr]


def test_a_judged_sentence_without_a_passage_says_not_verified_in_plain_words(desk) -> None:
    """Issue 19 §3: a null passage on a judged sentence is "not verified", and the
    editor reads why, never a pass."""
    check = copy.deepcopy(CHECK)
    check["sentences"][1]["passage"] = None
    _, ids, at = desk(check=check)
    assert at.session_state["open_id"] == ids["bridge"]
    page = html(at)
    assert (
        "not verified: the checking model quoted no passage of the source for this "
        "sentence, so its judgement could not be checked"
    ) in page
    assert "1 judgement(s) not verified" in page
    assert "faithfulness judge: failed (flag)" in page


def test_banner_when_checks_did_not_run_and_approval_still_allowed(desk) -> None:
    engine, ids, at = desk()
    open_item(at, ids["school"])
    page = html(at)
    assert "Model checks did not run on this draft" in page
    assert "claims check: not run (no model)" in page
    assert "it cannot be approved until they run" not in page
    assert not decision_button(at, "approve").disabled
    with session_scope(engine) as session:
        version = session.get(Item, ids["school"]).version  # as the pipeline left it
        decisions.approve(session, Reviewer("alice", "editor"), ids["school"], version)


def test_require_makes_a_draft_whose_checks_did_not_run_unapprovable(desk) -> None:
    engine, ids, at = desk(require=True)
    open_item(at, ids["school"])
    assert "it cannot be approved until they run" in html(at)
    assert decision_button(at, "approve").disabled
    with session_scope(engine) as session, pytest.raises(Blocked):
        version = session.get(Item, ids["school"]).version  # as the pipeline left it
        decisions.approve(session, Reviewer("alice", "editor"), ids["school"], version)
    # The checked draft is not affected.
    open_item(at, ids["bridge"])
    assert not decision_button(at, "approve").disabled


def test_require_blocks_an_edited_draft_its_checks_never_judged(desk) -> None:
    engine, ids, at = desk(require=True)
    editor = Reviewer("alice", "editor")
    with session_scope(engine) as session:
        edited = decisions.edit(
            session,
            editor,
            ids["bridge"],
            session.get(Item, ids["bridge"]).version,
            H,
            BRIDGE.summary.replace("38 steel hangers", "38 corroded steel hangers"),
            gate_modes={},
            min_source_words=10,
        )
    with session_scope(engine) as session, pytest.raises(Blocked) as caught:
        decisions.approve(session, editor, ids["bridge"], edited.version, require_checks=True)
    assert {gate for gate, _ in caught.value.failures} == {"claims_supported", "faithfulness"}
    open_item(at, ids["bridge"])
    assert decision_button(at, "approve").disabled
    assert "not run on the current text, and [checks] require = true" in "\n".join(
        str(e.value) for e in at.html
    )
    # Without require the editor may approve the edited text (a person read it).
    with session_scope(engine) as session:
        decisions.approve(session, editor, ids["bridge"], edited.version)


def test_checks_that_did_not_run_are_not_flags(db_url: str) -> None:
    """The real pipeline with the model checks on and no model: every draft carries
    "not run" check verdicts. They flag nothing (the queue's "Flagged only" filter
    and markers stay useful); a check that ran and found a problem still flags."""
    engine = open_store(db_url)
    on = {"claims_supported": "flag", "faithfulness": "flag"}
    ids = seed_queue(engine, ("bridge", "school", "market"), modes=on)
    flagged = QueueFilter(flagged_only=True)
    with Session(engine) as session:
        view = item_view(session, ids["school"])
        assert view is not None
        claims = view.model_verdict("claims_supported")
        assert claims is not None
        assert (claims.passed, claims.mode, claims.evidence["state"]) == (False, "flag", "not run")
        assert view.flags == []
        assert queue_count(session, flagged) == 0
        assert flagged_ids(session, list(ids.values())) == set()
        assert not any(row.flagged for row in queue_page(session, QueueFilter()))
    with session_scope(engine) as session:  # the checks ran on the bridge and found a problem
        seed_checks(session, ids["bridge"], CHECK)
    with Session(engine) as session:
        assert queue_count(session, flagged) == 1
        assert flagged_ids(session, list(ids.values())) == {ids["bridge"]}
        assert [v.gate for v in item_view(session, ids["bridge"]).flags] != []  # type: ignore[union-attr]


def test_queue_filter_checks_did_not_run(desk) -> None:
    """The sidebar's "Checks did not run" narrows the queue to the drafts whose
    model checks did not run (the school) and leaves out those they judged."""
    engine, ids, at = desk()
    with Session(engine) as session:
        unchecked = QueueFilter(unchecked_only=True)
        assert [row.id for row in queue_page(session, unchecked)] == [ids["school"]]
        assert queue_count(session, unchecked) == 1
        # A check gate now off in config.toml no longer counts.
        off = QueueFilter(unchecked_only=True, gates_off=frozenset(CHECK_GATES))
        assert queue_count(session, off) == 0
    at.toggle(key="f_unchecked").set_value(True)
    at.run()
    assert not at.exception, at.exception
    shown = html(at) + "\n".join(str(b.label) for b in at.button)
    assert BRIDGE.headline not in shown
    assert ARTICLES["school"].headline in shown
