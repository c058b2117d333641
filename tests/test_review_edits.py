"""Issue 12, seeing what changed: word diffs of edits against the pipeline's draft
(queue, audit trail, `copydesk audit`), "reverted" logged as such, editors' notes,
and one implementation of taking a decision back."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sqlmodel import Session
from typer.testing import CliRunner

from copydesk.cli import app as cli_app
from review_ui.desk import decisions, diffs, publishing
from review_ui.desk.decisions import NotAllowed, ReasonRequired, Reviewer
from store import textdiff
from store.db import session_scope
from store.notes import MAX_NOTE_CHARS, NoteRefused, add_note, notes_for
from tests.conftest import Seeded
from tests.review_app_helpers import Desk, events, make_desk, open_item, texts
from tests.review_seed import IMG, SCRIPT, decision_button, item_state

ALICE = Reviewer("alice", "editor")
GATES = {"modes": {}, "min": 40}


@pytest.fixture
def desk(
    sqlite_url: str, migrated: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seeded: Seeded
) -> Desk:
    return make_desk(sqlite_url, tmp_path, monkeypatch, seeded)


@pytest.fixture
def any_desk(
    db_url: str, migrated: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seeded: Seeded
) -> Desk:
    return make_desk(db_url, tmp_path, monkeypatch, seeded)


def _edit(desk: Desk, item_id: int, headline: str, summary: str) -> None:
    version = item_state(desk.engine, item_id).version
    decisions.decide(
        desk.engine,
        lambda s: decisions.edit(
            s, ALICE, item_id, version, headline, summary, gate_modes={}, min_source_words=40
        ),
    )


# --------------------------------------------------------------------------- the diff itself


def test_word_diff_marks_whole_words_and_reads_back_both_texts() -> None:
    before = "The council approved 38 steel hangers on Tuesday."
    after = "The council approved 40 steel hangers on Monday, officials said."
    segments = textdiff.word_diff(before, after)
    assert "".join(s.text for s in segments if s.op != "ins") == before
    assert "".join(s.text for s in segments if s.op != "del") == after
    assert [(s.op, s.text) for s in segments if s.op != "same"] == [
        ("del", "38"),
        ("ins", "40"),
        ("del", "Tuesday"),
        ("ins", "Monday, officials said"),
    ]
    assert textdiff.as_text(segments) == (
        "The council approved [-38-]{+40+} steel hangers on [-Tuesday-]{+Monday, officials said+}."
    )
    assert textdiff.counts(segments) == (2, 4)
    assert not textdiff.changed(textdiff.word_diff(before, before))


def test_diff_html_escapes_every_token_of_hostile_text() -> None:
    before = "Plain words here."
    after = f"Plain {SCRIPT} words {IMG} here & <b>bold</b>."
    html = diffs.diff_html(textdiff.word_diff(before, after))
    # The only tags are the <ins>/<del>/<div> built by the module.
    tags = set(re.findall(r"</?([a-zA-Z]+)", html))
    assert tags <= {"div", "ins", "del"}, tags
    assert "<script" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img" in html and "&amp;" in html
    # A deleted hostile token is escaped too.
    html = diffs.diff_html(textdiff.word_diff(after, before))
    assert "<script" not in html and "&lt;script&gt;" in html and '<del class="cd-del"' in html
    # Diffs read back from a stored audit document ignore unknown ops.
    stored = diffs.json_diff_html([["<script>", "LOST"], ["same", "ok"], ["ins", 3]])
    assert "LOST" not in stored and "<script" not in stored and ">ok<" in stored


# --------------------------------------------------------------------------- edits and reverts


def test_an_edit_that_restores_the_pipeline_draft_is_logged_as_reverted(any_desk: Desk) -> None:
    desk = any_desk
    item_id = desk.ids["bridge"]
    original = item_state(desk.engine, item_id)
    changed = original.summary.replace("38 steel hangers", "thirty-eight steel hangers")  # type: ignore[union-attr]
    assert changed != original.summary
    _edit(desk, item_id, original.headline, changed)  # type: ignore[arg-type]
    # Typed back by hand (not the revert button): still a revert.
    _edit(desk, item_id, original.headline, original.summary)  # type: ignore[arg-type]
    _edit(desk, item_id, original.headline, changed)  # type: ignore[arg-type]
    version = item_state(desk.engine, item_id).version
    decisions.decide(
        desk.engine,
        lambda s: decisions.revert(s, ALICE, item_id, version, gate_modes={}, min_source_words=40),
    )
    reasons = [e.reason for e in events(desk.engine, item_id) if e.from_status == e.to_status]
    assert reasons == ["edited", "reverted", "edited", "reverted"]
    item = item_state(desk.engine, item_id)
    assert item.status == "draft" and item.summary == original.summary


def test_queue_shows_the_edit_as_a_word_diff_against_the_pipeline_draft(desk: Desk) -> None:
    item_id = desk.ids["bridge"]
    original = item_state(desk.engine, item_id)
    _edit(
        desk,
        item_id,
        original.headline,  # type: ignore[arg-type]
        original.summary.replace("38 steel hangers", f"38 steel {SCRIPT} hangers"),  # type: ignore[union-attr]
    )
    at = desk.signed_in("alice")
    assert not at.exception
    shown = texts(at)
    assert "Changes from the pipeline" in shown
    assert "0 words deleted, 4 inserted" in shown  # script, alert, 1, script
    diff_blocks = [e.value for e in at.html if "cd-diff" in e.value]
    assert diff_blocks, "no diff drawn"
    queue_diff = diff_blocks[0]
    assert (
        '<ins class="cd-ins"' in queue_diff
        and "&lt;script&gt;alert(1)&lt;/script&gt;" in queue_diff
    )
    assert "<script" not in queue_diff
    # The audit trail shows the same edit, as a diff too.
    assert len(diff_blocks) == 2 and diff_blocks[1].count("cd-ins") == queue_diff.count("cd-ins")
    assert "Edit 1: edited by editor:alice" in shown


def test_copydesk_audit_prints_each_edit_as_a_word_diff_and_the_notes(desk: Desk) -> None:
    item_id = desk.ids["bridge"]
    original = item_state(desk.engine, item_id)
    changed = original.summary.replace("38 steel hangers", "40 steel hangers")  # type: ignore[union-attr]
    _edit(desk, item_id, original.headline, changed)  # type: ignore[arg-type]
    _edit(desk, item_id, original.headline, original.summary)  # type: ignore[arg-type]
    with session_scope(desk.engine) as session:
        add_note(session, item_id, "bob", "Called the council: \x1b[2J38 is right")
    runner = CliRunner()
    result = runner.invoke(cli_app, ["audit", str(item_id)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Edits, as word diffs against the pipeline's draft (2)" in out
    assert "1. edited by editor:alice" in out and "(-1 +1 words)" in out
    assert "[-38-]{+40+} steel hangers" in out
    assert "2. reverted by editor:alice" in out and "(the pipeline's draft, unchanged)" in out
    assert "Notes (1)" in out and "Called the council: \\u001b[2J38 is right" in out
    assert "\x1b" not in out

    result = runner.invoke(cli_app, ["audit", "--json", str(item_id)])
    doc = json.loads(result.stdout)
    assert [e["reason"] for e in doc["edits"]] == ["edited", "reverted"]
    assert ["del", "38"] in doc["edits"][0]["diff"] and ["ins", "40"] in doc["edits"][0]["diff"]
    assert doc["notes"][0]["author"] == "bob" and doc["notes"][0]["at"]


# --------------------------------------------------------------------------- notes


def test_a_note_is_kept_with_its_author_and_never_changes_the_item(any_desk: Desk) -> None:
    desk = any_desk
    item_id = desk.ids["school"]
    before = item_state(desk.engine, item_id)
    at = desk.signed_in("alice")
    open_note = f"note_{item_id}"
    at.session_state["open_id"] = item_id
    at.run()
    at.text_area(key=open_note).input(f"Check the head teacher's name {IMG}")
    at.button(key=f"note_save_{item_id}").click()
    at.run()
    assert not at.exception, at.exception
    after = item_state(desk.engine, item_id)
    assert (after.status, after.version, after.summary) == (
        before.status,
        before.version,
        before.summary,
    )
    with Session(desk.engine) as session:
        (note,) = notes_for(session, item_id)
    assert note.author == "alice" and note.created_at is not None
    assert note.body == f"Check the head teacher's name {IMG}"
    shown = texts(at)
    assert f"Note saved on #{item_id}" in shown
    assert "Notes (1)" in shown and "&lt;img src=x onerror=alert(1)&gt;" in shown
    assert "<img" not in "\n".join(e.value for e in at.html)
    # The item is still in the queue and can be decided as before.
    assert not decision_button(at, "approve").disabled


def test_notes_are_refused_when_empty_too_long_or_from_a_viewer(desk: Desk) -> None:
    item_id = desk.ids["school"]
    with session_scope(desk.engine) as session:
        with pytest.raises(NoteRefused, match="needs some text"):
            add_note(session, item_id, "alice", "   ")
        with pytest.raises(NoteRefused, match="at most"):
            add_note(session, item_id, "alice", "x" * (MAX_NOTE_CHARS + 1))
        with pytest.raises(NoteRefused, match="does not exist"):
            add_note(session, 999_999, "alice", "hello")
    at = desk.signed_in("vera")  # a viewer reads notes but has no box to add one
    assert f"note_save_{desk.ids['bridge']}" not in {b.key for b in at.button}
    at = desk.signed_in("alice")
    at.button(key=f"note_save_{desk.ids['bridge']}").click()
    at.run()
    assert "Note not saved: a note needs some text" in texts(at)
    with Session(desk.engine) as session:
        assert notes_for(session, desk.ids["bridge"]) == []


# --------------------------------------------------------------------------- one take-back


def test_take_back_and_undo_are_one_move(desk: Desk) -> None:
    item_id = desk.ids["market"]
    version = item_state(desk.engine, item_id).version
    approved = decisions.decide(
        desk.engine, lambda s: decisions.approve(s, ALICE, item_id, version)
    )
    with pytest.raises(ReasonRequired):
        publishing.take_back(desk.engine, ALICE, item_id, approved.version, "  ")
    with pytest.raises(NotAllowed):
        publishing.take_back(
            desk.engine, Reviewer("vera", "editor"), item_id, approved.version, "x"
        )
    publishing.take_back(desk.engine, ALICE, item_id, approved.version, "figure unconfirmed")
    last = events(desk.engine, item_id)[-1]
    assert (last.from_status, last.to_status, last.reason, last.details) == (
        "approved",
        "draft",
        "figure unconfirmed",
        {"taken_back": True},
    )


# --------------------------------------------------------------------------- preset reasons


def _reject_with(at, desk: Desk, item_id: int, preset: str | None, typed: str) -> None:  # type: ignore[no-untyped-def]
    open_item(at, item_id)
    key = f"reason_{item_id}_{item_state(desk.engine, item_id).version}"
    if preset is not None:
        at.selectbox(key=f"{key}_preset").set_value(preset)
    if typed:
        at.text_input(key=key).input(typed)
    decision_button(at, "reject_submit").click()
    at.run()
    assert not at.exception, at.exception


def test_preset_reject_reasons_from_config_are_offered_and_stored(
    desk: Desk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = Path(tmp_path / "c.toml")
    config.write_text(
        config.read_text(encoding="utf-8")
        + 'reject_reasons = ["Duplicate of item in print", "Embargoed until Friday"]\n',
        encoding="utf-8",
    )
    at = desk.signed_in("alice")
    bridge, school, market = (desk.ids[k] for k in ("bridge", "school", "market"))
    box = at.selectbox(key=f"reason_{bridge}_{item_state(desk.engine, bridge).version}_preset")
    assert box.options == [
        "Preset reason (or type one)",
        "Duplicate of item in print",
        "Embargoed until Friday",
    ]
    _reject_with(at, desk, bridge, "Embargoed until Friday", "")
    _reject_with(at, desk, school, "Duplicate of item in print", "see page 4")
    _reject_with(at, desk, market, None, "Our own words")
    reasons = {
        i: [e.reason for e in events(desk.engine, i) if e.to_status == "rejected"]
        for i in (bridge, school, market)
    }
    assert reasons == {
        bridge: ["Embargoed until Friday"],
        school: ["Duplicate of item in print: see page 4"],
        market: ["Our own words"],
    }


def test_reject_reasons_setting_is_checked() -> None:
    from pydantic import ValidationError

    from review_ui.settings import DEFAULT_REJECT_REASONS, ReviewSettings

    assert ReviewSettings().reject_reasons == list(DEFAULT_REJECT_REASONS)
    assert ReviewSettings(reject_reasons=["  Too   old "]).reject_reasons == ["Too old"]
    assert ReviewSettings(reject_reasons=[]).reject_reasons == []
    for bad in (["", "x"], ["x", " x "], ["y" * 201], [f"r{i}" for i in range(31)]):
        with pytest.raises(ValidationError):
            ReviewSettings(reject_reasons=bad)
