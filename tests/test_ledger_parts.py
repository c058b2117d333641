"""The ledger keeps what repeats across model calls once, by content hash (issue 19 §4).

A real `copydesk run` with the real `anthropic` SDK against the loopback stand-in of
the Messages API (tests/anthropic_fake.py), on SQLite and PostgreSQL:
- the tool list, the system prompt, the fixed instructions and each article's block
  are stored once in `ledger_parts`, and the rows name them;
- `copydesk audit --full --json` shows each request exactly as the server received it;
- the ledger's stored text per article is a small multiple of the article's text.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import text
from sqlmodel import Session, select

from store import call_settings, ledger
from store.db import open_store
from store.models import CallRecord, Item, ModelCall
from store.packing import AGAINST_ITEM, pack_json, read_digest, unpack_json, unpack_text
from tests import anthropic_fake as fake_api
from tests.articles import long_articles, rss
from tests.pipeline_helpers import KEY, config_for, invoke

# Each test's database starts at the newest schema (conftest's migrated template), so
# `copydesk init` in write_config migrates nothing; what init makes is the same.
pytestmark = pytest.mark.usefixtures("migrated")

ARTICLES = 6
FULL = ("--full", "--json")


@pytest.fixture
def feed_url(httpserver):
    httpserver.expect_request("/feed.xml").respond_with_data(
        rss(long_articles(ARTICLES)), content_type="application/rss+xml"
    )
    return httpserver.url_for("/feed.xml")


def _canonical(value) -> str:  # type: ignore[no-untyped-def]
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _json(value):  # type: ignore[no-untyped-def]
    """A ledger payload read by plain SQL: packed bytes (store/packing.py)."""
    return json.loads(_text(value))


def _text(value) -> str:  # type: ignore[no-untyped-def]
    assert isinstance(value, bytes | memoryview), type(value)  # stored packed, never as text
    assert bytes(value)[1] & 0x20  # against the preset dictionary (migration 0022)
    return unpack_text(value)


def _name(stored) -> str:  # type: ignore[no-untyped-def]
    """A stored part's name in the rows (a prefix of its key, migration 0034)."""
    return ledger.short(read_digest(stored, "sha256:"))


def _run(tmp_path, db_url, feed_url, monkeypatch):  # type: ignore[no-untyped-def]
    fake = fake_api.FakeAnthropic(responder=fake_api.first_sentences_responder(), api_key=KEY)
    config = config_for(tmp_path, db_url, feed_url)
    with fake.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run", "--json")
        assert result.exit_code == 0, result.output
    return fake, config


def test_repeated_parts_are_stored_once_and_the_audit_shows_the_exact_request(
    tmp_path, db_url, feed_url, monkeypatch
) -> None:
    fake, config = _run(tmp_path, db_url, feed_url, monkeypatch)
    sent = sorted(_canonical(r.json) for r in fake.message_requests)
    assert len(sent) == 2 * ARTICLES  # a summary and a check per article

    engine = open_store(db_url)
    with engine.connect() as conn:
        stored = [
            _json(v) for v in conn.execute(text("SELECT request_json FROM model_calls")).scalars()
        ]
    # Stored packed, never as text: by itself against the preset dictionary (0022),
    # or against its item's text (an article's block, a draft's).
    stored_parts = _stored_parts(engine)
    assert all(c[:1] == AGAINST_ITEM or c[1] & 0x20 for c in stored_parts.values())
    with Session(engine) as session:
        parts = ledger.part_texts(session, session.exec(select(ModelCall)).all())
    assert set(parts) == {ledger.short(key) for key in stored_parts}  # named by a prefix
    # The rows carry references, never the repeated text itself.
    for request in stored:
        assert request["tools"] == {ledger.PART_KEY: request["tools"][ledger.PART_KEY]}
        assert isinstance(request["system"], dict)
        article_block = request["messages"][0]["content"][0]
        assert set(article_block["text"]) == {ledger.PART_KEY}
    # Tools, system, two instructions, and per article its block (sent twice) and
    # its draft's (sent once, long enough to be a part): nothing stored twice.
    assert len(parts) == 4 + 2 * ARTICLES
    for name, content in parts.items():
        assert ledger.digest(content).startswith(name)  # the key is the content's hash

    # What an auditor sees is byte for byte the request the server received.
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
    shown = []
    for item in items:
        result = invoke(config, monkeypatch, "http://127.0.0.1:9", "audit", str(item.id), *FULL)
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        shown += [_canonical(c["request_json"]) for c in doc["model_calls"]]
    assert sorted(shown) == sent
    engine.dispose()


