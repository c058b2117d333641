"""`copydesk watch` (a changed figure on a loopback page is flagged, never fixed) and
`copydesk replay` (exactly the items a tightened gate would flip), on both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlmodel import Session

from store.db import open_store
from store.models import AuditEvent, Item, SourceCheck
from tests.publish_helpers import (
    LOOPBACK,
    Page,
    approve,
    cli,
    page_server,
    run_pipeline,
    write_config,
)

# Each test's database starts at the newest schema (conftest's migrated template), so
# `copydesk init` in write_config migrates nothing; what init makes is the same.
pytestmark = pytest.mark.usefixtures("migrated")

ARTICLE = """<html><head><title>Kessock Point quay extension approved</title></head><body>
<article><h1>Kessock Point quay extension approved</h1>
<p>The Kessock Point harbour board approved a {metres} metre extension of the north quay on
Thursday, after a consultation that drew 412 responses from fishermen, ferry operators and
residents of the point.</p>
<p>The extension will cost £4.8 million and is due to open in the spring of 2028, the
board's chair, Ilse Marrow, said. Work on the foundations starts in March.</p>
<p>Ferry crossings to the island of Skarra will continue throughout the works, with a
temporary landing stage moored beside the lifeboat station.</p>
</article></body></html>"""


def test_watch_flags_a_changed_figure_and_changes_nothing(tmp_path: Path, db_url: str) -> None:
    page = Page(ARTICLE, metres="1,250")
    with page_server(page) as url:
        config = write_config(tmp_path, db_url, targets=("jsonl",), extra=LOOPBACK)
        submitted = cli(config, "submit", url)
        assert submitted.exit_code == 0, submitted.output
        engine = open_store(db_url)
        with Session(engine) as session:
            item = session.scalars(select(Item).where(Item.source_url == url)).one()
            assert "1,250" in item.summary, item.summary
        approve(engine, 1)
        assert cli(config, "publish").exit_code == 0

        same = cli(config, "watch", "--json")
        assert same.exit_code == 0, same.output
        assert json.loads(same.stdout)["unchanged"] == 1

        page.fields["metres"] = "1,520"  # the source corrects its figure
        changed = cli(config, "watch", "--json")
        assert changed.exit_code == 1, changed.output
        assert json.loads(changed.stdout)["flagged"] == [item.id]
        again = cli(config, "watch", "--json")  # conditional GET: 304, nothing new
        assert json.loads(again.stdout)["flagged"] == []
    assert page.requests[-1] == (page.etag(), 304)

    with Session(engine) as session:
        after = session.get(Item, item.id)
        checks = session.scalars(
            select(SourceCheck).where(SourceCheck.item_id == item.id, SourceCheck.state == "open")
        ).all()
    assert (after.status, after.summary, after.source_text) == (
        "published",
        item.summary,
        item.source_text,
    ), "watch never changes the item"
    [check] = checks
    assert [f["gate"] for f in check.failing] == ["numbers_grounded"]
    assert "1,250" in check.failing[0]["reason"]
    [passage] = check.passages
    assert "1,250" in passage["before"] and "1,520" in passage["after"]
    assert "1,520" in check.new_text
    engine.dispose()


def test_replay_lists_exactly_what_a_tightened_gate_would_flip(tmp_path: Path, db_url: str) -> None:
    config = write_config(tmp_path, db_url, targets=("jsonl",))
    run_pipeline(config)
    engine = open_store(db_url)
    approved = approve(engine, 3)
    assert cli(config, "publish").exit_code == 0
    with Session(engine) as session:
        items = session.scalars(select(Item)).all()
        replayed = [i for i in items if i.status in ("draft", "approved", "published")]
    counts = sorted(i.word_count for i in replayed)
    shortest_published = min(i.word_count for i in replayed if i.id in approved)
    # About half the kept items are now too short, a published one among them.
    threshold = max(counts[len(counts) // 2], shortest_published + 1)
    expected = {i.id for i in replayed if i.word_count < threshold}
    assert 0 < len(expected) < len(replayed) and expected & set(approved)

    tight = write_config(tmp_path, db_url, targets=("jsonl",)).read_text()
    tight = tight.replace("min_source_words = 40", f"min_source_words = {threshold}")
    (tmp_path / "config.toml").write_text(tight)
    before = _snapshot(engine)
    result = cli(config, "replay", "--json", "--gate", "source_length")
    assert result.exit_code == 1, result.output
    flips = json.loads(result.stdout)["flips"]
    assert {f["item"] for f in flips} == expected
    assert all(f["now"] == "fails" and f["gates"] == ["source_length"] for f in flips)
    assert _snapshot(engine) == before, "replay without --apply-to-drafts changes nothing"

    applied = cli(config, "replay", "--json", "--apply-to-drafts")
    discarded = set(json.loads(applied.stdout)["discarded"])
    statuses = {i.id: i.status for i in replayed}
    assert discarded == {i for i in expected if statuses[i] == "draft"}
    with Session(engine) as session:
        for item_id in expected:
            item = session.get(Item, item_id)
            if statuses[item_id] == "draft":
                event = session.scalars(
                    select(AuditEvent)
                    .where(AuditEvent.item_id == item_id)
                    .order_by(AuditEvent.id.desc())
                ).first()
                assert (item.status, event.actor) == ("discarded", "replay")
                assert event.details["replay"]["gates"] == ["source_length"]
                assert item.discard_kind == "source_length"
            else:
                assert item.status == statuses[item_id], "approved/published are only listed"

    # Loosened back: the replay's own discards would now pass, and are listed as such.
    (tmp_path / "config.toml").write_text(tight.replace(f"= {threshold}", "= 40", 1))
    loose = json.loads(cli(config, "replay", "--json").stdout)
    passes = {f["item"] for f in loose["flips"] if f["now"] == "passes"}
    assert discarded <= passes
    engine.dispose()


def _snapshot(engine) -> list[tuple]:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        items = [(i.id, i.status, i.version) for i in session.scalars(select(Item))]
        events = len(session.scalars(select(AuditEvent.id)).all())
    return [*items, events]


@pytest.mark.parametrize("gate", ["no_such_gate", "faithfulness"])
def test_replay_refuses_an_unknown_or_model_gate(
    tmp_path: Path, sqlite_url: str, gate: str
) -> None:
    config = write_config(tmp_path, sqlite_url, targets=())
    result = cli(config, "replay", "--gate", gate)
    assert result.exit_code == 2 and "not a deterministic gate" in result.output


def test_watch_does_not_count_a_flag_as_no_longer_passing(tmp_path: Path, db_url: str) -> None:
    """A flag-mode gate (names_grounded) failing on the new text is a warning the
    editor already accepts at review, not a failure: the item still passes."""
    page = Page(ARTICLE.replace("Ilse Marrow", "{chair}"), metres="1,250", chair="Ilse Marrow")
    with page_server(page) as url:
        config = write_config(tmp_path, db_url, targets=("jsonl",), extra=LOOPBACK)
        assert cli(config, "submit", url).exit_code == 0
        engine = open_store(db_url)
        with Session(engine) as session:
            item = session.scalars(select(Item).where(Item.source_url == url)).one()
        assert "Ilse Marrow" in item.summary, item.summary
        approve(engine, 1)
        assert cli(config, "publish").exit_code == 0
        page.fields["chair"] = "the chair"  # the name is gone: names_grounded (flag) fails
        changed = cli(config, "watch", "--json")
    report = json.loads(changed.stdout)
    assert changed.exit_code == 0, changed.output
    assert (report["flagged"], report["changed_still_pass"]) == ([], [item.id])
    with Session(engine) as session:
        [check] = session.scalars(
            select(SourceCheck).where(SourceCheck.item_id == item.id, SourceCheck.state != "seen")
        ).all()
    assert (check.state, check.failing) == ("ok", [])
    engine.dispose()


def test_watch_reads_the_sources_current_headline_too(tmp_path: Path, db_url: str) -> None:
    """The source corrects a figure in its headline and its body: the published
    summary that still says the old figure is flagged. (Before, watch put the stored
    headline in front of the new body, and the old figure was still "grounded".)"""
    article = ARTICLE.replace(
        "Kessock Point quay extension approved", "Kessock Point approves {metres} metre quay"
    )
    page = Page(article, metres="1,250")
    with page_server(page) as url:
        config = write_config(tmp_path, db_url, targets=("jsonl",), extra=LOOPBACK)
        assert cli(config, "submit", url).exit_code == 0
        engine = open_store(db_url)
        with Session(engine) as session:
            item = session.scalars(select(Item).where(Item.source_url == url)).one()
        assert "1,250" in (item.headline or "") + (item.summary or "")
        approve(engine, 1)
        assert cli(config, "publish").exit_code == 0
        page.fields["metres"] = "1,520"
        changed = cli(config, "watch", "--json")
    assert changed.exit_code == 1, changed.output
    assert json.loads(changed.stdout)["flagged"] == [item.id]
    with Session(engine) as session:
        check = session.scalars(
            select(SourceCheck).where(SourceCheck.item_id == item.id, SourceCheck.state == "open")
        ).one()
    assert "1,250" not in check.new_text and "1,520" in check.new_text.splitlines()[0]
    engine.dispose()
