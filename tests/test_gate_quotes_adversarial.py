"""quotes_verbatim against drafts written to slip an invented quotation past it.

Each case: (draft, passes, why), checked against one invented source article.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guards.quotes import find_quotes, quotes_verbatim

URL = "https://news.example.org/brackwater/budget"

SOURCE = (
    "The treasurer of Brackwater, Odile Fenn, spoke on Tuesday. \u201cWe will not raise "
    "taxes next year,\u201d she said. \u201cThe harbour levy stays where it is.\u201d\n\n"
    "Her rival, Casimir Lunde, said the plan was \u201ca fairy tale\u201d and added: "
    "\u201cTwenty months from now the town will be broke. Nobody believes the figures.\u201d\n\n"
    "The fire chief, Ines Harrow, said: \u201cThe cause of the fire was an electrical fault, "
    "not arson. We found no sign of a break-in.\u201d Residents called the depot "
    "\u2018a death trap\u2019 in the \u201990s, she said, and it was rock \u2019n\u2019 roll "
    "at the dance hall until 11 o\u2019clock. \u201cWe don\u2019t know when it reopens.\u201d\n\n"
    "Fenn later said the budget would \u201cprotect the harbour, the schools and, above all, "
    "the people who live here.\u201d Lunde did not reply."
)

CASES = [
    # --- every quotation mark
    ("Fenn: \u201cWe will not raise taxes next year.\u201d", True, "curly double"),
    ('Fenn: "We will not raise taxes next year."', True, "straight double"),
    ("Fenn: \u2018We will not raise taxes next year.\u2019", True, "curly single"),
    ("Fenn: 'We will not raise taxes next year.'", True, "straight single"),
    ("Fenn: \u201eWe will not raise taxes next year.\u201c", True, "low-9 German"),
    ("Fenn: \u201fWe will raise taxes next year.\u201d", False, "high-reversed-9 opens"),
    ("Fenn: \u00abWe will raise taxes next year\u00bb.", False, "guillemets"),
    ("Fenn: \u2039We will raise taxes next year\u203a.", False, "single guillemets"),
    ("Fenn: \u300cWe will raise taxes next year\u300d.", False, "CJK corner brackets"),
    ("Fenn: \u300eWe will raise taxes next year\u300f.", False, "CJK white corner brackets"),
    ("Fenn: \u300cWe will not raise taxes next year\u300d.", True, "corner brackets, verbatim"),
    ("Fenn: \uff02We will raise taxes next year\uff02.", False, "fullwidth quotation marks"),
    ("Fenn: \u2033We will raise taxes next year\u2033.", False, "double primes used as quotes"),
    ("Fenn: \u301dWe will raise taxes next year\u301e.", False, "CJK double prime quotes"),
    ("Fenn: \u275dWe will raise taxes next year\u275e.", False, "ornamental quotes"),
    # --- single quotes: elision or quotation, by shape
    ("'20 months from now we abolish all taxes,' she said.", False, "starts with digits"),
    ("'Twenty months from now the town will be broke,' Lunde said.", True, "verbatim"),
    ("'Cause of the fire was arson,' said Harrow.", False, "starts like 'cause"),
    ("Harrow said:'We will raise taxes,' and left.", False, "no space after the colon"),
    ("Lunde called Fenn a 'liar'.", False, "one-word scare quotes are quotations"),
    ("Lunde called the plan a 'fairy tale'.", True, "two words, verbatim"),
    ("Residents hated the depot in the '90s.", True, "'90s is an elision"),
    ("It was rock 'n' roll until 11 o'clock.", True, "'n' and o'clock are elisions"),
    ("'Tis the season, and they told 'em so.", True, "'tis and 'em"),
    ("They don't know when it reopens.", True, "an apostrophe inside a word"),
    ("The Smiths' house and the Joneses' boat stay.", True, "plural possessives"),
    # --- ellipsis
    ("\u201cWe will \u2026 raise taxes next year\u201d", False, "the omission held 'not'"),
    ("\u201cWe will ... raise taxes next year\u201d", False, "three dots, same inversion"),
    ("\u201cWe will not raise taxes \u2026 she said\u201d", False, "skips a closing mark"),
    (
        "\u201cThe cause of the fire was \u2026 arson\u201d",
        False,
        "omits 'an electrical fault, not'",
    ),
    ("\u201cTwenty months from now \u2026 the town will be broke\u201d", True, "nothing omitted"),
    (
        "\u201cprotect the harbour \u2026 the people who live here\u201d",
        True,
        "omission, no negation",
    ),
    ("\u201cWe will not raise taxes \u2026 the people who live here\u201d", False, "too far apart"),
    ("\u201cthe people who live here \u2026 We will not raise taxes\u201d", False, "out of order"),
    ("\u201cWe found \u2026 sign of a break-in\u201d", False, "omits 'no'"),
    ("\u201cWe \u2026 know when it reopens\u201d", False, "omits n't"),
    # --- glued marks and paragraphs
    ('By 2024"we will abolish all taxes" today', False, "a mark glued to a digit opens"),
    ("By 2024\u201cwe will abolish all taxes\u201d today", False, "curly, glued"),
    ('A 15" screen showed "a fairy tale".', True, "an inch mark is not a quotation mark"),
    ("Lunde: \u201cTwenty months from now\n\nNobody believes the figures.\u201d", False, "whole"),
    ("Lunde: \u2018We will abolish all taxes forever\n\nand ever,\u2019 he said.", False, "single"),
    (
        "Fenn: \u201cWe will not raise taxes next year.\n\n\u201cThe harbour levy stays "
        "where it is.\u201d",
        False,
        "continued paragraphs are one quotation, and the source closes the quote between",
    ),
    (
        "Harrow: \u201cThe cause of the fire was an electrical fault,\n\nnot arson.\u201d",
        True,
        "a quotation across a paragraph break, verbatim",
    ),
    # --- what still passes
    ("Fenn: \u201cWE WILL NOT raise   taxes next year\u201d", True, "case and spacing"),
    ("Harrow: \u201cno sign of a break\u2013in\u201d", True, "dash style"),
    ("Harrow: \u201cno sign of a break in\u201d", False, "a dash is not a space"),
]


@pytest.mark.parametrize(("draft", "passes", "why"), CASES, ids=[d for d, _, _ in CASES])
def test_adversarial(draft: str, passes: bool, why: str) -> None:
    v = quotes_verbatim(SOURCE, URL, draft)
    assert v.passed is passes, (why, v.evidence)


def test_enough_cases() -> None:
    assert len(CASES) >= 40
    assert sum(not passes for _, passes, _ in CASES) >= 20


def test_unrecognised_marks_do_not_read_as_no_quotations() -> None:
    """A draft whose only quotation is in a mark the gate does not pair fails."""
    v = quotes_verbatim(SOURCE, URL, "Fenn said \u2e02we will raise taxes\u2e03 today.")
    assert not v.passed
    assert "quotation mark" in v.reason


def test_ellipsis_evidence_names_the_omission() -> None:
    v = quotes_verbatim(SOURCE, URL, "\u201cWe will \u2026 raise taxes next year\u201d")
    (entry,) = v.evidence
    assert entry["found"] is False
    assert "not" in entry["omission"]


_WORDS = "we will not raise taxes next year the harbour levy stays where it is".split()
_PAIRS = [
    ("\u201c", "\u201d"),
    ('"', '"'),
    ("\u2018", "\u2019"),
    ("\u00ab", "\u00bb"),
    ("\u300c", "\u300d"),
    ("\u201e", "\u201c"),
    ("\uff02", "\uff02"),
]


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(st.sampled_from(_WORDS), min_size=2, max_size=8), pair=st.sampled_from(_PAIRS)
)
def test_an_invented_quotation_in_any_mark_is_checked(words, pair) -> None:
    text = " ".join(words)
    opening, closing = pair
    draft = f"Fenn said {opening}{text}{closing} on Tuesday."
    assert [draft[q.start : q.end] for q in find_quotes(draft)] == [text]
    v = quotes_verbatim(SOURCE, URL, draft)
    assert v.passed is (text in SOURCE.lower()), v.evidence