def test_the_ledger_stores_a_small_multiple_of_the_article_text(
    tmp_path, db_url, feed_url, monkeypatch
) -> None:
    _run(tmp_path, db_url, feed_url, monkeypatch)
    engine = open_store(db_url)
    with engine.connect() as conn:
        source = sum(len(t) for t in conn.execute(select(Item.source_text)).scalars())
        calls = conn.execute(text("SELECT request_json, response_json FROM model_calls")).all()
        parts = conn.execute(text("SELECT hash, content FROM ledger_parts")).all()
    with Session(engine) as session:  # a reply is packed against its request's parts
        said = ledger.replies(session, session.exec(select(ModelCall)).all())
    engine.dispose()
    requests = sum(len(json.dumps(_json(request))) for request, _ in calls)
    replies = sum(len(json.dumps(reply)) for reply in said)
    # The parts every call shares (tools, system, the two instructions) are stored once
    # for the whole database; what grows with the articles is the rest.
    named = Counter(name for r, _ in calls for name in ledger.part_keys(_json(r)))
    per_item = [
        len(h) + len(c) for h, c in parts if named[_name(h)] <= 2
    ]  # an article's, a draft's
    assert len(per_item) == 2 * ARTICLES
    # Before: each row kept its whole request, about 7x the article's text in requests
    # alone (tools, system prompt, the article twice, the check's instruction); now
    # a row's request is its references and settings.
    assert requests / source < 1.0, (requests, source)
    assert (requests + replies + sum(per_item)) / source < 4.5, (requests, replies, per_item)
    # As stored: packed (store/packing.py, migration 0019), the ledger's bytes that
    # grow with the articles are under 2x the article's own text (3.6x unpacked).
    stored = sum(len(r) + len(p) for r, p in calls) + sum(
        len(h) + len(c) for h, c in parts if named[_name(h)] <= 2
    )
    assert stored / source < 2.0, (stored, source)


def test_a_row_without_references_reads_as_it_was_stored(sqlite_url) -> None:
    """Rows written before the parts table keep their full request and read unchanged."""
    engine = open_store(sqlite_url)
    request = {"model": "m", "system": "S" * 400, "messages": [{"role": "user", "content": "hi"}]}
    with Session(engine) as session:
        connection = session.connection()
        row = call_settings.model_call(
            connection, backend="anthropic:m", request_json=request, response_json={}
        )
        session.add(row)
        session.commit()
        [call] = session.exec(select(ModelCall)).all()
        assert ledger.requests(session, [call]) == [request]
    engine.dispose()


def test_a_missing_part_is_named_not_a_crash(sqlite_url) -> None:
    engine = open_store(sqlite_url)
    skeleton = {"model": "m", "system": {ledger.PART_KEY: "sha256:" + "0" * 64}}
    with Session(engine) as session:
        connection = session.connection()
        session.add(
            call_settings.model_call(connection, backend="anthropic:m", request_json=skeleton)
        )
        session.commit()
        [call] = session.exec(select(ModelCall)).all()
        [shown] = ledger.requests(session, [call])
    assert shown["system"] == {ledger.PART_KEY: "sha256:" + "0" * 64, "missing": True}
    engine.dispose()


def test_a_reply_is_packed_against_its_own_request_and_the_audit_shows_it_exactly(
    tmp_path, db_url, feed_url, monkeypatch
) -> None:
    # A reply quotes what it was sent: the check's passages are the article's words,
    # its sentences the draft's. Packed against the request's own parts (stored once,
    # never changed), a reply stores only what is new in it.
    replies: list[Any] = []
    grounded = fake_api.first_sentences_responder()

    def responder(request_json: Any) -> Any:
        reply = grounded(request_json)
        replies.append(reply.body)  # type: ignore[union-attr]
        return reply

    fake = fake_api.FakeAnthropic(responder=responder, api_key=KEY)
    config = config_for(tmp_path, db_url, feed_url)
    with fake.serve() as base_url:
        result = invoke(config, monkeypatch, base_url, "run", "--json")
        assert result.exit_code == 0, result.output
    assert len(replies) == 2 * ARTICLES

    engine = open_store(db_url)
    with engine.connect() as conn:
        stored = [
            bytes(v) for v in conn.execute(text("SELECT response_json FROM model_calls")).scalars()
        ]
    alone = sum(len(pack_json(reply)) for reply in replies)  # each packed by itself
    assert sum(map(len, stored)) < 0.7 * alone, (sum(map(len, stored)), alone)

    # What an auditor sees is each reply exactly as the server sent it.
    with Session(engine) as session:
        items = session.exec(select(Item)).all()
        calls = session.exec(select(ModelCall)).all()
        assert sorted(map(_canonical, ledger.replies(session, calls))) == sorted(
            map(_canonical, replies)
        )
    shown = []
    for item in items:
        result = invoke(config, monkeypatch, "http://127.0.0.1:9", "audit", str(item.id), *FULL)
        assert result.exit_code == 0, result.output
        shown += [_canonical(c["response_json"]) for c in json.loads(result.stdout)["model_calls"]]
    assert sorted(shown) == sorted(map(_canonical, replies))
    engine.dispose()


def _stored_parts(engine) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT hash, content FROM ledger_parts")).all()
    return {read_digest(h, "sha256:"): bytes(c) for h, c in rows}


