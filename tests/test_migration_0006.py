"""0006_discard_kind: a database made at the revision before it, with discarded
items of every kind (with and without details["discard_kind"]), comes out with
each item's kind in its column."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import bindparam, text
from sqlmodel import select

from store.audit_chain import GENESIS, event_hash
from store.db import alembic_config, make_engine, migrate, session_scope
from store.models import Item, UTCDateTime

AT = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)

REVISION = "0006_discard_kind"

# (status, [(reason, details) of its discard events, oldest first], expected kind)
CASES: list[tuple[str, list[tuple[str, dict[str, Any] | None]], str | None]] = [
    ("discarded", [("numbers_grounded: 4.2 is not in the source", None)], "numbers_grounded"),
    (
        "discarded",
        [("names_grounded: Ilse Vantor; numbers_grounded: 12", {"discard_kind": "names_grounded"})],
        "names_grounded",
    ),
    ("discarded", [("source_length: 12 words", None)], "source_length"),
    ("discarded", [("duplicate of item 1 (same text)", None)], "duplicate"),
    (
        "discarded",
        [("duplicate of item 1 (same link)", {"discard_kind": "duplicate"})],
        "duplicate",
    ),
    ("discarded", [("robots.txt disallows https://x.example.test/p", None)], "robots"),
    ("discarded", [("link refused: scheme 'ftp' is not fetched", None)], "refused"),
    ("discarded", [("link refused: a private address", {"discard_kind": "refused"})], "refused"),
    ("discarded", [("model failed 5 times: summariser failed: HTTP 529", None)], "model"),
    ("discarded", [("summariser failed: no reply", {"discard_kind": "model"})], "model"),
    ("discarded", [("page fetch failed: HTTP 404", None)], "fetch"),
    ("discarded", [("the feed carries no text and page fetching is off", None)], "fetch"),
    ("discarded", [("processing failed 5 times: KeyError", None)], "internal"),
    (
        "discarded",
        [("processing failed 5 times: KeyError", {"discard_kind": "internal"})],
        "internal",
    ),
    ("discarded", [("something nobody planned for", None)], "other"),
    # The recorded kind wins over the text; a kind that is not one falls back to the text.
    ("discarded", [("page fetch failed: HTTP 410", {"discard_kind": "fetch"})], "fetch"),
    ("discarded", [("robots.txt disallows it", {"discard_kind": "robotz"})], "robots"),
    # `copydesk replay` discarded a draft: the first gate it names.
    (
        "discarded",
        [("replay: dates_grounded: 3 May", {"replay": {"gates": ["dates_grounded"]}})],
        "dates_grounded",
    ),
    # The latest discard event counts.
    ("discarded", [("fetch failed", None), ("duplicate of item 1 (same text)", None)], "duplicate"),
    # Items that are not discarded keep no kind, whatever their events say.
    ("draft", [], None),
]


class _Chain:
    """Audit events inserted as the schema before 0006 holds them, hash-chained."""

    def __init__(self) -> None:
        self.head = GENESIS

    def insert(self, conn: Any, item_id: int, reason: str, details: Any) -> None:
        digest = event_hash(
            prev_hash=self.head,
            item_id=item_id,
            at=AT,
            actor="run:1",
            from_status="new",
            to_status="discarded",
            reason=reason,
            details=details,
        )
        conn.execute(
            text(
                "INSERT INTO audit_events (item_id, at, actor, from_status, to_status, reason, "
                "details, prev_hash, hash) VALUES (:item, :at, 'run:1', 'new', "
                "'discarded', :reason, :details, :prev, :hash)"
            ).bindparams(bindparam("at", type_=UTCDateTime())),
            {
                "item": item_id,
                "at": AT,
                "reason": reason,
                "details": None if details is None else json.dumps(details),
                "prev": self.head,
                "hash": digest,
            },
        )
        self.head = digest


def _add(
    conn: Any, chain: _Chain, n: int, status: str, events: list[tuple[str, dict[str, Any] | None]]
) -> int:
    item_id = conn.execute(
        text(
            "INSERT INTO items (dedup_key, status, version, attempts, recorded_reply, seen_at, "
            "created_at, updated_at) VALUES (:key, :status, 1, 0, false, CURRENT_TIMESTAMP, "
            "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP) RETURNING id"
        ),
        {"key": f"https://harrowby.example.test/{n}", "status": status},
    ).scalar_one()
    for reason, details in events:
        chain.insert(conn, item_id, reason, details)
    return item_id


def test_upgrade_gives_every_discarded_item_its_kind(db_url: str) -> None:
    engine = make_engine(db_url)
    config = alembic_config(engine)
    previous = ScriptDirectory.from_config(config).get_revision(REVISION).down_revision
    assert isinstance(previous, str)
    command.upgrade(config, previous)
    expected: dict[int, str | None] = {}
    chain = _Chain()
    with engine.begin() as conn:
        for n, (status, events, kind) in enumerate(CASES):
            expected[_add(conn, chain, n, status, events)] = kind
    migrate(engine)
    with session_scope(engine) as session:
        found = {item.id: item.discard_kind for item in session.exec(select(Item))}
    assert found == expected
    engine.dispose()
