"""Seed a database for the review-queue tests by running the real pipeline.

Each sample article below is published as an entry of a JSON Feed file (Brinmoor
Courier, or the Calder Reach site for the hostile one), and `copydesk`'s own
`Pipeline` polls it with the recorded summariser replaying the article's draft:
the items, gate verdicts, discard reasons, ledger rows and audit events the UI
tests see are the ones the pipeline produced, so a change in the pipeline's
verdicts or reasons shows up in the UI tests. One run per article, in the order
given, so the queue's oldest-first order is the order of the keys.

Places, people and figures are invented.
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from copydesk.config import Settings
from copydesk.services.pipeline import Pipeline
from ingest.fetch import Fetcher
from ingest.urls import canonical_url
from store import status
from store.db import session_scope
from store.editors import add_editor
from store.models import GateVerdict, Item, Run
from summarise.recorded import RecordedSummariser, load_replies

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
    title: str  # the feed entry's title
    source: str  # the entry's text (the pipeline puts the title above it)
    headline: str  # the recorded model reply
    summary: str
    published: str | None = None  # the entry's date_published (RFC 3339), when it has one
    language: str | None = None  # the entry's JSON Feed `language`, when it declares one

    @property
    def url(self) -> str:
        return f"https://news.example.org/{self.key}"


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
        "Calder Reach community site defaced",
        HOSTILE,
        f"Calder Reach site defaced with {SCRIPT}",
        f"The Calder Reach community site was defaced with {IMG} and {MD_IMAGE} and "
        f"{JS_LINK}; the site was restored within an hour.",
    ),
    # Says 40 stalls where the source says 15: numbers_grounded discards it.
    "wrong_number": Article(
        "wrong_number",
        "Dunmere market grows",
        MARKET.replace("Its organiser", "The market's organiser"),  # not the same text
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
    dwell_seconds: float | None = 0,
    claim_seconds: float | None = None,
    claim_idle_seconds: float | None = None,
    undo_seconds: float | None = None,
    extra: str = "",
) -> Path:
    """A config.toml for a test: database, gate modes and review settings
    (`claim_seconds`, `claim_idle_seconds`, `undo_seconds`: the shipped defaults
    unless given); `extra` is appended as it is (publish targets, say).

    `dwell_seconds` is 0 unless a test is about it (AppTest clicks the moment a
    page is drawn); None leaves it out, so the default (1 s) applies."""
    lines = [
        "[database]",
        f'url = "{db_url}"',
        "[gates]",
        f"min_source_words = {min_source_words}",
        "[gates.modes]",
        *(f'{gate} = "{mode}"' for gate, mode in (modes or {}).items()),
        "[review]",
        f'auth = "{auth}"',
        *([f"dwell_seconds = {dwell_seconds}"] if dwell_seconds is not None else []),
        *([f"claim_seconds = {claim_seconds}"] if claim_seconds is not None else []),
        *([f"claim_idle_seconds = {claim_idle_seconds}"] if claim_idle_seconds is not None else []),
        *([f"undo_seconds = {undo_seconds}"] if undo_seconds is not None else []),
        extra,
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def seed_editor(engine: Engine, name: str, password: str = PASSWORD, role: str = "editor") -> None:
    with session_scope(engine) as session:
        add_editor(session, name, password, role=role)


BRINMOOR = "Brinmoor Courier"
CALDER = f"Calder Reach {IMG}"  # a hostile feed name: shown as text, never parsed


@functools.cache
def _fetcher() -> Fetcher:
    """One fetcher for every seed (building one costs TLS set-up). The feeds are local
    files and pages are not fetched, so it never sends a request."""
    return Fetcher(Settings().ingest)


def _feed_item(article: Article) -> dict[str, str]:
    """A JSON Feed item carrying the article's whole text (no page to fetch)."""
    item = {
        "id": f"tag:news.example.org,2026:{article.key}",
        "url": article.url,
        "title": article.title,
        "content_text": article.source,
    }
    if article.published:
        item["date_published"] = article.published
    if article.language:
        item["language"] = article.language
    return item


