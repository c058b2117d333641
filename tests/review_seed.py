"""Seed a database for the review-queue tests: feeds, drafts, discards, verdicts,
decisions and model calls, written the way the pipeline writes them (real gates,
real status moves with their audit events). Places, people and figures are
invented.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from guards.registry import DRAFT_GATES, SOURCE_GATES, run_gates
from store import status
from store.db import session_scope
from store.editors import add_editor
from store.models import Feed, GateVerdict, Item, ModelCall, Run, utcnow

MIN_WORDS = 40
PASSWORD = "correct horse battery"

# The hostile payloads the untrusted-text tests look for.
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
PIXEL_URL = "https://tracker.example.net/pixel.png"
MD_IMAGE = f"![]({PIXEL_URL})"
JS_LINK = "[click](javascript:alert(1))"

BRIDGE = """\
Repairs to the Harlow Vale footbridge will close the crossing for 14 weeks from March, \
Brinmoor County Council said on Monday. Engineers found corrosion in 38 of the bridge's \
steel hangers during an inspection in the autumn.

The work will cost £1.9 million and a temporary ferry will carry pedestrians across the \
river every 20 minutes. "We cannot keep a bridge open that we cannot vouch for," said the \
council's transport lead, Maren Tolliver. About 2,600 people use the crossing each day.
"""

SCHOOL = """\
Marrick Green primary school will move its 212 pupils into temporary classrooms after \
the summer holiday while its roof is replaced, the head teacher, Colm Rathbone, told \
parents in a letter on Wednesday.

Twelve modular classrooms are being installed on the playing field at a cost of \
£640,000. "The children will barely notice the difference," Mr Rathbone wrote. The \
county's education office said the new roof should be finished by the spring term, \
and that the school's kitchen would stay open throughout the works.
"""

MARKET = """\
The Dunmere farmers' market will open on Sundays as well as Saturdays from next month, \
after traders voted 31 to 9 in favour of a second weekly day at a meeting on Tuesday.

The market, which began with 15 stalls in 2011, now has 74 regular traders. Its \
organiser, Priya Castellane, said footfall had risen by 18% over the past year. \
"People want to buy from the person who grew it," she said. The town council will \
provide stewards and waive the pitch fee for the first four Sundays.
"""

HOSTILE = f"""\
A page on the Calder Reach community site was defaced on Friday with code that tried \
to run in readers' browsers. The inserted text read {SCRIPT} and {IMG}, the site's \
volunteer editor, Tamsin Oakhurst, said.

