"""The webhook and the way back from a failed delivery, against a loopback receiver,
on SQLite and PostgreSQL: the signature covers a timestamp (a captured delivery
cannot be replayed later), the client names itself, a 308 is followed and a 301
refused for good with the reason, a passing failure is tried again after a capped
backoff, a refused delivery can be retried by hand, keys and ids are unique across
two installations, and an item live on some targets is retracted from exactly those."""

from __future__ import annotations

import time
from datetime import timedelta
from importlib import metadata
from pathlib import Path

import pytest
from sqlalchemy import select, update
from sqlalchemy.engine import Engine
from sqlmodel import Session

from publish.service import GateConfig, Publisher, retract, retry_failed
from publish.settings import JsonlTargetSettings, WebhookTargetSettings
from publish.targets import JsonlTarget, WebhookTarget, verify_signature
from store import status as st
from store.db import open_store, session_scope
from store.models import Delivery, Item, utcnow
from tests.publish_helpers import (
    SECRET,
    Webhook,
    add_editor_once,
    approve,
    jsonl_lines,
    run_pipeline,
    webhook_server,
    write_config,
)


@pytest.fixture
def world(tmp_path: Path, db_url: str, migrated: None):  # type: ignore[no-untyped-def]
    config = write_config(tmp_path, db_url, targets=())
    run_pipeline(config)
    engine = open_store(db_url)
    yield tmp_path, engine
    engine.dispose()


def publisher(engine: Engine, folder: Path, url: str, *, jsonl: bool = False, **hook) -> Publisher:  # type: ignore[no-untyped-def]
    settings = WebhookTargetSettings(**({"url": url, "attempts": 1, "backoff_seconds": 0} | hook))
    targets: list = [WebhookTarget(settings, SECRET)]  # type: ignore[type-arg]
    if jsonl:
        targets.insert(0, JsonlTarget(JsonlTargetSettings(path=folder / "out" / "items.jsonl")))
    return Publisher(engine, targets, actor="cli:publish", gates=GateConfig(min_source_words=40))


def rows(engine: Engine) -> dict[tuple[int, str, str], Delivery]:
    with Session(engine) as session:
        return {(d.item_id, d.target, d.kind): d for d in session.scalars(select(Delivery))}


def status(engine: Engine, item_id: int) -> str:
    with Session(engine) as session:
        return session.get(Item, item_id).status


# ----------------------------------------------------------------- what each request carries


def test_the_signature_covers_a_timestamp_and_a_replay_is_refused(world) -> None:  # type: ignore[no-untyped-def]
    folder, engine = world
    approve(engine, 1)
    with webhook_server(Webhook()) as hook:
        publisher(engine, folder, hook.url).publish()
    [got] = hook.received
    header = got.headers["x-copydesk-signature"]
    sent_at = int(header.split(",")[0].removeprefix("t="))
    assert abs(sent_at - time.time()) < 600
    assert verify_signature(got.body, header, SECRET, now=sent_at + 5)
    # The same request an hour later (a replay), or with its time moved, is refused.
    assert not verify_signature(got.body, header, SECRET, now=sent_at + 3600)
    moved = header.replace(f"t={sent_at}", f"t={sent_at + 3600}")
    assert not verify_signature(got.body, moved, SECRET, now=sent_at + 3600)
    assert not verify_signature(got.body + b" ", header, SECRET, now=sent_at)
    assert not verify_signature(got.body, header, "another secret", now=sent_at)
    assert got.headers["user-agent"] == f"copydesk/{metadata.version('copydesk')}"


# ----------------------------------------------------------------- redirects (RFC 9110)


def test_a_308_is_followed_with_the_same_post(world) -> None:  # type: ignore[no-untyped-def]
    folder, engine = world
    [item_id] = approve(engine, 1)
    with webhook_server(Webhook(routes={"/old": (308, "/hooks/new")})) as hook:
        report = publisher(engine, folder, hook.url.replace("/hooks/copydesk", "/old")).publish()
    first, second = hook.received
    assert (first.path, second.path) == ("/old", "/hooks/new")
    assert first.body == second.body
    assert first.headers["idempotency-key"] == second.headers["idempotency-key"]
    assert report.published == [item_id]
    assert "moved permanently" in rows(engine)[(item_id, "webhook", "publish")].last_error