class _Newsroom:
    """Two feed files, a recorded reply per article, and the real pipeline."""

    def __init__(self, engine: Engine, folder: Path, modes: dict[str, str] | None):
        self.engine = engine
        self.folder = folder
        self.feeds = {BRINMOOR: folder / "brinmoor.json", CALDER: folder / "calder.json"}
        self.items: dict[str, list[dict[str, str]]] = {name: [] for name in self.feeds}
        # No checking model here, so the model checks are off (a newsroom without one
        # would turn them off too): the drafts carry the deterministic gates' verdicts.
        modes = {"claims_supported": "off", "faithfulness": "off"} | (modes or {})
        self.settings = Settings.model_validate(
            {
                "summarise": {"backend": "extractive", "max_concurrency": 2},
                "gates": {"min_source_words": MIN_WORDS, "modes": modes},
                "feeds": [{"name": n, "url": str(path)} for n, path in self.feeds.items()],
            }
        )
        self.replies: list[dict[str, str]] = []

    def publish(self, articles: Iterable[Article], feed: str = BRINMOOR) -> list[int]:
        """Add the articles to a feed, run the pipeline once; their item ids."""
        articles = list(articles)
        self.items[feed] += [_feed_item(a) for a in articles]
        self.replies += [
            {"url": a.url, "headline": a.headline, "summary": a.summary, "kind": a.key}
            for a in articles
        ]
        for name, path in self.feeds.items():
            doc = {"version": "https://jsonfeed.org/version/1.1", "title": name}
            path.write_text(json.dumps(doc | {"items": self.items[name]}), encoding="utf-8")
        replies = self.folder / "replies.json"
        replies.write_text(json.dumps({"replies": self.replies}), encoding="utf-8")
        summariser = RecordedSummariser(load_replies(replies))
        pipeline = Pipeline(
            self.settings, self.engine, summariser, _fetcher(), command="seed", fetch_pages=False
        )
        report = pipeline.run([str(self.feeds[feed])], force=True)  # this seed's file only
        assert report.fatal is None, report.fatal
        keys = [canonical_url(a.url) for a in articles]
        with Session(self.engine) as session:
            rows = session.exec(select(Item).where(Item.dedup_key.in_(keys))).all()
            found = {item.dedup_key: item.id for item in rows}
        assert set(found) == set(keys), f"the pipeline made no item for {set(keys) - set(found)}"
        return [found[k] for k in keys]


def seed_queue(
    engine: Engine,
    keys: tuple[str, ...] = ("bridge", "school", "market", "hostile", "wrong_number"),
    *,
    modes: dict[str, str] | None = None,
) -> dict[str, int]:
    """Run the pipeline on the named articles, one run each, oldest first in the
    given order; returns their item ids."""
    ids: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="copydesk-seed-") as folder:
        newsroom = _Newsroom(engine, Path(folder), modes)
        for key in keys:
            feed = CALDER if key == "hostile" else BRINMOOR
            (ids[key],) = newsroom.publish([ARTICLES[key]], feed)
    return ids


def seed_article(engine: Engine, article: Article, *, modes: dict[str, str] | None = None) -> int:
    """One article through the real pipeline (a run of its own); its item id."""
    with tempfile.TemporaryDirectory(prefix="copydesk-seed-") as folder:
        (item_id,) = _Newsroom(engine, Path(folder), modes).publish([article])
    return item_id


def variant(article: Article, n: int, key: str | None = None) -> Article:
    """Another story written like `article`: its own key (so its own URL) and one
    sentence more (so its own text: the pipeline would call a copy a duplicate)."""
    return replace(
        article,
        key=key or f"{article.key}-{n}",
        source=f"{article.source}\nThe council will give update number {100 + n} next week.",
    )


def seed_copies(engine: Engine, key: str, n: int) -> list[int]:
    """`n` variants of ARTICLES[key] through one pipeline run; their ids."""
    copies = [variant(ARTICLES[key], i) for i in range(n)]
    with tempfile.TemporaryDirectory(prefix="copydesk-seed-") as folder:
        return _Newsroom(engine, Path(folder), None).publish(copies)


def item_state(engine: Engine, item_id: int) -> Item:
    with Session(engine, expire_on_commit=False) as session:
        item = session.get(Item, item_id)
        assert item is not None
        return item


def seed_discard(
    session: Session, run: Run, url: str, reason: str, kind: str | None = None
) -> Item:
    """An item the pipeline discarded before any gate ran (a refused link, a
    duplicate, a model failure...), of the given kind ("other" when None)."""
    item = Item(dedup_key=url, source_url=url, original_url=url, title=f"Page at {url}")
    status.create(session, item, actor=f"run:{run.id}", reason="submitted by hand")
    status.move(
        session, item, status.DISCARDED, actor=f"run:{run.id}", reason=reason, discard_kind=kind
    )
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


def decision_button(at: Any, name: str) -> Any:
    """The draft's "approve" or "reject_submit" button in an AppTest: its key
    carries the item id and version ("approve_12_3")."""
    return next(b for b in at.button if b.key and re.fullmatch(rf"{name}_\d+_\d+", b.key))
