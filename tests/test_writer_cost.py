"""Issue 24: the writer's reads of the store do not grow with its batch, and a batch
finds its duplicates exactly as one item at a time did, on SQLite and PostgreSQL.

The writer commits the outcomes that finished together in one transaction. Each
item used to cost its own reads on top (its row loaded again although the batch had
just loaded it, one duplicate look-up by text and one per other URL, one story lock
each on PostgreSQL): that is CPU in the writer for every article, which sets the
pace of a run. Counted in SQL statements, not time (no test depends on speed)."""

from __future__ import annotations

import re
from datetime import timedelta

from sqlalchemy import event
from sqlmodel import Session, select

from copydesk.config import Settings
from copydesk.services.heartbeat import start_run_row
from copydesk.services.pipeline import Job, Outcome
from copydesk.services.pipeline.state import RunState
from copydesk.services.pipeline.writer import Writer
from copydesk.services.reports import FeedReport
from ingest.dedup import item_keys, text_fingerprint
from store import audit_chain, claims
from store import status as st
from store.changes import ItemChanges
from store.db import session_scope
from store.models import AuditEvent, Item

PLACES = ["Orlin", "Marsk", "Tevvy", "Quarra", "Blennet", "Sallow", "Crindle", "Purrow", "Hask"]


def _story(n: int) -> tuple[str, str]:
    """An invented article of its own (no two share their words' set)."""
    place = PLACES[n % len(PLACES)] + f"{n}"
    title = f"{place} council reopens the east bridge"
    text = (
        f"{title}\n\nThe council of {place} reopened the east bridge on Monday after "
        f"{n + 3} weeks of repairs to its piers, the works engineer Brannock Vell said. "
        f"Traffic over the bridge in {place} was limited to {n + 12} vehicles an hour "
        f"while divers inspected case {n}. The council said the repairs cost {n + 40} "
        f"thousand crowns and that a second inspection of {place} piers is due in spring."
    )
    return title, text


def _outcomes(engine, run_id: int, stories: list[int], aliases=None) -> list[Outcome]:  # type: ignore[no-untyped-def]
    """One claimed `new` item per story, and the outcome a worker hands the writer
    (a draft with its text and fingerprint, its page's other URL as an alias)."""
    urls = [f"https://pellow.example.test/news/{n}" for n in stories]
    with session_scope(engine) as session:
        for url, n in zip(urls, stories, strict=True):
            item = Item(dedup_key=url, source_url=url, title=_story(n)[0])
            st.create(session, item, actor="cli", reason="seen")
    with session_scope(engine) as session:
        claimed = claims.claim_items(session, run_id, len(urls), timedelta(minutes=5))
    by_url = {c.source_url: c for c in claimed}
    outs = []
    for i, (url, n) in enumerate(zip(urls, stories, strict=True)):
        c = by_url[url]
        title, text = _story(n)
        changes = ItemChanges(source_text=text, headline=title, summary=text.split(". ")[0] + ".")
        out = Outcome(
            Job(c.item_id, c.version, c.dedup_key, url, title, False, 0, None),
            st.DRAFT,
            changes=changes,
        )
        out.fingerprint = text_fingerprint(text, title)
        out.aliases = (aliases or {}).get(i, [f"https://amp.pellow.example.test/{n}"])
        outs.append(out)
    return outs


def _reads_of_items(statement: str) -> bool:
    return statement.lstrip().upper().startswith("SELECT") and bool(
        re.search(r"\bFROM items\b", statement)
    )