@pytest.mark.parametrize("code", [301, 302, 303])
def test_a_redirect_that_may_turn_the_post_into_a_get_is_refused_for_good(world, code) -> None:  # type: ignore[no-untyped-def]
    folder, engine = world
    [item_id] = approve(engine, 1)
    with webhook_server(Webhook(routes={"/old": (code, "/hooks/new")})) as hook:
        report = publisher(engine, folder, hook.url.replace("/hooks/copydesk", "/old")).publish()
        publisher(engine, folder, hook.url.replace("/hooks/copydesk", "/old")).publish()
    assert [r.path for r in hook.received] == ["/old"], "refused once, not followed or retried"
    [(_, _, why)] = report.failed
    assert f"HTTP {code}" in why and "/hooks/new" in why and "set url" in why
    assert rows(engine)[(item_id, "webhook", "publish")].state == "failed"


# ----------------------------------------------------------------- passing failures


def test_a_passing_failure_is_tried_again_after_a_capped_backoff(world) -> None:  # type: ignore[no-untyped-def]
    folder, engine = world
    [item_id] = approve(engine, 1)
    with webhook_server(Webhook(then=503)) as hook:
        pub = publisher(engine, folder, hook.url)
        report = pub.publish()
        assert [why for _, _, why in report.pending] == ["HTTP 503 Service Unavailable"]
        row = rows(engine)[(item_id, "webhook", "publish")]
        assert row.next_attempt_at - row.updated_at == timedelta(seconds=30)
        pub.publish()
        assert len(hook.received) == 1, "not tried again before its time"
        # Its time comes (the clock is the row's, moved back as time passing would).
        waits = []
        for attempts in range(2, 13):
            with session_scope(engine) as session:
                session.execute(update(Delivery).values(next_attempt_at=utcnow()))
            pub.publish()
            assert len(hook.received) == attempts
            row = rows(engine)[(item_id, "webhook", "publish")]
            waits.append((row.next_attempt_at - row.updated_at).total_seconds())
        assert waits == [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600, 3600, 3600]
        hook.then = 200
        with session_scope(engine) as session:
            session.execute(update(Delivery).values(next_attempt_at=utcnow()))
        assert pub.publish().published == [item_id]


def test_a_down_webhook_is_tried_once_per_run_not_once_per_item(world) -> None:  # type: ignore[no-untyped-def]
    """Three items, the CMS down: one try, the other two wait (no 33 s per item)."""
    folder, engine = world
    ids = approve(engine, 3)
    with webhook_server(Webhook(then=503)) as hook:
        report = publisher(engine, folder, hook.url, attempts=3).publish()
    assert len(hook.received) == 3, "three tries for the first item, none for the others"
    assert {r.json["item_id"] for r in hook.received} == {ids[0]}
    why = {i: w for i, _, w in report.pending}
    assert why[ids[1]] == why[ids[2]] == "not tried: the target failed earlier in this run"
    assert rows(engine)[(ids[1], "webhook", "publish")].attempts == 0


# ----------------------------------------------------------------- the way back


def test_a_refused_delivery_can_be_retried_by_hand(world) -> None:  # type: ignore[no-untyped-def]
    folder, engine = world
    first, second = approve(engine, 2)
    with webhook_server(Webhook(then=422)) as hook:
        pub = publisher(engine, folder, hook.url)
        assert len(pub.publish().failed) == 2
        hook.then = 200
        assert pub.publish().failed == [] and len(hook.received) == 2  # not retried alone
        assert retry_failed(engine, [first]) == [(first, "webhook")]
        assert pub.publish().published == [first]
        assert retry_failed(engine, None) == [(second, "webhook")]
        assert pub.publish().published == [second]
        assert retry_failed(engine, None) == []
    assert [status(engine, i) for i in (first, second)] == ["published", "published"]


