"""A run's claim reads the waiting items' own index (`ix_items_waiting`, migration
0041), not every item already done (issue 24, session 17: PostgreSQL walked the
primary key and dropped 1,600 done rows a claim at 3,200 items, half done). On
PostgreSQL it must do so in a generic plan too (a statement prepared and run many
times, as psycopg prepares a run's repeated claim): the status is written into the
statement, since a bound `status = $1` cannot use a partial index."""

from __future__ import annotations

import re
from datetime import timedelta

from psycopg import sql as psql
from sqlalchemy import insert, text
from sqlalchemy.engine import Engine
from sqlmodel import Session

from store import claims
from store.models import Item, utcnow

DONE, WAITING = 1900, 100


def _fill(engine: Engine) -> None:
    now = utcnow()
    rows = [
        {
            "dedup_key": f"https://harlowe.example.test/story/{i}",
            "title": f"Harlowe ferry timetable, notice {i}",
            "status": "draft" if i < DONE else "new",
            "version": 0,
            "attempts": 0,
            "recorded_reply": False,
            "seen_at": now,
            "created_at": now,
            "updated_at": now,
        }
        for i in range(DONE + WAITING)
    ]
    with engine.begin() as conn:
        conn.execute(insert(Item.__table__), rows)
        conn.execute(text("ANALYZE"))


def _claim_plan(engine: Engine) -> str:
    postgresql = engine.dialect.name == "postgresql"
    compiled = claims._CLAIM[postgresql].compile(dialect=engine.dialect)
    now = utcnow()
    values = compiled.construct_params(
        {"now": now, "limit": 16, "run_id": 1, "until": now + timedelta(minutes=10)}
    )
    with engine.connect() as conn:
        if not postgresql:
            raw = conn.connection.driver_connection.cursor()
            raw.execute(
                "EXPLAIN QUERY PLAN " + str(compiled), [values[k] for k in compiled.positiontup]
            )
            return "\n".join(str(row[-1]) for row in raw.fetchall())
        # PREPARE with $n for the named parameters, then EXPLAIN EXECUTE in a generic
        # plan: what a statement run again and again may get
        # (https://www.postgresql.org/docs/15/sql-prepare.html, plan_cache_mode).
        names: list[str] = []

        def number(match: re.Match[str]) -> str:
            names.append(match.group(1))
            return f"${len(names)}"

        sql = re.sub(r"%\((\w+)\)s", number, str(compiled))
        raw = conn.connection.driver_connection
        raw.execute("SET plan_cache_mode = force_generic_plan")
        raw.execute(f"PREPARE claim AS {sql}")
        args = psql.SQL(", ").join(psql.Literal(values[n]) for n in names)
        plan = raw.execute(psql.SQL("EXPLAIN EXECUTE claim({})").format(args)).fetchall()
        conn.rollback()
        return "\n".join(row[0] for row in plan)


def test_a_claim_reads_the_waiting_items_index_not_the_done_items(engine: Engine) -> None:
    _fill(engine)
    plan = _claim_plan(engine)
    assert "ix_items_waiting" in plan, plan  # failed before: the primary key, filtered
    assert "Seq Scan on items" not in plan, plan
    with Session(engine) as session:
        claimed = claims.claim_items(session, 1, 16, timedelta(minutes=10))
        session.commit()
    assert [c.title for c in claimed] == [
        f"Harlowe ferry timetable, notice {i}" for i in range(DONE, DONE + 16)
    ]
