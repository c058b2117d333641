"""Issue 24: completing a model call's ledger row costs one UPDATE, on SQLite and
PostgreSQL.

Every model call's row is written before its request goes out (state "in_flight",
`ledger.begin`), then completed by the writer with the outcome. Completing it used
to load the whole row first (request and response unpacked) and merge the new one
into it through the ORM: a SELECT and the ORM's bookkeeping per call, the largest
share of the writer's CPU in the model path. Counted in SQL statements (exact), not
time; and the completed row must read exactly as the merged one did."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import event
from sqlalchemy.exc import OperationalError
from sqlmodel import Session, select

from store import ledger
from store import status as st
from store.db import session_scope
from store.models import CallRecord, Item, LedgerPart, ModelCall

ARTICLE = (
    "The harbour board of Wendle Cross voted on Tuesday to dredge the north channel "
    "for the first time in 14 years, the board's chair Ottilie Fraine said. "
) * 4
TOOLS = [{"name": "write_summary", "description": "Write the summary.", "input_schema": {}}]


def _request(n: int) -> dict:
    return {
        "model": "claude-haiku-4-5",
        "max_tokens": 400,
        "system": "You reformulate the article you are given and add nothing to it. " * 3,
        "tools": TOOLS,
        "messages": [{"role": "user", "content": [{"type": "text", "text": f"{n}. {ARTICLE}"}]}],
    }


def _record(n: int, **fields) -> CallRecord:  # type: ignore[no-untyped-def]
    return CallRecord(
        backend="anthropic", model="claude-haiku-4-5", request_json=_request(n), **fields
    )


def _item(engine) -> int:  # type: ignore[no-untyped-def]
    with session_scope(engine) as session:
        url = "https://wendle.example.test/harbour"
        item = Item(dedup_key=url, source_url=url, title="Harbour board to dredge")
        st.create(session, item, actor="cli", reason="seen")
        return item.id  # type: ignore[return-value]


def _statements(engine, work) -> list[str]:  # type: ignore[no-untyped-def]
    seen: list[str] = []

    def note(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        seen.append(" ".join(statement.split()))

    event.listen(engine, "before_cursor_execute", note)
    try:
        work()
    finally:
        event.remove(engine, "before_cursor_execute", note)
    return seen


def _journal(engine, slug: str, title: str):  # type: ignore[no-untyped-def]
    """A `new` item whose text is ARTICLE, and a worker's call journal for it (the
    model thread's `InFlight`): (journal, item id, version, url)."""
    from copydesk.services.pipeline.draft import InFlight
    from copydesk.services.pipeline.handoff import Job
    from copydesk.services.pipeline.state import RunState

    url = f"https://wendle.example.test/{slug}"
    with session_scope(engine) as session:
        item = Item(dedup_key=url, source_url=url, title=title, source_text=ARTICLE)
        st.create(session, item, actor="cli", reason="seen")
        item_id, version = item.id, item.version
    journal = InFlight(
        RunState(settings=None, engine=engine),  # type: ignore[arg-type]
        Job(item_id, version, url, url, title, True, 0, None),
    )
    return journal, item_id, version, url


def _on(table: str, statements: list[str]) -> list[str]:
    return [s for s in statements if re.search(rf"\b{table}\b", s)]


