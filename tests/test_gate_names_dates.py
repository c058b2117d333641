"""names_grounded and dates_grounded, case by case, and names measured on annotated material."""

from __future__ import annotations

import pytest

from guards.dates import dates_grounded
from guards.names import names_grounded
from guards.registry import DEFAULT_MODES
from review_ui.desk import highlight as hl
from tests.names_material import ARTICLES, DRAFTS, HELD_OUT, HELD_OUT_ARTICLE

URL = "https://news.example.org/ostbrook"

SOURCE = (
    "The harbour board of Ostbrook met on Thursday, 9 January 2026. Mr Salmond, the "
    "chair, said the Keldmoor Shipping lease would be signed next week. Jean-Luc Moreau "
    "of the Bank of Ostbrook said yesterday that the bank's offer stood. Tallis's "
    "deputy, Jan Olde, spoke for the NHS trust. The lease ends on 2031-03-31. london "
    "dockers were not consulted."
)

# (draft, passes, why)
NAMES = [
    ("Mr Salmond said the lease would be signed.", True, "honorific and surname"),
    ("Alex Salmond said the lease would be signed.", False, "a first name the source never gives"),
    ("Salmond's board met.", True, "a possessive"),
    ("Jean-Luc Moreau said the offer stood.", True, "a hyphenated name"),
    ("Jean-Paul Moreau said the offer stood.", False, "one part of a hyphenated name is new"),
    ("Dockers in London were not consulted.", True, "lookup is case-insensitive"),
    ("The Bank of Ostbrook's offer stood.", True, "an organisation with 'of'"),
    ("The Bank of Vellmouth's offer stood.", False, "a different organisation"),
    ("Tallis's deputy spoke for the NHS trust.", True, "possessive and acronym"),
    ("Olde spoke for the BMA.", False, "an acronym the source never uses"),
    ("However, the board met on Thursday.", True, "sentence-initial word and a weekday"),
    ("Meanwhile, Dr Olde spoke in January.", True, "honorific and month are skipped"),
    ("Officials said Keldmoor Shipping would sign.", True, "sentence-initial ordinary word"),
    ("\u201cNobody asked us,\u201d said Olde.", True, "capitalised after a quotation mark"),
    ("Keldmoor Freight will sign the lease.", False, "half of an organisation's name is new"),
    ("The lease was signed, said Marta Keldmoor.", False, "a person invented from a company"),
    ("Harbour Board Signs Keldmoor Lease\n\nThe board met.", True, "a Title Case headline"),
    ("Harbour Board Signs Varga Lease\n\nThe board met.", False, "a headline still checks names"),
]

# (draft, passes, why)
DATES = [
    ("The board met on Thursday.", True, "the same weekday"),
    ("The board met on Friday.", False, "Friday for Thursday: the commonest invention"),
    ("The board met on 9 January.", True, "day and month"),
    ("The board met on January 9th.", True, "another style"),
    ("The board met on Jan. 9.", True, "abbreviated month"),
    ("The board met on 9 Jan 2026.", True, "with its year"),
    ("The board met on 10 January.", False, "another day"),
    ("The board met on 9 February.", False, "another month"),
    ("The board met on 9 January 2025.", False, "another year"),
    ("The board met in January 2026.", True, "month and year"),
    ("The board met in February 2026.", False, "month and year not in the source"),
    ("The lease ends on 31 March 2031.", True, "the source gave an ISO date"),
    ("The lease ends on 30 March 2031.", False, "not that day"),
    ("Moreau spoke yesterday.", True, "a relative day the source uses"),
    ("Moreau spoke today.", False, "a relative day the source does not use"),
    ("The lease will be signed next week.", True, "next week"),
    ("The lease will be signed next month.", False, "next month"),
    ("The board met on Thursday 9 January.", True, "both, as the source"),
    ("The board met on Tuesday 9 January.", False, "a weekday is not grounded by a date"),
    ("Officials may march on the quay.", True, "may and march are verbs here"),
]


@pytest.mark.parametrize(("draft", "passes", "why"), NAMES, ids=[d for d, _, _ in NAMES])
def test_names(draft: str, passes: bool, why: str) -> None:
    v = names_grounded(SOURCE, URL, draft)
    assert v.passed is passes, (why, v.reason, v.evidence)


@pytest.mark.parametrize(("draft", "passes", "why"), DATES, ids=[d for d, _, _ in DATES])
def test_dates(draft: str, passes: bool, why: str) -> None:
    v = dates_grounded(SOURCE, URL, draft)
    assert v.passed is passes, (why, v.reason, v.evidence)


def test_names_evidence_names_the_missing_first_name() -> None:
    draft = "Alex Salmond said the lease would be signed."
    v = names_grounded(SOURCE, URL, draft)
    (entry,) = v.evidence
    assert entry == {
        "name": "Alex Salmond",
        "found": False,
        "draft_span": [0, 12],
        "missing": ["Alex"],
        "source_span": None,
    }
    assert v.reason == "1 of 1 names not in the source: Alex Salmond (Alex)"


def test_dates_evidence_carries_the_value_compared() -> None:
    v = dates_grounded(SOURCE, URL, "The board met on Friday.")
    (entry,) = v.evidence
    assert entry["date"] == "Friday" and entry["kind"] == "weekday" and entry["value"] == "fri"
    assert entry["found"] is False and entry["source_span"] is None
    found = dates_grounded(SOURCE, URL, "It met on Thursday.").evidence[0]
    assert SOURCE[slice(*found["source_span"])] == "Thursday"


def test_new_gates_flag_by_default() -> None:
    assert DEFAULT_MODES["names_grounded"] == "flag"
    assert DEFAULT_MODES["dates_grounded"] == "flag"


def test_flagged_names_and_dates_are_highlighted_escaped() -> None:
    draft = hl.draft_text("<b>Alex Salmond</b> on Friday", "Mr Salmond met on Thursday.")
    infos = []
    for gate in (names_grounded, dates_grounded):
        v = gate(SOURCE, URL, draft)
        infos.append(hl.VerdictInfo(v.gate, v.passed, "flag", v.reason, v.evidence))
    marks = {draft[m.start : m.end]: m.kind for m in hl.draft_marks(draft, infos)}
    assert marks["Alex Salmond"] == hl.FLAGGED
    assert marks["Friday"] == hl.FLAGGED
    assert marks["Thursday"] == hl.GROUNDED
    html = hl.render(draft, hl.draft_marks(draft, infos))
    assert "<b>" not in html and "&lt;b&gt;" in html
    sources = [SOURCE[m.start : m.end] for m in hl.source_marks(SOURCE, infos)]
    assert "Salmond" in sources and "Thursday" in sources


def _scores(pairs) -> tuple[int, int, int]:
    tp = fp = fn = 0
    for source, draft, invented in pairs:
        flagged = [e["name"] for e in names_grounded(source, URL, draft).evidence if not e["found"]]
        tp += sum(any(x in name for x in invented) for name in flagged)
        fp += sum(not any(x in name for x in invented) for name in flagged)
        fn += sum(not any(x in name for name in flagged) for x in invented)
    return tp, fp, fn


def test_names_precision_and_recall_on_the_material() -> None:
    """The figures in docs/gates.md (bench/bench_names.py prints them)."""
    tuned = _scores([(ARTICLES[a], d, inv) for a, d, inv in DRAFTS])
    held = _scores([(HELD_OUT_ARTICLE, d, inv) for d, inv in HELD_OUT])
    for tp, fp, fn in (tuned, held):
        assert tp / (tp + fp) >= 0.9 and tp / (tp + fn) >= 0.9, (tp, fp, fn)
