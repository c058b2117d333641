"""The audit anchor covers everything (issue 26): every committed transaction that
appended to the audit log advances the anchor file (decisions and publications as
well as runs), never backwards, also with several processes writing at once; a
rolled-back one does not; an anchor older than the log fails the check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from sqlalchemy import select, text
from sqlalchemy.engine import Engine

from store import audit_chain
from store import status as st
from store.db import session_scope
from store.models import Item

ROOT = Path(__file__).resolve().parents[1]


def new_item(engine: Engine) -> int:
    with session_scope(engine) as session:
        item = Item(dedup_key=f"https://news.example.test/{uuid.uuid4().hex}")
        st.create(session, item, actor="run:1", reason="found in a feed")
        return item.id  # type: ignore[return-value]


@pytest.fixture
def anchored(engine: Engine, tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "anchor" / "audit.anchor"
    audit_chain.keep_anchor(engine, path)
    yield engine, path
    audit_chain.keep_anchor(engine, None)


def test_every_committed_append_advances_the_anchor(anchored) -> None:  # type: ignore[no-untyped-def]
    engine, path = anchored
    assert audit_chain.read_anchor(path) is None
    item_id = new_item(engine)
    assert audit_chain.read_anchor(path) == audit_chain.head(engine)
    with session_scope(engine) as session:  # a decision, as the review server makes it
        item = session.get(Item, item_id)
        st.move(session, item, st.DRAFT, actor="run:1")  # type: ignore[arg-type]
        st.move(session, item, st.APPROVED, actor="editor:ann")  # type: ignore[arg-type]
    head = audit_chain.head(engine)
    assert head.event_id == 3
    assert audit_chain.read_anchor(path) == head
    assert audit_chain.verify(engine, head, current=True).ok


def test_a_rolled_back_append_leaves_the_anchor(anchored) -> None:  # type: ignore[no-untyped-def]
    engine, path = anchored
    new_item(engine)
    before = audit_chain.read_anchor(path)
    with pytest.raises(RuntimeError):
        with session_scope(engine) as session:
            item = Item(dedup_key="https://news.example.test/rolled-back")
            st.create(session, item, actor="run:1", reason="found in a feed")
            raise RuntimeError("the run failed before its commit")
    assert audit_chain.read_anchor(path) == before == audit_chain.head(engine)
    new_item(engine)  # the next commit is not confused by the rolled-back one
    assert audit_chain.read_anchor(path) == audit_chain.head(engine)


def test_a_savepoint_does_not_advance_the_anchor_before_the_commit(anchored) -> None:  # type: ignore[no-untyped-def]
    """A feed's items are created in savepoints of one transaction (issue 24): the
    anchor must not name an event before that transaction commits (a rollback
    would leave it naming an event the log never held), and it moves once, to the
    last event, when it does."""
    engine, path = anchored
    new_item(engine)
    before = audit_chain.read_anchor(path)
    with pytest.raises(RuntimeError):
        with session_scope(engine) as session:
            # A write first, as the feed's fetch record is (on SQLite a savepoint
            # with no transaction open would be one, and its release a commit).
            st.create(
                session, Item(dedup_key="https://news.example.test/a"), actor="run:1", reason="r"
            )
            for n in range(3):
                with session.begin_nested():
                    item = Item(dedup_key=f"https://news.example.test/saved-{n}")
                    st.create(session, item, actor="run:1", reason="found in a feed")
                assert audit_chain.read_anchor(path) == before  # not committed yet
            raise RuntimeError("the feed's transaction fails after its savepoints")
    assert audit_chain.read_anchor(path) == before == audit_chain.head(engine)
    assert audit_chain.verify(engine, before, current=True).ok
    with session_scope(engine) as session:
        st.create(session, Item(dedup_key="https://news.example.test/b"), actor="run:1", reason="r")
        for n in range(3):
            with session.begin_nested():
                item = Item(dedup_key=f"https://news.example.test/kept-{n}")
                st.create(session, item, actor="run:1", reason="found in a feed")
        with pytest.raises(RuntimeError):  # a savepoint that fails after its append
            with session.begin_nested():
                item = Item(dedup_key="https://news.example.test/undone")
                st.create(session, item, actor="run:1", reason="found in a feed")
                raise RuntimeError("this entry is dropped")
        # The chain's head is the last kept event again, not the dropped one.
        st.create(session, Item(dedup_key="https://news.example.test/c"), actor="run:1", reason="r")
    head = audit_chain.head(engine)
    assert audit_chain.verify(engine).events == 6  # the first item, then 5 kept
    assert audit_chain.read_anchor(path) == head
    assert audit_chain.verify(engine, head, current=True).ok


def test_the_anchor_never_moves_back(tmp_path: Path) -> None:
    """Two processes commit events 7 and 8; the second to commit may reach the file
    first: the later event stays."""
    path = tmp_path / "audit.anchor"
    newer, older = audit_chain.Anchor(8, "b" * 64), audit_chain.Anchor(7, "a" * 64)
    audit_chain.advance_anchor(path, newer)
    audit_chain.advance_anchor(path, older)
    assert audit_chain.read_anchor(path) == newer


def test_an_anchor_is_its_databases_and_no_other_moves_it(tmp_path: Path) -> None:
    """The anchor file names its database (issue 22): another database's commit
    leaves it as it is, however far its own log goes; a file that names none (made
    by `audit --head > FILE`) is owned by the first database that advances it."""
    from sqlalchemy.engine import make_url

    path = tmp_path / "audit.anchor"
    path.write_text(f"{audit_chain.Anchor(3, 'c' * 64)}\n", encoding="utf-8")
    desk = audit_chain.database_of(make_url(f"sqlite:///{tmp_path / 'desk.db'}"))
    demo = audit_chain.database_of(make_url(f"sqlite:///{tmp_path / 'demo' / 'demo.db'}"))
    audit_chain.advance_anchor(path, audit_chain.Anchor(4, "d" * 64), desk)
    assert audit_chain.anchor_owner(path) == desk
    with pytest.raises(ValueError, match="another database"):
        audit_chain.advance_anchor(path, audit_chain.Anchor(90, "e" * 64), demo)
    assert audit_chain.read_anchor(path) == audit_chain.Anchor(4, "d" * 64)
    # One PostgreSQL database under the owner's, the workers' and the review role's URLs.
    owner, workers = (
        make_url(f"postgresql+psycopg://{who}:pw@db.example.test:5433/desk")
        for who in ("copydesk_owner", "copydesk_app")
    )
    assert audit_chain.database_of(owner) == audit_chain.database_of(workers)
    other = make_url("postgresql+psycopg://copydesk_app:pw@db.example.test:5433/demo")
    assert audit_chain.database_of(other) != audit_chain.database_of(workers)


def test_an_anchor_older_than_the_log_fails(engine: Engine) -> None:
    new_item(engine)
    old = audit_chain.head(engine)
    new_item(engine)
    assert audit_chain.verify(engine, old).ok  # a head kept from earlier still holds
    report = audit_chain.verify(engine, old, current=True)
    assert not report.ok
    assert report.bad_event == old.event_id
    assert "the anchor is older than the log" in (report.problem or "")


def test_an_unwritable_anchor_keeps_the_commit_and_says_so(
    anchored, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    engine, path = anchored
    path.parent.mkdir(parents=True)
    path.write_text("not an anchor\n", encoding="utf-8")
    item_id = new_item(engine)
    assert item_id is not None and audit_chain.head(engine).event_id == 1
    assert path.read_text(encoding="utf-8") == "not an anchor\n"
    assert "audit anchor" in caplog.text and "not advanced" in caplog.text


WRITER = """
import sys, uuid
from pathlib import Path
from store import audit_chain
from store import status as st
from store.db import open_store, session_scope
from store.models import Item

