"""The audit anchor covers everything (issue 26): every committed transaction that
appended to the audit log advances the anchor file (decisions and publications as
well as runs), never backwards, also with several processes writing at once; a
rolled-back one does not; an anchor older than the log fails the check."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
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


def test_the_anchor_never_moves_back(tmp_path: Path) -> None:
    """Two processes commit events 7 and 8; the second to commit may reach the file
    first: the later event stays."""
    path = tmp_path / "audit.anchor"
    newer, older = audit_chain.Anchor(8, "b" * 64), audit_chain.Anchor(7, "a" * 64)
    audit_chain.advance_anchor(path, newer)
    audit_chain.advance_anchor(path, older)
    assert audit_chain.read_anchor(path) == newer


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
