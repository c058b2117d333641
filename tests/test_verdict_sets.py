"""A draft attempt's verdicts are one packed row (issue 19 §4, store/verdicts.py):
`verdict_sets` holds one row per (item, attempt) with every verdict of it as one
zlib'd compact JSON, plus the small columns the SQL filters need (the failed gates,
the checks' state). Read back, they are today's `GateVerdict` objects, field for
field. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlalchemy import text

from store import status as st
from store import verdicts
from store.db import open_store, session_scope
from store.history import item_history
from store.models import GateVerdict, Item, Run

CLAIMS = {
    "claims": [
        {
            "sentence": "The Ormsby ferry will stop on 3 May.",
            "claim": "the Ormsby ferry stops on 3 May",
            "passage": "Ormsby Council said the ferry would stop running on 3 May.",
            "supported": True,
        },
        {
            "sentence": "The crossing carried 41,200 people last year.",
            "claim": "41,200 people used the crossing last year",
            "passage": "Last year 41,200 passengers used the crossing.",
            "supported": True,
        },
    ]
}
# stage, gate, passed, mode, reason, evidence: one pipeline attempt's nine verdicts.
ATTEMPT = [
    ("source", "source_url", True, "discard", "absolute http(s) URL with a host", None),
    ("source", "source_length", True, "discard", "412 words", None),
    ("draft", "numbers_grounded", True, "discard", "the 2 numbers found in the source", None),
    ("draft", "dates_grounded", True, "discard", "the 1 date found in the source", None),
    ("draft", "quotes_verbatim", True, "discard", "no quotations in the draft", None),
    ("draft", "names_grounded", False, "flag", "1 name not in the source: Tillby", ["Tillby"]),
    ("draft", "length", True, "discard", "58 words", None),
    ("check", "claims_supported", True, "discard", "2 of 2 claims supported", CLAIMS),
    ("check", "faithfulness", False, "flag", "the check did not run", {"state": "not run"}),
]
AT = datetime(2026, 12, 4, 15, 30, tzinfo=UTC)


def _rows(item_id: int) -> list[dict]:
    keys = ("stage", "gate", "passed", "mode", "reason", "evidence")
    return [
        {"item_id": item_id, "run_id": None, "created_at": AT, **dict(zip(keys, v, strict=True))}
        for v in ATTEMPT
    ]


def _item(session, n: int, headline: str) -> int:  # type: ignore[no-untyped-def]
    item = Item(dedup_key=f"https://ormsby.example.test/{n}", headline=headline)
    st.create(session, item, actor="run:1", reason="found in a feed")
    assert item.id is not None
    return item.id


def _stored_with_a_hard_failure(engine, n: int, headline: str) -> int:  # type: ignore[no-untyped-def]
    """An item whose one attempt's set has numbers_grounded failing in `discard`."""
    with session_scope(engine) as session:
        item_id = _item(session, n, headline)
        rows = _rows(item_id)
        rows[2].update(passed=False, reason="1 number not in the source: 77")
        verdicts.write(session, rows)
    return item_id


def test_an_attempt_s_verdicts_are_one_small_row_read_back_as_verdicts(db_url) -> None:
    engine = open_store(db_url)
    with session_scope(engine) as session:
        item_id = _item(session, 1, "Ormsby ferry")
        verdicts.write(session, _rows(item_id))
    with engine.connect() as conn:
        sets = conn.execute(
            text(
                "SELECT item_id, failed_gates, checks_state, verdicts, blocking, flagging, "
                "checks_since FROM verdict_sets"
            )
        ).all()
        assert conn.execute(text("SELECT count(*) FROM gate_verdicts")).scalar() == 0
    assert len(sets) == 1
    item_of, failed, checks, blob, *state = sets[0]
    assert item_of == item_id
    assert failed == "5,8"  # gates by their store/coded.py codes
    assert verdicts.names(failed) == ("names_grounded", "faithfulness")
    # The item's state after the set: each check's newest verdict; what fails now.
    assert checks == "7:ran,8:not run"
    assert verdicts.checks(checks) == [
        ("claims_supported", "ran", True),
        ("faithfulness", "not run", False),
    ]
    assert state == [None, "5", None]  # names_grounded; a check that did not run flags nothing
    # The size: the packed set is well under half the verdicts' own compact JSON.
    plain = json.dumps(ATTEMPT, separators=(",", ":")).encode()
    assert len(bytes(blob)) < 0.5 * len(plain), (len(bytes(blob)), len(plain))
    with session_scope(engine) as session:
        read = verdicts.of_item(session, item_id)
        got = [(v.stage, v.gate, v.passed, v.mode, v.reason, v.evidence) for v in read]
        assert got == [tuple(v) for v in ATTEMPT]
        assert {v.item_id for v in read} == {item_id}
        assert {v.created_at for v in read} == {AT}
        assert [v.check_state for v in read][-2:] == ["ran", "not run"]
        assert verdicts.of_items(session, [item_id, item_id + 1]) == {item_id: read}
    engine.dispose()