def test_an_article_s_parts_are_packed_against_its_own_stored_text(
    tmp_path, db_url, feed_url, monkeypatch
) -> None:
    # The article's block (sent twice) quotes the item's source text word for word,
    # and its draft's block reuses the article's words: stored against the item's
    # text (already in `items`), each keeps only what it adds to it.
    _run(tmp_path, db_url, feed_url, monkeypatch)
    engine = open_store(db_url)
    with Session(engine) as session:
        source = sum(len(i.source_text or "") for i in session.exec(select(Item)).all())
        calls = session.exec(select(ModelCall)).all()
        named = Counter(key for call in calls for key in ledger.part_keys(call.request_json))
    per_item = [c for key, c in _stored_parts(engine).items() if named[ledger.short(key)] <= 2]
    assert len(per_item) == 2 * ARTICLES  # an article's block, a draft's
    # Before: about 0.35x (each block packed by itself: an article's is most of its text).
    assert sum(map(len, per_item)) / source < 0.1, (sum(map(len, per_item)), source)
    engine.dispose()


def test_a_part_whose_item_text_changed_is_named_missing_not_misread(
    tmp_path, db_url, feed_url, monkeypatch
) -> None:
    # A source text is never rewritten today; if one ever were, the article's part
    # could not be read against it: the audit names the part missing (zlib checks
    # the dictionary's Adler-32, the ledger the part's SHA-256), never a wrong text.
    _, config = _run(tmp_path, db_url, feed_url, monkeypatch)
    engine = open_store(db_url)
    with Session(engine) as session:
        item = session.exec(select(Item).order_by(Item.id)).first()
        assert item is not None and item.source_text
        item.source_text = item.source_text.replace("the", "a")
        session.add(item)
        session.commit()
        item_id = item.id
    engine.dispose()
    result = invoke(config, monkeypatch, "http://127.0.0.1:9", "audit", str(item_id), *FULL)
    assert result.exit_code == 0, result.output
    blocks = [
        c["request_json"]["messages"][0]["content"][0]["text"]
        for c in json.loads(result.stdout)["model_calls"]
    ]
    assert len(blocks) == 2
    for block in blocks:
        assert isinstance(block, dict) and block["missing"] is True, block


def test_a_row_names_its_parts_by_a_short_prefix_of_their_keys(
    tmp_path, db_url, feed_url, monkeypatch
) -> None:
    # A full key is 64 hex digits zlib cannot shrink below about 32 bytes, and a
    # request names four or five parts: most of its packed row. A 64-bit prefix
    # finds the part as surely at a desk's scale (a shared prefix is named missing).
    fake, config = _run(tmp_path, db_url, feed_url, monkeypatch)
    engine = open_store(db_url)
    with engine.connect() as conn:
        stored = [
            bytes(r) for r in conn.execute(text("SELECT request_json FROM model_calls")).scalars()
        ]
    engine.dispose()
    names = [name for r in stored for name in ledger.part_keys(unpack_json(r))]
    assert names and all(len(name) == len("sha256:") + 16 for name in names), names
    # Before: about 205 bytes a packed request; the names shortened, under 130.
    assert sum(map(len, stored)) / len(stored) < 130, [len(r) for r in stored]


def test_a_call_s_settings_are_stored_once_and_read_as_the_row_s_own(db_url) -> None:
    """Issue 19 §4: the settings every call of a run shares are one `call_settings` row
    (NULLs included: an extractive call has no model); each row reads them back, and a
    query by purpose finds the rows."""
    engine = open_store(db_url)
    anthropic = {
        "backend": "anthropic:claude-haiku-4-5",
        "model": "claude-haiku-4-5-20251001",
        "api_version": "2023-06-01",
        "temperature": 0.0,
        "prompt_version": "summary-v2",
        "prompt_hash": "sha256:" + "7a" * 32,
    }
    calls = [
        CallRecord(**anthropic, input_tokens=10),
        CallRecord(**anthropic, input_tokens=20),
        CallRecord(**anthropic, purpose="checks", input_tokens=30),
        CallRecord(backend="extractive", input_tokens=40),
        CallRecord(backend="extractive", input_tokens=50),
    ]
    with Session(engine) as session:
        ledger.add(session, calls[:3], item_id=None, run_id=None)
        session.commit()
    with Session(engine) as session:  # a second transaction finds the rows already there
        ledger.add(session, calls[3:], item_id=None, run_id=None)
        session.commit()
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM call_settings")).scalar() == 3
        columns = set(conn.execute(text("SELECT * FROM model_calls")).keys())
        assert "settings_id" in columns and not columns & set(call_settings.NAMES)
    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        assert [(r.purpose, r.model, r.prompt_hash, r.input_tokens) for r in rows] == [
            ("summary", anthropic["model"], anthropic["prompt_hash"], 10),
            ("summary", anthropic["model"], anthropic["prompt_hash"], 20),
            ("checks", anthropic["model"], anthropic["prompt_hash"], 30),
            ("summary", None, None, 40),
            ("summary", None, None, 50),
        ]
        checks = session.exec(select(ModelCall.input_tokens).where(ModelCall.purpose == "checks"))
        assert checks.all() == [30]
    engine.dispose()
