"""Several `copydesk run` processes at once do the work once.

Real processes (`copydesk run` through the console entry point's function), a
real PostgreSQL server, a loopback server for the feed and its pages and a
loopback stand-in for the Messages API, both counting requests on the server side.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections import Counter
from datetime import timedelta

import pytest
from sqlalchemy import text
from sqlmodel import Session, col, create_engine, select
from typer.testing import CliRunner

from copydesk.cli import app
from store import claims
from store import status as st
from store.db import open_store, session_scope
from store.models import AuditEvent, Feed, Item, ModelCall, Run, utcnow
from tests import anthropic_fake as fake_api
from tests.pipeline_helpers import invoke
from tests.run_helpers import KEY, STORY, Newsroom, finish, start_run, write_config


def slow_model(delay: float, until: threading.Event):
    """The grounded fake model, taking `delay` seconds per call until `until` is set."""
    inner = fake_api.first_sentences_responder()

    def respond(request_json):
        if not until.is_set():
            until.wait(delay)
        return inner(request_json)

    return respond


def held_until_each_run_holds_claims(engine, runs: int):
    """The grounded fake model, whose replies wait until `runs` runs each hold a claim
    on some item: so many runs are at work at once whatever the machine's speed (a
    run keeps at most a window of items in flight, so the others find items to claim).
    Waits at most 120 s (then the test's "every run drafted" check fails)."""
    inner = fake_api.first_sentences_responder()
    everyone_in = threading.Event()
    holders = text("SELECT count(DISTINCT claimed_by) FROM items WHERE claimed_by IS NOT NULL")

    looking = threading.Lock()  # one waiting reply asks the database, the others wait

    def respond(request_json):
        deadline = time.monotonic() + 120
        while not everyone_in.is_set() and time.monotonic() < deadline:
            if looking.acquire(blocking=False):
                try:
                    with engine.connect() as conn:
                        if conn.execute(holders).scalar_one() >= runs:
                            everyone_in.set()
                finally:
                    looking.release()
            everyone_in.wait(0.1)
        return inner(request_json)

    return respond


def summarised(fake: fake_api.FakeAnthropic, purpose: str = "summary") -> Counter[int]:
    """Model calls per story for one purpose ("summary" or "checks"), counted on
    the server side: a check request carries the draft in a <draft> block."""
    found = Counter()
    for request in fake.message_requests:
        is_check = fake_api.draft_text(request.json) is not None
        if is_check == (purpose == "checks"):
            found[int(STORY.search(fake_api.article_text(request.json)).group(1))] += 1
    return found


# --------------------------------------------------------------------------- PostgreSQL


@pytest.mark.parametrize("database", ["fresh", "existing"])
def test_three_runs_at_once_fetch_and_summarise_every_page_once(tmp_path, pg_url, database) -> None:
    # A run keeps at most 4 x max_concurrency (16) items in flight, claimed 16 at a time:
    # with 3 x 24 items each run finds some to claim while the model holds the others'.
    n = 72
    room = Newsroom(n)
    watcher = create_engine(pg_url)
    fake = fake_api.FakeAnthropic(
        responder=held_until_each_run_holds_claims(watcher, 3), api_key=KEY
    )
    with room.serve() as feed_url, fake.serve() as base_url:
        config = write_config(tmp_path, pg_url, feed_url)
        if database == "fresh":  # as `copydesk init` leaves it: tables, no rows
            open_store(pg_url).dispose()  # (only init creates a database, issue 22)
        if database == "existing":
            engine = open_store(pg_url)  # migrated, with the feed row and an older item
            with session_scope(engine) as session:
                session.add(Feed(url=feed_url, name="Tollmere Gazette", origin="config"))
            engine.dispose()
        runs = [start_run(config, base_url) for _ in range(3)]
        results = [finish(proc) for proc in runs]
    watcher.dispose()
    for code, _out, err in results:
        assert code == 0, err
        assert "Traceback" not in err
    pages = room.page_gets()
    assert len(pages) == n and set(pages.values()) == {1}, "a page fetched twice or never"
    calls = summarised(fake)
    assert len(calls) == n and set(calls.values()) == {1}, "an item summarised twice"
    checks = summarised(fake, "checks")
    assert len(checks) == n and set(checks.values()) == {1}, "an item checked twice"
    engine = open_store(pg_url)
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
        ledger = session.exec(select(ModelCall)).all()
        feeds = session.exec(select(Feed)).all()
        run_rows = session.exec(select(Run)).all()
    assert len(feeds) == 1
    assert len(items) == n and {i.status for i in items} == {st.DRAFT}
    assert sorted(int(i.entry_id.removeprefix("d-")) for i in items) == list(range(n))
    assert len(ledger) == 2 * n  # one summary and one check per item
    assert all(i.claimed_by is None and i.claim_until is None for i in items)
    assert len(run_rows) == 3 and all(r.ended_at and r.exit_status == 0 for r in run_rows)
    reports = [json.loads(out) for _code, out, _err in results]
    assert sum(r["totals"]["drafts"] for r in reports) == n
    # The three were at work at the same time: each drafted some of the items.
    assert all(r["totals"]["drafts"] >= 1 for r in reports), [r["totals"] for r in reports]
    engine.dispose()


def _leases_passed(engine, run_id: int) -> None:  # type: ignore[no-untyped-def]
    """The killed run `run_id` as the database shows it once its leases have passed:
    its claims (items and feed) and its times moved back together, so that its last
    claim ended a second ago and its last heartbeat is as old as it then would be."""
    with session_scope(engine) as session:
        claimed = [
            *session.exec(select(Item).where(Item.claimed_by == run_id)),
            *session.exec(select(Feed).where(Feed.claimed_by == run_id)),
        ]
        ends = [row.claim_until for row in claimed if row.claim_until is not None]
        shift = max(ends, default=utcnow()) - utcnow() + timedelta(seconds=1)
        for row in claimed:
            if row.claim_until is not None:
                row.claim_until -= shift
        run = session.get(Run, run_id)
        assert run is not None and run.ended_at is None
        run.started_at -= shift
        if run.heartbeat_at is not None:
            run.heartbeat_at -= shift


def test_a_killed_run_s_items_are_finished_by_another_run_after_the_lease(
    tmp_path, pg_url, monkeypatch
) -> None:
    n, lease = 40, 6.0
    room = Newsroom(n)
    # Slow while the victim works (so it is killed with claims held), quick afterwards.
    killed = threading.Event()
    fake = fake_api.FakeAnthropic(responder=slow_model(0.3, until=killed), api_key=KEY)
    with room.serve() as feed_url, fake.serve() as base_url:
        config = write_config(tmp_path, pg_url, feed_url, lease=lease)
        victim = start_run(config, base_url)
        engine = open_store(pg_url)
        deadline = time.monotonic() + 120
        while not heartbeat_drafts(engine) and time.monotonic() < deadline:
            time.sleep(0.1)  # until a heartbeat has written drafts in the run's counts
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        killed.set()
        with Session(engine) as session:
            [dead] = session.exec(select(Run)).all()
            held = session.exec(
                select(Item).where(Item.claimed_by == dead.id, Item.status == st.NEW)
            ).all()
            done_by_victim = {
                i.id for i in session.exec(select(Item).where(Item.status == st.DRAFT))
            }
        assert held, "the killed run held no claim: the test did not kill it mid-run"
        assert done_by_victim, "the killed run had finished nothing"

        expiry = {i.id: i.claim_until for i in held}

        # A run started at once works on everything but the killed run's claims...
        # (the runs after the kill in process: they only meet what the killed process
        # left in the database; issue 23, two process starts less)
        after = invoke(config, monkeypatch, base_url, "run", "--json", key=KEY)
        assert after.exit_code == 0, after.output
        # ...and one started after the leases have passed takes them over. The leases
        # pass on the test's clock (issue 23: a sleep until they ran out, up to 6 s):
        # the killed run's claims and heartbeat are moved back by the time left.
        _leases_passed(engine, dead.id)
        passed_at = utcnow()
        after = invoke(config, monkeypatch, base_url, "run", "--json", key=KEY)
        assert after.exit_code == 0, after.output
        with Session(engine) as session:
            for item_id, until in expiry.items():
                [finished] = session.exec(
                    select(AuditEvent).where(
                        AuditEvent.item_id == item_id, AuditEvent.from_status == st.NEW
                    )
                ).all()
                # Nobody finished a claimed item before its lease had passed: in its
                # own time (the first run, on a slow machine) or on the test's clock.
                assert finished.actor != f"run:{dead.id}"
                assert finished.at >= until or finished.at >= passed_at, (item_id, until)
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
        ledger = session.exec(select(ModelCall)).all()
    assert len(items) == n and {i.status for i in items} == {st.DRAFT}
    calls = summarised(fake)
    assert set(calls) == set(range(n)) == set(summarised(fake, "checks"))
    # Only what the killed run had in flight is summarised a second time.
    assert sum(calls.values()) - n <= len(held)
    # Every call is in the ledger, the killed run's calls in flight too (their rows are
    # written before the request; at most one per model thread never went out).
    assert {c.item_id for c in ledger} == {i.id for i in items}
    assert len(fake.message_requests) <= len(ledger) <= len(fake.message_requests) + 4

    stats = CliRunner().invoke(app, ["--config", str(config), "stats", "--json"])
    rows = {r["run_id"]: r for r in json.loads(stats.stdout)["runs"]}
    assert rows[dead.id]["state"] == "did not finish"
    assert rows[dead.id]["drafts"] >= 1 and rows[dead.id]["new"] == n
    assert {r["state"] for i, r in rows.items() if i != dead.id} == {"finished"}
    text = CliRunner().invoke(app, ["--config", str(config), "stats"])
    assert f"run {dead.id} did not finish" in text.stdout
    engine.dispose()


def heartbeat_drafts(engine) -> int:
    with Session(engine) as session:
        run = session.exec(select(Run)).first()
    return ((run.counts or {}).get("totals") or {}).get("drafts", 0) if run else 0


# --------------------------------------------------------------------------- fencing


def test_a_worker_that_lost_its_claim_cannot_commit_over_the_new_holder(engine) -> None:
    with session_scope(engine) as session:
        item = Item(dedup_key="https://tollmere.example.test/harbour", title="Harbour")
        st.create(session, item, actor="cli", reason="test")
    with session_scope(engine) as session:
        [first] = claims.claim_items(session, 101, 10, timedelta(seconds=-1))  # already expired
    with session_scope(engine) as session:
        [second] = claims.claim_items(session, 202, 10, timedelta(minutes=5))
        assert claims.claim_items(session, 303, 10, timedelta(minutes=5)) == []  # held
    assert second.version == first.version + 1
    with pytest.raises(st.Conflict), session_scope(engine) as session:
        row = session.get(Item, first.item_id)
        st.move(session, row, st.DRAFT, actor="run:101", expected_version=first.version, changes={})
    with session_scope(engine) as session:
        row = session.get(Item, second.item_id)
        st.move(session, row, st.DRAFT, actor="run:202", expected_version=second.version)
    with Session(engine) as session:
        assert session.get(Item, first.item_id).status == st.DRAFT


# --------------------------------------------------------------------------- SQLite


def test_sqlite_runs_one_at_a_time_a_second_run_exits_0(tmp_path, sqlite_url) -> None:
    room = Newsroom(3)
    with room.serve() as feed_url:
        config = write_config(tmp_path, sqlite_url, feed_url, backend="extractive")
        engine = open_store(sqlite_url)
        with session_scope(engine) as session:
            session.add(Run(command="run", heartbeat_at=utcnow(), worker="elsewhere:7"))
        result = CliRunner().invoke(app, ["--config", str(config), "run"])
        assert result.exit_code == 0, result.stderr
        assert "another run is in progress" in result.stderr
        assert room.gets == Counter()  # not even the feed was fetched
        with Session(engine) as session:
            assert session.exec(select(Item)).all() == []
            assert len(session.exec(select(Run)).all()) == 1

        # A run that stopped beating (killed) does not block: its lease has passed.
        with session_scope(engine) as session:
            stale = session.exec(select(Run)).one()
            stale.heartbeat_at = utcnow() - timedelta(hours=1)
        result = CliRunner().invoke(app, ["--config", str(config), "run"])
        assert result.exit_code == 0, result.stderr
        stats = CliRunner().invoke(app, ["--config", str(config), "stats", "--json"])
    states = {r["run_id"]: r["state"] for r in json.loads(stats.stdout)["runs"]}
    assert states == {stale.id: "did not finish", stale.id + 1: "finished"}


def test_sqlite_second_run_waits_for_the_first_when_told_to(tmp_path, sqlite_url) -> None:
    room = Newsroom(2)
    with room.serve() as feed_url:
        config = write_config(tmp_path, sqlite_url, feed_url, backend="extractive")
        text = config.read_text().replace(
            "lease_seconds = 30", "lease_seconds = 30\nwait_seconds = 300"
        )
        config.write_text(text)
        engine = open_store(sqlite_url)
        with session_scope(engine) as session:
            other = Run(command="run", heartbeat_at=utcnow(), worker="elsewhere:7")
            session.add(other)

        def end_the_other() -> None:
            time.sleep(1.0)
            with session_scope(engine) as session:
                session.get(Run, other.id).ended_at = utcnow()

        ender = threading.Thread(target=end_the_other)
        ender.start()
        result = CliRunner().invoke(app, ["--config", str(config), "run"])
        ender.join()
    assert result.exit_code == 0, result.stderr
    assert "another run" not in result.stderr
    with Session(engine) as session:
        assert len(session.exec(select(Item)).all()) == 2


def test_a_lost_retry_race_is_handled_per_item(tmp_path, sqlite_url, monkeypatch) -> None:
    """Two runs both see an `error` item due for retry; the second's `error -> new`
    loses the compare-and-set. That item is the other run's; this run goes on."""
    room = Newsroom(2)
    with room.serve() as feed_url:
        config = write_config(tmp_path, sqlite_url, feed_url, backend="extractive")
        engine = open_store(sqlite_url)
        with session_scope(engine) as session:
            for key in ("a", "b"):
                item = Item(dedup_key=f"https://tollmere.example.test/{key}", title=key)
                st.create(session, item, actor="cli", reason="test")
                st.move(session, item, st.ERROR, actor="run:0", reason="timeout")
        real_move = st.move

        def raced_move(session, item, to_status, **kw):
            if to_status == st.NEW and item.dedup_key.endswith("/a"):
                with session_scope(engine) as rival:  # another run moves it first
                    row = rival.get(Item, item.id)
                    real_move(rival, row, st.NEW, actor="run:rival", reason="retry")
                    real_move(rival, row, st.DISCARDED, actor="run:rival", reason="rival")
            return real_move(session, item, to_status, **kw)

        monkeypatch.setattr(st, "move", raced_move)
        result = CliRunner().invoke(app, ["--config", str(config), "run", "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["fatal"] is None and report["totals"]["retried"] == 1
    with Session(engine) as session:
        statuses = {i.dedup_key[-1]: i.status for i in session.exec(select(Item))}
    assert statuses["a"] == st.DISCARDED  # the rival's outcome stands
    assert statuses["b"] != st.ERROR and len(statuses) == 4


def test_a_claim_takes_at_most_the_batch_asked_for(engine) -> None:
    """PostgreSQL may re-run an `IN (SELECT ... LIMIT n FOR UPDATE SKIP LOCKED)`
    subquery per row: the claim must still take n items, leaving the rest to others."""
    with session_scope(engine) as session:
        for i in range(30):
            item = Item(dedup_key=f"https://tollmere.example.test/n/{i}", title=f"n{i}")
            st.create(session, item, actor="cli", reason="test")
    with session_scope(engine) as session:
        first = claims.claim_items(session, 1, 4, timedelta(minutes=5))
    with session_scope(engine) as session:
        second = claims.claim_items(session, 2, 4, timedelta(minutes=5))
    assert len(first) == len(second) == 4
    assert not {c.item_id for c in first} & {c.item_id for c in second}
    with Session(engine) as session:
        held = session.exec(select(Item).where(col(Item.claimed_by).is_not(None))).all()
    assert len(held) == 8


def test_a_claim_binds_its_values_to_a_statement_built_once(engine, monkeypatch) -> None:
    """A run claims a few items at a time (16 or its window; its workers' number
    before session 14, about 80 times in 320 articles): building the claim's
    statement each time (a CTE inside an UPDATE, every value a new bound parameter)
    cost more CPU than running it (issue 24). It is built once; each claim binds its
    run, time, lease and limit, and takes what it did."""
    from sqlalchemy.sql.elements import BindParameter

    with session_scope(engine) as session:
        for i in range(6):
            item = Item(dedup_key=f"https://tollmere.example.test/b/{i}", title=f"b{i}")
            st.create(session, item, actor="cli", reason="test")
    with session_scope(engine) as session:  # a first claim: what is built lazily, is
        [expired] = claims.claim_items(session, 5, 1, timedelta(seconds=-1))
    built = [0]
    init = BindParameter.__init__

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        built[0] += 1
        init(self, *args, **kwargs)

    monkeypatch.setattr(BindParameter, "__init__", counted)
    before = utcnow()
    with session_scope(engine) as session:
        claimed = claims.claim_items(session, 7, 2, timedelta(minutes=5))
    monkeypatch.undo()
    assert built[0] == 0  # failed before: 10 (the statement built again)
    assert [c.item_id for c in claimed] == [expired.item_id, expired.item_id + 1]
    with Session(engine) as session:
        rows = session.exec(select(Item).where(col(Item.claimed_by) == 7)).all()
    assert sorted(r.id for r in rows) == [c.item_id for c in claimed]
    assert all(r.claim_until >= before + timedelta(minutes=4) for r in rows)


def test_the_heartbeat_skips_items_the_writer_holds_instead_of_waiting(pg_url) -> None:
    """The writer commits several items in one transaction, holding their rows while
    the heartbeat renews the run's leases. Were the renewal to wait for those rows,
    the two would deadlock (each holding a row the other wants): it skips them (they
    are being finished), renews the rest, and returns while the writer still holds."""
    engine = open_store(pg_url)
    with session_scope(engine) as session:
        for i in range(4):
            item = Item(dedup_key=f"https://tollmere.example.test/h/{i}", title=f"h{i}")
            st.create(session, item, actor="cli", reason="test")
    with session_scope(engine) as session:
        held = claims.claim_items(session, 7, 4, timedelta(seconds=30))
    busy, free = held[1].item_id, [c.item_id for c in held if c.item_id != held[1].item_id]
    renewed = threading.Event()
    with engine.connect() as writer:
        writer.execute(Item.__table__.update().where(Item.__table__.c.id == busy).values(title="w"))

        def beat() -> None:
            with session_scope(engine) as session:
                claims.renew(session, 7, timedelta(hours=1))
            renewed.set()

        thread = threading.Thread(target=beat, daemon=True)
        thread.start()
        assert renewed.wait(20), "the renewal waited for the writer's row"
        writer.rollback()
    thread.join()
    with Session(engine) as session:
        until = {i.id: i.claim_until for i in session.exec(select(Item))}
    later = utcnow() + timedelta(minutes=30)
    assert all(until[i] > later for i in free)
    assert until[busy] < later  # skipped this beat
    engine.dispose()