def test_each_attempt_is_its_own_set_in_the_order_written(db_url) -> None:
    engine = open_store(db_url)
    with session_scope(engine) as session:
        item_id = _item(session, 2, "Ormsby quay")
        first = _rows(item_id)[:3]
        edit = [
            dict(r, stage="edit", created_at=datetime(2026, 12, 4, 16, tzinfo=UTC)) for r in first
        ]
        verdicts.write(session, first + edit)  # two attempts in one batch: two sets
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM verdict_sets")).scalar() == 2
    with session_scope(engine) as session:
        stages = [v.stage for v in verdicts.of_item(session, item_id)]
        assert stages == ["source", "source", "draft", "edit", "edit", "edit"]
    engine.dispose()


def test_history_reads_sets_and_rows_written_before_them_in_time_order(db_url) -> None:
    # Until every writer writes sets, an item may hold both: `gate_verdicts` rows
    # (older writers, or rows from before 0037) and sets; readers see one list.
    engine = open_store(db_url)
    with session_scope(engine) as session:
        item_id = _item(session, 3, "Ormsby slipway")
        verdicts.write(session, _rows(item_id)[:2])  # 15:30
        earlier = datetime(2026, 12, 4, 15, tzinfo=UTC)
        length = _rows(item_id)[6]  # the "length" gate's verdict, as a row, earlier
        session.add(GateVerdict(**(length | {"reason": "61 words", "created_at": earlier})))
    history = item_history(engine, item_id)
    assert history is not None
    assert [(v.gate, v.reason) for v in history.verdicts] == [
        ("length", "61 words"),
        ("source_url", "absolute http(s) URL with a host"),
        ("source_length", "412 words"),
    ]
    engine.dispose()


def test_the_desk_publication_and_audit_read_verdicts_written_as_a_set(db_url) -> None:
    from copydesk.services.audit import _failed_hard_verdicts
    from publish.service import Publisher
    from review_ui.desk.queries import current_verdicts

    engine = open_store(db_url)
    item_id = _stored_with_a_hard_failure(engine, 4, "Ormsby lock")
    with session_scope(engine) as session:
        now = current_verdicts(session, item_id)
        assert [v.gate for v in now.source] == ["source_url", "source_length"]
        assert [v.gate for v in now.draft if not v.passed] == [
            "numbers_grounded",
            "names_grounded",
            "faithfulness",
        ]
        latest = Publisher._latest_checks(session, item_id)
        assert sorted(latest) == ["claims_supported", "faithfulness"]
        assert latest["faithfulness"].check_state == "not run"
        hard = _failed_hard_verdicts(session, [item_id])
        assert [(v.gate, v.reason) for v in hard[item_id]] == [
            ("numbers_grounded", "1 number not in the source: 77")
        ]
    engine.dispose()


def test_failed_gate_filters_find_a_set_s_failures(db_url) -> None:
    from sqlalchemy import select

    from copydesk.services.replay import _stored_failures
    from review_ui.desk.queries import failed_gate_names

    engine = open_store(db_url)
    item_id = _stored_with_a_hard_failure(engine, 5, "Ormsby weir")
    with session_scope(engine) as session:
        assert failed_gate_names(session) == ["faithfulness", "names_grounded", "numbers_grounded"]
        assert _stored_failures(session, item_id) == {"numbers_grounded"}

        def found(gate: str) -> list[int]:
            statement = select(Item.id).where(verdicts.item_failed(gate, Item.id))
            return list(session.scalars(statement))

        assert found("numbers_grounded") == [item_id]
        assert found("names_grounded") == [item_id]
        assert found("numbers") == []  # a whole name, not a part of one
        assert found("length") == []  # it passed
    engine.dispose()


def _check_set(item_id: int, run_id: int | None, at: datetime, **states: dict) -> list[dict]:
    """A re-check's set: each check gate passing, or failing with `states[gate]`."""
    return [
        {
            "item_id": item_id,
            "run_id": run_id,
            "created_at": at,
            "stage": "check",
            "gate": gate,
            "passed": gate not in states,
            "mode": "flag",
            "reason": "the check did not run" if gate in states else "all claims supported",
            "evidence": states.get(gate),
        }
        for gate in ("claims_supported", "faithfulness")
    ]