Other lines carried a hidden image {MD_IMAGE} and a link written as {JS_LINK}, which \
would have run code when clicked. Ms Oakhurst said the site had been restored within \
an hour and that no reader data was taken. The volunteers have since changed every \
password and turned on two-step sign-in.
"""


@dataclass(frozen=True)
class Article:
    key: str
    title: str
    source: str
    headline: str
    summary: str


ARTICLES = {
    "bridge": Article(
        "bridge",
        "Harlow Vale footbridge to close for repairs",
        BRIDGE,
        "Harlow Vale footbridge to close for 14 weeks",
        "Brinmoor County Council will close the Harlow Vale footbridge for 14 weeks from "
        "March after corrosion was found in 38 steel hangers. The repairs will cost "
        "£1.9 million, and a temporary ferry will run every 20 minutes.",
    ),
    "school": Article(
        "school",
        "Marrick Green pupils to move to temporary classrooms",
        SCHOOL,
        "Marrick Green pupils move to temporary classrooms during roof work",
        "Marrick Green primary school will move its 212 pupils into modular classrooms "
        'costing £640,000 while its roof is replaced. "The children will barely notice '
        'the difference," the head teacher, Colm Rathbone, wrote.',
    ),
    "market": Article(
        "market",
        "Dunmere market to open on Sundays",
        MARKET,
        "Dunmere farmers' market adds Sunday opening",
        "Traders at the Dunmere farmers' market voted 31 to 9 to open on Sundays too. The "
        "market now has 74 regular traders, and footfall rose 18% over the past year.",
    ),
    "hostile": Article(
        "hostile",
        f"Calder Reach site defaced {SCRIPT}",
        HOSTILE,
        f"Calder Reach site defaced with {SCRIPT}",
        f"The Calder Reach community site was defaced with {IMG} and {MD_IMAGE} and "
        f"{JS_LINK}; the site was restored within an hour.",
    ),
    # Says 40 stalls where the source says 15: numbers_grounded discards it.
    "wrong_number": Article(
        "wrong_number",
        "Dunmere market grows",
        MARKET,
        "Dunmere market grows to 40 stalls",
        "The Dunmere farmers' market, which began with 40 stalls in 2011, will open on Sundays.",
    ),
    # Misquotes the organiser: quotes_verbatim fails (a flag or a discard, per config).
    "misquote": Article(
        "misquote",
        "Dunmere organiser on local produce",
        MARKET.replace("Dunmere farmers'", "Dunmere Sunday"),
        "Dunmere organiser backs local growers",
        'Priya Castellane said "people only buy from the farmer who grew it" as the '
        "market prepares to open on Sundays.",
    ),
}


def write_config(
    path: Path,
    db_url: str,
    *,
    modes: dict[str, str] | None = None,
    auth: str = "password",
    min_source_words: int = MIN_WORDS,
) -> Path:
    """A config.toml for a test: database, gate modes and review settings."""
    lines = [
        "[database]",
        f'url = "{db_url}"',
        "[gates]",
        f"min_source_words = {min_source_words}",
        "[gates.modes]",
        *(f'{gate} = "{mode}"' for gate, mode in (modes or {}).items()),
        "[review]",
        f'auth = "{auth}"',
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def seed_editor(engine: Engine, name: str, password: str = PASSWORD, role: str = "editor") -> None:
    with session_scope(engine) as session:
        add_editor(session, name, password, role=role)


def seed_feed(session: Session, name: str, url: str) -> Feed:
    feed = Feed(name=name, url=url, origin="config")
    session.add(feed)
    session.flush()
    return feed


def seed_article(
    session: Session,
    run: Run,
    article: Article,
    *,
    feed: Feed | None,
    modes: dict[str, str] | None = None,
    min_source_words: int = MIN_WORDS,
    seen_at: datetime | None = None,
    url: str | None = None,
) -> Item:
    """One item through the real gates: a draft, or discarded when a hard gate fails."""
    url = url or f"https://news.example.org/{article.key}"
    item = Item(
        dedup_key=url,
        feed_id=feed.id if feed else None,
        source_url=url,
        original_url=url,
        title=article.title,
        source_text=article.source,
        word_count=len(article.source.split()),
        text_origin="feed_content",
        seen_at=seen_at or utcnow(),
    )
    status.create(session, item, actor=f"run:{run.id}", reason="seen in feed")
    modes = modes or {}
    results = [
        ("source", r)
        for r in run_gates(
            SOURCE_GATES, article.source, url, "", modes=modes, min_source_words=min_source_words
        )
    ]
    draft = f"{article.headline}\n\n{article.summary}"
    results += [
        ("draft", r)
        for r in run_gates(
            DRAFT_GATES, article.source, url, draft, modes=modes, min_source_words=min_source_words
        )
    ]
    for stage, r in results:
        session.add(
            GateVerdict(
                item_id=item.id,
                run_id=run.id,
                stage=stage,
                gate=r.gate,
                passed=r.verdict.passed,
                mode=r.mode,
                reason=r.verdict.reason,
                evidence=r.verdict.evidence,
            )
        )
    failed = [r for _, r in results if r.hard_fail]
    changes = {"headline": article.headline, "summary": article.summary, "summariser": "extractive"}
    if failed:
        status.move(
            session,
            item,
            status.DISCARDED,
            actor=f"run:{run.id}",
            reason="; ".join(f"{r.gate}: {r.verdict.reason}" for r in failed),
            changes=changes,
        )
    else:
        status.move(
            session,
            item,
            status.DRAFT,
            actor=f"run:{run.id}",
            reason="all hard gates passed",
            changes=changes,
        )
    session.add(
        ModelCall(
            item_id=item.id,
            run_id=run.id,
            purpose="summary",
            backend="anthropic",
            model="claude-haiku-4-5",
            input_tokens=900,
            output_tokens=120,
            cost_usd=0.0015,
        )
    )
    session.flush()
    return item


def seed_queue(
    engine: Engine,
    keys: tuple[str, ...] = ("bridge", "school", "market", "hostile", "wrong_number"),
    *,
    modes: dict[str, str] | None = None,
) -> dict[str, int]:
    """Seed the named articles, oldest first in the given order; returns their ids."""
    ids: dict[str, int] = {}
    start = utcnow() - timedelta(hours=len(keys) + 1)
    with session_scope(engine) as session:
        run = Run(command="seed")
        session.add(run)
        session.flush()
        feed = seed_feed(session, "Brinmoor Courier", "https://news.example.org/rss.xml")
        hostile_feed = seed_feed(
            session, f"Calder Reach {IMG}", "https://calder.example.org/feed.xml"
        )
        for n, key in enumerate(keys):
            article = ARTICLES[key]
            item = seed_article(
                session,
                run,
                article,
                feed=hostile_feed if key == "hostile" else feed,
                modes=modes,
                seen_at=start + timedelta(hours=n),
            )
            ids[key] = item.id  # type: ignore[assignment]
    return ids


def item_state(engine: Engine, item_id: int) -> Item:
    with Session(engine, expire_on_commit=False) as session:
        item = session.get(Item, item_id)
        assert item is not None
        return item


def seed_discard(session: Session, run: Run, url: str, reason: str) -> Item:
    """An item the pipeline discarded before any gate ran (a refused link, a
    duplicate, a model failure...): only the audit event's reason says why."""
    item = Item(dedup_key=url, source_url=url, original_url=url, title=f"Page at {url}")
    status.create(session, item, actor=f"run:{run.id}", reason="submitted by hand")
    status.move(session, item, status.DISCARDED, actor=f"run:{run.id}", reason=reason)
    return item


