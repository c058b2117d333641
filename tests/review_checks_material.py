"""The model checks' reply seeded for the bridge draft (tests/review_seed.py's
`seed_checks`) in the review-queue checks tests, AppTest and Chromium: three
claims (one hostile), each draft sentence judged against its source passage,
the last one with a modality error.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Engine

from store.db import session_scope
from tests.review_seed import ARTICLES, IMG, SCRIPT, seed_checks, seed_editor, seed_queue

BRIDGE = ARTICLES["bridge"]
H = BRIDGE.headline
S1 = (
    "Brinmoor County Council will close the Harlow Vale footbridge for 14 weeks from March "
    "after corrosion was found in 38 steel hangers."
)
S2 = "The repairs will cost £1.9 million, and a temporary ferry will run every 20 minutes."
P_CLOSE = (
    "Repairs to the Harlow Vale footbridge will close the crossing for 14 weeks from March, "
    "Brinmoor County Council said on Monday"
)
P_HANGERS = "Engineers found corrosion in 38 of the bridge's steel hangers"
P_COST = "The work will cost £1.9 million and a temporary ferry will carry pedestrians across"
HOSTILE_CLAIM = f"The ferry is free {SCRIPT} {IMG}"


def judged(sentence: str, passage: str, *errors: str) -> dict[str, Any]:
    """One judged sentence of the reply: with errors it is material and has a
    rewrite (with a script tag in it, to be shown inert)."""
    return {
        "sentence": sentence,
        "errors": list(errors),
        "wrong_fact": False,
        "rewrite": f"REWRITE {sentence} {SCRIPT}" if errors else sentence,
        "reader_draft": "the ferry is certain",
        "reader_rewrite": "the ferry is planned" if errors else "the ferry is certain",
        "material": bool(errors),
        "passage": passage,
    }


CHECK = {
    "claims": [
        {
            "claim": "The footbridge closes for 14 weeks from March.",
            "passage": P_CLOSE,
            "supports": True,
        },
        {
            "claim": "Corrosion was found in 38 steel hangers.",
            "passage": P_HANGERS,
            "supports": True,
        },
        {"claim": HOSTILE_CLAIM, "passage": "The ferry is free of charge", "supports": True},
    ],
    "sentences": [judged(H, P_CLOSE), judged(S1, P_HANGERS), judged(S2, P_COST, "modality")],
}


def checked_desk(engine: Engine) -> dict[str, int]:
    """A seed: the bridge draft judged by CHECK, the school draft whose model checks
    did not run, and the editor alice."""
    ids = seed_queue(engine, ("bridge", "school"))
    with session_scope(engine) as session:
        seed_checks(session, ids["bridge"], CHECK)
        seed_checks(session, ids["school"], None)  # the school's checks did not run
    seed_editor(engine, "alice")
    return ids
