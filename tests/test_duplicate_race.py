"""Issue 26: two workers holding one story at the same moment (the same text from
two links, in two runs) commit exactly one story and one duplicate of it, on SQLite
and PostgreSQL. The interleaving is forced: worker A has looked for a duplicate and
found none, and does not commit until worker B has either committed (the race the
issue found: both became drafts) or is waiting on the story lock A holds (then B's
look-up, made once A has committed, finds A's story)."""

from __future__ import annotations

import threading
from datetime import timedelta

from sqlmodel import Session, select

from copydesk.config import Settings
from copydesk.services.heartbeat import start_run_row
from copydesk.services.pipeline import Job, Outcome
from copydesk.services.pipeline import duplicates as pipeline_duplicates
from copydesk.services.pipeline.state import RunState
from copydesk.services.pipeline.writer import Writer
from ingest.dedup import text_fingerprint
from store import claims, locks
from store import status as st
from store.changes import ItemChanges
from store.db import open_store, session_scope
from store.models import AuditEvent, Item
from tests.articles import ARTICLES, TITLES

WAIT = 120  # seconds: a bound for a hung test, never a timing the outcome depends on


def _worker_outcome(engine, url: str, story: str = "ferry") -> tuple[Writer, Outcome]:
    """A run of its own holding one new item (its own link) whose text is the story's."""
    state = RunState(Settings(), engine)
    state.run_id = start_run_row(engine, "run", "extractive")
    with session_scope(engine) as session:
        st.create(
            session,
            Item(dedup_key=url, source_url=url, title=TITLES[story]),
            actor="cli",
            reason="seen",
        )
    with session_scope(engine) as session:
        [claimed] = claims.claim_items(session, state.run_id, 1, timedelta(minutes=5))
    text, title = ARTICLES[story], TITLES[story]
    job = Job(claimed.item_id, claimed.version, url, url, title, False, 0, None)
    changes = ItemChanges(source_text=text, headline=title, summary=text.split(". ")[0] + ".")
    out = Outcome(job, st.DRAFT, changes=changes)
    out.fingerprint = text_fingerprint(text, title)
    return Writer(state), out


def _cross(engine, a, b, a_checked=None, b_progress=None):  # type: ignore[no-untyped-def]
    """Worker A writes its outcome up to the move and waits; worker B then writes
    and commits; A moves once B has made progress (committed, or, with the test's
    hook, started to wait on A's lock). Returns what either raised."""
    a_checked = a_checked or threading.Event()  # A looked, found none, has not committed
    b_progress = b_progress or threading.Event()
    errors: list[BaseException] = []

    def worker_a() -> None:
        try:
            with session_scope(engine) as session:
                move = a[0].write_outcome(session, a[1])
                a_checked.set()
                assert b_progress.wait(WAIT), "B neither committed nor waited for A"
                move()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
            a_checked.set()

    def worker_b() -> None:
        try:
            assert a_checked.wait(WAIT)
            with session_scope(engine) as session:
                b[0].write_outcome(session, b[1])()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            b_progress.set()

    threads = [
        threading.Thread(target=worker_a, name="A"),
        threading.Thread(target=worker_b, name="B"),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT * 2)
    assert not any(t.is_alive() for t in threads)
    return errors


def test_two_workers_with_one_story_at_once_make_one_story_and_a_duplicate(
    engine, monkeypatch
) -> None:
    writer_a, out_a = _worker_outcome(engine, "https://harrowby.example.test/ferry")
    writer_b, out_b = _worker_outcome(engine, "https://wire.example.test/harrowby-ferry")
    a_checked = threading.Event()  # A looked for a duplicate, found none, has not committed
    b_progress = threading.Event()  # B committed, or waits on the lock A holds
    real_hold = locks.hold

    def hold(session, name: str) -> None:  # type: ignore[no-untyped-def]
        if threading.current_thread().name == "B" and name.startswith(pipeline_duplicates.STORIES):
            b_progress.set()  # B is about to wait for A's lock
        real_hold(session, name)

    monkeypatch.setattr(locks, "hold", hold)

    errors = _cross(engine, (writer_a, out_a), (writer_b, out_b), a_checked, b_progress)
    assert errors == []

    with Session(engine) as session:
        a = session.get(Item, out_a.job.item_id)
        b = session.get(Item, out_b.job.item_id)
        b_event = session.exec(
            select(AuditEvent).where(AuditEvent.item_id == b.id).order_by(AuditEvent.id.desc())
        ).first()
    assert (a.status, b.status) == (st.DRAFT, st.DISCARDED)
    assert b.discard_kind == "duplicate" and b_event.details["duplicate_of"] == a.id
    assert a.content_hash == out_a.fingerprint and b.content_hash is None


def test_two_workers_with_two_stories_do_not_wait_for_each_other(pg_url, migrated) -> None:
    """Issue 24: the look-up's lock is one a story, so a worker writing another
    story commits while the first still holds its own (one lock for every story
    made every writer queue: 3 workers ran at 0.92x one). PostgreSQL only: SQLite
    has one writer at a time whatever the lock."""
    engine = open_store(pg_url)
    writer_a, out_a = _worker_outcome(engine, "https://harrowby.example.test/ferry")
    writer_b, out_b = _worker_outcome(engine, "https://harrowby.example.test/library", "library")
    errors = _cross(engine, (writer_a, out_a), (writer_b, out_b))
    assert errors == []
    with Session(engine) as session:
        statuses = {session.get(Item, o.job.item_id).status for o in (out_a, out_b)}
    engine.dispose()
    assert statuses == {st.DRAFT}
