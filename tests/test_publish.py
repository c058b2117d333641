"""`copydesk publish` and `retract`: three targets, exactly once per target, the
evidence map, on SQLite and PostgreSQL. Drafts come from running the real pipeline
over the sample feed; the webhook is a loopback receiver that answers from a script."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from pathlib import Path

import feedparser
import jsonschema
import pytest
from lxml import etree
from sqlalchemy import select, update
from sqlalchemy.engine import Engine
from sqlmodel import Session

from guards.dates import find_dates
from guards.numbers import tokenise
from guards.quotes import locate_passage
from publish.payload import SCHEMA_PATH
from store import status as st
from store.db import open_store, session_scope
from store.models import AuditEvent, Delivery, Item
from tests.publish_helpers import (
    SECRET,
    Webhook,
    approve,
    cli,
    jsonl_lines,
    run_pipeline,
    webhook_server,
    write_config,
)

ATOM = "{http://www.w3.org/2005/Atom}"
SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@pytest.fixture
def world(tmp_path: Path, db_url: str, migrated: None):  # type: ignore[no-untyped-def]
    """A database with the pipeline's drafts, and a function to write the config."""
    config = write_config(tmp_path, db_url, targets=())
    run_pipeline(config)
    engine = open_store(db_url)
    yield tmp_path, db_url, engine
    engine.dispose()


def statuses(engine: Engine, ids: list[int]) -> list[str]:
    with Session(engine) as session:
        return [session.get(Item, i).status for i in ids]


def deliveries(engine: Engine) -> list[Delivery]:
    with Session(engine) as session:
        return list(session.scalars(select(Delivery).order_by(Delivery.id)))


def atom_entries(folder: Path) -> list[etree._Element]:
    tree = etree.parse(str(folder / "out" / "feed.xml"))
    return tree.getroot().findall(f"{ATOM}entry")


def test_publish_reaches_all_three_targets_webhook_failing_twice_first(world) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = world
    ids = approve(engine, 3)
    with webhook_server(Webhook(script=[500, 503])) as hook:
        config = write_config(folder, db_url, webhook_url=hook.url)
        result = cli(config, "publish")
    assert result.exit_code == 0, result.output
    assert statuses(engine, ids) == ["published"] * 3

    # The webhook: two failures then success for the first item, same key each time.
    first = [r for r in hook.received if r.json["item_id"] == ids[0]]
    assert len(first) == 3 and len({r.headers["idempotency-key"] for r in first}) == 1
    assert sorted({r.json["item_id"] for r in hook.received}) == sorted(ids)
    for r in hook.received:
        stamp = r.headers["x-copydesk-signature"].split(",")[0].removeprefix("t=")
        mac = hmac.new(SECRET.encode(), f"{stamp}.".encode() + r.body, hashlib.sha256)
        assert r.headers["x-copydesk-signature"] == f"t={stamp},v1={mac.hexdigest()}"
    # JSON Lines: one line per item.
    lines = jsonl_lines(folder)
    assert sorted(line["item_id"] for line in lines) == sorted(ids)
    # Atom: one entry per item, read back by feedparser, with the ids the others got.
    parsed = feedparser.parse(str(folder / "out" / "feed.xml"))
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert sorted(e.id for e in parsed.entries) == sorted(line["id"] for line in lines)
    assert all(
        re.fullmatch(r"tag:copydesk,\d{4}-\d\d-\d\d:[0-9a-f]{32}/item/\d+", line["id"])
        for line in lines
    )
    # The audit: approved -> published by the publish command, naming the targets.
    with Session(engine) as session:
        for item_id in ids:
            event = session.scalars(
                select(AuditEvent)
                .where(AuditEvent.item_id == item_id)
                .order_by(AuditEvent.id.desc())
            ).first()
            assert (event.from_status, event.to_status) == ("approved", "published")
            assert event.actor == "cli:publish"
            assert event.details == {"targets": ["atom", "jsonl", "webhook"]}


