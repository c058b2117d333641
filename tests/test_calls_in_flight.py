"""Every paid call is in the ledger (issue 26): a model call's row is written before
its request goes out ("in flight") and completed after; a run killed with calls in
flight leaves them as "outcome unknown" (stats, audit, the next run's start); a
worker that lost its claim sends no request.

Real `copydesk run` (in process through CliRunner, and as a real process killed with
SIGKILL, the only test here about the process itself), the
real `anthropic` SDK against the loopback stand-in of the Messages API, SQLite and
PostgreSQL.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from datetime import timedelta

from sqlalchemy import text, update
from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from store.db import open_store
from store.models import Item, ModelCall, Run, utcnow
from tests import anthropic_fake as fake_api
from tests.pipeline_helpers import invoke
from tests.run_helpers import KEY, Newsroom, start_run, write_config


def _states(engine) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(select(ModelCall.purpose, ModelCall.state))]


def test_each_row_is_written_before_its_request_and_completed_after(
    tmp_path, db_url, monkeypatch
) -> None:
    engine = open_store(db_url)
    seen_in_flight: list[int] = []
    inner = fake_api.first_sentences_responder()

    def respond(request_json):  # type: ignore[no-untyped-def]
        # On the server's side, while the request is being answered: its row is there.
        with engine.connect() as conn:
            seen_in_flight.append(
                conn.execute(
                    text("SELECT count(*) FROM model_calls WHERE state = 'in_flight'")
                ).scalar_one()
            )
        return inner(request_json)

    room = Newsroom(3)
    fake = fake_api.FakeAnthropic(responder=respond, api_key=KEY)
    with room.serve() as feed_url, fake.serve() as base_url:  # in process: not about the process
        done = invoke(
            write_config(tmp_path, db_url, feed_url), monkeypatch, base_url, "run", key=KEY
        )
    assert done.exit_code == 0, done.output
    assert len(fake.message_requests) == 6
    assert all(n >= 1 for n in seen_in_flight), seen_in_flight
    # Completed: one row per request, each with its outcome, none left in flight.
    assert sorted(_states(engine)) == [("checks", "done")] * 3 + [("summary", "done")] * 3
    with Session(engine) as session:
        calls = session.exec(select(ModelCall)).all()
    assert all(c.ok and c.response_json and c.request_id for c in calls)
    engine.dispose()


def test_a_killed_run_leaves_its_call_in_flight_then_outcome_unknown(
    tmp_path, db_url, monkeypatch
) -> None:
    engine = open_store(db_url)
    hold = threading.Event()
    inner = fake_api.first_sentences_responder()

    def respond(request_json):  # type: ignore[no-untyped-def]
        if fake_api.draft_text(request_json) is not None:
            hold.wait(120)  # the check call hangs until the run is killed
        return inner(request_json)

    room = Newsroom(1)
    fake = fake_api.FakeAnthropic(responder=respond, api_key=KEY)
    with room.serve() as feed_url, fake.serve() as base_url:
        # The run's lease is the default (30 s): a short one could lapse while a
        # loaded machine keeps the live run from its heartbeat.
        config = write_config(tmp_path, db_url, feed_url)
        victim = start_run(config, base_url)
        deadline = time.monotonic() + 120
        # Killed once the check call's request has reached the server (it is held
        # there), not as soon as its row is in flight: the row is written before the
        # request goes out, and on a loaded machine the kill could come in between.
        while (
            len(fake.message_requests) < 2 or ("checks", "in_flight") not in _states(engine)
        ) and time.monotonic() < deadline:
            time.sleep(0.1)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        hold.set()
        # The request the server received is in the ledger, though no reply came back.
        assert len(fake.message_requests) == 2
        assert sorted(_states(engine)) == [("checks", "in_flight"), ("summary", "in_flight")]

        # The dead run's heartbeat is an hour old (as the clock would make it), and
        # so is its claim on the item: no waiting on the machine's speed.
        an_hour_ago = utcnow() - timedelta(hours=1)
        with engine.begin() as conn:
            conn.execute(update(Run).values(heartbeat_at=an_hour_ago, started_at=an_hour_ago))
            conn.execute(
                update(Item).where(Item.claim_until.is_not(None)).values(claim_until=an_hour_ago)
            )
        stats = CliRunner().invoke(app, ["--config", str(config), "stats", "--json"])
        unknown = json.loads(stats.stdout)["outcome_unknown"]
        assert unknown["calls"] == 2 and unknown["cost_estimate_usd"] > 0
        shown = CliRunner().invoke(app, ["--config", str(config), "stats"])
        assert "outcome unknown for 2 model call(s)" in " ".join(shown.stdout.split())

        # The next run, in process: what it finds at its start is what the killed
        # process left in the database (issue 23: one process start less).
        after = invoke(config, monkeypatch, base_url, "run", key=KEY)
    assert after.exit_code == 0, after.output
    assert "outcome unknown for 2 model call(s)" in after.stderr
    states = _states(engine)
    assert states.count(("checks", "unknown")) == 1 and states.count(("summary", "unknown")) == 1
    with Session(engine) as session:
        [item] = session.exec(select(Item)).all()
    audit = CliRunner().invoke(app, ["--config", str(config), "audit", str(item.id)])
    assert "OUTCOME UNKNOWN" in audit.stdout and "up to $" in audit.stdout
    engine.dispose()


def test_a_worker_that_lost_its_claim_sends_no_request(tmp_path, db_url, monkeypatch) -> None:
    engine = open_store(db_url)
    inner = fake_api.first_sentences_responder()

    def respond(request_json):  # type: ignore[no-untyped-def]
        if fake_api.draft_text(request_json) is None:
            # While the summary is with the model, another run takes the item over.
            with engine.begin() as conn:
                conn.execute(text("UPDATE items SET claimed_by = NULL, version = version + 1"))
        return inner(request_json)

    room = Newsroom(1)
    fake = fake_api.FakeAnthropic(responder=respond, api_key=KEY)
    with room.serve() as feed_url, fake.serve() as base_url:  # in process: not about the process
        done = invoke(
            write_config(tmp_path, db_url, feed_url), monkeypatch, base_url, "run", key=KEY
        )
    assert done.exit_code == 0, done.output
    err = done.stderr
    # The check call was never sent; the summary that was is in the ledger, complete.
    assert len(fake.message_requests) == 1
    assert _states(engine) == [("summary", "done")]
    assert "no longer holds its claim" in err and "no model call was sent" in err
    with Session(engine) as session:
        [item] = session.exec(select(Item)).all()
    assert item.status == "new"  # not moved by the run that lost it
    engine.dispose()