def test_an_item_live_on_some_targets_can_be_retracted_from_exactly_those(world) -> None:  # type: ignore[no-untyped-def]
    """The webhook refused it (422): live in the JSON Lines file only. The retraction
    goes to the file, never to the webhook, and the refused delivery is not retried."""
    folder, engine = world
    [item_id] = approve(engine, 1)
    with session_scope(engine) as session:
        add_editor_once(session, "cy")
    with webhook_server(Webhook(then=422)) as hook:
        pub = publisher(engine, folder, hook.url, jsonl=True)
        pub.publish()
        assert status(engine, item_id) == "approved"
        assert retract(engine, item_id, editor="cy", reason="Wrong quay named") == ["jsonl"]
        hook.then = 200
        report = pub.publish()
        assert retry_failed(engine, None) == []
        pub.publish()
    assert report.retracted == [item_id]
    assert status(engine, item_id) == st.RETRACTED
    assert [line["event"] for line in jsonl_lines(folder)] == ["published", "retracted"]
    assert [r.json["event"] for r in hook.received] == ["published"]


def test_an_item_on_no_target_cannot_be_retracted(world) -> None:  # type: ignore[no-untyped-def]
    from publish.service import NotPublishable

    folder, engine = world
    [item_id] = approve(engine, 1)
    with session_scope(engine) as session:
        add_editor_once(session, "cy")
    with pytest.raises(NotPublishable, match="on no target"):
        retract(engine, item_id, editor="cy", reason="Never mind")
    assert status(engine, item_id) == "approved"


# ----------------------------------------------------------------- two installations


def test_keys_and_ids_are_unique_across_two_installations(tmp_path: Path, db_url: str) -> None:
    """Two newsrooms (or one rebuilt on a new database) each publish their item 1 to
    the same CMS: different keys and ids, so a CMS that drops seen keys drops none."""
    seen: list[dict] = []  # type: ignore[type-arg]
    with webhook_server(Webhook()) as hook:
        for name, url in (("a", db_url), ("b", f"sqlite:///{tmp_path / 'b' / 'copydesk.db'}")):
            folder = tmp_path / name
            folder.mkdir(exist_ok=True)
            run_pipeline(write_config(folder, url, targets=()))
            engine = open_store(url)
            approve(engine, 1)
            publisher(engine, folder, hook.url).publish()
            engine.dispose()
        seen = [r.json | {"key": r.headers["idempotency-key"]} for r in hook.received]
    assert len(seen) == 2 and seen[0]["item_id"] == seen[1]["item_id"]
    assert seen[0]["key"] != seen[1]["key"]
    assert seen[0]["id"] != seen[1]["id"]
    for s in seen:
        assert s["id"].startswith("tag:copydesk,") and s["id"].endswith(f"/item/{s['item_id']}")


# ----------------------------------------------------------------- the commands


def test_the_publish_command_waits_out_the_undo_window_and_retries_by_hand(world) -> None:  # type: ignore[no-untyped-def]
    """`publish` holds an approval inside [review] undo_seconds (exit 1, named), and
    `publish --retry-failed --item ID` sends a refused delivery again."""
    import json

    from tests.publish_helpers import cli

    folder, engine = world
    db_url = engine.url.render_as_string(hide_password=False)
    [item_id] = approve(engine, 1)
    with webhook_server(Webhook(then=422)) as hook:
        config = write_config(folder, db_url, webhook_url=hook.url, undo_seconds=300)
        held = cli(config, "publish", "--json")
        assert held.exit_code == 1, held.output
        assert [h["item"] for h in json.loads(held.stdout)["held"]] == [item_id]
        assert hook.received == [] and status(engine, item_id) == "approved"
        config = write_config(folder, db_url, webhook_url=hook.url, attempts=1)
        refused = cli(config, "publish")
        assert refused.exit_code == 1 and "HTTP 422" in refused.stdout
        hook.then = 200
        again = cli(config, "publish", "--retry-failed", "--item", str(item_id))
    assert again.exit_code == 0, again.output
    assert "1 failed delivery(ies) to try again" in again.output
    assert status(engine, item_id) == "published"
    assert len(hook.received) == 2
