"""The desk's retraction checks the version the editor saw in the same transaction,
under the same lock, as the retraction itself (issue 25 follow-up; it used to be
two transactions). On SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select
from sqlmodel import Session

from publish import service
from publish.service import GateConfig, Publisher, retract
from publish.settings import AtomTargetSettings, JsonlTargetSettings
from publish.targets import AtomTarget, JsonlTarget
from store import locks
from store.models import Delivery, Item
from store.status import Conflict
from tests.publish_helpers import approve, run_pipeline, write_config


@pytest.fixture
def published(tmp_path: Path, db_url: str, migrated: None):  # type: ignore[no-untyped-def]
    from store.db import open_store

    run_pipeline(write_config(tmp_path, db_url, targets=()))
    engine = open_store(db_url)
    (item_id,) = approve(engine, 1)
    out = tmp_path / "out"
    Publisher(
        engine,
        [
            AtomTarget(AtomTargetSettings(path=out / "feed.xml")),
            JsonlTarget(JsonlTargetSettings(path=out / "items.jsonl")),
        ],
        actor="cli:w1",
        gates=GateConfig(min_source_words=40),
    ).publish([item_id])
    yield engine, item_id
    engine.dispose()


def _state(engine, item_id: int) -> tuple[str, int, int]:  # type: ignore[no-untyped-def]
    with Session(engine) as session:
        item = session.get(Item, item_id)
        assert item is not None
        retractions = session.scalars(
            select(Delivery).where(Delivery.item_id == item_id, Delivery.kind == "retract")
        ).all()
        return item.status, item.version, len(retractions)


def test_a_stale_version_is_refused_and_names_who_moved_it(published) -> None:  # type: ignore[no-untyped-def]
    engine, item_id = published
    status, version, _ = _state(engine, item_id)
    assert status == "published"
    with pytest.raises(Conflict):
        retract(engine, item_id, editor="ann", reason="Wrong date", expected_version=version - 1)
    assert _state(engine, item_id) == ("published", version, 0)
    retract(engine, item_id, editor="ann", reason="Wrong date", expected_version=version)
    assert _state(engine, item_id)[0::2] == ("retracted", 2)


def test_a_move_between_the_desks_read_and_its_write_is_caught(published, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Bo retracts the item after Ann's screen read its version, just before Ann's
    retraction takes the lock: Ann's is refused as stale (who moved it, not "the
    item is retracted"), and Bo's stands, once."""
    engine, item_id = published
    _, seen, _ = _state(engine, item_id)  # what Ann's screen shows
    original = locks.write_transaction
    crossed: list[bool] = []

    def bo_first(session):  # type: ignore[no-untyped-def]
        if not crossed:
            crossed.append(True)
            retract(engine, item_id, editor="bo", reason="The council withdrew it")
        return original(session)

    monkeypatch.setattr(service.locks, "write_transaction", bo_first)
    with pytest.raises(Conflict) as refused:
        retract(engine, item_id, editor="ann", reason="Wrong date", expected_version=seen)
    assert refused.value.actor == "editor:bo"
    assert refused.value.status == "retracted"
    status, version, retractions = _state(engine, item_id)
    assert (status, version) == ("retracted", seen + 1)
    assert retractions == 2  # Bo's, for the two targets: Ann's wrote none


@pytest.mark.parametrize("account", ["viewer", "disabled editor"])
def test_only_an_enabled_editor_retracts_from_the_desk(published, account: str) -> None:  # type: ignore[no-untyped-def]
    """Issue 25 point 5, "editors only": the desk's Retract re-reads the account in
    its own transaction, so a viewer (whose page shows no Retract form) or an editor
    disabled since the page was drawn is refused, and nothing changes."""
    from review_ui.desk import publishing
    from review_ui.desk.decisions import NotAllowed, Reviewer
    from review_ui.settings import ReviewAppSettings
    from store.editors import add_editor, disable_editor
    from tests.review_seed import PASSWORD

    engine, item_id = published
    role = "viewer" if account == "viewer" else "editor"
    with Session(engine) as session:
        add_editor(session, "vera", PASSWORD, role=role)
        if account == "disabled editor":
            disable_editor(session, "vera")
        session.commit()
    before = _state(engine, item_id)
    settings = ReviewAppSettings(database_url=engine.url.render_as_string(hide_password=False))
    with pytest.raises(NotAllowed):
        publishing.retract_now(
            engine, settings, Reviewer("vera", role), item_id, before[1], "Wrong date"
        )
    assert _state(engine, item_id) == before == ("published", before[1], 0)


def test_a_viewers_published_page_has_no_retract_form(
    published, tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """...and the page itself offers a viewer no Retract (AppTest): an editor's
    Published view has the form, a viewer's has none."""
    from store.db import session_scope
    from tests.apptest_helpers import signed_in
    from tests.publish_helpers import SECRET, SECRET_ENV, add_editor_once

    engine, _ = published
    with session_scope(engine) as session:
        add_editor_once(session, "ann")
        add_editor_once(session, "vera", role="viewer")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COPYDESK_CONFIG", str(write_config(tmp_path, db_url, targets=())))
    monkeypatch.setenv(SECRET_ENV, SECRET)
    retract_buttons = [
        [b.key for b in signed_in(name, "Published").button if "retract" in (b.key or "")]
        for name in ("ann", "vera")
    ]
    assert retract_buttons[0], "the editor's page has no Retract form"
    assert retract_buttons[1] == [], retract_buttons[1]
