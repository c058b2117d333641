"""guards/closest.py: the source wording closest to a quotation the source lacks."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guards.closest import closest_passage
from guards.quotes import quotes_verbatim

SOURCE = (
    "Dunmere's market opened in 2011 with 15 stalls. Its organiser, Priya Castellane, "
    "said: \u201cPeople only buy from the farmer who grew it, and they tell their "
    "neighbours.\u201d The council will decide on Sunday trading in May."
)


def _shown(source: str, quote: str) -> str:
    found = closest_passage(source, quote)
    assert found is not None
    start, end = found["source_span"]
    assert source[start:end] == found["text"]  # the span points at the original text
    return found["text"]


def test_reordered_words_find_the_sentence_the_source_has() -> None:
    assert _shown(SOURCE, "people buy only from the farmer who grew it") == (
        "People only buy from the farmer who grew it"
    )


def test_a_changed_word_at_the_end_does_not_drag_in_the_next_word() -> None:
    assert _shown(SOURCE, "they tell their friends") == "they tell their neighbours"


@pytest.mark.parametrize("invisible", ["\u200b", "\u00ad", "\u2060", "\ufeff", "\u200d"], ids=repr)
def test_invisible_characters_in_the_source_are_skipped_and_kept_in_the_span(
    invisible: str,
) -> None:
    source = SOURCE.replace("farmer", f"far{invisible}mer")
    shown = _shown(source, "people buy only from the farmer who grew it")
    assert shown == f"People only buy from the far{invisible}mer who grew it"


def test_invisible_characters_in_the_quote_do_not_push_it_away() -> None:
    found = closest_passage(SOURCE, "people buy only from the far\u200bmer who grew it")
    assert found is not None and found["text"] == "People only buy from the farmer who grew it"
    plain = closest_passage(SOURCE, "people buy only from the farmer who grew it")
    assert plain is not None and found["similarity"] == plain["similarity"]


def test_curly_and_straight_quotes_and_apostrophes_compare_alike() -> None:
    source = "She said it\u2019s \u201cnot the council\u2019s fault\u201d at all."
    shown = _shown(source, "it's not the councils fault")
    assert shown == "it\u2019s \u201cnot the council\u2019s fault"
    assert closest_passage(source, "it\u2019s not the council\u2019s fault")["similarity"] > 90  # type: ignore[index]


def test_decomposed_accents_match_composed_ones() -> None:
    source = "The caf\u00e9 owner, Ren\u00e9e Holm, said the rent doubled."
    quote = unicodedata.normalize("NFD", "the cafe owner Renée Holm said the rent tripled")
    assert _shown(source, quote) == "The caf\u00e9 owner, Ren\u00e9e Holm, said the rent doubled"


def test_nothing_close_gives_none() -> None:
    assert closest_passage(SOURCE, "xylophone quartz jukebox") is None
    assert closest_passage(SOURCE, "") is None
    assert closest_passage("", "anything") is None
    assert closest_passage(SOURCE, "   ") is None


def test_a_quote_longer_than_the_source_compares_with_all_of_it() -> None:
    source = "Rents rose sharply."
    found = closest_passage(source, "Rents rose sharply across the whole valley this year.")
    assert found is not None and found["text"] == "Rents rose sharply"


def test_the_quotes_gate_puts_the_closest_wording_in_its_evidence() -> None:
    v = quotes_verbatim(SOURCE, None, 'Ms Castellane said "people buy only from the farmer".')
    assert not v.passed
    (entry,) = v.evidence
    assert entry["found"] is False
    assert entry["closest_in_source"]["text"] == "People only buy from the farmer"
    found = quotes_verbatim(SOURCE, None, 'She said "People only buy from the farmer who grew it".')
    assert found.passed and "closest_in_source" not in found.evidence[0]


@given(st.text(min_size=1, max_size=60), st.integers(0, 200))
def test_the_span_always_points_at_the_text_it_returns(quote: str, cut: int) -> None:
    source = SOURCE[: cut + 20] + "\u200b" + SOURCE[cut + 20 :]
    found = closest_passage(source, quote)
    if found is not None:
        start, end = found["source_span"]
        assert 0 <= start < end <= len(source)
        assert source[start:end] == found["text"]
        assert 0 <= found["similarity"] <= 100
