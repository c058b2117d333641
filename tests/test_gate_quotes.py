"""quotes_verbatim: finding the draft's quotations and matching them word for word."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guards.quotes import find_quotes, fragments, quotes_verbatim
from guards.text import shorten

URL = "https://news.example.org/ostbrook/harbour"

# An invented article.
SOURCE = (
    "The mayor of Ostbrook, Lena Varga, said on Monday: \u201cWe will not close the port. "
    "Not this year, not next year.\u201d The portfolio of the harbour board grew by a "
    "third.\n\nHer deputy, Tomas Reint, called the board\u2019s plan \u2014 agreed in March "
    "\u2014 \u201cfair to everyone\u201d and said the Smiths\u2019 boatyard would stay. "
    "\u201eWir bleiben hier\u201c, sagte der Fischer Jan Olde. \u00abNous restons ici\u00bb, "
    "a ajout\u00e9 Marie Coste. 'It was a long night,' said the harbour master."
)


def check(draft: str, source: str = SOURCE):
    return quotes_verbatim(source, URL, draft)


def quoted(draft: str) -> list[str]:
    return [draft[q.start : q.end] for q in find_quotes(draft)]


# --- finding the quotes -------------------------------------------------------

FINDING = [
    ('He said "we will win" and left.', ["we will win"]),
    ("\u201cWe will win,\u201d she said.", ["We will win,"]),
    ("\u201eWir gewinnen\u201c, sagte sie.", ["Wir gewinnen"]),
    ("\u201eWir gewinnen\u201d, sagte sie.", ["Wir gewinnen"]),
    ("\u00ab Nous gagnons \u00bb, dit-elle.", [" Nous gagnons "]),
    ("\u00bbWir gewinnen\u00ab, sagte sie.", ["Wir gewinnen"]),
    ("\u201dVi vinner\u201d, sa hon.", ["Vi vinner"]),
    ("\u2039Wir gewinnen\u203a, sagte sie.", ["Wir gewinnen"]),
    ("\u201cA typo here\u201c she said.", ["A typo here"]),
    ("We don\u2019t know.", []),
    ("We stayed at the Smiths\u2019 house.", []),
    ("Rock 'n' roll and the '90s.", []),
    ("He told 'em to go and said 'we will win'.", ["we will win"]),
    ("\u2018The Smiths\u2019 house is big,\u2019 she said.", ["The Smiths\u2019 house is big,"]),
    ("\u2018We won,\u2019 said the Smiths\u2019 lawyer.", ["We won,"]),
    ("A \u2018single\u2019 word is a quote too.", ["single"]),  # scare quotes are checked
    ("A \u201csingle\u201d word is.", ["single"]),
    ("\u201aNein, danke\u2018, sagte er.", ["Nein, danke"]),
    (
        "\u201cHe called it \u2018a total disgrace\u2019 today,\u201d she said.",
        ["He called it \u2018a total disgrace\u2019 today,", "a total disgrace"],
    ),
    ('He said "unclosed to the end', ["unclosed to the end"]),
    ('One "open\n\nand" another', ["open\n\nand"]),  # over a paragraph break
    ("\u2018Blue Lions\u2019 and \u2018Red Foxes\u2019 played.", ["Blue Lions", "Red Foxes"]),
    ('A 15" screen and "a clear picture" here.', ["a clear picture"]),
    ('He said "we hired 20" today.', ["we hired 20"]),
    ("\u2019We won the cup,\u2019 she said.", ["We won the cup,"]),
    ("\u2019Tis the season, and \u2019em too.", []),
    ("", []),
]


@pytest.mark.parametrize(("draft", "expected"), FINDING, ids=[d for d, _ in FINDING])
def test_find_quotes(draft: str, expected: list[str]) -> None:
    assert quoted(draft) == expected


def test_unclosed_quote_is_marked() -> None:
    (q,) = find_quotes('He said "we will not close the port')
    assert q.closed is False


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("We will not close the port.", ["We will not close the port"]),
        ("We will \u2026 close the port", ["We will", "close the port"]),
        ("We will ... close, ... the port", ["We will", "close", "the port"]),
        ("We will . . . close", ["We will", "close"]),
        ("We will [\u2026] close", ["We will", "close"]),
        ("\u2026 close the port \u2026", ["close the port"]),
        ("\u2026", []),
    ],
)
def test_fragments(text: str, parts: list[str]) -> None:
    assert fragments(text) == parts


# --- matching -------------------------------------------------------------------

# (draft, passes)
CASES = [
    ('Varga said "we will not close the port".', True),
    ("Varga said \u201cWe will not close the port.\u201d", True),
    ("Varga said \u201cWE WILL NOT close the PORT\u201d.", True),
    ("Varga said \u201cwe   will not\n close the port\u201d.", True),
    ("Varga: \u201cWe will not close the port, not this year\u201d", False),  # "." became ","
    # the omission ". Not this year," holds a negation: never left out by an ellipsis
    ("Varga: \u201cWe will not close the port \u2026 not next year.\u201d", False),
    ("Varga: \u201cWe will not close the port ... Not next year\u201d", False),
    ("Varga: \u201cWe will not close \u2026 port\u201d", True),
    ("Varga: \u201cNot next year \u2026 we will not close the port\u201d", False),
    ("Varga: \u201cWe will not close the port \u2026 not in ten years\u201d", False),
    ("Varga: \u201cWe will not close the harbour\u201d", False),
    ("Varga: \u201cWe will never close the port\u201d", False),
    ("Varga: \u201cWe will not ever close the port\u201d", False),
    ("She spoke of \u201cthe port\u201d.", True),
    ("She spoke of \u201cthe portf\u201d.", False),
    ("The \u201cportfolio\u201d grew.", True),
    ("The \u201cport\u201d grew.", True),  # "port" is a word of the source
    ("The \u201cportfolios\u201d grew.", False),
    ("He called it \u201cfair to everyone\u201d.", True),
    ("He called it \u00abfair to everyone\u00bb.", True),
    ("He called it \u201efair to everyone\u201c.", True),
    ("He called it \u00bbfair to everyone\u00ab.", True),
    ("He called it 'fair to everyone'.", True),
    ("He called it \u2018fair to everyone\u2019.", True),
    ("He called it \u2018fair to all\u2019.", False),
    ("He called it \u2018unfair\u2019.", False),  # one word in single marks: a quote too
    ("He called it \u201cunfair\u201d.", False),  # one word in double marks: a quote
    ("He said \u201cthe plan was fair to everyone\u201d.", False),
    ("\u201cthe board's plan - agreed in March - fair to everyone\u201d", False),
    ("\u201cthe board's plan - agreed in March - 'fair to everyone'\u201d", True),
    ("\u201cthe board\u2019s plan \u2013 agreed in March \u2013 \u2018fair\u2019\u201d", True),
    ("\u201cthe boards plan\u201d", False),
    ("\u201cthe Smiths' boatyard would stay\u201d", True),
    ("The Smiths\u2019 boatyard and the board\u2019s plan stay.", True),  # no quotes
    ("\u201eWir bleiben hier\u201c, sagte Olde.", True),
    ("\u201eWir bleiben dort\u201c, sagte Olde.", False),
    ("\u00ab Nous restons ici \u00bb, a dit Coste.", True),
    ("\u00ab\u00a0Nous restons ici\u00a0!\u00a0\u00bb, a dit Coste.", True),
    ('The harbour master said "it was a long night".', True),
    ("The harbour master said 'it was a long night'.", True),
    ("The harbour master said 'it was a short night'.", False),
    ("\u201cWe will [\u2026] close the port\u201d", False),  # [\u2026] omits "not"
    ("\u201cWe will not [\u2026] the port\u201d", True),  # [\u2026] is an ellipsis
    ("\u201c[The mayor] will not close the port\u201d", False),
    ("\u201cwill not close the port. Not this year\u201d", True),
    ("\u201cnot next year. The portfolio\u201d", False),  # the source closes the quote between
    ("\u201cnot next year.\u2019 The portfolio\u201d", True),
    ('Empty "" marks and \u201c\u2026\u201d ellipses quote nothing.', True),
]


@pytest.mark.parametrize(("draft", "passes"), CASES, ids=[d for d, _ in CASES])
def test_cases(draft: str, passes: bool) -> None:
    v = check(draft)
    assert v.passed is passes, v.evidence
    assert v.gate == "quotes_verbatim"


def test_narration_around_a_quote_cannot_be_quoted() -> None:
    source = "Reint called the plan \u201cfair to everyone\u201d on Monday."
    assert not check("\u201cthe plan fair to everyone\u201d", source).passed
    assert check("Reint called \u201cthe plan \u2018fair to everyone\u2019\u201d", source).passed


def test_no_quotes_passes() -> None:
    v = check("The harbour stays open, the mayor said.")
    assert v.passed
    assert v.reason == "no quotations in the draft"
    assert v.evidence == []


def test_reason_names_the_first_missing_quote() -> None:
    draft = (
        "Varga said \u201cwe will not close the port\u201d. Reint called it "
        "\u201ca fair plan for all\u201d and \u201ca good day\u201d."
    )
    v = check(draft)
    assert not v.passed
    assert v.reason == "2 of 3 quotations not in the source; first: \u201ca fair plan for all\u201d"


def test_evidence_names_each_quote_and_where_it_is() -> None:
    draft = "Varga said \u201cwe will not close the port\u201d; Reint said \u201cno\u201d."
    v = check(draft)
    start = SOURCE.index("We will not close")
    assert v.evidence == [
        {
            "quote": "we will not close the port",
            "found": True,
            "draft_span": [draft.index("we"), draft.index("\u201d")],
            "source_span": [start, start + len("We will not close the port")],
            "closed": True,
        },
        {
            "quote": "no",
            "found": False,
            "draft_span": [draft.index("no\u201d"), draft.index("no\u201d") + 2],
            "source_span": None,
            "closed": True,
            # What the source says closest to it, for the auditor (guards/closest.py).
            "closest_in_source": v.evidence[1]["closest_in_source"],
        },
    ]
    closest = v.evidence[1]["closest_in_source"]
    assert SOURCE[slice(*closest["source_span"])] == closest["text"]
    assert v.reason == "1 of 2 quotations not in the source; first: \u201cno\u201d"
    json.dumps(v.to_dict())


def test_evidence_of_fragments() -> None:
    v = check("\u201cWe will not close \u2026 port\u201d")
    (entry,) = v.evidence
    first = SOURCE.index("We will not close")
    second = SOURCE.index("port")
    assert entry["source_span"] == [first, second + len("port")]
    assert entry["fragments"] == [
        {
            "text": "We will not close",
            "found": True,
            "source_span": [first, first + 17],
        },
        {
            "text": "port",
            "found": True,
            "source_span": [second, second + 4],
        },
    ]


def test_unclosed_quote_is_checked_to_the_end_of_the_draft() -> None:
    assert check('Varga said "we will not close the port').passed
    v = check('Varga said "we will not close the harbour\n\nNew paragraph.')
    assert not v.passed
    assert v.evidence[0]["quote"] == "we will not close the harbour\n\nNew paragraph."
    assert v.evidence[0]["closed"] is False


def test_source_spans_point_at_the_original_text_despite_invisible_characters() -> None:
    source = "The mayor said the ferry was \u201cindi\u00adspensable for Ost\u200bbrook\u201d."
    v = check("She called it \u201cindispensable for Ostbrook\u201d.", source)
    assert v.passed
    start, end = v.evidence[0]["source_span"]
    assert source[start:end] == "indi\u00adspensable for Ost\u200bbrook"


def test_decomposed_accents_match_composed_ones() -> None:
    source = unicodedata.normalize(
        "NFD", "Marie Coste a dit: \u00abNous avons gagn\u00e9 ici\u00bb."
    )
    v = check("Coste: \u00abnous avons gagn\u00e9 ici\u00bb", source)
    assert v.passed
    start, end = v.evidence[0]["source_span"]
    assert unicodedata.normalize("NFC", source[start:end]) == "Nous avons gagn\u00e9 ici"


@pytest.mark.parametrize(
    ("source", "quote", "written"),
    [
        # casefold would turn ß into ss (longer): lower() keeps the offsets
        (
            "Olde sagte: \u201eDie Stra\u00dfe bleibt offen\u201c.",
            "die STRA\u00dfe bleibt",
            "Die Stra\u00dfe bleibt",
        ),
        # İ lowers to two characters: folded one character at a time
        (
            "Coste said the \u0130zmir ferry \u201cwill sail again\u201d.",
            "the \u0130ZMIR ferry",
            "the \u0130zmir ferry",
        ),
        (
            "Coste: \u00abL\u2019\u00e9T\u00c9 SERA LONG\u00bb",
            "l'\u00e9t\u00e9 sera long",
            "L\u2019\u00e9T\u00c9 SERA LONG",
        ),
    ],
)
def test_case_folding_keeps_source_offsets(source: str, quote: str, written: str) -> None:
    v = check(f"They said \u201c{quote}\u201d.", source)
    assert v.passed, v.evidence
    start, end = v.evidence[0]["source_span"]
    assert source[start:end] == written


def test_empty_source_fails_a_quote() -> None:
    assert not check("\u201cWe will not close the port\u201d", "").passed
    assert not quotes_verbatim(None, None, "\u201cWe will\u201d").passed  # type: ignore[arg-type]


# --- properties ---------------------------------------------------------------

WORDS = (
    "harbour board council crane ferry tide pier dredging tallis varga ostbrook mira "
    "quay barge tug warden levy toll berth canal lock keeper winter summer will not"
).split()
ABSENT = ["lighthouse", "gannet", "trawler", "moorings"]  # never in a generated source
MARKS = [('"', '"'), ("\u201c", "\u201d"), ("\u201e", "\u201c"), ("\u00ab", "\u00bb")]

_SENTENCES = st.lists(st.sampled_from(WORDS), min_size=4, max_size=14)
_ARTICLES = st.lists(_SENTENCES, min_size=2, max_size=8)


def _article(sentences: list[list[str]]) -> str:
    return " ".join(" ".join(s).capitalize() + "." for s in sentences)


@st.composite
def quoted_runs(draw) -> tuple[str, list[str]]:
    """(source, a run of two or more consecutive words of one of its sentences)."""
    sentences = draw(_ARTICLES)
    sentence = draw(st.sampled_from(sentences))
    i = draw(st.integers(0, len(sentence) - 2))
    j = draw(st.integers(i + 2, len(sentence)))
    return _article(sentences), sentence[i:j]


def _write(words: list[str], case: list[bool], gaps: list[str]) -> str:
    cased = [w.upper() if up else w for w, up in zip(words, case, strict=False)]
    return "".join(w + g for w, g in zip(cased, gaps + [""] * len(cased), strict=False))


@settings(max_examples=100, deadline=None)
@given(
    run=quoted_runs(),
    marks=st.sampled_from(MARKS),
    case=st.lists(st.booleans(), min_size=14, max_size=14),
    gaps=st.lists(st.sampled_from([" ", "  ", "\n", "\u00a0", " \t "]), min_size=14, max_size=14),
)
def test_any_run_of_source_words_in_any_case_and_spacing_passes(run, marks, case, gaps) -> None:
    source, words = run
    text = _write(words, case, gaps[: len(words) - 1])
    draft = f"The keeper said {marks[0]}{text}{marks[1]} on Monday."
    v = quotes_verbatim(source, URL, draft)
    assert v.passed, (draft, v.evidence)


@settings(max_examples=100, deadline=None)
@given(run=quoted_runs(), marks=st.sampled_from(MARKS), data=st.data())
def test_a_changed_word_fails_and_is_named(run, marks, data) -> None:
    source, words = run
    k = data.draw(st.integers(0, len(words) - 1))
    changed = words[:k] + [data.draw(st.sampled_from(ABSENT))] + words[k + 1 :]
    text = " ".join(changed)
    draft = f"The keeper said {marks[0]}{text}{marks[1]} on Monday."
    v = quotes_verbatim(source, URL, draft)
    assert not v.passed
    closest = v.evidence[0].pop("closest_in_source")
    assert v.evidence == [
        {
            "quote": text,
            "found": False,
            "draft_span": [17, 17 + len(text)],
            "source_span": None,
            "closed": True,
        }
    ]
    assert closest is None or source[slice(*closest["source_span"])] == closest["text"]
    assert shorten(text) in v.reason  # long quotes are cut short in the reason


@settings(max_examples=100, deadline=None)
@given(run=quoted_runs(), data=st.data())
def test_a_cut_word_fails(run, data) -> None:
    """Quoting part of a word is not word for word ("the port" is not in "the portfolio")."""
    source, words = run
    last = words[-1]
    keep = data.draw(st.integers(1, len(last) - 1))
    cut = " ".join(words[:-1] + [last[:keep]])
    if last[:keep] in WORDS:
        return  # the shortened word is itself a word of the vocabulary
    v = quotes_verbatim(source, URL, f"\u201c{cut}\u201d")
    assert not v.passed, cut
