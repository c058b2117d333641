"""Evidence highlighting: right spans marked, untrusted text always escaped."""

from __future__ import annotations

import html
from html.parser import HTMLParser

from hypothesis import given
from hypothesis import strategies as hs

from guards.numbers import numbers_grounded
from guards.quotes import quotes_verbatim
from review_ui.desk import highlight as hl
from tests.review_seed import IMG, JS_LINK, MD_IMAGE, SCRIPT

SOURCE = (
    "The council approved £3.1 million by 23 votes to 8. "
    '"A town that sells its library has decided what it thinks of itself," she said. '
    "The old estimate was 2310 pounds."
)


class _Tags(HTMLParser):
    """Collects every tag and attribute, and the text as a browser would see it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(fragment: str) -> _Tags:
    parser = _Tags()
    parser.feed(fragment)
    parser.close()
    return parser


def verdicts_for(source: str, draft: str, mode: str = "discard") -> list[hl.VerdictInfo]:
    out = []
    for gate in (numbers_grounded, quotes_verbatim):
        v = gate(source, None, draft)
        out.append(hl.VerdictInfo(v.gate, v.passed, mode, v.reason, v.evidence))
    return out


def test_grounded_numbers_and_quotes_are_marked_where_the_source_has_them() -> None:
    draft = hl.draft_text(
        "Library saved by 23 votes",
        'The council approved £3.1 million. "A town that sells its library has decided '
        'what it thinks of itself," she said.',
    )
    marks = hl.source_marks(SOURCE, verdicts_for(SOURCE, draft))
    marked = [SOURCE[m.start : m.end] for m in marks]
    assert "23" in marked and "3.1 million" in marked  # the scale word is part of the value
    assert any(t.startswith("A town that sells") for t in marked)
    assert all(m.kind == hl.GROUNDED for m in marks)
    assert "2310" not in marked  # not in the draft: nothing to mark


def test_missing_number_is_marked_in_the_draft_not_in_the_source() -> None:
    draft = hl.draft_text("Library saved by 31 votes", "The estimate was 2310 pounds.")
    infos = verdicts_for(SOURCE, draft)
    d_marks = hl.draft_marks(draft, infos)
    by_text = {draft[m.start : m.end]: m.kind for m in d_marks}
    assert by_text["31"] == hl.MISSING  # 31 is not inside 2310
    assert by_text["2310"] == hl.GROUNDED
    s_marks = hl.source_marks(SOURCE, infos)
    assert [SOURCE[m.start : m.end] for m in s_marks] == ["2310"]


def test_flag_mode_marks_problems_as_flagged() -> None:
    draft = hl.draft_text("Headline", 'She said "we sold the library" on Monday.')
    infos = verdicts_for(SOURCE, draft, mode="flag")
    kinds = {m.kind for m in hl.draft_marks(draft, infos)}
    assert kinds == {hl.FLAGGED}


def test_names_and_claims_of_future_gates_are_marked_generically() -> None:
    draft = "Mayor Tobin Ashgrove said the plan was approved."
    evidence = [
        {"name": "Tobin Ashgrove", "found": False, "source_span": None},
        {"claim": "the plan was approved", "supported": True, "source_span": [11, 19]},
    ]
    infos = [hl.VerdictInfo("names_grounded", False, "flag", "1 name not in source", evidence)]
    marks = {draft[m.start : m.end]: m.kind for m in hl.draft_marks(draft, infos)}
    assert marks == {"Tobin Ashgrove": hl.FLAGGED, "the plan was approved": hl.GROUNDED}
    assert [(m.start, m.end) for m in hl.source_marks(SOURCE, infos)] == [(11, 19)]


def test_bad_spans_and_odd_evidence_are_ignored() -> None:
    evidence = [
        {"number": "23", "found": True, "source_span": [5, 999]},
        {"number": "23", "found": True, "source_span": [True, 4]},
        {"number": "23", "found": True, "source_span": "0-4"},
        {"number": "23", "found": True, "source_span": [9, 3]},
        "not a dict",
        {"found": True, "source_span": [0, 3]},  # no term
    ]
    infos = [hl.VerdictInfo("numbers_grounded", True, "discard", "", evidence)]
    assert hl.source_marks(SOURCE, infos) == []
    assert hl.source_marks(SOURCE, [hl.VerdictInfo("x", True, "discard", "", {"a": 1})]) == []


def test_problems_win_where_marks_overlap() -> None:
    marks = hl.resolve(
        [
            hl.Mark(0, 20, hl.GROUNDED, "quote"),
            hl.Mark(5, 7, hl.MISSING, "number"),
            hl.Mark(25, 30, hl.GROUNDED, "other"),
        ]
    )
    assert [(m.start, m.end, m.kind) for m in marks] == [
        (5, 7, hl.MISSING),
        (25, 30, hl.GROUNDED),
    ]


def test_render_slices_keep_marks_in_whole_text_offsets() -> None:
    draft = hl.draft_text("Cut by 23", "Then 8 more.")
    marks = [hl.Mark(7, 9, hl.GROUNDED, "n")]
    assert hl.render(draft, marks, 0, 9).endswith(">23</mark>")
    assert "<mark" not in hl.render(draft, marks, 11)


def test_hostile_text_stays_text() -> None:
    source = f"Intro {SCRIPT} then {IMG} and {MD_IMAGE} and {JS_LINK} end 23."
    evidence = [{"number": "23", "found": True, "source_span": [len(source) - 3, len(source) - 1]}]
    infos = [hl.VerdictInfo("numbers_grounded", True, "discard", "", evidence)]
    out = hl.block(hl.render(source, hl.source_marks(source, infos)))
    parsed = parse(out)
    assert [t for t, _ in parsed.tags] == ["div", "mark"]
    assert "<script" not in out and "<img" not in out
    assert "".join(parsed.text) == source  # what a reader sees is the text, literally
    assert MD_IMAGE in out and JS_LINK in out  # markdown is not interpreted


def test_notes_and_bidi_controls_are_escaped() -> None:
    mark = hl.Mark(0, 3, hl.GROUNDED, 'x" onmouseover="alert(1)')
    out = hl.render("abc\u202edef", [mark])
    assert 'onmouseover="' not in out
    assert "\u202e" not in out and "\\u202e" in out


@given(
    text=hs.text(max_size=200),
    spans=hs.lists(hs.tuples(hs.integers(0, 220), hs.integers(0, 220)), max_size=8),
    kind=hs.sampled_from([hl.GROUNDED, hl.MISSING, hl.FLAGGED]),
)
def test_any_text_and_marks_render_to_only_our_tags(
    text: str, spans: list[tuple[int, int]], kind: str
) -> None:
    text = text.replace("\r", "")  # the parser folds CR; irrelevant to safety
    marks = hl.resolve(hl.Mark(a, b, kind, text[:10]) for a, b in spans if 0 <= a < b <= len(text))
    out = hl.block(hl.render(text, marks))
    parsed = parse(out)
    assert {t for t, _ in parsed.tags} <= {"div", "mark"}
    for _, attrs in parsed.tags:
        assert {name for name, _ in attrs} <= {"class", "style", "title"}
    expected = hl._BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    assert "".join(parsed.text) == expected
    assert html.unescape(out).count("<mark") == len(marks) + text.count("<mark")


def test_the_judge_settling_passages_are_marked_in_the_source() -> None:
    from guards.checks import SentenceJudgement, faithfulness

    draft = "The council approved £3.1 million. The library will be sold."
    clean = SentenceJudgement(
        "The council approved £3.1 million.", (), False,
        "The council approved £3.1 million.", "approved", "approved", False,
        "The council approved £3.1 million by 23 votes to 8",
    )  # fmt: skip
    hedged = SentenceJudgement(
        "The library will be sold.", ("framing",), False, "She said it was being sold.",
        "it is sold", "she thinks so", True,
        "A town that sells its library has decided what it thinks of itself",
    )  # fmt: skip
    invented = SentenceJudgement(
        "The library will be sold.", ("framing",), False, "-", "a", "b", True,
        "The library was sold in 2019",  # not in the source: never marked
    )  # fmt: skip
    for mode, problem in (("flag", hl.FLAGGED), ("discard", hl.MISSING)):
        v = faithfulness(SOURCE, draft, [clean, hedged])
        info = hl.VerdictInfo(v.gate, v.passed, mode, v.reason, v.evidence)
        marks = {SOURCE[m.start : m.end]: (m.kind, m.note) for m in hl.source_marks(SOURCE, [info])}
        assert marks == {
            "The council approved £3.1 million by 23 votes to 8": (
                hl.GROUNDED, "faithfulness: settles sentence 1 (faithful)"),
            "A town that sells its library has decided what it thinks of itself": (
                problem, "faithfulness: settles sentence 2 (material error)"),
        }  # fmt: skip
    v = faithfulness(SOURCE, draft, [clean, invented])
    info = hl.VerdictInfo(v.gate, v.passed, "flag", v.reason, v.evidence)
    assert [SOURCE[m.start : m.end] for m in hl.source_marks(SOURCE, [info])] == [
        "The council approved £3.1 million by 23 votes to 8"
    ]