def test_a_failing_target_keeps_the_item_pending_and_the_others_are_not_resent(world) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = world
    ids = approve(engine, 2)
    with webhook_server(Webhook(then=503)) as hook:
        config = write_config(folder, db_url, webhook_url=hook.url, attempts=1)
        result = cli(config, "publish")
        assert result.exit_code == 1, result.output
        assert "pending" in result.stdout and "HTTP 503" in result.stdout
        assert statuses(engine, ids) == ["approved"] * 2
        assert len(jsonl_lines(folder)) == 2
        atom_before = (folder / "out" / "feed.xml").read_bytes()

        hook.then = 200
        waiting = cli(config, "publish")  # the webhook's next try is after its backoff
        assert waiting.exit_code == 1 and "next try after" in waiting.stdout
        # One try per run while the target is down: the first item in the first run;
        # the second (untried till then) goes now, the first waits for its backoff.
        assert [r.json["item_id"] for r in hook.received] == ids
        again = cli(config, "publish", "--retry-failed")  # now, by hand
    assert again.exit_code == 0, again.output
    assert statuses(engine, ids) == ["published"] * 2
    assert len(jsonl_lines(folder)) == 2, "the JSON Lines target was not sent again"
    assert (folder / "out" / "feed.xml").read_bytes() == atom_before
    assert len(hook.received) == 3  # one refused, two accepted
    third = cli(config, "publish")
    assert third.exit_code == 0 and len(hook.received) == 3


def test_a_4xx_is_a_permanent_failure_shown_and_not_retried(world) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = world
    [item_id] = approve(engine, 1)
    with webhook_server(Webhook(then=422)) as hook:
        config = write_config(folder, db_url, webhook_url=hook.url)
        result = cli(config, "publish", "--json")
        assert result.exit_code == 1
        report = json.loads(result.stdout)
        assert report["failed"] == [
            {"item": item_id, "target": "webhook", "why": "HTTP 422 Unprocessable Entity"}
        ]
        assert len(hook.received) == 1, "a 4xx is not retried within the publish"
        cli(config, "publish")
        assert len(hook.received) == 1, "nor by the next one"
    assert statuses(engine, [item_id]) == ["approved"]
    states = {d.target: d.state for d in deliveries(engine)}
    assert states == {"atom": "delivered", "jsonl": "delivered", "webhook": "failed"}


@pytest.mark.parametrize("code", [408, 429])
def test_408_and_429_are_retried(world, code: int) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = world
    [item_id] = approve(engine, 1)
    with webhook_server(Webhook(script=[code])) as hook:
        config = write_config(folder, db_url, webhook_url=hook.url, targets=("webhook",))
        assert cli(config, "publish").exit_code == 0
    assert len(hook.received) == 2
    assert statuses(engine, [item_id]) == ["published"]


def test_a_lost_record_is_absorbed_by_every_target(world) -> None:  # type: ignore[no-untyped-def]
    """Sent but not recorded (the crash window): the next publish sends again, and
    no target ends up with the item twice in a way its idempotency does not absorb."""
    folder, db_url, engine = world
    ids = approve(engine, 2)
    with webhook_server(Webhook()) as hook:
        config = write_config(folder, db_url, webhook_url=hook.url)
        assert cli(config, "publish").exit_code == 0
        # Forget that the last item reached any target, as a crash before recording would.
        with session_scope(engine) as session:
            session.execute(
                update(Delivery).where(Delivery.item_id == ids[1]).values(state="pending")
            )
            # The test rewinds the row by hand, on purpose (below the status machine).
            session.execute(update(Item).where(Item.id == ids[1]).values(status="approved"))
        assert cli(config, "publish").exit_code == 0
    assert [line["item_id"] for line in jsonl_lines(folder)] == ids
    entry = jsonl_lines(folder)[1]["id"]
    assert [e.findtext(f"{ATOM}id") for e in atom_entries(folder)].count(entry) == 1
    keys = [r.headers["idempotency-key"] for r in hook.received if r.json["item_id"] == ids[1]]
    assert len(keys) == 2 and len(set(keys)) == 1, "the repeat carries the same key"


def test_only_approved_items_are_published(world) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = world
    with Session(engine) as session:
        others = {
            s: session.scalars(select(Item.id).where(Item.status == s)).first()
            for s in ("draft", "discarded", "error")
        }
    others = {s: i for s, i in others.items() if i is not None}
    assert {"draft", "discarded"} <= set(others)
    config = write_config(folder, db_url)
    args = [a for i in others.values() for a in ("--item", str(i))]
    result = cli(config, "publish", "--json", *args)
    assert result.exit_code == 1, result.output
    blocked = {b["item"]: b["why"] for b in json.loads(result.stdout)["blocked"]}
    assert blocked == {i: f"it is {s}, not approved" for s, i in others.items()}
    assert deliveries(engine) == [] and jsonl_lines(folder) == []
    assert statuses(engine, list(others.values())) == list(others)