def seed_model_verdict(
    session: Session, item_id: int, gate: str, *, passed: bool, mode: str, reason: str
) -> None:
    """A model check's verdict on the pipeline's draft (stage `draft`), as the
    claims check or the faithfulness judge would store it."""
    session.add(
        GateVerdict(
            item_id=item_id, stage="draft", gate=gate, passed=passed, mode=mode, reason=reason
        )
    )
    session.flush()


def seed_checks(
    session: Session,
    item_id: int,
    check_input: dict[str, Any] | None,
    *,
    require: bool = False,
    why: str = "no model",
) -> None:
    """The model checks' verdicts on the pipeline's draft (stage `check`), made by
    the real gates from a scripted check reply (the check tool's input JSON), or
    recorded as not run when `check_input` is None, as the pipeline stores them."""
    from guards.registry import run_checks
    from summarise.checks import parse_check_input

    item = session.get(Item, item_id)
    assert item is not None
    reply = parse_check_input(check_input) if check_input is not None else None
    draft = f"{item.headline}\n\n{item.summary}"
    for result in run_checks(
        item.source_text or "", draft, reply, modes={}, why_not=why, require=require
    ):
        d = result.to_dict()
        session.add(
            GateVerdict(
                item_id=item_id,
                stage="check",
                gate=d["gate"],
                passed=d["passed"],
                mode=d["mode"],
                reason=d["reason"],
                evidence=d["evidence"],
            )
        )
    session.flush()
