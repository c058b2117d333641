"""Publishing against everything that can cross it, with the interleavings forced
(a hook runs the competitor at the exact point between a read and the write that
depends on it), on SQLite and PostgreSQL:

- an editor's take-back (approved -> draft) and a publisher's claim;
- a take-back and the preparation of an item's delivery rows;
- a worker whose lease ran out, recording over the worker that took the row over;
- two publishers rebuilding the one Atom file (issue 26: the last writer dropped
  the other's entries, and a retracted summary came back as live).

A competitor that must wait runs on its own thread and gets a few seconds: once
the fix holds, it is blocked whatever the machine's speed, and the outcome is the
same; before it, it finished inside the window and the test failed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from lxml import etree
from sqlalchemy import select, update
from sqlalchemy.engine import Engine
from sqlmodel import Session

from publish import service
from publish.service import GateConfig, Publisher, retract
from publish.settings import AtomTargetSettings, JsonlTargetSettings
from publish.targets import FAILED, AtomTarget, JsonlTarget, Sent
from store import deliveries as store_deliveries
from store import status as st
from store.db import open_store, session_scope
from store.models import Delivery, Item, utcnow
from tests.publish_helpers import approve, jsonl_lines, run_pipeline, write_config

ATOM = "{http://www.w3.org/2005/Atom}"
WAIT = 3.0  # seconds a blocked competitor is given; the outcome does not depend on it


@pytest.fixture
def world(tmp_path: Path, db_url: str, migrated: None):  # type: ignore[no-untyped-def]
    config = write_config(tmp_path, db_url, targets=())
    run_pipeline(config)
    engine = open_store(db_url)
    yield tmp_path, engine
    engine.dispose()


def targets(folder: Path) -> list:  # type: ignore[type-arg]
    return [
        AtomTarget(AtomTargetSettings(path=folder / "out" / "feed.xml")),
        JsonlTarget(JsonlTargetSettings(path=folder / "out" / "items.jsonl")),
    ]


def publisher(engine: Engine, folder: Path, name: str = "w1", **kw) -> Publisher:  # type: ignore[no-untyped-def]
    return Publisher(
        engine, targets(folder), actor=f"cli:{name}", gates=GateConfig(min_source_words=40), **kw
    )


def take_back(engine: Engine, item_id: int, reason: str = "Wrong figure") -> None:
    with session_scope(engine) as session:
        item = session.get(Item, item_id)
        st.move(session, item, st.DRAFT, actor="editor:bo", reason=reason)


def in_thread(work: Callable[[], object]) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, errors


def atom_ids(folder: Path) -> dict[str, str]:
    """entry id -> its title, as the feed file holds them."""
    root = etree.parse(str(folder / "out" / "feed.xml")).getroot()
    return {e.findtext(f"{ATOM}id"): e.findtext(f"{ATOM}title") for e in root.iter(f"{ATOM}entry")}


def delivered_to(engine: Engine, target: str) -> dict[int, str]:
    """item -> its newest delivered kind on one target: the database's own view."""
    with Session(engine) as session:
        rows = session.scalars(
            select(Delivery)
            .where(Delivery.target == target, Delivery.state == "delivered")
            .order_by(Delivery.id)
        ).all()
    newest: dict[int, str] = {}
    for row in rows:
        if row.kind == "retract" or row.item_id not in newest:
            newest[row.item_id] = row.kind
    return newest


def status(engine: Engine, item_id: int) -> str:
    with Session(engine) as session:
        return session.get(Item, item_id).status


# --------------------------------------------------------------- take-back vs publish