def test_publishing_moves_status_only_through_the_status_machine(world, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With the status machine refusing every move, nothing becomes published."""
    folder, db_url, engine = world
    [item_id] = approve(engine, 1)

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise st.IllegalMove("refused by the test")

    monkeypatch.setattr(st, "move", refuse)
    config = write_config(folder, db_url, targets=("jsonl",))
    cli(config, "publish")
    assert statuses(engine, [item_id]) == ["approved"]


def test_an_approval_can_be_taken_back_until_publishing_starts(world) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = world
    first, second = approve(engine, 2)
    with webhook_server(Webhook(then=503)) as hook:
        config = write_config(folder, db_url, webhook_url=hook.url, attempts=1)
        cli(config, "publish", "--item", str(first))
    with session_scope(engine) as session:
        item = session.get(Item, first)
        with pytest.raises(st.IllegalMove, match="being published"):
            st.move(session, item, "draft", actor="editor:bo", reason="Wrong figure")
    with session_scope(engine) as session:
        item = session.get(Item, second)
        st.move(session, item, "draft", actor="editor:bo", reason="Wrong figure")
    assert statuses(engine, [first, second]) == ["approved", "draft"]


def test_every_offset_of_the_evidence_map_points_at_the_right_text(world) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = world
    with Session(engine) as session:
        count = len(session.scalars(select(Item.id).where(Item.status == "draft")).all())
    ids = approve(engine, count)
    config = write_config(folder, db_url, targets=("jsonl",))
    assert cli(config, "publish").exit_code == 0
    kinds = set()
    with Session(engine) as session:
        for line in jsonl_lines(folder):
            item = session.get(Item, line["item_id"])
            source = item.source_text
            assert line["source_sha256"] == hashlib.sha256(source.encode()).hexdigest()
            for g in line["evidence"]:
                kinds.add(g["kind"])
                field = line[g["field"]]
                assert field[g["span"][0] : g["span"][1]] == g["text"]
                assert source[g["source_span"][0] : g["source_span"][1]] == g["source_text"]
                if g["kind"] == "number":
                    [token] = tokenise(g["source_text"])
                    assert token.value == tokenise(g["text"])[0].value
                elif g["kind"] == "quotation":
                    quoted = g["text"].strip("\"“”‘’' ")
                    assert locate_passage(g["source_text"], quoted) is not None
                elif g["kind"] == "date":  # grounded by value: "9 January" may be "January 9"
                    written = {(d.kind, d.value) for d in find_dates(g["text"])}
                    assert written <= {(d.kind, d.value) for d in find_dates(g["source_text"])}
                else:
                    assert g["source_text"].casefold() == g["text"].casefold()
            gates = [c["gate"] for c in line["checks"]]
            assert {"numbers_grounded", "quotes_verbatim"} <= set(gates)
            assert all(c["version"].startswith("copydesk") for c in line["checks"])
    assert len(ids) >= 8 and {"number", "name", "date"} <= kinds


def test_payloads_match_the_json_schema(world) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = world
    ids = approve(engine, 2)
    with session_scope(engine) as session:
        from tests.publish_helpers import add_editor_once

        add_editor_once(session, "cy")
    with webhook_server(Webhook()) as hook:
        config = write_config(folder, db_url, webhook_url=hook.url)
        assert cli(config, "publish").exit_code == 0
        result = cli(config, "retract", str(ids[0]), "--reason", "Figure wrong", "--editor", "cy")
        assert result.exit_code == 0, result.output
    validator = jsonschema.Draft202012Validator(SCHEMA)
    payloads = jsonl_lines(folder) + [r.json for r in hook.received]
    assert {p["event"] for p in payloads} == {"published", "retracted"}
    for payload in payloads:
        validator.validate(payload)
    broken = dict(payloads[0], evidence=[{"kind": "number"}])
    assert not validator.is_valid(broken)


def test_retraction_reaches_every_target_once(world) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = world
    ids = approve(engine, 2)
    with session_scope(engine) as session:
        from tests.publish_helpers import add_editor_once

        add_editor_once(session, "cy")
    with webhook_server(Webhook()) as hook:
        config = write_config(folder, db_url, webhook_url=hook.url)
        assert cli(config, "publish").exit_code == 0
        hook.then = 503  # the webhook is down when the retraction is made
        result = cli(
            config, "retract", str(ids[0]), "--reason", "Source corrected", "--editor", "cy"
        )
        assert result.exit_code == 1  # retracted, but one target still needs telling
        hook.then = 200
        assert cli(config, "publish", "--retry-failed").exit_code == 0
        assert cli(config, "publish").exit_code == 0
        twice = cli(config, "retract", str(ids[0]), "--reason", "again", "--editor", "cy")
    assert twice.exit_code == 1 and "only an item live on a target" in twice.output
    assert statuses(engine, ids) == ["retracted", "published"]
    retractions = [r for r in hook.received if r.json["event"] == "retracted" and r.status_ok]
    assert len(retractions) == 1
    assert retractions[0].headers["x-copydesk-event"] == "retracted"
    lines = [line for line in jsonl_lines(folder) if line["event"] == "retracted"]
    assert [(x["item_id"], x["reason"], x["retracted_by"]) for x in lines] == [
        (ids[0], "Source corrected", "cy")
    ]
    parsed = feedparser.parse(str(folder / "out" / "feed.xml"))
    by_id = {e.id: e for e in parsed.entries}
    notice = by_id[lines[0]["id"]]
    assert notice.title.startswith("Retracted: ")
    assert "Source corrected" in notice.summary
    assert len(parsed.entries) == 2
    with Session(engine) as session:
        event = session.scalars(
            select(AuditEvent).where(AuditEvent.item_id == ids[0]).order_by(AuditEvent.id.desc())
        ).first()
    assert (event.actor, event.to_status, event.reason) == (
        "editor:cy",
        "retracted",
        "Source corrected",
    )


def test_retract_needs_an_editor_account(world) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = world
    ids = approve(engine, 1)
    config = write_config(folder, db_url, targets=("jsonl",))
    assert cli(config, "publish").exit_code == 0
    result = cli(config, "retract", str(ids[0]), "--reason", "x", "--editor", "mallory")
    assert result.exit_code == 2 and "not an enabled editor" in result.output
    assert statuses(engine, ids) == ["published"]


def test_a_webhook_without_its_secret_is_one_line_exit_3(
    tmp_path: Path, sqlite_url: str, migrated: None
) -> None:
    config = write_config(tmp_path, sqlite_url, webhook_url="http://127.0.0.1:9/hook")
    result = cli(config, "publish", env={"COPYDESK_WEBHOOK_SECRET": ""})
    assert result.exit_code == 3
    assert "COPYDESK_WEBHOOK_SECRET" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_run_with_publish_publishes_at_the_end_of_a_scheduled_run(world) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = world
    ids = approve(engine, 2)
    config = write_config(folder, db_url, targets=("jsonl",))
    result = cli(config, "run", "--publish")
    assert result.exit_code == 0, result.output
    assert statuses(engine, ids) == ["published"] * 2
    with Session(engine) as session:
        actors = session.scalars(
            select(AuditEvent.actor).where(AuditEvent.to_status == "published")
        ).all()
    assert len(actors) == 2 and all(a.startswith("run:") for a in actors)


def test_the_documented_signature_example_verifies_a_real_delivery(world) -> None:  # type: ignore[no-untyped-def]
    folder, db_url, engine = world
    approve(engine, 1)
    with webhook_server(Webhook()) as hook:
        config = write_config(folder, db_url, webhook_url=hook.url, targets=("webhook",))
        assert cli(config, "publish").exit_code == 0
    page = Path(__file__).resolve().parents[1] / "docs" / "publishing.md"
    section = page.read_text(encoding="utf-8").split("**Verifying the webhook**")[1]
    code = section.split("```python\n")[1].split("```")[0]
    namespace: dict = {}
    exec(code, namespace)  # noqa: S102 - the page's own example, run as written
    check = namespace["is_from_copydesk"]
    [got] = hook.received
    header = got.headers["x-copydesk-signature"]
    assert check(got.body, header, SECRET)
    assert not check(got.body + b" ", header, SECRET)
    assert not check(got.body, header, "another secret")
    # A captured request sent again ten minutes later is refused (replay protection).
    sent_at = int(header.split(",")[0].removeprefix("t="))
    assert check(got.body, header, SECRET, now=sent_at + 60)
    assert not check(got.body, header, SECRET, now=sent_at + 600)
    moved = header.replace(f"t={sent_at}", f"t={sent_at + 600}")
    assert not check(got.body, moved, SECRET, now=sent_at + 600)


def test_two_publishers_at_once_send_each_item_to_each_target_once(world) -> None:  # type: ignore[no-untyped-def]
    """Two scheduled publishes overlapping (two machines, or cron and Publish now)."""
    import threading

    from publish.service import GateConfig, Publisher
    from publish.settings import JsonlTargetSettings, WebhookTargetSettings
    from publish.targets import JsonlTarget, WebhookTarget

    folder, db_url, engine = world
    ids = approve(engine, 6)
    errors: list[BaseException] = []
    with webhook_server(Webhook()) as hook:

        def worker(name: str) -> None:
            targets = [
                JsonlTarget(JsonlTargetSettings(path=folder / "out" / "items.jsonl")),
                WebhookTarget(WebhookTargetSettings(url=hook.url), SECRET),
            ]
            try:
                Publisher(
                    engine, targets, actor=f"cli:{name}", gates=GateConfig(min_source_words=40)
                ).publish()
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(f"w{n}",)) for n in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors
    assert sorted(r.json["item_id"] for r in hook.received) == sorted(ids)
    assert sorted(line["item_id"] for line in jsonl_lines(folder)) == sorted(ids)
    assert statuses(engine, ids) == ["published"] * 6
    with Session(engine) as session:
        published = session.scalars(
            select(AuditEvent.item_id).where(AuditEvent.to_status == "published")
        ).all()
    assert sorted(published) == sorted(ids)


QUOTED = """<html><head><title>Brackwater mill to reopen</title></head><body><article>
<h1>Brackwater mill to reopen</h1>
<p>“We will have the looms running by the autumn,” said Orla Penhallow, who bought the
Brackwater wool mill for £310,000 in June. The mill employed 46 people when it closed in 2019.</p>
<p>The new owners plan to hire 18 weavers in the first year, and say the mill’s
“hundred-year-old machines” can be repaired rather than replaced.</p>
<p>Ms Penhallow said the town council had agreed to lease the mill’s car park for a
peppercorn rent, and that a shop selling the mill’s blankets would open beside the river
gate. Former workers will be offered their old jobs first, she said.</p>
</article></body></html>"""


def test_the_evidence_map_grounds_quotations_too(
    tmp_path: Path, db_url: str, migrated: None
) -> None:
    from tests.publish_helpers import LOOPBACK, Page, page_server

    with page_server(Page(QUOTED)) as url:
        config = write_config(tmp_path, db_url, targets=("jsonl",), extra=LOOPBACK)
        assert cli(config, "submit", url).exit_code == 0
    engine = open_store(db_url)
    approve(engine, 1)
    assert cli(config, "publish").exit_code == 0
    [line] = jsonl_lines(tmp_path)
    with Session(engine) as session:
        source = session.get(Item, line["item_id"]).source_text
    quotes = [g for g in line["evidence"] if g["kind"] == "quotation"]
    numbers = [g for g in line["evidence"] if g["kind"] == "number"]
    assert quotes and numbers, line["evidence"]
    for g in quotes + numbers:
        assert line[g["field"]][g["span"][0] : g["span"][1]] == g["text"]
        assert source[g["source_span"][0] : g["source_span"][1]] == g["source_text"]
    first = quotes[0]
    assert first["source_text"] == "We will have the looms running by the autumn"
    engine.dispose()


def test_the_atom_file_is_written_once_per_batch_not_once_per_item(world) -> None:  # type: ignore[no-untyped-def]
    """Seven approved items, a feed of three entries: the publish run writes the file
    three times (3 + 3 + 1 items), every item is in a written file at least once, and
    every delivery is recorded; the file ends with the newest three."""
    from copydesk.config import load_settings
    from publish.service import GateConfig, Publisher
    from publish.settings import AtomTargetSettings, JsonlTargetSettings
    from publish.targets import AtomTarget, JsonlTarget

    folder, _db_url, engine = world
    ids = approve(engine, 7)
    seen: list[list[int]] = []

    class CountingAtom(AtomTarget):
        def send(self, event, feed):  # type: ignore[no-untyped-def]
            seen.append(sorted(p["item_id"] for p in feed))
            return super().send(event, feed)

    atom = CountingAtom(AtomTargetSettings(path=folder / "out" / "feed.xml", max_entries=3))
    jsonl = JsonlTarget(JsonlTargetSettings(path=folder / "out" / "items.jsonl"))
    gates = load_settings(folder / "config.toml").gates
    config = GateConfig(gates.all_modes(), gates.min_source_words)
    report = Publisher(engine, [atom, jsonl], actor="cli:publish", gates=config).publish()
    assert report.clean and sorted(report.published) == sorted(ids)
    assert len(seen) == 3
    assert set().union(*map(set, seen)) == set(ids)
    assert sorted(d.item_id for d in deliveries(engine) if d.target == "atom") == sorted(ids)
    assert {d.state for d in deliveries(engine)} == {"delivered"}
    assert statuses(engine, ids) == ["published"] * 7
    assert len(atom_entries(folder)) == 3

    # A later run with one more item: the file keeps the entries delivered before.
    [late] = approve(engine, 1)
    Publisher(engine, [atom, jsonl], actor="cli:publish", gates=config).publish()
    assert len(seen) == 4 and seen[-1] == sorted([*ids, late])  # the render keeps 3
    assert len(atom_entries(folder)) == 3
