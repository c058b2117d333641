"""The claim keeper (review_ui/desk/claim_keeper.py): while an editor's browser session
is connected with a draft open, a thread of its own keeps their soft claim fresh;
it stops on a disconnect, another draft, a decision, the idle cap, and releases
nothing when it stops. On SQLite and PostgreSQL, with items made by the real
pipeline.

"Connected" is a callable the test controls, and the refresh interval is short;
every assertion is about rows in `desk_presence` and which threads still run,
never about how fast anything happened (waits are generous deadlines)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui.desk import claim_keeper
from review_ui.desk.claim_keeper import THREAD_PREFIX, ClaimKeeper
from store import presence
from store.db import open_store, session_scope
from store.editors import disable_editor
from store.models import DeskPresence, Item
from store.status import move
from tests.conftest import Seeded
from tests.review_seed import seed_editor, seed_queue

TTL = 10.0
TICK = 0.05  # the tests' refresh interval (the app's is claim_seconds / 3)
LIMIT = 30.0  # a deadline for what must happen, never a measure of speed
SESSION = "session-1"


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + LIMIT
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {LIMIT}s: {what}")
        time.sleep(0.01)


def _claim(engine: Engine, editor: str = "alice") -> tuple[int, datetime] | None:
    with Session(engine) as session:
        row = session.get(DeskPresence, editor)
        return (row.item_id, row.expires_at) if row is not None else None


def _claims(engine: Engine) -> dict[str, int]:
    with Session(engine) as session:
        return {r.editor: r.item_id for r in session.scalars(select(DeskPresence))}


def _keeper_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX)]


def _open(engine: Engine, item_id: int, editor: str = "alice") -> datetime:
    """What a page run does: take the claim. Returns its expiry."""
    with session_scope(engine) as session:
        presence.hold(session, editor, item_id, TTL)
    claim = _claim(engine, editor)
    assert claim is not None
    return claim[1]


class Link:
    """A browser session's connection, as the keeper sees it."""

    def __init__(self) -> None:
        self.up = True

    def __call__(self) -> bool:
        return self.up


@pytest.fixture
def desk(db_url: str, migrated: None, seeded: Seeded) -> Iterator[tuple[Engine, dict[str, int]]]:
    ids = seeded(db_url, "claim keeper desk", _seed_desk)
    engine = open_store(db_url)
    yield engine, ids
    for key in (SESSION, "session-2"):
        claim_keeper.stop(key)
    engine.dispose()
    assert _keeper_threads() == []


def _seed_desk(engine: Engine) -> dict[str, int]:
    """Three drafts through the real pipeline, editors alice and bob (copied per test)."""
    ids = seed_queue(engine, ("bridge", "school", "market"))
    for name in ("alice", "bob"):
        seed_editor(engine, name)
    return ids


def _keep(engine: Engine, item_id: int, link: Link, *, idle: float = 3600.0) -> ClaimKeeper:
    return claim_keeper.keep(
        SESSION,
        engine,
        "alice",
        item_id,
        ttl=TTL,
        idle_seconds=idle,
        is_connected=link,
        interval=TICK,
    )


def _refreshed_after(engine: Engine, expiry: datetime) -> Callable[[], bool]:
    def check() -> bool:
        claim = _claim(engine)
        return claim is not None and claim[1] > expiry

    return check


def test_refreshes_while_connected_and_stops_on_disconnect_releasing_nothing(
    desk: tuple[Engine, dict[str, int]],
) -> None:
    engine, ids = desk
    bridge = ids["bridge"]
    first = _open(engine, bridge)
    link = Link()
    keeper = _keep(engine, bridge, link)
    _until(_refreshed_after(engine, first), "the claim refreshed while connected")
    second = _claim(engine)
    assert second is not None
    _until(_refreshed_after(engine, second[1]), "refreshed again")
    # The keeper counts a refresh after its commit: the row can show the second refresh
    # before the count does (seen on a loaded machine), so the count is waited for too.
    _until(lambda: keeper.refreshes >= 2, "the keeper counted both refreshes")
    # The tab is closed: the keeper stops by itself, and the claim stays as it was
    # (it lapses at its expiry, like after a crash).
    link.up = False
    _until(lambda: not keeper.alive, "the keeper stopped after the disconnect")
    assert keeper.stopped_because == claim_keeper.DISCONNECTED
    last = _claim(engine)
    assert last is not None and last[0] == bridge
    time.sleep(TICK * 4)  # the thread is gone: nothing can move the expiry any more
    assert _claim(engine) == last
    assert _keeper_threads() == []
    # Still a claim for others' queues until it expires.
    with Session(engine) as session:
        held = set(session.scalars(select(Item.id).where(presence.held_by_others(Item.id, "bob"))))
    assert held == {bridge}


