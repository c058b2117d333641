"""The filters over each gate's current verdict read an item's newest verdict set
(issue 19 §4, migration 0039): `store/verdicts.py` `write` stores, beside each set, the
item's state after it (the gates failing on the current text, each model check's
newest verdict, when a failed check's streak began), by the desk's rules
(`current_verdicts`): an edit's verdicts replace the pipeline's on the text, a re-check
replaces only the checks it ran (a check gate `off` stores nothing, so the
pipeline's verdict of it stays the newest). The queue's flagged and blocked filters
and badges, `copydesk stats`' check counts and `checks_waiting`, and `copydesk
unchecked` find verdicts written as sets as they found rows. SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from copydesk.cli.stats import model_check_counts
from review_ui.desk.queries import blocked_clause, failing_gates, flagged_clause
from store import status as st
from store import verdicts
from store.checks import checks_waiting, unchecked_clause, unchecked_items
from store.db import open_store, session_scope
from store.models import Item

AT = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
OUTAGE = {"state": "failed", "transient": True, "why": "529 overloaded"}
# stage, gate, passed, mode, evidence: a pipeline attempt on a Tarnwick story.
PIPELINE = [
    ("source", "source_length", True, "discard", None),
    ("draft", "numbers_grounded", True, "discard", None),
    ("draft", "names_grounded", True, "flag", None),
    ("check", "claims_supported", True, "flag", None),
    ("check", "faithfulness", True, "flag", None),
]


def _attempt(item_id: int, at: datetime, stage: str | None = None, **changed) -> list[dict]:  # type: ignore[no-untyped-def]
    """One attempt's rows: PIPELINE's gates (or only those of `stage`, renamed: an
    edit's are stage "edit"), each passing unless `changed` gives (passed, evidence)."""
    rows = []
    for row_stage, gate, passed, mode, evidence in PIPELINE:
        if stage == "check" and row_stage != "check":
            continue
        if stage == "edit" and row_stage != "draft":
            continue
        passed, evidence = changed.get(gate, (passed, evidence))
        rows.append(
            {
                "item_id": item_id,
                "run_id": None,
                "created_at": at,
                "stage": stage or row_stage,
                "gate": gate,
                "passed": passed,
                "mode": mode,
                "reason": "as the test says",
                "evidence": evidence,
            }
        )
    return rows


def _draft(session, n: int) -> int:  # type: ignore[no-untyped-def]
    item = Item(dedup_key=f"https://tarnwick.example.test/{n}", headline=f"Tarnwick story {n}")
    st.create(session, item, actor="run:1", reason="found in a feed")
    st.move(session, item, st.DRAFT, actor="run:1", reason="summarised")
    assert item.id is not None
    return item.id


def _ids(session, clause) -> list[int]:  # type: ignore[no-untyped-def]
    return list(session.scalars(select(Item.id).where(clause).order_by(Item.id)))


def test_the_queue_s_flag_and_block_filters_read_the_item_s_current_text(db_url) -> None:
    engine = open_store(db_url)
    with session_scope(engine) as session:
        flagged, blocked, edited, unjudged = (_draft(session, n) for n in (1, 2, 3, 4))
        verdicts.write(session, _attempt(flagged, AT, names_grounded=(False, ["Pellow"])))
        verdicts.write(session, _attempt(blocked, AT, numbers_grounded=(False, ["77"])))
        # Blocked by the pipeline's text, then edited: the edit's verdicts are the text's.
        verdicts.write(session, _attempt(edited, AT, numbers_grounded=(False, ["77"])))
        verdicts.write(session, _attempt(edited, AT + timedelta(hours=1), "edit"))
        # A model check that did not run flags nothing (the "did not run" filter finds it).
        verdicts.write(session, _attempt(unjudged, AT, faithfulness=(False, OUTAGE)))
    with session_scope(engine) as session:
        assert _ids(session, flagged_clause()) == [flagged]
        assert _ids(session, blocked_clause()) == [blocked]
        assert _ids(session, flagged_clause(frozenset({"names_grounded"}))) == []
        assert _ids(session, blocked_clause(frozenset({"numbers_grounded"}))) == []
        assert _ids(session, unchecked_clause()) == [unjudged]
        badges = failing_gates(session, [flagged, blocked, edited, unjudged])
        assert badges[flagged] == ((), ("names_grounded",))
        assert badges[blocked] == (("numbers_grounded",), ())
        assert badges.get(edited, ((), ())) == ((), ())
        assert failing_gates(session, [flagged], frozenset({"names_grounded"})).get(
            flagged, ((), ())
        ) == ((), ())
    engine.dispose()


def test_a_recheck_without_a_check_now_off_keeps_the_pipeline_s_verdict_of_it(db_url) -> None:
    # A check gate switched `off` stores nothing (guards/registry.py run_checks skips
    # it): the re-check's set holds claims_supported only, and faithfulness's newest
    # verdict is still the pipeline's, which found problems.
    engine = open_store(db_url)
    with session_scope(engine) as session:
        item_id = _draft(session, 5)
        problems = (False, {"state": "ran", "sentences": []})
        verdicts.write(
            session,
            _attempt(item_id, AT, claims_supported=(False, OUTAGE), faithfulness=problems),
        )
        recheck = [r for r in _attempt(item_id, AT + timedelta(hours=1), "check")]
        verdicts.write(session, [r for r in recheck if r["gate"] == "claims_supported"])
    with session_scope(engine) as session:
        newest = verdicts.newest_sets(session, [item_id])[item_id]
        assert verdicts.checks(newest.checks_state) == [
            ("claims_supported", "ran", True),
            ("faithfulness", "ran", False),  # problems found
        ]
        assert _ids(session, unchecked_clause()) == []
        assert _ids(session, flagged_clause()) == [item_id]
        assert failing_gates(session, [item_id])[item_id] == ((), ("faithfulness",))
    engine.dispose()


def test_stats_waiting_checks_and_the_unchecked_listing_read_sets(db_url) -> None:
    engine = open_store(db_url)
    later = AT + timedelta(hours=2)
    with session_scope(engine) as session:
        waiting, fine = _draft(session, 6), _draft(session, 7)
        verdicts.write(session, _attempt(waiting, AT, faithfulness=(False, OUTAGE)))
        # Re-checked during the outage: failed again, the streak began at the first.
        verdicts.write(session, _attempt(waiting, later, "check", faithfulness=(False, OUTAGE)))
        verdicts.write(session, _attempt(fine, AT))
    with session_scope(engine) as session:
        waits = checks_waiting(session, 3)
        assert waits["count"] == 1
        assert datetime.fromisoformat(waits["since"]).replace(tzinfo=UTC) == AT
        assert waits["rechecked_by_next_run"] == 1
        counts = model_check_counts(session)
        assert counts["faithfulness"]["failed to run"] == 1
        assert counts["faithfulness"]["passed"] == 1
        assert counts["claims_supported"]["passed"] == 2
        listed = unchecked_items(session)
        assert [row.item_id for row in listed] == [waiting]
        assert [(c["gate"], c["state"], c["transient"]) for c in listed[0].checks] == [
            ("faithfulness", "failed", True)
        ]
        assert listed[0].checked_at is not None
        assert listed[0].checked_at.replace(tzinfo=UTC) == later
        assert unchecked_items(session, since=later + timedelta(minutes=1)) == []
        assert unchecked_items(session, state="not run") == []
    engine.dispose()
