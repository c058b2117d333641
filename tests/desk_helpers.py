"""Seeded desks shared by the issue-12 desk tests (AppTest, `copydesk` at the
command line, and Chromium): decisions already taken for the stats, and a
source-gate discard, a misquote and a clean draft for the audit trail. Both run
the real pipeline (tests/review_seed.py); decisions go through the status machine.
"""

from __future__ import annotations

from typing import Any

from store import status
from store.db import session_scope
from store.models import Item
from tests.review_seed import Article, seed_article, seed_editor, seed_queue

# ---------------------------------------------------------------------------- stats

STATS_KEYS = ("bridge", "school", "market", "hostile", "wrong_number")  # wrong_number: a discard


def decide(engine: Any, item_id: int, editor: str, to: str) -> None:
    """Move the item to `to` as the editor (a rejection with a reason)."""
    with session_scope(engine) as session:
        item = session.get(Item, item_id)
        reason = "duplicate story" if to == status.REJECTED else None
        status.move(session, item, to, actor=f"editor:{editor}", reason=reason)


def seed_decided_desk(engine: Any) -> dict[str, int]:
    """The items of STATS_KEYS, editors alice and bob; alice approved the bridge and
    the school, bob rejected the market."""
    ids = seed_queue(engine, STATS_KEYS)
    for name in ("alice", "bob"):
        seed_editor(engine, name)
    decide(engine, ids["bridge"], "alice", status.APPROVED)
    decide(engine, ids["school"], "alice", status.APPROVED)
    decide(engine, ids["market"], "bob", status.REJECTED)
    return ids


# ---------------------------------------------------------------------------- audit trail

TEASER = Article(
    "teaser",
    "Vell Valley council to vote on library hours",
    "The Vell Valley council will vote on library opening hours next week.",  # too short
    "Vell Valley library hours vote",
    "The council votes next week.",
)
NO_DRAFT = "No draft was made: the source gate discarded this item before summarising"


def seed_audit_desk(engine: Any) -> dict[str, int]:
    """A source-gate discard (too short to summarise), a misquote that the quotes
    gate discards, and a clean draft, through the real pipeline."""
    ids = seed_queue(engine, ("bridge", "misquote"), modes={"quotes_verbatim": "discard"})
    ids["teaser"] = seed_article(engine, TEASER)
    seed_editor(engine, "alice")
    return ids