def _statements(engine, work, which=lambda statement: True) -> int:  # type: ignore[no-untyped-def]
    """How many statements `work` sent (those `which` picks)."""
    seen = [0]

    def count(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        seen[0] += bool(which(statement))

    event.listen(engine, "before_cursor_execute", count)
    try:
        work()
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return seen[0]


def _writer(engine) -> Writer:  # type: ignore[no-untyped-def]
    state = RunState(Settings(), engine)
    state.run_id = start_run_row(engine, "run", "extractive")
    return Writer(state)


def test_the_writers_reads_and_statements_do_not_grow_with_its_batch(engine) -> None:
    writer = _writer(engine)
    small = _outcomes(engine, writer.run.run_id, [0, 1])
    big = _outcomes(engine, writer.run.run_id, list(range(2, 10)))

    small_reads = _statements(engine, lambda: writer.commit_batch(small), _reads_of_items)
    big_reads = _statements(engine, lambda: writer.commit_batch(big), _reads_of_items)
    assert big_reads == small_reads  # failed: 2 reads an item more (its row again, its look-up)

    # Every statement a batch sends, per item beyond the first two, has a ceiling:
    # the item's UPDATE, its band rows and its audit event (and no read, no lock).
    more = _outcomes(engine, writer.run.run_id, list(range(10, 12)))
    most = _outcomes(engine, writer.run.run_id, list(range(12, 20)))
    two = _statements(engine, lambda: writer.commit_batch(more))
    eight = _statements(engine, lambda: writer.commit_batch(most))
    assert (eight - two) / 6 <= 3

    with Session(engine) as session:
        statuses = session.exec(select(Item.status)).all()
        events = session.exec(select(AuditEvent.id)).all()
    assert statuses == [st.DRAFT] * 20
    assert len(events) == 40  # born, then made a draft: one event each


def test_a_batch_finds_its_duplicates_as_one_item_at_a_time_did(engine) -> None:
    writer = _writer(engine)
    [first] = _outcomes(engine, writer.run.run_id, [30])
    writer.commit_batch([first])

    # In one batch: the same text as the committed story (another link), a page
    # whose canonical URL is the committed item's, a new story, and a page naming
    # a LATER item's URL as canonical (never its duplicate: earlier items only).
    outs = _outcomes(
        engine,
        writer.run.run_id,
        [31, 32, 33, 34],
        aliases={1: [first.job.source_url], 3: ["https://pellow.example.test/news/99"]},
    )
    title, text = _story(30)
    outs[0].fingerprint = text_fingerprint(text, title)
    outs[0].changes.update(source_text=text, headline=title)
    later = _outcomes(engine, writer.run.run_id, [99], aliases={0: []})
    writer.commit_batch(outs)
    writer.commit_batch(later)

    with Session(engine) as session:
        items = {i.id: i for i in session.exec(select(Item)).all()}
        reasons = {
            e.item_id: e.details.get("duplicate_of") if e.details else None
            for e in session.exec(select(AuditEvent).where(AuditEvent.to_status == st.DISCARDED))
        }
    first_id = first.job.item_id
    assert items[first_id].status == st.DRAFT
    assert items[outs[0].job.item_id].status == st.DISCARDED  # same text
    assert items[outs[1].job.item_id].status == st.DISCARDED  # same canonical URL
    assert reasons == {outs[0].job.item_id: first_id, outs[1].job.item_id: first_id}
    assert items[outs[2].job.item_id].status == st.DRAFT
    assert items[outs[3].job.item_id].status == st.DRAFT
    assert items[later[0].job.item_id].status == st.DRAFT
    assert item_keys(None, None, first.job.source_url)[1] == items[first_id].dedup_key


def test_a_duplicate_look_up_reads_items_once(engine) -> None:
    """The source stage asks for each item, and the writer for each batch, whether
    its story is known: by its page's other URLs and by its text. Both look-ups are
    one SELECT (issue 24, session 10: it was one for each), and find what they did."""
    from copydesk.services.pipeline.duplicates import find_duplicates

    writer = _writer(engine)
    [first] = _outcomes(engine, writer.run.run_id, [40])
    writer.commit_batch([first])
    same_text, same_url, new = _outcomes(
        engine, writer.run.run_id, [41, 42, 43], aliases={1: [first.job.source_url]}
    )
    same_text.fingerprint = first.fingerprint
    wanted = [(o.job.item_id, o.aliases, o.fingerprint) for o in (same_text, same_url, new)]
    found: dict = {}

    def look() -> None:
        with Session(engine) as session:
            found.update(find_duplicates(session, wanted))

    assert _statements(engine, look, _reads_of_items) == 1
    first_id = first.job.item_id
    assert found == {
        same_text.job.item_id: (first_id, "same text"),
        same_url.job.item_id: (first_id, f"same canonical URL {first.job.source_url}"),
    }


def test_a_drafts_band_rows_are_its_signatures_buckets_band_by_band(engine) -> None:
    """The band rows the writer's moves leave (one statement for the batch's drafts:
    an executemany on SQLite, an INSERT from arrays on PostgreSQL, issue 24) are
    exactly each stored signature's buckets, each under its band number."""
    from sqlalchemy import text

    from store import duplicates

    writer = _writer(engine)
    outs = _outcomes(engine, writer.run.run_id, [40, 41, 42])
    sent: list[object] = []

    def bands_sent(conn, cursor, statement, parameters, *args) -> None:  # type: ignore[no-untyped-def]
        if "INSERT INTO item_dup_bands" in statement:
            sent.append(parameters)

    event.listen(engine, "before_cursor_execute", bands_sent)
    try:
        writer.commit_batch(outs)
    finally:
        event.remove(engine, "before_cursor_execute", bands_sent)
    assert len(sent) == 1  # failed before: 3, one an item
    if engine.dialect.name == "postgresql":
        # Each column one array literal, text the server parses (session 15: the
        # driver dumped a list element by element, 0.04 ms of CPU an item); failed
        # before: three lists of 96 integers.
        assert isinstance(sent[0], dict)
        assert {type(v) for v in sent[0].values()} == {str}
    with Session(engine) as session:
        for out in outs:
            item = session.get(Item, out.job.item_id)
            wanted = dict(enumerate(duplicates.buckets(duplicates.from_bytes(item.dup_signature))))
            rows = session.connection().execute(
                text("SELECT band, bucket FROM item_dup_bands WHERE item_id = :i"), {"i": item.id}
            )
            assert dict(rows.all()) == wanted
            assert len(wanted) == duplicates.BANDS
    _band_rows_go_to_the_driver_as_they_are(engine, writer)


def _band_rows_go_to_the_driver_as_they_are(engine, writer: Writer) -> None:  # type: ignore[no-untyped-def]
    """`write_new_bands` hands SQLite's driver the rows as they are (issue 24, session 16:
    SQLAlchemy built each row's parameters from a dict, 32 a draft, 0.05 ms of CPU a
    draft); PostgreSQL's one statement of three arrays builds one set. The rows stored
    are each signature's buckets."""
    from sqlalchemy import text
    from sqlalchemy.sql.compiler import SQLCompiler

    from store import duplicates

    stories = [50, 51, 52]
    outs = _outcomes(engine, writer.run.run_id, stories)
    signed = [
        (out.job.item_id, duplicates.signed(*_story(n)))
        for out, n in zip(outs, stories, strict=True)
    ]
    built: list[object] = []
    construct = SQLCompiler.construct_params

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        built.append(self)
        return construct(self, *args, **kwargs)

    with session_scope(engine) as session:
        conn = session.connection()
        SQLCompiler.construct_params = counted  # type: ignore[method-assign]
        try:
            duplicates.write_new_bands(conn, signed)
        finally:
            SQLCompiler.construct_params = construct  # type: ignore[method-assign]
        assert len(built) <= 1  # failed before on SQLite: 96, one a row
        for item_id, raw in signed:
            rows = conn.execute(
                text("SELECT band, bucket FROM item_dup_bands WHERE item_id = :i"), {"i": item_id}
            )
            wanted = dict(enumerate(duplicates.buckets(duplicates.from_bytes(raw))))
            assert dict(rows.all()) == wanted


def _chain_statement(statement: str, parameters: object) -> bool:
    """A statement of the audit chain's: its lock (PostgreSQL; the stories' locks
    have other keys), its head, its INSERT."""
    if "pg_advisory_xact_lock(" in statement:
        return isinstance(parameters, dict) and parameters.get("key") == audit_chain.PG_CHAIN_LOCK
    return bool(re.search(r"\baudit_events\b", statement))


def _item_write(statement: str) -> bool:
    """An item's row or its band rows written (the compare-and-set, the signature)."""
    flat = " ".join(statement.split()).upper()
    return flat.startswith("UPDATE ITEMS") or flat.startswith("INSERT INTO ITEM_DUP_BANDS")


def test_a_batch_takes_the_audit_chain_after_every_items_writes(engine) -> None:
    """The chain's lock serialises writers across workers until the commit: a batch
    takes it (and reads the head, and inserts its events) only once every item's
    row and band rows are written and signed, not at its first item's move, and
    inserts the batch's events in one statement. Its chain stays verifiable."""
    writer = _writer(engine)
    outs = _outcomes(engine, writer.run.run_id, [40, 41, 42, 43])
    order: list[str] = []

    def seen(conn, cursor, statement, parameters, *args) -> None:  # type: ignore[no-untyped-def]
        if _chain_statement(statement, parameters):
            order.append("chain")
        elif _item_write(statement):
            order.append("item")

    event.listen(engine, "before_cursor_execute", seen)
    try:
        writer.commit_batch(outs)
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    first_chain = order.index("chain")
    assert "item" not in order[first_chain:], order  # failed: item, chain, item, chain, ...
    with Session(engine) as session:
        moved = session.exec(
            select(AuditEvent).where(AuditEvent.to_status == st.DRAFT).order_by(AuditEvent.id)
        ).all()
    assert [e.item_id for e in moved] == [o.job.item_id for o in outs]  # in the batch's order
    assert _event_inserts(engine) == 1  # a batch's four events, one INSERT
    assert audit_chain.verify(engine).ok


def _event_inserts(engine) -> int:  # type: ignore[no-untyped-def]
    """INSERTs into the audit chain while a batch of four drafts is committed."""
    writer = _writer(engine)
    more = _outcomes(engine, writer.run.run_id, [50, 51, 52, 53])
    return _statements(
        engine,
        lambda: writer.commit_batch(more),
        lambda s: " ".join(s.split()).upper().startswith("INSERT INTO AUDIT_EVENTS"),
    )


def test_a_rolled_back_batch_undoes_only_its_own_counts(engine, monkeypatch) -> None:
    """The run's report when a batch's transaction rolls back (issue 23): only the
    counts that batch added are undone. The writer used to copy every feed's report
    before each commit and put the copies back on a rollback: a cost that grew with
    the feeds in the run (a third of the CPU of a 2,174-feed run), and a rollback
    dropped a report the intake thread had written meanwhile, or a count it had added."""
    writer = _writer(engine)
    outs = _outcomes(engine, writer.run.run_id, [50])  # an item of no feed: report 0
    own = writer.run.report_for(None)
    own.drafts = 3  # committed by earlier batches
    filling = FeedReport("Quarra harbour wire", "https://quarra.example.test/feed.xml")
    writer.run.reports[7] = filling
    arriving = FeedReport("Marsk council notices", "https://marsk.example.test/feed.xml")

    def lost_race(session, batch) -> None:  # type: ignore[no-untyped-def]
        # While the batch commits, the intake thread goes on: it counts an entry of
        # the feed it is filling and writes the report of the next feed.
        filling.seen += 5
        writer.run.reports[8] = arriving
        raise st.Conflict(outs[0].job.item_id, st.DRAFT, "run:99", None)  # another run was first

    monkeypatch.setattr(st, "move_many", lost_race)
    writer.commit_batch(outs)

    assert writer.run.reports[0].drafts == 3  # this batch's draft is not counted
    assert writer.run.reports[7] is filling and filling.seen == 5
    assert writer.run.reports[8] is arriving


def test_a_batchs_verdicts_become_sets_without_an_orm_object_each(engine) -> None:
    """Every verdict of an item was built into a `GateVerdict` object (the
    ORM's instrumented constructor) only to be read back by `verdicts.summary`:
    about a third of the writer's verdict write. They are read as plain records now;
    the sets stored, and the item's state after them, are the same."""
    from guards.registry import DRAFT_GATES, SOURCE_GATES, run_gates
    from store import verdicts
    from store.models import GateVerdict

    writer = _writer(engine)
    outs = _outcomes(engine, writer.run.run_id, [0, 1, 2])
    for out in outs:
        text, draft = out.changes.source_text, f"{out.job.title}\n\nIt cost 999 crowns."
        for stage, gates in (("source", SOURCE_GATES), ("draft", DRAFT_GATES)):
            results = run_gates(gates, text, out.job.source_url, draft, modes={})
            out.verdicts += [(stage, r) for r in results]
    built = [0]

    def count(*args: object) -> None:
        built[0] += 1

    event.listen(GateVerdict, "init", count)
    try:
        writer.commit_batch(outs)
    finally:
        event.remove(GateVerdict, "init", count)
    assert built[0] == 0  # failed before: one a verdict (21)

    with Session(engine) as session:
        stored = verdicts.of_items(session, [out.job.item_id for out in outs])
        for out in outs:
            found = stored[out.job.item_id]
            assert [(v.stage, v.gate, v.passed) for v in found] == [
                (stage, r.gate, r.to_dict()["passed"]) for stage, r in out.verdicts
            ]
        sets = session.exec(select(verdicts.VerdictSet)).all()
        # The made-up 999 crowns fail the numbers gate, a hard gate: each set says so
        # (among the failed hard gates of its item, in order).
        for stored_set, out in zip(sets, outs, strict=True):
            hard = [r.gate for _, r in out.verdicts if r.hard_fail]
            assert "numbers_grounded" in hard
            assert stored_set.blocking == verdicts._coded(hard)


def test_the_page_readers_look_up_finds_the_stored_story_without_an_orm_session(engine) -> None:
    """The source stage asks, for every page it reads, whether its story is stored
    already: one SELECT, which an ORM session (built, begun, closed for it) cost
    about half as much again in CPU. It reads through a plain connection now, and
    finds the same story."""
    from sqlalchemy.orm import Session as OrmSession

    from copydesk.services.pipeline.source import SourceStage

    writer = _writer(engine)
    first, again, other = _outcomes(engine, writer.run.run_id, [5, 6, 7])
    writer.commit_batch([first])
    again.fingerprint = first.fingerprint  # the same text under another link
    stage = SourceStage(writer.run, None, fetch_pages=False)  # type: ignore[arg-type]
    begun = [0]

    def count(*args: object) -> None:
        begun[0] += 1

    event.listen(OrmSession, "after_begin", count)
    try:
        found = stage._duplicate_in_store(again)
        fresh = stage._duplicate_in_store(other)
    finally:
        event.remove(OrmSession, "after_begin", count)
    assert found == (first.job.item_id, "same text")
    assert fresh is None
    assert begun[0] == 0  # failed before: 2 (one a look-up)


def _item_update(statement: str) -> bool:
    return " ".join(statement.split()).upper().startswith("UPDATE ITEMS")


def test_a_batchs_compare_and_sets_are_one_statement_and_a_stale_one_is_named(engine) -> None:
    """The batch's moves set the same columns: their compare-and-sets are one
    executemany (one round trip; issue 24), not an UPDATE an item. Its row count is
    the sum over the rows, so an item whose row moved on since it was read still
    fails the batch, and the Conflict names that item, with nothing written."""
    from sqlalchemy.orm.attributes import set_committed_value

    writer = _writer(engine)
    outs = _outcomes(engine, writer.run.run_id, [60, 61, 62])
    updates = _statements(engine, lambda: writer.commit_batch(outs), _item_update)
    assert updates == 1  # failed before: 3, one an item
    with Session(engine) as session:
        assert {session.get(Item, o.job.item_id).status for o in outs} == {st.DRAFT}

    more = _outcomes(engine, writer.run.run_id, [63, 64, 65])
    ids = [o.job.item_id for o in more]
    arguments = {"actor": writer.run.actor, "reason": "test", "discard_kind": "other"}
    with session_scope(engine) as session:
        events = session.exec(select(AuditEvent)).all()
    try:
        with session_scope(engine) as session:
            items = [session.get(Item, i) for i in ids]
            stale = items[1]
            set_committed_value(stale, "version", stale.version - 1)  # its row moved on
            st.move_many(session, [(item, st.DISCARDED, dict(arguments)) for item in items])
    except st.Conflict as conflict:
        assert conflict.item_id == ids[1]
    else:
        raise AssertionError("a stale item's move went through")
    with Session(engine) as session:
        assert {session.get(Item, i).status for i in ids} == {st.NEW}
        assert len(session.exec(select(AuditEvent)).all()) == len(events)


def test_an_item_moved_twice_in_one_call_moves_in_order(engine) -> None:
    """`move_many` sets the items' rows together after their moves are checked; an
    item moved twice in one call (no writer does it) is moved one move at a time, so
    its second move starts from where its first left it."""
    writer = _writer(engine)
    [out] = _outcomes(engine, writer.run.run_id, [70])
    actor = writer.run.actor
    with session_scope(engine) as session:
        item = session.get(Item, out.job.item_id)
        version = item.version
        st.move_many(
            session,
            [
                (item, st.ERROR, {"actor": actor, "reason": "page timed out"}),
                (item, st.NEW, {"actor": actor, "reason": "retry"}),
            ],
        )
    with Session(engine) as session:
        item = session.get(Item, out.job.item_id)
        assert (item.status, item.version) == (st.NEW, version + 2)
        moves = session.exec(select(AuditEvent).where(AuditEvent.item_id == item.id)).all()
        assert [(e.from_status, e.to_status) for e in moves][-2:] == [
            (st.NEW, st.ERROR),
            (st.ERROR, st.NEW),
        ]


def test_a_batchs_model_calls_are_completed_by_one_update(engine) -> None:
    """Issue 24, session 13: the ledger rows of every item of a batch (each item's
    calls, begun before their requests) are completed by one UPDATE sent once for
    the batch (an executemany), not one an item; each row still names its own item
    and reads back done, with the reply its call got."""
    from store import ledger
    from store.models import CallRecord, ModelCall

    writer = _writer(engine)
    outs = _outcomes(engine, writer.run.run_id, [40, 41, 42])
    request = {"model": "claude-haiku-4-5", "max_tokens": 300, "messages": []}
    for out in outs:
        for n in range(2):
            with session_scope(engine) as session:
                row_id = ledger.begin(
                    session,
                    CallRecord(
                        backend="anthropic",
                        model="claude-haiku-4-5",
                        request_json=request,
                        ok=False,
                        error="in flight",
                        state=ledger.IN_FLIGHT,
                    ),
                    item_id=out.job.item_id,
                    run_id=writer.run.run_id,
                )
            done = CallRecord(
                backend="anthropic",
                model="claude-haiku-4-5",
                request_json=request,
                request_id=f"req_tarn_{out.job.item_id}_{n}",
                ok=True,
                response_json={"id": f"msg_{out.job.item_id}_{n}", "content": []},
            )
            done._row_id = row_id
            out.calls.append(done)

    updates: list[int] = []

    def note(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        if statement.lstrip().upper().startswith("UPDATE") and re.search(
            r"\bmodel_calls\b", statement
        ):
            updates.append(len(parameters) if executemany else 1)

    event.listen(engine, "before_cursor_execute", note)
    try:
        writer.commit_batch(outs)
    finally:
        event.remove(engine, "before_cursor_execute", note)
    assert updates == [6], updates  # failed before: [2, 2, 2], one UPDATE an item

    with Session(engine) as session:
        rows = session.exec(select(ModelCall).order_by(ModelCall.id)).all()
        replies = ledger.replies(session, rows)
    assert len(rows) == 6
    assert [r.state for r in rows] == [ledger.DONE] * 6
    assert [r.item_id for r in rows] == [out.job.item_id for out in outs for _ in range(2)]
    assert [r.request_id for r in rows] == [c.request_id for out in outs for c in out.calls]
    assert replies == [c.response_json for out in outs for c in out.calls]


def test_a_batchs_moves_and_births_build_no_orm_audit_event(engine) -> None:
    """Issue 24, session 14: the audit events of moves (`st.move`, `st.move_many`: the
    writer) and of births (`st.create`, `st.create_many`: intake) are plain records for
    the chain's Core INSERT; an `AuditEvent` ORM object each (SQLModel's constructor
    and attribute sets: about 41 µs of CPU against 1, two an article) is built no
    more. The events stored are the same: their item, statuses, reason and details,
    linked in the chain, which verifies."""
    writer = _writer(engine)
    built = [0]

    def count(*args: object) -> None:
        built[0] += 1

    event.listen(AuditEvent, "init", count)
    try:
        outs = _outcomes(engine, writer.run.run_id, [80, 81, 82])  # born by `st.create`
        urls = [f"https://pellow.example.test/tide/{n}" for n in (1, 2)]
        with session_scope(engine) as session:
            born = st.create_many(
                session,
                [({"dedup_key": u, "source_url": u}, "seen", {"n": u}) for u in urls],
                actor="cli",
            )
            assert [(e.to_status, e.reason) for e in born] == [(st.NEW, "seen")] * 2
            assert all(e.id and e.hash for e in born)
        writer.commit_batch(outs)
    finally:
        event.remove(AuditEvent, "init", count)
    assert built[0] == 0, f"{built[0]} AuditEvent objects built for 5 births and 3 moves"
    with Session(engine) as session:
        ids = [o.job.item_id for o in outs]
        moves = session.exec(
            select(AuditEvent).where(AuditEvent.item_id.in_(ids)).order_by(AuditEvent.id)  # type: ignore[union-attr]
        ).all()
        births = session.exec(
            select(AuditEvent).where(AuditEvent.details.is_not(None)).order_by(AuditEvent.id)  # type: ignore[union-attr]
        ).all()
    moved = [(e.item_id, e.from_status, e.to_status) for e in moves if e.from_status]
    assert moved == [(i, st.NEW, st.DRAFT) for i in ids]
    assert all(
        e.reason == "all hard gates passed" and e.actor == writer.run.actor
        for e in moves
        if e.from_status
    )
    assert [e.details for e in births if e.from_status is None][-2:] == [{"n": u} for u in urls]
    assert audit_chain.verify(engine).ok
