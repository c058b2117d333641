"""`copydesk audit` and `copydesk discards`: an item's history and the discards, from the
database alone. Rows are made the way the pipeline makes them: `store.status` for
items and moves, and every verdict by running the real gates on the item's source
and draft (so the reasons and evidence asserted here are the gates' own)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from unittest import mock

import pytest
import typer
from sqlalchemy.engine import Engine
from sqlmodel import Session
from typer.testing import CliRunner

from copydesk.cli import app as cli_app
from copydesk.services import audit
from guards.registry import DRAFT_GATES, SOURCE_GATES, run_gates
from guards.source import count_words
from store import call_settings, status
from store.db import session_scope
from store.models import Feed, GateVerdict, Item, Run

GAZETTE = "Harbourside Gazette"
COURIER = "Valley Courier"
FLOODS_URL = "https://news.example.org/port-elsmere-flood-alerts"
FLOODS_LINK = "https://NEWS.example.org/port-elsmere-flood-alerts?utm_source=rss&utm_medium=feed"
SOURCE_TEXT = (
    "The harbour authority in Port Elsmere said on Tuesday that 4,080 households had signed "
    "up for its new flood-warning text service in the first month.\n\n"
    "The service sends a message when the tide gauge at Quarry Point rises above 5.2 metres, "
    'and a second one when the water begins to fall. "We would rather wake people twice than '
    "not at all,\" said the authority's duty officer, Isla Branwen. The authority plans to add "
    "the villages of Saltmere and Oxley Hythe before the spring tides."
)
# An invented figure (4,800 for 4,080) and a quotation the source never had.
FLOODS_HEADLINE = "Flood alerts draw 4,800 households"
FLOODS_SUMMARY = (
    "The harbour authority says 4,800 households joined its flood-warning service, "
    'which it called "the loudest alarm on the coast".'
)
FLOODS_NUMBERS = "1 of 1 numbers not in the source: 4,800"
FLOODS_QUOTES = "1 of 1 quotations not in the source; first: “the loudest alarm on the coast”"
MILL_TEXT = (
    "The Ashcombe weaving mill will reopen in January with 85 jobs, its new owners said on "
    "Thursday, eleven years after the looms stopped.\n\n"
    "Tarrow Textiles bought the building in the summer and has installed six refurbished looms. "
    '"The skills never left this valley," said the company\'s founder, Ewan Merriday. The first '
    "orders are for upholstery cloth for a furniture maker in Hallbrook."
)
# 58 for 85, and the founder's words rearranged.
MILL_DRAFT = (
    "Weaving mill reopens with 58 jobs\n\nTarrow Textiles will reopen the Ashcombe mill with "
    '58 jobs. "The valley never lost its skills," its founder said.'
)
BRIDGE_TEXT = (
    "The old bridge over the Kell at Marlow Ford will close for six weeks from Monday while "
    "engineers replace two of its bearings, the county council said. Buses will divert through "
    "Pennick, adding about ten minutes to the journey, and a footpath on the weir will stay "
    "open for people on foot."
)
MIN_WORDS = 20  # as the world's config.toml says


@dataclass
class World:
    engine: Engine
    floods: int  # discarded: numbers_grounded failed (quotes_verbatim only flagged)
    ferry: int  # approved; the draft came from a recorded reply
    bridge: int  # discarded after the model failed five times (no gate failed)
    market: int  # discarded long ago: link refused (no feed: a submitted URL)
    mill: int  # discarded: numbers_grounded and quotes_verbatim both failed
    school: int  # still a draft: never in the discards


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def app() -> typer.Typer:
    """The real command line, as installed."""
    return cli_app


@pytest.fixture(scope="module")
def shared_world(module_engine: Engine) -> World:
    """One world per module and backend (SQLite and PostgreSQL): the tests only read
    it, or add items of their own that no other test looks for."""
    with session_scope(module_engine) as s:
        return build_world(s, module_engine)


@pytest.fixture
def world(shared_world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """The shared world, with the commands pointed at its database."""
    monkeypatch.chdir(tmp_path)
    url = shared_world.engine.url.render_as_string(hide_password=False)
    monkeypatch.setenv("COPYDESK_DATABASE_URL", url)
    monkeypatch.setenv("COPYDESK_CONFIG", str(tmp_path / "config.toml"))
    (tmp_path / "config.toml").write_text("[gates]\nmin_source_words = 20\n", encoding="utf-8")
    return shared_world


def born(s, run: Run, feed: Feed | None, **fields) -> Item:
    item = Item(feed_id=feed.id if feed else None, **fields)
    if feed:
        details = {"feed": feed.name, "entry_id": item.entry_id, "link": item.original_url}
        reason = f"seen in feed {feed.name}"
    else:
        details, reason = {"link": item.original_url}, "submitted"
    status.create(s, item, actor=f"run:{run.id}", reason=reason, details=details)
    return item


def gated(
    s,
    item: Item,
    run: Run,
    source: str,
    draft: str | None = None,
    modes: dict[str, str] | None = None,
) -> str | None:
    """The real gates, run and stored as the pipeline runs and stores them: the source
    gates, then (given a draft) the draft gates. Returns the pipeline's discard
    reason, or None when no hard gate failed."""
    modes = modes or {}
    url = item.source_url
    results = [
        ("source", r)
        for r in run_gates(SOURCE_GATES, source, url, "", modes=modes, min_source_words=MIN_WORDS)
    ]
    if draft is not None:
        results += [("draft", r) for r in run_gates(DRAFT_GATES, source, url, draft, modes=modes)]
    for stage, result in results:
        d = result.to_dict()
        s.add(
            GateVerdict(
                item_id=item.id,
                run_id=run.id,
                stage=stage,
                gate=d["gate"],
                passed=d["passed"],
                mode=d["mode"],
                reason=d["reason"],
                evidence=d["evidence"],
            )
        )
    s.flush()
    failed = [r for _, r in results if r.hard_fail]
    return "; ".join(f"{r.gate}: {r.verdict.reason}" for r in failed) or None


def build_world(s: Session, engine: Engine) -> World:
    gazette = Feed(url="https://news.example.org/rss.xml", name=GAZETTE)
    courier = Feed(url="https://courier.example.net/feed", name=COURIER)
    run = Run(command="run", backend="anthropic")
    s.add_all([gazette, courier, run])
    s.flush()
    actor = f"run:{run.id}"

    floods = born(
        s,
        run,
        gazette,
        dedup_key=FLOODS_URL,
        entry_id="tag:news.example.org,2026:flood-alerts",
        source_url=FLOODS_URL,
        original_url=FLOODS_LINK,
        title="Port Elsmere flood alerts draw thousands",
        published_at=datetime(2026, 11, 24, 7, 30, tzinfo=UTC),
        text_origin="page",
        fetch_status=200,
        fetch_bytes=48213,
        source_text=SOURCE_TEXT,
        word_count=count_words(SOURCE_TEXT),
        summariser="anthropic:claude-haiku-4-5",
        headline=FLOODS_HEADLINE,
        summary=FLOODS_SUMMARY,
    )
    s.add(
        call_settings.model_call(
            s.connection(),
            item_id=floods.id,
            run_id=run.id,
            purpose="summary",
            backend="anthropic",
            model="claude-haiku-4-5",
            api_version="2023-06-01",
            temperature=0.0,
            temperature_in_force=True,
            prompt_version="summary-v1",
            prompt_hash="sha256:9f2c41d0",
            request_id="req_011CVfloods",
            input_tokens=1210,
            output_tokens=96,
            latency_ms=842,
            stop_reason="tool_use",
            cost_usd=0.00169,
            request_json={"messages": [{"role": "user", "content": "ARTICLE TEXT"}]},
            response_json={"content": [{"type": "tool_use"}]},
        )
    )
    why = gated(
        s,
        floods,
        run,
        SOURCE_TEXT,
        f"{FLOODS_HEADLINE}\n\n{FLOODS_SUMMARY}",
        modes={"quotes_verbatim": "flag"},
    )
    assert why == f"numbers_grounded: {FLOODS_NUMBERS}"  # the flagged quote does not discard
    status.move(
        s, floods, status.DISCARDED, actor=actor, reason=why, discard_kind="numbers_grounded"
    )

    ferry = born(
        s,
        run,
        gazette,
        dedup_key="https://news.example.org/ferry-timetable",
        source_url="https://news.example.org/ferry-timetable",
        original_url="https://news.example.org/ferry-timetable",
        title="Flood alerts reach thousands",
        text_origin="feed_content",
        source_text=SOURCE_TEXT,
        word_count=240,
        summariser="anthropic:claude-haiku-4-5",
        recorded_reply=True,
        headline="Flood alerts reach 4,080 households",
        summary="Port Elsmere's flood-warning texts reached 4,080 households in a month.",
    )
    assert gated(s, ferry, run, SOURCE_TEXT, f"{ferry.headline}\n\n{ferry.summary}") is None
    status.move(s, ferry, status.DRAFT, actor=actor, reason="all hard gates passed")
    status.move(s, ferry, status.APPROVED, actor="editor:maya")

    bridge = born(
        s,
        run,
        courier,
        dedup_key="https://courier.example.net/bridge-closure",
        source_url="https://courier.example.net/bridge-closure",
        original_url="https://courier.example.net/bridge-closure",
        title="Old bridge to close for repairs",
        text_origin="page",
        fetch_status=200,
        source_text=BRIDGE_TEXT,
        word_count=count_words(BRIDGE_TEXT),
    )
    assert gated(s, bridge, run, BRIDGE_TEXT) is None
    for attempt in range(1, 6):
        s.add(
            call_settings.model_call(
                s.connection(),
                item_id=bridge.id,
                run_id=run.id,
                backend="anthropic",
                model="claude-haiku-4-5",
                ok=False,
                error="529 overloaded_error",
                latency_ms=30_000 + attempt,
            )
        )
        if attempt < 5:
            status.move(
                s,
                bridge,
                status.ERROR,
                actor=actor,
                reason="model overloaded (529)",
                changes={"attempts": attempt, "last_error": "529 overloaded_error"},
            )
            status.move(s, bridge, status.NEW, actor=actor, reason="retry")
    status.move(
        s,
        bridge,
        status.ERROR,
        actor=actor,
        reason="model overloaded (529)",
        changes={"attempts": 5, "last_error": "529 overloaded_error"},
    )
    status.move(
        s,
        bridge,
        status.DISCARDED,
        actor=actor,
        reason="model failed 5 times: 529 overloaded",
        discard_kind="model",
    )

    market = born(
        s,
        run,
        None,
        dedup_key="https://market.example.com/stalls",
        source_url="https://market.example.com/stalls",
        original_url="https://market.example.com/stalls",
        title="Market stall fees rise",
    )
    # A discard from last month: the status machine's own move, on a clock set back.
    month_ago = datetime.now(UTC) - timedelta(days=30)
    with mock.patch.object(status, "utcnow", lambda: month_ago):
        status.move(
            s,
            market,
            status.DISCARDED,
            actor=actor,
            reason="robots.txt disallows https://market.example.com/stalls",
            discard_kind="robots",
        )

    mill = born(
        s,
        run,
        courier,
        dedup_key="https://courier.example.net/mill-reopens",
        source_url="https://courier.example.net/mill-reopens",
        original_url="https://courier.example.net/mill-reopens",
        title="Weaving mill reopens with 85 jobs",
        source_text=MILL_TEXT,
        word_count=count_words(MILL_TEXT),
        summariser="anthropic:claude-haiku-4-5",
        headline=MILL_DRAFT.split("\n\n")[0],
        summary=MILL_DRAFT.split("\n\n")[1],
    )
    why = gated(s, mill, run, MILL_TEXT, MILL_DRAFT)
    assert why == (
        "numbers_grounded: 1 of 1 numbers not in the source: 58; quotes_verbatim: 1 of 1 "
        "quotations not in the source; first: “The valley never lost its skills,”"
    )
    status.move(s, mill, status.DISCARDED, actor=actor, reason=why)

    school = born(
        s,
        run,
        gazette,
        dedup_key="https://news.example.org/school-roof",
        source_url="https://news.example.org/school-roof",
        title="School roof repaired",
    )
    status.move(s, school, status.DRAFT, actor=actor, reason="all hard gates passed")
    return World(engine, floods.id, ferry.id, bridge.id, market.id, mill.id, school.id)


# --- audit ------------------------------------------------------------------------------------


def test_audit_by_id_tells_the_whole_story(app, runner, world):
    result = runner.invoke(app, ["audit", str(world.floods)])
    assert result.exit_code == 0, result.output
    text = result.stdout
    for expected in (
        f"Item {world.floods} — discarded (version 1)",
        "Port Elsmere flood alerts draw thousands",
        FLOODS_URL,
        FLOODS_LINK,
        f"{GAZETTE} <https://news.example.org/rss.xml>",
        "tag:news.example.org,2026:flood-alerts",
        "published at: 2026-11-24T07:30:00+00:00",
        "text origin: page",
        "fetch status: 200",
        "fetch bytes: 48213",
        f"words extracted: {count_words(SOURCE_TEXT)}",
        "summariser: anthropic:claude-haiku-4-5",
        f"headline: {FLOODS_HEADLINE}",
        FLOODS_NUMBERS,
        'NOT FOUND {"number": "4,800"',
        "1 of 1 quotations not in the source",  # the rest is wrapped in the table
        'NOT FOUND {"quote": "the loudest alarm on the coast"',
        "failed (flag)",
        "request id: req_011CVfloods",
        "1210 in, 96 out",
        "temperature: 0 (in force)",
        "prompt version: summary-v1",
        "prompt hash: sha256:9f2c41d0",
        "api version: 2023-06-01",
        "stop reason: tool_use",
        "cost: $0.001690",
        f"seen in feed {GAZETTE}",
        "(born) -> new",
        "new -> discarded",
    ):
        assert expected in text, expected
    assert "ARTICLE TEXT" not in text  # request bodies only with --full
    assert "recorded reply" not in text


def test_audit_json_is_one_document_with_everything_in_order(app, runner, world):
    result = runner.invoke(app, ["audit", str(world.floods), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["item"] == doc["item"] | {
        "id": world.floods,
        "status": "discarded",
        "version": 1,
        "source_url": FLOODS_URL,
        "original_url": FLOODS_LINK,
        "entry_id": "tag:news.example.org,2026:flood-alerts",
        "published_at": "2026-11-24T07:30:00+00:00",
    }
    assert datetime.fromisoformat(doc["item"]["seen_at"]).tzinfo is not None
    assert doc["feed"] == doc["feed"] | {"name": GAZETTE, "url": "https://news.example.org/rss.xml"}
    assert doc["fetch"] == doc["fetch"] | {
        "text_origin": "page",
        "fetch_status": 200,
        "fetch_bytes": 48213,
        "word_count": count_words(SOURCE_TEXT),
    }
    assert doc["summariser"] == {
        "name": "anthropic:claude-haiku-4-5",
        "recorded_reply": False,
        "label": "anthropic:claude-haiku-4-5",
    }
    assert [(v["stage"], v["gate"], v["passed"]) for v in doc["verdicts"]] == [
        ("source", "source_url", True),
        ("source", "source_length", True),
        ("draft", "numbers_grounded", False),
        ("draft", "quotes_verbatim", False),
        ("draft", "speakers_match", True),
        ("draft", "names_grounded", True),
        ("draft", "dates_grounded", True),
    ]
    numbers = doc["verdicts"][2]["evidence"]
    assert [(e["number"], e["found"]) for e in numbers] == [("4,800", False)] * 2
    assert (doc["verdicts"][2]["reason"], doc["verdicts"][3]["reason"]) == (
        FLOODS_NUMBERS,
        FLOODS_QUOTES,
    )
    modes = ["discard", "discard", "discard", "flag", "flag", "flag", "flag"]
    assert [v["mode"] for v in doc["verdicts"]] == modes
    (call,) = doc["model_calls"]
    assert call == call | {
        "purpose": "summary",
        "backend": "anthropic",
        "model": "claude-haiku-4-5",
        "temperature_in_force": True,
        "prompt_hash": "sha256:9f2c41d0",
        "request_id": "req_011CVfloods",
        "input_tokens": 1210,
        "output_tokens": 96,
        "latency_ms": 842,
        "stop_reason": "tool_use",
        "cost_usd": 0.00169,
        "ok": True,
        "error": None,
    }
    assert "request_json" not in call and "source_text" not in doc
    assert [(e["from_status"], e["to_status"]) for e in doc["events"]] == [
        (None, "new"),
        ("new", "discarded"),
    ]
    assert doc["events"][-1]["reason"] == f"numbers_grounded: {FLOODS_NUMBERS}"
    birth = doc["events"][0]
    assert birth["actor"].startswith("run:")
    assert birth["details"] == {
        "feed": GAZETTE,
        "entry_id": "tag:news.example.org,2026:flood-alerts",
        "link": FLOODS_LINK,
    }
    assert doc["retries"] == {"attempts": 0, "next_attempt_at": None, "last_error": None}


def test_audit_full_adds_source_text_and_model_payloads(app, runner, world):
    doc = json.loads(runner.invoke(app, ["audit", str(world.floods), "--json", "--full"]).stdout)
    assert doc["source_text"] == SOURCE_TEXT
    assert doc["model_calls"][0]["request_json"]["messages"][0]["content"] == "ARTICLE TEXT"
    text = runner.invoke(app, ["audit", str(world.floods), "--full"]).stdout
    assert SOURCE_TEXT in text
    assert "ARTICLE TEXT" in text


@pytest.mark.parametrize(
    "key",
    [
        FLOODS_URL,  # the canonical URL
        FLOODS_LINK,  # the link exactly as the feed gave it
        # canonicalised: tracking parameter and fragment dropped
        "https://news.example.org/port-elsmere-flood-alerts?utm_campaign=winter#top",
        " " + FLOODS_URL + " ",
        "tag:news.example.org,2026:flood-alerts",  # the feed's entry id (guid)
    ],
)
def test_audit_finds_an_item_by_url(app, runner, world, key):
    result = runner.invoke(app, ["audit", key, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["item"]["id"] == world.floods


def test_audit_finds_an_item_by_dedup_key(world):
    history = audit.item_history(world.engine, "https://market.example.com/stalls")
    assert history is not None and history.item.id == world.market


def test_audit_of_unknown_item_is_one_line_and_exit_1(app, runner, world):
    for key in ("999", "https://news.example.org/never-seen"):
        result = runner.invoke(app, ["audit", key])
        assert result.exit_code == 1
        assert result.stdout == ""
        assert result.stderr == f"copydesk: error: no item matches {key!r}\n"


def test_audit_labels_a_recorded_reply(app, runner, world):
    result = runner.invoke(app, ["audit", str(world.ferry)])
    assert result.exit_code == 0, result.output
    assert "recorded reply (demo), not a live model call" in result.stdout
    assert "text origin: feed_content" in result.stdout
    assert "draft -> approved" in result.stdout
    assert "decided: maya at " in result.stdout
    doc = json.loads(runner.invoke(app, ["audit", str(world.ferry), "--json"]).stdout)
    assert doc["summariser"]["recorded_reply"] is True
    assert doc["summariser"]["label"].endswith("recorded reply (demo), not a live model call")
    assert doc["item"]["decided_by"] == "maya"
    assert [e["actor"] for e in doc["events"]][-1] == "editor:maya"


def test_audit_shows_retries_and_failed_calls(app, runner, world):
    doc = json.loads(runner.invoke(app, ["audit", str(world.bridge), "--json"]).stdout)
    assert doc["retries"] == {
        "attempts": 5,
        "next_attempt_at": None,
        "last_error": "529 overloaded_error",
    }
    assert [c["ok"] for c in doc["model_calls"]] == [False] * 5
    moves = [(e["from_status"], e["to_status"]) for e in doc["events"]]
    assert moves[:3] == [(None, "new"), ("new", "error"), ("error", "new")]
    assert moves[-2:] == [("new", "error"), ("error", "discarded")]
    text = runner.invoke(app, ["audit", str(world.bridge)]).stdout
    assert "attempts: 5" in text
    assert "error: 529 overloaded_error" in text
    assert "total: 5 call(s), 5 failed" in text


def test_audit_prints_hostile_text_literally(app, runner, world):
    with session_scope(world.engine) as s:
        item = Item(
            dedup_key="https://news.example.org/hostile",
            source_url="https://news.example.org/hostile",
            title="[bold]Quay[/bold] [/] \x1b[2J\u202eevil",
            headline="[link=https://evil.example]click[/link]",
        )
        status.create(s, item, actor="cli", reason="submitted")
        item_id = item.id
    result = runner.invoke(app, ["audit", str(item_id)])
    assert result.exit_code == 0, result.output
    assert "[bold]Quay[/bold] [/]" in result.stdout
    assert "[link=https://evil.example]click[/link]" in result.stdout
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    assert "\\u001b[2J\\u202eevil" in result.stdout


# --- discards ---------------------------------------------------------------------------------


def discards_json(app, runner, *args: str) -> dict:
    result = runner.invoke(app, ["discards", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_discards_newest_first_with_reasons_and_counts(app, runner, world):
    doc = discards_json(app, runner)
    assert [d["item_id"] for d in doc["discards"]] == [
        world.mill,
        world.bridge,
        world.floods,
        world.market,
    ]
    assert doc["total"] == 4
    by_id = {d["item_id"]: d for d in doc["discards"]}
    floods = by_id[world.floods]
    assert floods == floods | {
        "title": "Port Elsmere flood alerts draw thousands",
        "url": FLOODS_URL,
        "feed": GAZETTE,
    }
    # Only hard failures count: the flagged quote is not why it was discarded.
    assert [(g["gate"], g["reason"]) for g in floods["failed_gates"]] == [
        ("numbers_grounded", FLOODS_NUMBERS)
    ]
    assert by_id[world.bridge]["failed_gates"] == []
    assert by_id[world.bridge]["reason"] == "model failed 5 times: 529 overloaded"
    # The kind comes from the item's column, as the status machine stored it.
    kinds = {i: by_id[i]["kind"] for i in (world.floods, world.bridge, world.market)}
    assert kinds == {
        world.floods: "numbers_grounded",
        world.bridge: "model",
        world.market: "robots",
    }
    assert by_id[world.market]["feed"] is None
    assert [g["gate"] for g in by_id[world.mill]["failed_gates"]] == [
        "numbers_grounded",
        "quotes_verbatim",
    ]
    assert doc["counts"] == {"numbers_grounded": 2, "other": 2, "quotes_verbatim": 1}
    stamps = [datetime.fromisoformat(d["discarded_at"]) for d in doc["discards"]]
    assert stamps == sorted(stamps, reverse=True)


def test_discards_filtered_by_gate(app, runner, world):
    doc = discards_json(app, runner, "--gate", "numbers_grounded")
    assert [d["item_id"] for d in doc["discards"]] == [world.mill, world.floods]
    other = discards_json(app, runner, "--gate", "other")
    assert [d["item_id"] for d in other["discards"]] == [world.bridge, world.market]
    assert other["counts"] == {"other": 2}
    quotes = discards_json(app, runner, "--gate", "quotes_verbatim")
    assert [d["item_id"] for d in quotes["discards"]] == [world.mill]


def test_discards_filtered_by_feed_name_or_url(app, runner, world):
    doc = discards_json(app, runner, "--feed", COURIER)
    assert [d["item_id"] for d in doc["discards"]] == [world.mill, world.bridge]
    by_url = discards_json(app, runner, "--feed", "https://news.example.org/rss.xml")
    assert [d["item_id"] for d in by_url["discards"]] == [world.floods]


def test_discards_since_a_date_or_datetime(app, runner, world):
    week_ago = (datetime.now(UTC) - timedelta(days=7)).date().isoformat()
    doc = discards_json(app, runner, "--since", week_ago)
    assert world.market not in [d["item_id"] for d in doc["discards"]]
    assert doc["total"] == 3
    assert doc["filters"]["since"] == f"{week_ago}T00:00:00+00:00"
    long_ago = (datetime.now(UTC) - timedelta(days=60)).isoformat()
    assert discards_json(app, runner, "--since", long_ago)["total"] == 4
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S")
    assert discards_json(app, runner, "--since", tomorrow)["discards"] == []


@pytest.mark.parametrize(
    "args, message",
    [
        (["--since", "last tuesday"], "is not a date"),
        (["--since", "2026-13-01"], "is not a date"),
        (["--gate", "number_grounded"], "unknown gate 'number_grounded'"),
        (["--feed", "Nowhere Herald"], "no feed named 'Nowhere Herald'"),
    ],
)
def test_discards_bad_options_are_usage_errors(app, runner, world, args, message):
    result = runner.invoke(app, ["discards", *args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == ""


def test_discards_table_shows_items_reasons_and_counts(app, runner, world):
    result = runner.invoke(app, ["discards"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    for expected in (
        "Discarded items (4)",
        "Port Elsmere flood alerts draw thousands",
        FLOODS_URL,
        f"numbers_grounded: {FLOODS_NUMBERS}",
        "model failed 5 times: 529 overloaded",
        "robots.txt disallows https://market.example.com/stalls",
        COURIER,
        "Discards per gate",
    ):
        assert expected in text, expected
    assert "School roof repaired" not in text
    assert text.index("Weaving mill") < text.index("Old bridge") < text.index("Market stall")


def test_discards_with_nothing_to_show(app, runner, world):
    result = runner.invoke(app, ["discards", "--since", "2099-01-01"])
    assert result.exit_code == 0
    assert "No discarded items (since 2099-01-01T00:00:00+00:00)." in result.stdout


def test_parse_since_reads_dates_and_offsets():
    assert audit.parse_since("2026-11-02") == datetime(2026, 11, 2, tzinfo=UTC)
    assert audit.parse_since("2026-11-02T10:00:00+02:00") == datetime(2026, 11, 2, 8, tzinfo=UTC)
    assert audit.parse_since("2026-11-02T10:00:00Z") == datetime(2026, 11, 2, 10, tzinfo=UTC)
    with pytest.raises(ValueError):
        audit.parse_since("02/11/2026")