def test_a_publish_that_crosses_a_take_back_ships_nothing(world, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The take-back has read "nothing started"; a publisher runs before it writes.
    Before: on SQLite the publisher delivered, then the take-back wrote approved ->
    draft: a draft in the queue, live at the target."""
    folder, engine = world
    [item_id] = approve(engine, 1)
    real = store_deliveries.publication_started
    competitor: list[threading.Thread] = []

    def started_then_cross(session, checked_id):  # type: ignore[no-untyped-def]
        found = real(session, checked_id)
        thread, _ = in_thread(lambda: publisher(engine, folder).publish())
        thread.join(WAIT)
        competitor.append(thread)
        return found

    monkeypatch.setattr(store_deliveries, "publication_started", started_then_cross)
    take_back(engine, item_id)
    monkeypatch.setattr(store_deliveries, "publication_started", real)
    competitor[0].join(60)
    assert status(engine, item_id) == "draft"
    assert jsonl_lines(folder) == []
    assert delivered_to(engine, "atom") == {}
    with Session(engine) as session:
        assert session.scalars(select(Delivery)).all() == []


def test_a_take_back_after_the_claim_is_refused_and_the_item_ships(world, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The other order: the publisher has claimed the row; the take-back comes now."""
    folder, engine = world
    [item_id] = approve(engine, 1)
    refused: list[Exception] = []
    real_claim = Publisher._claim

    def claim_then_take_back(self, *args):  # type: ignore[no-untyped-def]
        events = real_claim(self, *args)
        if events and not refused:
            try:
                take_back(engine, item_id)
            except st.IllegalMove as exc:
                refused.append(exc)
        return events

    monkeypatch.setattr(Publisher, "_claim", claim_then_take_back)
    report = publisher(engine, folder).publish()
    assert refused and "being published" in str(refused[0])
    assert report.published == [item_id]
    assert status(engine, item_id) == "published"


def test_a_take_back_during_preparation_leaves_no_old_text_to_ship(world, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The publisher has read the item as approved and builds its payload; the editor
    takes it back, fixes the summary and approves again. What ships is the new text.
    Before: on SQLite the pending row with the old text survived and was sent."""
    folder, engine = world
    [item_id] = approve(engine, 1)
    real_recheck, real_claim = Publisher.recheck, Publisher._claim
    crossed: list[tuple[threading.Thread, list[BaseException]]] = []

    def recheck_then_cross(self, item):  # type: ignore[no-untyped-def]
        results = real_recheck(self, item)
        if not crossed:
            crossed.append(in_thread(lambda: take_back(engine, item_id)))
            crossed[0][0].join(WAIT)
        return results

    def claim_after_the_take_back(self, *args):  # type: ignore[no-untyped-def]
        crossed[0][0].join(60)  # the take-back goes first, then the claim
        return real_claim(self, *args)

    monkeypatch.setattr(Publisher, "recheck", recheck_then_cross)
    monkeypatch.setattr(Publisher, "_claim", claim_after_the_take_back)
    first = publisher(engine, folder).publish()
    monkeypatch.setattr(Publisher, "recheck", real_recheck)
    monkeypatch.setattr(Publisher, "_claim", real_claim)
    assert crossed[0][1] == []  # the take-back was not refused
    assert first.delivered == [] and status(engine, item_id) == "draft"
    with session_scope(engine) as session:
        item = session.get(Item, item_id)
        new_summary = item.summary + " The quay reopens in May."
        st.record_edit(
            session,
            item,
            actor="editor:bo",
            headline=item.headline,
            summary=new_summary,
            expected_version=item.version,
        )
        st.move(session, item, st.APPROVED, actor="editor:bo", reason="approved")
    publisher(engine, folder).publish()
    assert [line["summary"] for line in jsonl_lines(folder)] == [new_summary]


def test_an_untried_payload_is_rebuilt_from_the_current_text(world) -> None:  # type: ignore[no-untyped-def]
    """A pending row nobody tried yet, left by an earlier approval (an older copydesk,
    a crossing), carries that approval's text: publishing builds it again from the
    item as it is. (A row of the current approval whose text was changed behind the
    status machine is refused instead: tests/test_approved_text.py.)"""
    folder, engine = world
    [item_id] = approve(engine, 1)
    pub = publisher(engine, folder)
    assert pub._prepare(item_id, service.PublishReport())  # noqa: SLF001
    with session_scope(engine) as session:
        session.execute(
            update(Delivery)
            .where(Delivery.item_id == item_id)
            .values(
                payload={
                    "id": "stale",
                    "event": "published",
                    "summary": "Old text.",
                    "approved_at": "2026-01-02T03:04:05Z",
                }
            )
        )
        current = session.get(Item, item_id).summary
    publisher(engine, folder).publish()
    assert [line["summary"] for line in jsonl_lines(folder)] == [current]
    assert list(atom_ids(folder)) != ["stale"]


# --------------------------------------------------------------- a lease that ran out


def test_a_worker_whose_lease_ran_out_cannot_overwrite_the_delivery(world, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Worker A claims, stalls past its lease; B takes the row over and delivers; A's
    late answer (a failure) must not turn `delivered` into `failed`."""
    folder, engine = world
    [item_id] = approve(engine, 1)
    slow = JsonlTarget(JsonlTargetSettings(name="jsonl", path=folder / "out" / "items.jsonl"))

    def stalled_send(event, feed):  # type: ignore[no-untyped-def]
        with session_scope(engine) as session:  # A's lease runs out meanwhile
            session.execute(
                update(Delivery)
                .where(Delivery.item_id == item_id)
                .values(claimed_until=utcnow() - timedelta(seconds=1))
            )
        other = Publisher(
            engine,
            [JsonlTarget(JsonlTargetSettings(path=folder / "out" / "items.jsonl"))],
            actor="cli:w2",
            gates=GateConfig(min_source_words=40),
        )
        assert other.publish().published == [item_id]
        return Sent(FAILED, "HTTP 410 Gone")

    monkeypatch.setattr(slow, "send", stalled_send)
    late = Publisher(engine, [slow], actor="cli:w1", gates=GateConfig(min_source_words=40))
    report = late.publish()
    with Session(engine) as session:
        [row] = session.scalars(select(Delivery)).all()
    assert (row.state, row.last_error) == ("delivered", None)
    assert report.failed == []
    assert [why for _, _, why in report.lost] == ["the claim passed to another worker"]
    assert status(engine, item_id) == "published"


# --------------------------------------------------------------- the Atom file


def _cross_atom_render(monkeypatch, competitor: Callable[[], object]) -> list[threading.Thread]:  # type: ignore[no-untyped-def]
    """Run `competitor` once, on its own thread, when the first Atom render has read
    the rows it renders and before the file is written."""
    real_render = AtomTarget.render
    crossed: list[threading.Thread] = []

    def render_then_cross(self, feed):  # type: ignore[no-untyped-def]
        data = real_render(self, feed)
        if not crossed:
            thread, errors = in_thread(competitor)
            crossed.append(thread)
            thread.join(WAIT)
            assert not errors, errors
        return data

    monkeypatch.setattr(AtomTarget, "render", render_then_cross)
    return crossed


def test_two_publishers_leave_every_delivered_item_in_the_atom_file(world, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    folder, engine = world
    first, second = approve(engine, 2)
    crossed = _cross_atom_render(
        monkeypatch, lambda: publisher(engine, folder, "w2").publish([second])
    )
    publisher(engine, folder).publish([first])
    crossed[0].join(60)
    assert set(delivered_to(engine, "atom")) == {first, second}
    ids = atom_ids(folder)
    assert len(ids) == 2, ids


def test_a_crossing_retraction_stays_retracted_in_the_atom_file(world, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    folder, engine = world
    first, second = approve(engine, 2)
    publisher(engine, folder).publish([first])

    def retract_first() -> None:
        retract(engine, first, editor="bo", reason="The figure was wrong")
        publisher(engine, folder, "w2").publish([first])

    crossed = _cross_atom_render(monkeypatch, retract_first)
    publisher(engine, folder).publish([second])
    crossed[0].join(60)
    assert delivered_to(engine, "atom") == {first: "retract", second: "publish"}
    titles = sorted(atom_ids(folder).values())
    assert len(titles) == 2 and sum(t.startswith("Retracted: ") for t in titles) == 1


def test_every_publish_leaves_the_atom_file_equal_to_the_database(world) -> None:  # type: ignore[no-untyped-def]
    """Nothing pending: the file is rebuilt anyway (a lost or stale file comes back)."""
    folder, engine = world
    ids = approve(engine, 2)
    publisher(engine, folder).publish()
    feed = folder / "out" / "feed.xml"
    whole = feed.read_bytes()
    feed.write_bytes(whole.replace(b"<entry>", b"<ignored>", 1))
    report = publisher(engine, folder).publish()
    assert report.clean and report.delivered == []
    assert len(atom_ids(folder)) == len(ids)
    feed.unlink()
    publisher(engine, folder).publish()
    assert len(atom_ids(folder)) == len(ids)


# --------------------------------------------------------------- the Undo window


def test_publish_holds_an_approval_inside_its_undo_window(world) -> None:  # type: ignore[no-untyped-def]
    folder, engine = world
    [item_id] = approve(engine, 1)
    report = publisher(engine, folder, hold_seconds=300).publish()
    assert report.delivered == [] and jsonl_lines(folder) == []
    assert [i for i, _ in report.held] == [item_id]
    assert status(engine, item_id) == "approved"
    with session_scope(engine) as session:
        session.execute(
            update(Item)
            .where(Item.id == item_id)
            .values(decided_at=utcnow() - timedelta(seconds=301))
        )
    report = publisher(engine, folder, hold_seconds=300).publish()
    assert report.published == [item_id] and report.held == []


# --------------------------------------------------------------- files a web server reads


def test_published_files_are_0644_by_default_and_configurable(world) -> None:  # type: ignore[no-untyped-def]
    """A web server running as another user must read the feed (it was 0600)."""
    import os
    import stat

    folder, engine = world
    approve(engine, 1)
    old = os.umask(0o077)  # a strict umask must not decide what readers get
    try:
        publisher(engine, folder).publish()
        for name in ("feed.xml", "items.jsonl"):
            assert stat.S_IMODE((folder / "out" / name).stat().st_mode) == 0o644, name
        strict = AtomTarget(
            AtomTargetSettings(path=folder / "out" / "strict.xml", file_mode="0640")
        )
        Publisher(engine, [strict], actor="cli:w3", gates=GateConfig(min_source_words=40)).publish()
        assert stat.S_IMODE((folder / "out" / "strict.xml").stat().st_mode) == 0o640
    finally:
        os.umask(old)
    with pytest.raises(ValueError, match="not permission bits"):
        AtomTargetSettings(file_mode="rw-r--r--")