def test_completing_begun_calls_is_one_update_for_all_and_reads_as_before(engine) -> None:
    item_id = _item(engine)
    begun = []
    for n in range(3):
        with session_scope(engine) as session:
            in_flight = _record(n, ok=False, error="in flight", state=ledger.IN_FLIGHT)
            begun.append(ledger.begin(session, in_flight, item_id=item_id, run_id=None))
    with Session(engine) as session:
        created = {c.id: c.created_at for c in session.exec(select(ModelCall))}

    done = []
    for n, row_id in enumerate(begun):
        record = _record(
            n,
            request_id=f"req_wendle_{n}",
            input_tokens=900 + n,
            output_tokens=120,
            latency_ms=410,
            stop_reason="tool_use",
            cost_usd=0.0015,
            response_json={"id": f"msg_{n}", "content": [{"type": "text", "text": "Dredging."}]},
        )
        record._row_id = row_id
        done.append(record)

    def complete() -> None:
        with session_scope(engine) as session:
            ledger.add(session, done, item_id=item_id, run_id=None)

    executions: list[tuple[str, int]] = []

    def note(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        if re.search(r"\bmodel_calls\b", statement):
            executions.append((statement.split()[0], len(parameters) if executemany else 1))

    event.listen(engine, "before_cursor_execute", note)
    try:
        sent = _statements(engine, complete)
    finally:
        event.remove(engine, "before_cursor_execute", note)
    # Before session 10: a SELECT of the whole row (request and response unpacked) for
    # each call, then the ORM's UPDATE; before session 12, one UPDATE per call. Now
    # one UPDATE sent once for all of them (an executemany: on PostgreSQL one round
    # trip, psycopg's pipeline; issue 24, session 12).
    assert executions == [("UPDATE", 3)], executions
    assert len(_on("ledger_parts", sent)) <= 1  # the parts in one statement, if any

    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        requests = ledger.requests(session, rows)
        replies = ledger.replies(session, rows)  # packed against the request's parts
        parts = session.exec(select(LedgerPart.hash)).all()
    assert [r.id for r in rows] == begun  # completed, not added
    assert [r.state for r in rows] == [ledger.DONE] * 3
    assert [r.ok for r in rows] == [True] * 3
    assert [r.error for r in rows] == [None] * 3
    assert [r.request_id for r in rows] == ["req_wendle_0", "req_wendle_1", "req_wendle_2"]
    assert [r.input_tokens for r in rows] == [900, 901, 902]
    assert replies == [call.response_json for call in done]
    assert [r.item_id for r in rows] == [item_id] * 3
    assert {r.id: r.created_at for r in rows} == created  # the row's time is its begin's
    assert requests == [_request(n) for n in range(3)]  # reassembled exactly as sent
    assert len(parts) == 2 + 3  # tools and system once, one article block per call


def test_a_completion_whose_row_is_gone_is_still_a_row(engine) -> None:
    """A row id that names no row (never begun in this database) adds the call: every
    call is a row."""
    item_id = _item(engine)
    record = _record(7, request_id="req_wendle_7", input_tokens=5, output_tokens=5)
    record._row_id = 424242
    with session_scope(engine) as session:
        ledger.add(session, [record], item_id=item_id, run_id=None)
    with Session(engine) as session:
        rows = session.exec(select(ModelCall)).all()
        assert [r.request_id for r in rows] == ["req_wendle_7"]
        assert ledger.requests(session, rows) == [_request(7)]


def test_beginning_a_call_reads_its_item_once_and_keeps_the_fence(engine) -> None:
    """Before each model call the worker checks its claim and writes the call's row in
    flight (`InFlight.begin`). The claim check and the packing of the call's parts
    against the item's text read the same row: one SELECT of items, not two (issue 24,
    session 10). The parts still pack against the item's text, and a worker that no
    longer holds the item still sends nothing and writes no row."""
    from copydesk.services.pipeline.draft import InFlight
    from copydesk.services.pipeline.handoff import Job
    from copydesk.services.pipeline.state import RunState
    from summarise.base import LeaseLost

    with session_scope(engine) as session:
        url = "https://wendle.example.test/harbour"
        item = Item(dedup_key=url, source_url=url, title="Harbour", source_text=ARTICLE)
        st.create(session, item, actor="cli", reason="seen")
        item_id, version = item.id, item.version
    job = Job(item_id, version, url, url, "Harbour", True, 0, None)
    call = _record(0, ok=False, error="in flight", state=ledger.IN_FLIGHT)
    call.request_json["messages"][0]["content"][0]["text"] = ARTICLE  # quotes the item
    journal = InFlight(RunState(settings=None, engine=engine), job)  # type: ignore[arg-type]

    sent = _statements(engine, lambda: journal.begin(call))
    assert len([s for s in _on("items", sent) if s.startswith("SELECT")]) == 1, sent

    with Session(engine) as session:
        rows = session.exec(select(ModelCall)).all()
        assert ledger.requests(session, rows) == [call.request_json]
        stored = session.exec(select(LedgerPart.content)).all()
    assert not any(ARTICLE.strip() in str(content) for content in stored)  # packed against it

    stale = InFlight(
        RunState(settings=None, engine=engine),
        Job(item_id, version + 1, url, url, "Harbour", True, 0, None),
    )  # type: ignore[arg-type]
    try:
        stale.begin(call)
    except LeaseLost:
        pass
    else:
        raise AssertionError("a worker that lost the item's claim began a call")
    with Session(engine) as session:
        assert len(session.exec(select(ModelCall)).all()) == 1


def test_completing_begun_calls_stores_no_parts_again(engine) -> None:
    """A begun call's parts were stored with its row, in `begin`'s transaction, and
    its completed record carries the same request: completing it neither stores the
    parts again nor reads the item's text to pack them (issue 24, session 11: the
    writer sent an INSERT into ledger_parts and a SELECT of items per batch of calls
    that changed nothing). The requests still read back exactly as sent, the parts
    packed against the item's text."""
    with session_scope(engine) as session:
        url = "https://wendle.example.test/harbour"
        item = Item(dedup_key=url, source_url=url, title="Harbour", source_text=ARTICLE)
        st.create(session, item, actor="cli", reason="seen")
        item_id = item.id
    sent_requests, done = [], []
    for n in range(2):
        in_flight = _record(n, ok=False, error="in flight", state=ledger.IN_FLIGHT)
        in_flight.request_json["messages"][0]["content"][0]["text"] = ARTICLE + f"({n})"
        with session_scope(engine) as session:
            row_id = ledger.begin(session, in_flight, item_id=item_id, run_id=None)
        record = _record(n, request_id=f"req_wendle_{n}", input_tokens=9, output_tokens=3)
        record.request_json = in_flight.request_json
        record._row_id = row_id
        sent_requests.append(in_flight.request_json)
        done.append(record)
    with Session(engine) as session:
        parts_before = session.exec(select(LedgerPart.hash)).all()

    def complete() -> None:
        with session_scope(engine) as session:
            ledger.add(session, done, item_id=item_id, run_id=None)

    sent = _statements(engine, complete)
    assert _on("ledger_parts", sent) == [], sent
    assert _on("items", sent) == [], sent
    assert [s.split()[0] for s in _on("model_calls", sent)] == ["UPDATE"]  # one executemany

    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        assert [r.request_id for r in rows] == ["req_wendle_0", "req_wendle_1"]
        assert ledger.requests(session, rows) == sent_requests
        assert session.exec(select(LedgerPart.hash)).all() == parts_before
        stored = session.exec(select(LedgerPart.content)).all()
    assert not any(ARTICLE.strip()[:80] in str(content) for content in stored)


def test_completions_whose_rows_are_partly_gone_update_the_rest_and_add_the_others(engine) -> None:
    """Completions sent as one UPDATE for all (issue 24, session 12): when one of the
    rows is gone, the UPDATE's row count says so, the rows still there are completed
    and the call without a row becomes one. Every call is a row, none twice."""
    item_id = _item(engine)
    with session_scope(engine) as session:
        in_flight = _record(0, ok=False, error="in flight", state=ledger.IN_FLIGHT)
        begun = ledger.begin(session, in_flight, item_id=item_id, run_id=None)
    done = []
    for n, row_id in enumerate([begun, 515151, None]):
        record = _record(n, request_id=f"req_wendle_{n}", input_tokens=5, output_tokens=5)
        record._row_id = row_id
        done.append(record)
    with session_scope(engine) as session:
        ledger.add(session, done, item_id=item_id, run_id=None)
    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        assert sorted(r.request_id for r in rows) == [
            "req_wendle_0",
            "req_wendle_1",
            "req_wendle_2",
        ]
        assert rows[0].id == begun and rows[0].state == ledger.DONE
        assert ledger.requests(session, rows) == [_request(n) for n in range(3)]


def test_a_calls_settings_are_looked_up_once_they_are_committed(engine) -> None:
    """Every call of a run is made with one of a few sets of settings, stored once
    (store/call_settings.py): once their row's id has been seen in a committed
    transaction, a call neither before its request (`begin`) nor as it completes
    (`add`) reads call_settings again (issue 24, session 12: two SELECTs a call, four
    an article). The rows still name their settings."""
    item_id = _item(engine)
    with session_scope(engine) as session:  # the first call: its settings written
        first = ledger.begin(
            session, _record(0, ok=False, state=ledger.IN_FLIGHT), item_id=item_id, run_id=None
        )
    done = [_record(0, request_id="req_wendle_0", input_tokens=5, output_tokens=5)]
    done[0]._row_id = first

    def second() -> None:
        with session_scope(engine) as session:
            row_id = ledger.begin(
                session, _record(1, ok=False, state=ledger.IN_FLIGHT), item_id=item_id, run_id=None
            )
        done.append(_record(1, request_id="req_wendle_1", input_tokens=5, output_tokens=5))
        done[-1]._row_id = row_id
        with session_scope(engine) as session:
            ledger.add(session, done, item_id=item_id, run_id=None)

    sent = _statements(engine, second)
    assert _on("call_settings", sent) == [], sent
    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        assert [(r.model, r.backend, r.purpose) for r in rows] == [
            ("claude-haiku-4-5", "anthropic", "summary")
        ] * 2


def test_settings_written_in_a_transaction_rolled_back_are_not_remembered(engine) -> None:
    """A settings row written in a transaction that rolls back (the whole of it, or
    its savepoint) is gone: the next call with those settings writes it again, and its
    row names it (a remembered id would name no row: the foreign key refuses it)."""
    item_id = _item(engine)

    def call(n: int, model: str) -> CallRecord:
        record = _record(n, ok=False, state=ledger.IN_FLIGHT)
        record.model = model
        return record

    try:
        with session_scope(engine) as session:
            ledger.begin(session, call(0, "model-rolled-back"), item_id=item_id, run_id=None)
            raise RuntimeError("the transaction fails after the settings were written")
    except RuntimeError:
        pass
    with session_scope(engine) as session:
        with session.begin_nested() as savepoint:
            ledger.begin(session, call(1, "model-in-a-savepoint"), item_id=item_id, run_id=None)
            savepoint.rollback()
    with session_scope(engine) as session:
        for n, model in enumerate(["model-rolled-back", "model-in-a-savepoint"]):
            ledger.begin(session, call(n, model), item_id=item_id, run_id=None)
    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        assert [r.model for r in rows] == ["model-rolled-back", "model-in-a-savepoint"]


def test_an_items_later_calls_are_fenced_in_their_insert(engine) -> None:
    """An item's first model call checks the claim and reads the item's text in one
    SELECT (`InFlight.begin`); its later calls (the check after the summary) reuse
    that text and put the fence in the call's INSERT itself (`INSERT ... SELECT ...
    WHERE` the claim still holds: issue 24, session 12), one statement fewer a call.
    The fence still holds: once the item is another run's (its version bumped) or no
    longer waiting, a call writes no row and sends nothing (`LeaseLost`)."""
    from sqlalchemy import update

    from summarise.base import LeaseLost

    journal, item_id, version, url = _journal(engine, "harbour", "Harbour")

    def call(n: int) -> CallRecord:
        record = _record(n, ok=False, error="in flight", state=ledger.IN_FLIGHT)
        record.request_json["messages"][0]["content"][0]["text"] = ARTICLE + f" ({n})"
        return record

    first = _statements(engine, lambda: journal.begin(call(0)))
    assert len([s for s in _on("items", first) if s.startswith("SELECT")]) == 1, first
    second = _statements(engine, lambda: journal.begin(call(1)))
    # The call, fenced; its parts (on PostgreSQL in the same statement: session 16).
    fenced = ["WITH"] if engine.dialect.name == "postgresql" else ["INSERT", "INSERT"]
    assert [s.split()[0] for s in second if not s.startswith("SELECT 1")] == fenced, second
    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        assert ledger.requests(session, rows) == [call(0).request_json, call(1).request_json]
        stored = session.exec(select(LedgerPart.content)).all()
    assert not any(ARTICLE.strip()[:80] in str(content) for content in stored)  # packed

    items = Item.__table__
    for lost in ({"version": version + 1}, {"status": st.DISCARDED}):
        with session_scope(engine) as session:
            session.connection().execute(update(items).where(items.c.id == item_id).values(**lost))
        try:
            journal.begin(call(2))
        except LeaseLost:
            pass
        else:
            raise AssertionError(f"a call was begun on an item no longer held: {lost}")
        with session_scope(engine) as session:
            session.connection().execute(
                update(items).where(items.c.id == item_id).values(version=version, status=st.NEW)
            )
    with Session(engine) as session:
        assert len(session.exec(select(ModelCall)).all()) == 2


def test_settings_are_trusted_only_once_their_commit_has_returned(engine) -> None:
    """The "commit" event comes before the database's COMMIT: an id remembered there
    was handed to other threads while its row was not yet committed, and their rows
    naming it were refused by the foreign key (an IntegrityError in one of 640 calls
    of a PostgreSQL bench run, issue 24, session 12). Until COMMIT has returned, no
    other transaction is told the id; a commit that fails tells none."""
    from store import call_settings

    item_id = _item(engine)
    seen_during_commit: list[bool] = []

    def during_commit(conn) -> None:  # type: ignore[no-untyped-def]
        seen_during_commit.append(bool(call_settings.committed_ids(engine)))

    event.listen(engine, "commit", during_commit)  # after remember_committed's own
    try:
        with session_scope(engine) as session:
            ledger.begin(
                session, _record(0, ok=False, state=ledger.IN_FLIGHT), item_id=item_id, run_id=None
            )
    finally:
        event.remove(engine, "commit", during_commit)
    assert seen_during_commit == [False]
    assert len(call_settings.committed_ids(engine)) == 1  # once COMMIT has returned

    dialect, do_commit = engine.dialect, engine.dialect.do_commit

    def failing_commit(dbapi_connection) -> None:  # type: ignore[no-untyped-def]
        raise dialect.loaded_dbapi.OperationalError("the COMMIT fails")

    record = _record(1, ok=False, state=ledger.IN_FLIGHT)
    record.model = "model-whose-commit-fails"
    dialect.do_commit = failing_commit  # type: ignore[method-assign]
    try:
        with pytest.raises(OperationalError), session_scope(engine) as session:
            ledger.begin(session, record, item_id=item_id, run_id=None)
    finally:
        dialect.do_commit = do_commit  # type: ignore[method-assign]
    assert len(call_settings.committed_ids(engine)) == 1


def test_parts_seen_committed_are_not_packed_or_sent_again(engine) -> None:
    """A request's parts are stored once by their hash and never changed or deleted
    (the runtime role may only insert them: store/db.py `RUNTIME_TABLE_RIGHTS`). An
    engine keeps the hashes it has seen committed (store/committed.py), so a call
    whose tools and system prompt are stored already packs and sends only its new
    part (issue 24, session 13: every part of every call was packed twice, against
    the item's text and alone, then sent to be skipped). A part written in a
    transaction that rolled back is not trusted: it is written again."""
    item_id = _item(engine)
    inserted: list[int] = []

    def note(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        if statement.lstrip().upper().startswith("INSERT") and "ledger_parts" in statement:
            inserted.append(len(parameters) if executemany else 1)

    def begin(n: int) -> None:
        with session_scope(engine) as session:
            ledger.begin(
                session, _record(n, ok=False, state=ledger.IN_FLIGHT), item_id=item_id, run_id=None
            )

    event.listen(engine, "before_cursor_execute", note)
    try:
        begin(0)  # tools, system prompt and article block: all new
        assert inserted == [3], inserted
        begin(1)  # only the article block is new
        assert inserted == [3, 1], inserted  # failed before: [3, 3]
        begin(1)  # nothing new: no statement
        assert inserted == [3, 1], inserted
        try:
            with session_scope(engine) as session:
                ledger.begin(
                    session,
                    _record(2, ok=False, state=ledger.IN_FLIGHT),
                    item_id=item_id,
                    run_id=None,
                )
                raise RuntimeError("rolled back after its part was written")
        except RuntimeError:
            pass
        begin(2)  # its article block again: the rolled-back row is gone
        assert inserted == [3, 1, 1, 1], inserted
    finally:
        event.remove(engine, "before_cursor_execute", note)
    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        assert ledger.requests(session, rows) == [_request(n) for n in (0, 1, 1, 2)]
        assert len(session.exec(select(LedgerPart.hash)).all()) == 2 + 3


def test_a_begun_calls_request_is_split_once_not_again_as_it_completes(engine, calls_of) -> None:
    """A call's request is split into its parts (their canonical JSON and SHA-256)
    when its row is begun; the completion carries the same request, so the writer
    takes that split from the engine's memory of the calls it began instead of making
    it again (issue 24, session 13: about 0.2 ms of CPU a call in the run's writer).
    The rows read back as before; a call this process did not begin is split as ever."""
    item_id = _item(engine)
    done = []
    for n in range(2):
        with session_scope(engine) as session:
            row_id = ledger.begin(
                session, _record(n, ok=False, state=ledger.IN_FLIGHT), item_id=item_id, run_id=None
            )
        record = _record(
            n,
            request_id=f"req_wendle_{n}",
            response_json={"id": f"msg_{n}", "content": [{"type": "text", "text": ARTICLE[:200]}]},
        )
        record._row_id = row_id
        done.append(record)
    stranger = _record(9, request_id="req_wendle_9")
    stranger._row_id = 987654  # begun by no one here: split, and added as a row

    splits = calls_of(ledger, "split")
    with session_scope(engine) as session:
        ledger.add(session, [*done, stranger], item_id=item_id, run_id=None)
    assert splits[0] == 1, splits[0]  # failed before: 3, the begun ones split again

    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        assert [r.request_id for r in rows] == ["req_wendle_0", "req_wendle_1", "req_wendle_9"]
        assert [r.state for r in rows[:2]] == [ledger.DONE] * 2
        assert ledger.requests(session, rows) == [_request(n) for n in (0, 1, 9)]
        assert ledger.replies(session, rows) == [c.response_json for c in [*done, stranger]]


def test_a_model_calls_journal_writes_through_a_plain_connection(engine) -> None:
    """Before each model request the worker checks its claim and writes the call's row
    (`InFlight.begin`), twice an article: through a plain connection's transaction now,
    not an ORM session built, begun and closed for Core statements (issue 24, session
    13: about twice the CPU of the transaction itself on PostgreSQL). The rows, their
    parts and the fence are as before: a lost claim still writes nothing."""
    from sqlalchemy.orm import Session as OrmSession

    from copydesk.services.pipeline.draft import InFlight
    from copydesk.services.pipeline.handoff import Job
    from copydesk.services.pipeline.state import RunState
    from summarise.base import LeaseLost

    journal, item_id, version, url = _journal(engine, "weir", "Weir")
    calls = [_record(n, ok=False, state=ledger.IN_FLIGHT) for n in range(2)]
    for call in calls:
        call.request_json["messages"][0]["content"][0]["text"] = ARTICLE  # quotes the item
    begun = [0]

    def count(*args: object) -> None:
        begun[0] += 1

    event.listen(OrmSession, "after_begin", count)
    try:
        row_ids = [journal.begin(call) for call in calls]  # the claim check, then the fence
    finally:
        event.remove(OrmSession, "after_begin", count)
    assert begun[0] == 0, begun[0]  # failed before: 2, one a call

    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        assert [r.id for r in rows] == row_ids
        assert ledger.requests(session, rows) == [c.request_json for c in calls]
    stale = InFlight(
        RunState(settings=None, engine=engine),  # type: ignore[arg-type]
        Job(item_id, version + 1, url, url, "Weir", True, 0, None),
    )
    for _ in range(2):  # the first call (claim check) and a later one (fenced INSERT)
        try:
            stale.begin(_record(5, ok=False, state=ledger.IN_FLIGHT))
        except LeaseLost:
            stale.source = ARTICLE  # as if its first call had read the text
        else:
            raise AssertionError("a worker that lost the item's claim began a call")
    with Session(engine) as session:
        assert len(session.exec(select(ModelCall)).all()) == 2


def test_a_calls_row_takes_its_fields_without_serialising_the_record(
    engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call's row values are its record's fields as they are (`vars`: request and
    reply are only read), not pydantic's `model_dump`, which copied the request and
    the reply, nested, for every call: twice a call (its begin, its completion), about
    40 us each on a check call's reply (issue 24, session 15). The rows read as sent."""
    dumped: list[object] = []
    model_dump = CallRecord.model_dump

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        dumped.append(self)
        return model_dump(self, *args, **kwargs)

    monkeypatch.setattr(CallRecord, "model_dump", counted)
    item_id = _item(engine)
    reply = {"id": "msg_9", "content": [{"type": "text", "text": "The board will dredge."}]}
    with session_scope(engine) as session:
        begun = _record(9, ok=False, error="in flight", state=ledger.IN_FLIGHT)
        row_id = ledger.begin(session, begun, item_id=item_id, run_id=None)
    done = _record(9, request_id="req_9", ok=True, response_json=reply, input_tokens=7)
    done._row_id = row_id
    never_begun = _record(10, request_id="req_10", ok=True, response_json=reply)
    with session_scope(engine) as session:
        ledger.add(session, [done, never_begun], item_id=item_id, run_id=None)

    assert dumped == []
    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        assert ledger.requests(session, rows) == [_request(9), _request(10)]
        assert ledger.replies(session, rows) == [reply, reply]
    assert [(r.id == row_id, r.state, r.request_id, r.input_tokens) for r in rows] == [
        (True, ledger.DONE, "req_9", 7),
        (False, ledger.DONE, "req_10", None),
    ]
    assert (done.response_json, done.request_json) == (reply, _request(9))  # unchanged


def test_the_first_call_on_an_item_with_no_stored_text_is_fenced_in_its_insert(
    engine,
) -> None:
    """An item claimed with no stored text (a page to fetch) has none until its outcome
    is committed, after its model calls (the claim keeps every other writer away): its
    first call has nothing to read, and is fenced in its INSERT as a later call is
    (issue 24, session 15: a SELECT of the item an article less). The fence holds: a
    first call on an item no longer held writes nothing and raises `LeaseLost`."""
    from sqlalchemy import update

    from copydesk.services.pipeline.draft import InFlight
    from copydesk.services.pipeline.handoff import Job
    from copydesk.services.pipeline.state import RunState
    from summarise.base import LeaseLost

    def journal_of(slug: str) -> tuple[InFlight, int]:
        url = f"https://wendle.example.test/{slug}"
        with session_scope(engine) as session:
            item = Item(dedup_key=url, source_url=url, title=slug)  # no text yet
            st.create(session, item, actor="cli", reason="seen")
            job = Job(item.id, item.version, url, url, slug, False, 0, None)
        return InFlight(RunState(settings=None, engine=engine), job), job.item_id  # type: ignore[arg-type]

    warm, _ = journal_of("quay")  # the call's settings row, looked up once an engine
    warm.begin(_record(2, ok=False, error="in flight", state=ledger.IN_FLIGHT))
    journal, item_id = journal_of("lock")
    call = _record(0, ok=False, error="in flight", state=ledger.IN_FLIGHT)
    sent = _statements(engine, lambda: journal.begin(call))
    # The call, fenced; its parts (on PostgreSQL in the same statement: session 16).
    fenced = ["WITH"] if engine.dialect.name == "postgresql" else ["INSERT", "INSERT"]
    assert [s.split()[0] for s in sent if not s.startswith("SELECT 1")] == fenced, sent
    with Session(engine) as session:
        rows = session.exec(select(ModelCall).where(ModelCall.item_id == item_id)).all()
        assert ledger.requests(session, rows) == [call.request_json]
        assert [r.state for r in rows] == [ledger.IN_FLIGHT]

    lost, lost_id = journal_of("weir")
    items = Item.__table__
    with session_scope(engine) as session:
        session.connection().execute(update(items).where(items.c.id == lost_id).values(version=9))
    with pytest.raises(LeaseLost):
        lost.begin(_record(1, ok=False, error="in flight", state=ledger.IN_FLIGHT))
    with Session(engine) as session:
        assert len(session.exec(select(ModelCall)).all()) == 2  # the warm-up's, the first


def test_on_postgresql_a_fenced_calls_new_parts_go_in_its_insert(engine) -> None:
    """Issue 24 (session 16): on PostgreSQL a model call's row and its new parts (the
    article's block, the draft to check) are written by one statement, a round trip
    less a call (two an article); on SQLite, whose statements cost no round trip,
    still two. The rows are the same, and a call on an item no longer held writes
    neither its row nor its parts."""
    from sqlalchemy import update

    from summarise.base import LeaseLost

    def in_flight(n: int) -> CallRecord:
        return _record(n, ok=False, error="in flight", state=ledger.IN_FLIGHT)

    journal, item_id, _, _ = _journal(engine, "lock", "Lock gates to close")
    first = in_flight(10)
    journal.begin(first)  # reads the claim and the text; later calls are fenced
    call = in_flight(11)  # a new part: its message
    sent = _statements(engine, lambda: journal.begin(call))
    writes = [s for s in sent if s.split()[0] in ("INSERT", "WITH")]
    assert len(writes) == (1 if engine.dialect.name == "postgresql" else 2), sent
    with Session(engine) as session:
        rows = session.exec(
            select(ModelCall).where(ModelCall.item_id == item_id).order_by(ModelCall.id)
        ).all()
        assert ledger.requests(session, rows) == [first.request_json, call.request_json]
        assert [r.state for r in rows] == [ledger.IN_FLIGHT] * 2
        parts = len(session.exec(select(LedgerPart)).all())

    lost, lost_id, _, _ = _journal(engine, "weir", "Weir to be rebuilt")
    lost.begin(in_flight(12))
    items = Item.__table__
    with session_scope(engine) as session:
        session.connection().execute(update(items).where(items.c.id == lost_id).values(version=9))
    with pytest.raises(LeaseLost):
        lost.begin(in_flight(13))  # a new part too
    with Session(engine) as session:
        assert len(session.exec(select(ModelCall).where(ModelCall.item_id == lost_id)).all()) == 1
        assert len(session.exec(select(LedgerPart)).all()) == parts + 1  # call 12's message


def test_on_postgresql_a_fenced_call_is_its_own_transaction(engine) -> None:
    """Issue 24 (session 16): a fenced call's row (and its new parts) is one statement,
    fenced in itself; on PostgreSQL it runs in autocommit, where it is its own
    transaction, without the BEGIN and COMMIT round trips around it (3 round trips a
    call to 1). The connection goes back to the pool in transactions again, and a call
    on an item no longer held still writes nothing."""
    from sqlalchemy import text, update

    from summarise.base import LeaseLost

    autocommit: list[bool] = []

    def note(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        if statement.split()[0] in ("INSERT", "WITH"):
            autocommit.append(bool(getattr(conn.connection.dbapi_connection, "autocommit", False)))

    journal, item_id, version, _ = _journal(engine, "sluice", "Sluice to open")
    journal.begin(_record(20, ok=False, error="in flight", state=ledger.IN_FLIGHT))
    event.listen(engine, "before_cursor_execute", note)
    try:
        journal.begin(_record(21, ok=False, error="in flight", state=ledger.IN_FLIGHT))
    finally:
        event.remove(engine, "before_cursor_execute", note)
    assert autocommit and all(autocommit) == (engine.dialect.name == "postgresql"), autocommit
    with engine.connect() as conn:  # back in the pool as it was: a transaction again
        conn.execute(text("SELECT 1"))
        assert conn.in_transaction()
        if engine.dialect.name == "postgresql":
            assert conn.connection.dbapi_connection.autocommit is False
    with Session(engine) as session:
        rows = session.exec(select(ModelCall).where(ModelCall.item_id == item_id)).all()
        assert [r.state for r in rows] == [ledger.IN_FLIGHT] * 2
    items = Item.__table__
    with session_scope(engine) as session:
        session.connection().execute(
            update(items).where(items.c.id == item_id).values(version=version + 1)
        )
    with pytest.raises(LeaseLost):
        journal.begin(_record(22, ok=False, error="in flight", state=ledger.IN_FLIGHT))
    with Session(engine) as session:
        assert len(session.exec(select(ModelCall).where(ModelCall.item_id == item_id)).all()) == 2
