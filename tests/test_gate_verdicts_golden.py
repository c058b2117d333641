"""The draft gates give the verdicts and evidence they gave when the golden digests were
written (tests/gate_verdicts.py): a rewrite for speed must not change a single one.
When a change of verdicts is intended, rewrite them (`python -m tests.gate_verdicts
--write`) and read which pairs changed."""

from __future__ import annotations

import json

from guards.verdict import Verdict
from tests.gate_verdicts import GOLDEN, digests, pairs


def test_every_verdict_is_the_golden_one() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    now = digests()
    assert len(now) == len(golden)
    changed = [i for i, (a, b) in enumerate(zip(now, golden, strict=True)) if a != b]
    assert changed == [], f"pairs whose verdicts changed: {changed[:20]}"


def test_the_pairs_exercise_every_gate() -> None:
    """The comparison is not blind: among the pairs, each gate both passes and fails."""
    from guards.registry import DEFAULT_MODES, DRAFT_GATES, run_gates

    outcomes: dict[str, set[bool]] = {gate: set() for gate in DRAFT_GATES}
    for source, draft, language in pairs()[:120]:
        for r in run_gates(
            DRAFT_GATES, source, None, draft, modes=DEFAULT_MODES, language=language
        ):
            assert isinstance(r.verdict, Verdict)
            outcomes[r.gate].add(r.verdict.passed)
    assert outcomes == {gate: {True, False} for gate in DRAFT_GATES}