def test_another_draft_replaces_the_keeper_one_thread_per_session(
    desk: tuple[Engine, dict[str, int]],
) -> None:
    engine, ids = desk
    link = Link()
    keepers = []
    for key in ("bridge", "school", "market", "bridge"):
        item_id = ids[key]
        claim_keeper.stop_if_other(SESSION, "alice", item_id)  # what `_presence` does first
        expiry = _open(engine, item_id)
        keepers.append(_keep(engine, item_id, link))
        assert len(_keeper_threads()) == 1
        _until(_refreshed_after(engine, expiry), f"the claim on {key} refreshed")
        assert _claims(engine) == {"alice": item_id}
    # Every replaced keeper stopped (not one left running in the background)...
    assert [k.alive for k in keepers] == [False, False, False, True]
    assert [k.stopped_because for k in keepers[:3]] == [claim_keeper.STOPPED] * 3
    # ...and the same draft on the next run keeps the same keeper (and thread).
    assert _keep(engine, ids["bridge"], link) is keepers[-1]
    assert len(_keeper_threads()) == 1
    # A second session (bob's browser) has a keeper of its own.
    expiry = _open(engine, ids["school"], "bob")
    bobs = claim_keeper.keep(
        "session-2",
        engine,
        "bob",
        ids["school"],
        ttl=TTL,
        idle_seconds=3600,
        is_connected=link,
        interval=TICK,
    )
    _until(_refreshed_after_for(engine, "bob", expiry), "bob's claim refreshed")
    assert len(_keeper_threads()) == 2 and keepers[-1].alive and bobs.alive
    # The session stops its keeper (a decision, another view, signing out): gone,
    # with nothing released by it.
    claim_keeper.stop(SESSION)
    assert not keepers[-1].alive
    assert _claims(engine) == {"alice": ids["bridge"], "bob": ids["school"]}
    assert _keeper_threads() == [bobs._thread]


def _refreshed_after_for(engine: Engine, editor: str, expiry: datetime) -> Callable[[], bool]:
    def check() -> bool:
        claim = _claim(engine, editor)
        return claim is not None and claim[1] > expiry

    return check


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_idle_cap_counts_from_the_last_page_run(desk: tuple[Engine, dict[str, int]]) -> None:
    engine, ids = desk
    bridge = ids["bridge"]
    expiry = _open(engine, bridge)
    clock = Clock()
    keeper = ClaimKeeper(
        engine, "alice", bridge, TTL, 600, Link(), interval=TICK, clock=clock
    ).start()
    try:
        _until(_refreshed_after(engine, expiry), "refreshed")
        clock.now += 590  # ten minutes minus ten seconds without a page run: still kept
        claim = _claim(engine)
        assert claim is not None
        _until(_refreshed_after(engine, claim[1]), "refreshed before the cap")
        keeper.touch()  # the page ran: the cap counts from here
        clock.now += 590
        claim = _claim(engine)
        assert claim is not None
        _until(_refreshed_after(engine, claim[1]), "refreshed after the page ran")
        assert keeper.alive
        clock.now += 11  # past the cap
        _until(lambda: not keeper.alive, "stopped at the idle cap")
        assert keeper.stopped_because == claim_keeper.IDLE
        last = _claim(engine)
        assert last is not None and last[0] == bridge  # not released: it lapses
        time.sleep(TICK * 4)
        assert _claim(engine) == last
    finally:
        keeper.stop()


def test_stops_when_the_draft_is_decided_or_the_claim_moves_or_the_editor_goes(
    desk: tuple[Engine, dict[str, int]],
) -> None:
    engine, ids = desk
    link = Link()

    # Decided (here by bob, in another browser).
    _open(engine, ids["bridge"])
    keeper = _keep(engine, ids["bridge"], link)
    with session_scope(engine) as session:
        item = session.get(Item, ids["bridge"])
        assert item is not None
        move(session, item, "approved", actor="editor:bob")
    _until(lambda: not keeper.alive, "stopped after the decision")
    assert keeper.stopped_because == claim_keeper.LEFT_QUEUE

    # The claim moved on in alice's other tab: this tab's keeper never moves it back.
    _open(engine, ids["school"])
    keeper = _keep(engine, ids["school"], link)
    assert keeper.alive
    _open(engine, ids["market"])  # her other tab
    _until(lambda: not keeper.alive, "stopped after the claim moved")
    assert keeper.stopped_because == claim_keeper.CLAIM_GONE
    assert _claims(engine) == {"alice": ids["market"]}

    # The account was disabled.
    _open(engine, ids["school"])
    keeper = _keep(engine, ids["school"], link)
    assert keeper.alive
    with session_scope(engine) as session:
        disable_editor(session, "alice")
    _until(lambda: not keeper.alive, "stopped after the account was disabled")
    assert keeper.stopped_because == claim_keeper.NOT_AN_EDITOR
    assert _claims(engine) == {"alice": ids["school"]}


def test_the_idle_cap_setting() -> None:
    from pydantic import ValidationError

    from review_ui.settings import ReviewSettings

    assert ReviewSettings().claim_idle_seconds == 3600
    assert ReviewSettings(claim_idle_seconds=0).claim_idle_seconds == 0  # page runs only
    assert ReviewSettings(claim_seconds=60, claim_idle_seconds=60).claim_idle_seconds == 60
    for wrong in (
        {"claim_seconds": 300, "claim_idle_seconds": 120},  # stops before the claim ends
        {"claim_idle_seconds": -1},
        {"claim_idle_seconds": 86401},
    ):
        with pytest.raises(ValidationError):
            ReviewSettings(**wrong)