engine = open_store(sys.argv[1])
audit_chain.keep_anchor(engine, Path(sys.argv[2]))
for _ in range(int(sys.argv[3])):
    with session_scope(engine) as session:
        item = Item(dedup_key=f"https://news.example.test/{uuid.uuid4().hex}")
        st.create(session, item, actor="run:2", reason="found in a feed")
"""


def test_several_processes_leave_the_anchor_at_the_head(
    db_url: str, engine: Engine, tmp_path: Path
) -> None:
    path = tmp_path / "audit.anchor"
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    writers = [
        subprocess.Popen(  # noqa: S603 - our own interpreter and script
            [sys.executable, "-c", WRITER, db_url, str(path), "15"], env=env, cwd=ROOT
        )
        for _ in range(3)
    ]
    assert [w.wait(timeout=300) for w in writers] == [0, 0, 0]
    head = audit_chain.head(engine)
    assert head.event_id == 45
    assert audit_chain.read_anchor(path) == head
    assert audit_chain.verify(engine, head, current=True).ok


# --- The command line: on by default, kept by every command, checked by --verify ------


@pytest.mark.audit_tampered
def test_on_by_default_advanced_by_decisions_and_publications_and_checked(
    db_url: str, tmp_path: Path
) -> None:
    from copydesk.config import load_settings
    from store.db import open_store
    from tests.publish_helpers import approve, cli, run_pipeline, write_config

    config = write_config(tmp_path, db_url, targets=("jsonl",))  # no [runs]: the default
    anchor_file = tmp_path / "audit.anchor"
    assert load_settings(config).for_review().audit_anchor == str(anchor_file)
    run_pipeline(config)
    engine = open_store(db_url)
    try:
        assert audit_chain.read_anchor(anchor_file) == audit_chain.head(engine)
        audit_chain.keep_anchor(engine, anchor_file)  # as the review server keeps it
        approve(engine, 2)
        audit_chain.keep_anchor(engine, None)
        assert audit_chain.read_anchor(anchor_file) == audit_chain.head(engine)
        assert cli(config, "publish").exit_code == 0  # the publications' events too
        head = audit_chain.head(engine)
        assert audit_chain.read_anchor(anchor_file) == head
        ok = cli(config, "audit", "--verify")
        assert ok.exit_code == 0, ok.output
        assert f"holds the anchor {head.event_id} from {anchor_file}" in ok.stdout
        assert "records ok:" in ok.stdout

        saved = anchor_file.read_text(encoding="utf-8")
        anchor_file.unlink()  # deleted: an alarm, not a note
        missing = cli(config, "audit", "--verify")
        assert missing.exit_code == 1
        assert f"audit anchor file {anchor_file} is missing" in missing.stderr

        approve(engine, 1)  # written without copydesk keeping the anchor
        anchor_file.write_text(saved, encoding="utf-8")
        older = cli(config, "audit", "--verify")
        assert older.exit_code == 1
        assert "the anchor is older than the log" in older.stderr
    finally:
        engine.dispose()


def test_without_a_config_file_each_database_has_its_own_anchor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from copydesk.config import load_settings

    monkeypatch.chdir(tmp_path)  # no config.toml here
    sqlite = load_settings(env={"COPYDESK_DATABASE_URL": f"sqlite:///{tmp_path / 'desk.db'}"})
    assert sqlite.source is None
    assert sqlite.runs.audit_anchor == str(tmp_path / "desk.db.audit.anchor")
    pg = load_settings(
        env={
            "COPYDESK_DATABASE_URL": "postgresql://app@db.example.test:5433/newsroom",
            "XDG_STATE_HOME": str(tmp_path / "state"),
        },
    )
    assert pg.runs.audit_anchor == str(
        tmp_path / "state" / "copydesk" / "db.example.test-5433-newsroom.audit.anchor"
    )


# --- Heads held by the readers: every publication carries one --------------------------


@pytest.mark.audit_tampered
def test_published_heads_catch_a_rewrite_the_anchor_was_moved_along_with(
    db_url: str, tmp_path: Path
) -> None:
    """The forger rewrites an approval (re-attributed to another editor), recomputes
    the chain and moves the anchor file along: the database and the anchor agree,
    but the feed and the JSON Lines file that readers already hold do not."""
    from publish.targets import published_heads
    from store.db import open_store
    from store.models import AuditEvent
    from tests.audit_helpers import rewrite_chain_from
    from tests.publish_helpers import approve, cli, run_pipeline, write_config

    config = write_config(tmp_path, db_url, targets=("atom", "jsonl"))
    run_pipeline(config)
    engine = open_store(db_url)
    try:
        audit_chain.keep_anchor(engine, tmp_path / "audit.anchor")
        [item_id] = approve(engine, 1)
        audit_chain.keep_anchor(engine, None)
        assert cli(config, "publish").exit_code == 0
        feed, jsonl = tmp_path / "out" / "feed.xml", tmp_path / "out" / "items.jsonl"
        [carried] = published_heads(feed.read_bytes())  # the head when it was prepared
        assert audit_chain.verify(engine, audit_chain.Anchor.parse(carried)).ok
        for published in (feed, jsonl):
            ok = cli(config, "audit", "--verify", "--against-feed", str(published))
            assert ok.exit_code == 0, ok.output
            assert "published heads ok: the log holds all 1 heads" in ok.stdout

        with session_scope(engine) as session:
            approval = session.scalars(
                select(AuditEvent).where(
                    AuditEvent.item_id == item_id, AuditEvent.to_status == "approved"
                )
            ).one()
        rewrite_chain_from(engine, approval.id, actor="editor:bob")
        with engine.begin() as conn:  # the item agrees with the forged event
            conn.execute(
                text("UPDATE items SET decided_by = 'bob' WHERE id = :id"), {"id": item_id}
            )
        audit_chain.write_anchor(tmp_path / "audit.anchor", audit_chain.head(engine))
        assert cli(config, "audit", "--verify").exit_code == 0  # consistent on its own
        for published in (feed, jsonl):
            bad = cli(config, "audit", "--verify", "--against-feed", str(published))
            assert bad.exit_code == 1
            assert "has another hash in the log (rewritten after it was published)" in (bad.stderr)
    finally:
        engine.dispose()


def test_against_a_file_without_heads_is_one_line(sqlite_url: str, tmp_path: Path) -> None:
    from tests.publish_helpers import cli, write_config

    config = write_config(tmp_path, sqlite_url, targets=("jsonl",))
    empty = tmp_path / "other.jsonl"
    empty.write_text('{"item_id": 1}\n', encoding="utf-8")
    result = cli(config, "audit", "--verify", "--against-feed", str(empty))
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"copydesk: error: --against-feed {empty}: it carries no audit head"
    ]


def test_a_retraction_carries_the_audit_head_with_its_own_event(
    db_url: str, tmp_path: Path
) -> None:
    """Issue 26: every publication carries the audit head, retractions too. The
    retraction sent to the JSON Lines file, the webhook and the Atom feed carries
    the log's head once the retraction is recorded (its own event), valid against
    the payload schema, and `--against-feed` checks it. Before: a retraction
    carried no head, so the log from the approval to the retraction was held by
    no reader."""
    import jsonschema

    from publish.targets import published_heads
    from store.db import open_store
    from store.models import AuditEvent
    from tests import publish_helpers as kit

    repo = Path(__file__).resolve().parents[1]
    schema = json.loads((repo / "publish" / "payload.schema.json").read_text(encoding="utf-8"))
    config = kit.write_config(tmp_path, db_url, targets=("atom", "jsonl"))
    kit.run_pipeline(config)
    engine = open_store(db_url)
    try:
        [item_id] = kit.approve(engine, 1)
        with session_scope(engine) as session:
            kit.add_editor_once(session, "cy")
        with kit.webhook_server(kit.Webhook()) as hook:
            config = kit.write_config(tmp_path, db_url, webhook_url=hook.url)
            assert kit.cli(config, "publish").exit_code == 0
            retracted = kit.cli(
                config, "retract", str(item_id), "--reason", "Berth figure wrong", "--editor", "cy"
            )
            assert retracted.exit_code == 0, retracted.output
        with session_scope(engine) as session:
            event = session.scalars(
                select(AuditEvent).where(
                    AuditEvent.item_id == item_id, AuditEvent.to_status == "retracted"
                )
            ).one()
            own = f"{event.id}:{event.hash}"
        [line] = [x for x in kit.jsonl_lines(tmp_path) if x["event"] == "retracted"]
        [sent] = [r.json for r in hook.received if r.json["event"] == "retracted"]
        assert line["audit_head"] == sent["audit_head"] == own
        jsonschema.validate(line, schema)
        feed = tmp_path / "out" / "feed.xml"
        assert published_heads(feed.read_bytes()) == [own]  # the feed's entry is the notice
        for published in (feed, tmp_path / "out" / "items.jsonl"):
            ok = kit.cli(config, "audit", "--verify", "--against-feed", str(published))
            assert ok.exit_code == 0, ok.output
    finally:
        engine.dispose()


def test_a_run_beside_another_databases_anchor_keeps_its_work_and_says_so(
    engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A run's last step writes the anchor; beside a file that is another database's
    anchor, it leaves the file and logs one line (the run's work is already kept),
    never a crash in its own error handling."""
    from copydesk.services.pipeline.run import _write_audit_anchor

    path = tmp_path / "audit.anchor"
    theirs = audit_chain.Anchor(7, "f" * 64)
    audit_chain.write_anchor(path, theirs, "sqlite:/elsewhere/their.db")
    new_item(engine)
    _write_audit_anchor(engine, path)
    assert audit_chain.read_anchor(path) == theirs
    assert "not written: it is the anchor of another database" in caplog.text
