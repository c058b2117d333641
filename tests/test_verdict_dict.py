"""`Verdict.to_dict` is built by hand for speed (issue 24: `dataclasses.asdict`
deep-copied every atom of the evidence, a fifth of the run writer's CPU an item);
what it returns is what asdict returned, for every gate's real evidence and for
the shapes evidence may take."""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from dataclasses import asdict, dataclass

from guards.registry import DRAFT_GATES, SOURCE_GATES, run_gates
from guards.verdict import Verdict
from tests.articles import FERRY, TITLES


def _as_before(verdict: Verdict) -> dict:
    data = asdict(verdict)
    for key, default in (("ran", True), ("flag_only", False)):
        if data[key] == default:
            del data[key]
    return data


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str


Pair = namedtuple("Pair", "written found")


def test_every_gates_evidence_comes_out_as_asdict_made_it() -> None:
    source = f"{TITLES['ferry']}\n\n{FERRY}"
    drafts = [
        "The refit will cost £2.35m and the ferry runs for 11 weeks.",  # grounded
        "The refit will cost £3.5m, said Ilse Marrow: “We will sail on.”",  # not
    ]
    results = run_gates(SOURCE_GATES, source, "https://pellow.example.test/a", "", modes={})
    for draft in drafts:
        results += run_gates(DRAFT_GATES, source, "https://pellow.example.test/a", draft, modes={})
    assert len(results) >= 2 * len(DRAFT_GATES)
    for result in results:
        assert result.verdict.to_dict() == _as_before(result.verdict)


def test_the_shapes_evidence_may_take_come_out_as_asdict_made_them() -> None:
    evidence = {
        "spans": [Span(1, 4, "Tarrow")],
        "pairs": (Pair("£2.35m", [Span(5, 9, "2.35")]), Pair("11", None)),
        "ordered": OrderedDict(b=1.5, a=True),
        "sets": [frozenset({"a"})],
        7: "an int key",
    }
    for verdict in (
        Verdict("numbers_grounded", True, "all found", evidence),
        Verdict("claims_supported", False, "no model", None, ran=False),
        Verdict("faithfulness", False, "minor", ["x"], flag_only=True),
    ):
        made = verdict.to_dict()
        assert made == _as_before(verdict)
        assert type(made["evidence"]) is type(_as_before(verdict)["evidence"])
    made = Verdict("g", True, "r", evidence).to_dict()["evidence"]
    assert type(made["pairs"][0]) is Pair and type(made["ordered"]) is OrderedDict
    assert made["spans"] is not evidence["spans"]  # a copy: the caller's evidence stays its own


def test_evidence_of_plain_lists_and_dicts_is_copied_without_asking_for_dataclasses(
    calls_of,
) -> None:
    """Issue 24, session 13: atoms, lists and dicts (most evidence) are told by their
    exact type; `is_dataclass` is asked only of what they are not. Counted, not timed."""
    from guards import verdict as module

    asked = calls_of(module, "is_dataclass")
    evidence = {
        "claims": [{"sentence": n, "passage": "Tarrow quay", "found": [n, None]} for n in range(4)]
    }
    verdict = Verdict("claims_supported", True, "all supported", evidence)
    made = verdict.to_dict()
    assert made == _as_before(verdict)
    assert made["evidence"]["claims"] is not evidence["claims"]
    assert asked[0] == 0, asked[0]  # failed before: 10, one a list and dict
    Verdict("g", True, "r", {"spans": [Span(1, 4, "Tarrow")]}).to_dict()
    assert asked[0] == 1  # the dataclass, found as before
