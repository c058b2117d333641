"""The gates' fast paths read a text exactly as the plain reading does.

Each fast path (byte views for digit runs and number words, the uncased
shortcut of `normalise`, the distinct-character check of `compat_fold`) is
compared with the straightforward code it replaces, on texts built from the
characters that could tell them apart: non-ASCII word characters before a
number word (é), the Kelvin sign and dotless/dotted I that lower-case oddly,
Σ (final sigma), ß, invisible and compatibility characters, other digits.
"""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from guards.numbers import _WORD_RUN, _digit_runs, _word_runs
from guards.text import Normalised, _fold, compat_fold, fold_char, non_ascii, normalise

PIECES = [
    "one", "Two", "twenty", "-", " ", "  ", "\n", "seven", "seventy", "million", "and", "point",
    "thousand", "first", "é", "Kelvin \u212a", "\u0130", "\u03a3", "ß", "\u201c", "\u2019", "(",
    "ten", "tenant", "someone", "x", "_", "4", "12", "\u0663", "\u00a0", "\u200b", "\ufb01",
    "\u00b2", "\uff14", "\u0301", "e\u0301", "£", ".", ",", "\ud800",
]  # fmt: skip
TEXTS = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def _lower(text: str) -> str:
    lower = text.lower()
    if len(lower) != len(text):
        lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return lower


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_word_runs_are_the_plain_scan(text: str) -> None:
    expected = [m.span() for m in _WORD_RUN.finditer(_lower(text))]
    assert [m.span() for m in _word_runs(text)] == expected


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_digit_runs_are_the_ascii_digit_runs(text: str) -> None:
    expected = [m.span() for m in re.finditer(r"[0-9]+", text)]
    assert [m.span() for m in _digit_runs(text)] == expected


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_non_ascii_is_every_non_ascii_character(text: str) -> None:
    assert non_ascii(text) == frozenset(c for c in text if not c.isascii())


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_compat_fold_is_fold_char_on_each_character(text: str) -> None:
    expected = "".join(c if c.isascii() else fold_char(c) for c in text)
    assert compat_fold(text).text == expected


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_normalise_fast_path_is_casefold(text: str) -> None:
    plain = normalise(text)
    if not any(c in text for c in "\u00ad\u200b\u200c\u200d\u2060\ufeff") and (
        unicodedata.is_normalized("NFC", text)
    ):
        reference: Normalised = _fold(text, None, None)
        assert (plain.text, plain.fold) == (reference.text, reference.fold)


def test_final_sigma_and_kelvin_are_not_lowered_by_the_shortcut() -> None:
    # str.lower gives ς at a word's end where casefold gives σ: the shortcut must not apply.
    assert normalise("ΟΔΟΣ 12").text == "ΟΔΟΣ 12".casefold()
    # The Kelvin sign lower-cases to k, a word character: "one" after it is no number word.
    assert [m.span() for m in _word_runs("\u212aone two")] == [(5, 8)]
    assert [m.span() for m in _word_runs("\u201cone two")] == [(1, 8)]
