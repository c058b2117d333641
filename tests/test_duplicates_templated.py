"""Near-duplicate grouping on briefs written from one house template (issue 25 point 3,
issue 22): tests/template_material.py, through the stored signatures and the
database's band index, on SQLite and PostgreSQL.

Measured when FACT_THRESHOLD was set (0.45) on the 76 labelled pairs within
the two templates (5 same-story, 71 different stories of one template):
precision 1.00 (before: 0.06, 3 right of 53 grouped, the template pairs' MinHash
estimates reaching 0.62), recall 0.60 (3 of 5: the planning notice told by
another outlet shares too few words with the template's version, MinHash 0.20
and 0.22, under THRESHOLD). The fact sets of two different notices overlap by
0.35 at most; those of one story told twice by 0.57 or more. On
tests/dup_material.py precision and recall stay as they were (1.00, 0.95).

Measured again when store/duplicates.py got its own MinHash (migration
0011_minhash_own; the estimates of a pair move by a few hundredths with the hash
functions): precision 1.00, recall 0.80 (4 of 5: plan-1 against plan-1-x, Jaccard
0.29, is now estimated 0.25 where datasketch said 0.22); on tests/dup_material.py
precision 1.00, recall 1.00.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from store import duplicates
from store import status as st
from store.db import open_store, session_scope
from store.models import Item
from tests.dup_material import add_draft
from tests.template_material import ARTICLES, PAIRS

MEASURED_PRECISION = 1.00  # issue 22 needs exactly this on templated briefs
MEASURED_RECALL = 0.60


@pytest.fixture
def stored(db_url: str, migrated: None) -> Iterator[tuple[Engine, dict[str, int]]]:
    engine = open_store(db_url)
    with session_scope(engine) as session:
        ids = {key: add_draft(session, key, *article) for key, article in ARTICLES.items()}
    yield engine, ids
    engine.dispose()


def _scores(engine: Engine, ids: dict[str, int]) -> tuple[int, int, int]:
    with Session(engine) as session:
        groups = duplicates.similar_drafts(session, list(ids.values()))
    grouped = {(a, b) for a, others in groups.items() for b, _ in others}
    tp = fp = fn = 0
    for first, second, same in PAIRS:
        predicted = (ids[first], ids[second]) in grouped
        assert predicted == ((ids[second], ids[first]) in grouped)  # symmetric
        tp += predicted and same
        fp += predicted and not same
        fn += same and not predicted
    return tp, fp, fn


def test_precision_on_templated_briefs(stored) -> None:
    engine, ids = stored
    tp, fp, fn = _scores(engine, ids)
    assert fp == 0, f"{fp} pairs of different stories grouped"  # precision 1.00
    assert tp / (tp + fn) >= MEASURED_RECALL, (tp, fn)


def test_the_template_alone_groups_nothing(stored) -> None:
    """The issue's case: briefs of one template all look alike by their words."""
    engine, ids = stored
    plans = [ids[k] for k in ARTICLES if k.startswith("plan-") and k[-2:] not in ("-u", "-x")]
    with Session(engine) as session:
        groups = duplicates.similar_drafts(session, plans)
    # Only versions of one notice group: plan-1 with its corrected re-issue and with
    # another outlet's telling (plan-1-x: Jaccard 0.29, estimated 0.25 by the MinHash
    # of store/duplicates.py; datasketch's estimate of the same pair was 0.22).
    assert {a: [b for b, _ in others] for a, others in groups.items()} == {
        ids["plan-6"]: [ids["plan-6-x"]],
        ids["plan-1"]: [ids["plan-1-u"], ids["plan-1-x"]],
    }


def test_facts_are_figures_and_names_not_sentence_starts() -> None:
    found = duplicates.facts(
        "New homes in Vell", "Planning rules apply. The council met Hettie Brandt on 4,500 m."
    )
    assert found == {"vell", "hettie", "brandt", "4500"}


def test_approved_and_published_stories_are_found_too(stored) -> None:
    """The same story approved three times (issue 25): a draft is compared with the
    stories already approved or published, when asked."""
    engine, ids = stored
    with session_scope(engine) as session:
        item = session.get(Item, ids["plan-6"])
        assert item is not None
        st.move(session, item, st.APPROVED, actor="editor:ann", reason="approved")
    with Session(engine) as session:
        drafts_only = duplicates.similar_drafts(session, [ids["plan-6-x"]])
        known = duplicates.similar_drafts(session, [ids["plan-6-x"]], duplicates.KNOWN)
    assert ids["plan-6-x"] not in drafts_only
    assert [o for o, _ in known[ids["plan-6-x"]]] == [ids["plan-6"]]
