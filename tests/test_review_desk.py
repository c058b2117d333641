"""The queue as a desk shared by several editors (issue 12), through AppTest:
soft claims and presence, deep links, the list following the open item, story
age against ingestion time, and the blocked badge and filters. The Chromium
side of the same is in tests/test_review_desk_browser.py."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, update
from sqlmodel import Session
from streamlit.testing.v1 import AppTest

from review_ui.desk import decisions
from review_ui.desk.decisions import Reviewer
from review_ui.desk.queries import QueueFilter, queue_count, queue_page
from store.db import session_scope
from store.models import DeskPresence, utcnow
from tests.conftest import Seeded
from tests.review_app_helpers import APP, Desk, make_desk, sign_in, texts
from tests.review_seed import (
    ARTICLES,
    decision_button,
    item_state,
    seed_article,
    seed_copies,
    seed_editor,
    seed_model_verdict,
    variant,
)

MODES = {"quotes_verbatim": "flag"}


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


def open_id(at: AppTest) -> int | None:
    return at.session_state["open_id"]


def claims(desk: Desk) -> dict[str, int]:
    with Session(desk.engine) as session:
        return {r.editor: r.item_id for r in session.scalars(select(DeskPresence))}


def list_ids(at: AppTest) -> list[int]:
    return [int(i) for i in at.dataframe[0].value["#"]]


# --------------------------------------------------------------------------- presence


def test_second_editor_does_not_get_the_first_editors_draft(any_desk: Desk) -> None:
    desk = any_desk
    bridge, school = desk.ids["bridge"], desk.ids["school"]
    alice = desk.signed_in("alice")
    assert open_id(alice) == bridge
    assert claims(desk) == {"alice": bridge}

    bob = desk.signed_in("bob")
    assert open_id(bob) == school  # the oldest draft nobody else has open
    assert claims(desk) == {"alice": bridge, "bob": school}
    assert bridge not in list_ids(bob)
    assert "1 more open by other editors: show them" in [b.label for b in bob.button]
    # alice sees bob on nothing of hers; bob sees nobody on his.
    assert "has had this open" not in texts(bob)

    # Overridable: bob shows the held drafts and opens alice's explicitly.
    bob.button(key="show_held").click().run()
    assert bridge in list_ids(bob)
    bob.session_state["open_id"] = bridge
    bob.run()
    assert not bob.exception, bob.exception
    assert "alice has had this open for less than a minute" in texts(bob)
    alice.run()  # alice's page now says bob is there too
    assert open_id(alice) == bridge  # still hers on her screen, and in her list
    assert bridge in list_ids(alice)
    assert "bob has had this open for less than a minute" in texts(alice)


def test_presence_counts_minutes_and_expiry_frees_the_draft(any_desk: Desk) -> None:
    desk = any_desk
    bridge = desk.ids["bridge"]
    desk.signed_in("alice")
    # Alice opened it three minutes ago and the claim is still running.
    with session_scope(desk.engine) as session:
        session.execute(
            update(DeskPresence)
            .where(DeskPresence.editor == "alice")
            .values(opened_at=utcnow() - timedelta(minutes=3))
        )
    bob = desk.app()
    bob.query_params["item"] = str(bridge)
    bob.run()
    sign_in(bob, "bob", "correct horse battery")
    assert open_id(bob) == bridge
    assert "alice has had this open for 3 min" in texts(bob)

    bob.button(key="sign_out").click().run()  # signing out releases bob's claim
    assert claims(desk) == {"alice": bridge}
    # Alice walked away: no refresh, and the claim runs out.
    with session_scope(desk.engine) as session:
        session.execute(
            update(DeskPresence)
            .where(DeskPresence.editor == "alice")
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    seed_editor(desk.engine, "carol")
    carol = desk.signed_in("carol")
    assert open_id(carol) == bridge  # available again
    assert "alice has had this open" not in texts(carol)


def test_deciding_releases_the_claim(desk: Desk) -> None:
    alice = desk.signed_in("alice")
    assert claims(desk) == {"alice": desk.ids["bridge"]}
    decision_button(alice, "approve").click().run()
    assert not alice.exception, alice.exception
    assert claims(desk) == {"alice": desk.ids["school"]}  # the next one, not the decided
    bob = desk.signed_in("bob")
    assert open_id(bob) == desk.ids["market"]
    alice.sidebar.radio(key="view").set_value("Stats").run()  # moved on: released
    assert claims(desk) == {"bob": desk.ids["market"]}


def test_a_viewer_takes_no_claim(desk: Desk) -> None:
    desk.signed_in("vera")
    assert claims(desk) == {}


# --------------------------------------------------------------------------- deep links


def test_a_link_to_an_item_opens_it_after_sign_in_and_follows_the_editor(desk: Desk) -> None:
    market = desk.ids["market"]
    at = AppTest.from_file(str(APP))
    at.default_timeout = 60
    at.query_params["item"] = str(market)
    at.run()
    assert "Sign in" in [b.label for b in at.button]  # the form first, nothing else
    sign_in(at, "alice", "correct horse battery")
    assert open_id(at) == market
    assert at.query_params["item"] == str(market)
    at.button(key="nav_next").click().run()
    assert open_id(at) == desk.ids["hostile"]
    # Written from the next run on that draft, not the one that first draws it
    # (see `queue_view`: a new address costs the browser one more run).
    at.run()
    assert at.query_params["item"] == str(desk.ids["hostile"])


# --------------------------------------------------------------------------- the list


def test_the_list_turns_to_the_page_of_the_open_item(desk: Desk) -> None:
    extra = seed_copies(desk.engine, "school", 24)  # 5 + 24 = 29 drafts: two pages
    at = desk.signed_in("alice")
    assert "page 1 of 2" in texts(at)
    at.session_state["open_id"] = extra[-2]
    at.run()
    assert "page 2 of 2" in texts(at)
    assert extra[-2] in list_ids(at)
    marked = [i for i, m in zip(list_ids(at), at.dataframe[0].value[""], strict=True) if m]
    assert marked == [extra[-2]]
    at.button(key="nav_prev").click().run()  # K: the row above, still page 2
    marked = [i for i, m in zip(list_ids(at), at.dataframe[0].value[""], strict=True) if m]
    assert marked == [extra[-3]]


def test_story_age_and_ingestion_time_are_columns_and_either_orders_the_queue(
    desk: Desk,
) -> None:
    # Ingested last, but published first: the oldest story.
    late = variant(ARTICLES["market"], 7, key="market-early")
    late = type(late)(**{**late.__dict__, "published": "2026-11-20T06:00:00Z"})
    early_story = seed_article(desk.engine, late)
    at = desk.signed_in("alice")
    frame = at.dataframe[0].value
    assert list(frame.columns[:4]) == ["", "#", "age", "ingested"]
    row = frame[frame["#"] == early_story].iloc[0]
    assert row["age"].endswith(" d") and row["ingested"] == "0 min"
    assert list_ids(at)[-1] == early_story  # ingestion order: last
    at.sidebar.selectbox(key="f_order").set_value("story").run()
    assert list_ids(at)[0] == early_story  # story order: first
    assert open_id(at) == early_story


# --------------------------------------------------------------------------- blocked and flagged


def test_a_draft_blocked_after_an_edit_is_badged_and_filtered(any_desk: Desk) -> None:
    desk = any_desk
    bridge, school = desk.ids["bridge"], desk.ids["school"]
    alice = Reviewer("alice", "editor")
    item = item_state(desk.engine, bridge)
    with session_scope(desk.engine) as session:
        decisions.edit(
            session,
            alice,
            bridge,
            item.version,
            item.headline or "",
            (item.summary or "").replace("38", "3,400"),
            gate_modes=MODES,
            min_source_words=40,
        )
    item = item_state(desk.engine, school)
    with session_scope(desk.engine) as session:  # an invented name: names_grounded flags
        decisions.edit(
            session,
            alice,
            school,
            item.version,
            item.headline or "",
            (item.summary or "") + " Head teacher Orla Penhallow agreed.",
            gate_modes=MODES,
            min_source_words=40,
        )
    with session_scope(desk.engine) as session:  # the faithfulness judge flags one
        seed_model_verdict(
            session,
            desk.ids["market"],
            "faithfulness",
            passed=False,
            mode="flag",
            reason="sentence 2 drops the hedge",
        )
    with Session(desk.engine) as session:
        rows = {r.id: r for r in queue_page(session, QueueFilter())}
        assert rows[bridge].badge == "blocked: numbers_grounded"
        assert rows[school].badge == "flagged: names_grounded"
        assert queue_count(session, QueueFilter(blocked_only=True)) == 1
        flagged = {r.id for r in queue_page(session, QueueFilter(flagged_only=True))}
    # Every flag from any gate: names, quotes, the faithfulness judge.
    assert flagged == {school, desk.ids["misquote"], desk.ids["market"]}
    assert rows[desk.ids["market"]].badge == "flagged: faithfulness"
    at = desk.signed_in("alice")
    assert "blocked: numbers_grounded" in texts(at)
    at.sidebar.toggle(key="f_blocked").set_value(True).run()
    assert list_ids(at) == [bridge]


def test_a_draft_whose_page_was_cut_carries_a_badge_in_the_queue(any_desk: Desk) -> None:
    """Issue 26: a draft made from a page cut by max_page_bytes says so in the
    queue's list, where the editor picks it ("source cut at N bytes")."""
    from store.models import Item

    cut = any_desk.ids["bridge"]
    with session_scope(any_desk.engine) as session:
        session.execute(update(Item).where(Item.id == cut).values(page_cut_at=15_000_000))
    with Session(any_desk.engine) as session:
        rows = {r.id: r for r in queue_page(session, QueueFilter())}
    assert "source cut at 15,000,000 bytes" in rows[cut].badge
    assert not any("source cut" in r.badge for i, r in rows.items() if i != cut)
    at = any_desk.signed_in("alice")
    assert texts(at).count("source cut at 15,000,000 bytes") == 1