def test_a_check_that_did_not_run_is_found_on_the_item_s_newest_check_set(db_url) -> None:
    # Step one of switching store/checks.py: its filters over each item's newest
    # check set, by the set's checks_state tokens ("gate:state[:transient]").
    from sqlalchemy import select

    engine = open_store(db_url)
    outage = {"state": "failed", "transient": True, "why": "529 overloaded"}
    config = {"state": "failed", "why": "temperature refused"}
    with session_scope(engine) as session:
        first, second = Run(command="run"), Run(command="run")
        session.add_all([first, second])
        session.flush()
        fixed, waiting, misconfigured = (
            _item(session, n, h)
            for n, h in ((6, "Ormsby mill"), (7, "Ormsby dam"), (8, "Ormsby bridge"))
        )
        verdicts.write(session, _check_set(fixed, first.id, AT, faithfulness=outage))
        later = datetime(2026, 12, 4, 16, tzinfo=UTC)
        verdicts.write(session, _check_set(fixed, second.id, later))  # re-checked: ran
        verdicts.write(session, _check_set(waiting, first.id, AT, faithfulness=outage))
        verdicts.write(session, _check_set(misconfigured, first.id, AT, claims_supported=config))
        verdicts.write(session, _rows(misconfigured)[:2])  # a newer set with no check
        run_id = first.id
    with session_scope(engine) as session:

        def found(**kwargs) -> list[int]:  # type: ignore[no-untyped-def]
            clause = verdicts.newest_check_did_not_run(Item.id, **kwargs)
            return list(session.scalars(select(Item.id).where(clause).order_by(Item.id)))

        assert found() == [waiting, misconfigured]
        assert found(transient_only=True) == [waiting]
        assert found(states=("not run",)) == []
        assert found(gates_off=frozenset({"faithfulness"})) == [misconfigured]
        assert found(other_than_run=run_id) == []  # a run does not ask again what it just asked
    engine.dispose()


def test_copydesk_audit_knows_a_gate_that_failed_only_in_a_set(db_url) -> None:
    from copydesk.services.audit import known_gates

    engine = open_store(db_url)
    with session_scope(engine) as session:
        item_id = _item(session, 9, "Ormsby tide")
        tides = dict(_rows(item_id)[6], gate="harbour_tides", passed=False, reason="no tide table")
        verdicts.write(session, [tides])  # a gate since removed from the registry
    assert "harbour_tides" in known_gates(engine)
    engine.dispose()


def test_moving_rows_into_sets_keeps_every_verdict(db_url) -> None:
    # The body of the migration that ends `gate_verdicts` (step 4, not yet one).
    engine = open_store(db_url)
    later = datetime(2026, 12, 4, 16, tzinfo=UTC)
    with session_scope(engine) as session:
        one, two = _item(session, 10, "Ormsby pier"), _item(session, 11, "Ormsby pool")
        for row in _rows(one) + [dict(r, created_at=later) for r in _rows(one)[:2]] + _rows(two):
            session.add(GateVerdict(**row))
        verdicts.write(
            session,
            [dict(r, created_at=datetime(2026, 12, 4, 17, tzinfo=UTC)) for r in _rows(two)[:3]],
        )

    def every() -> list[tuple]:
        with session_scope(engine) as session:
            by_item = verdicts.of_items(session, [one, two])
            return [
                (v.item_id, v.stage, v.gate, v.passed, v.mode, v.reason, v.evidence, v.created_at)
                for i in (one, two)
                for v in by_item[i]
            ]

    before = every()
    with session_scope(engine) as session:
        assert verdicts.move_rows_to_sets(session, batch=1) == 20
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM gate_verdicts")).scalar() == 0
        assert conn.execute(text("SELECT count(*) FROM verdict_sets")).scalar() == 4
    assert every() == before
    engine.dispose()


def test_the_queue_and_the_recheck_find_a_check_that_failed_in_a_set(db_url) -> None:
    from sqlalchemy import select

    from store.checks import recheck_due, unchecked_clause

    engine = open_store(db_url)
    outage = {"state": "failed", "transient": True, "why": "529 overloaded"}
    with session_scope(engine) as session:
        item_id = _item(session, 12, "Ormsby sluice")
        item = session.get(Item, item_id)
        st.move(session, item, st.DRAFT, actor="run:1", reason="summarised")
        verdicts.write(session, _check_set(item_id, None, AT, faithfulness=outage))
    with session_scope(engine) as session:
        assert list(session.scalars(select(Item.id).where(unchecked_clause()))) == [item_id]
        assert [i for i, _ in recheck_due(session, 3)] == [item_id]
    engine.dispose()
