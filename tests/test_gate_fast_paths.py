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

from hypothesis import example, given, settings
from hypothesis import strategies as st

from guards import checks
from guards.dates import (
    _EVENT_STOP,
    _HEADS,
    _LONG_WORD,
    _LOWER,
    _WORD_START,
    _lower_words,
    _matches_at_heads,
    _stems,
)
from guards.dates import _LOWER_WORD as _DATES_LOWER_WORD
from guards.names import _SKIM, _WORD
from guards.numbers import (
    _NUMBER,
    _RUN,
    _RUN_VIEW,
    _WORD_RUN,
    _language_matters,
    _word_candidates,
    _word_runs,
    _word_view,
)
from guards.registry import DRAFT_GATES, _gates
from guards.source import _WORD as _SOURCE_WORD
from guards.source import count_words
from guards.text import (
    VULGAR_FRACTIONS,
    Normalised,
    _fold,
    _is_nfc,
    _lower_ascii_letters,
    _nfc_stable,
    _non_ascii_recent,
    compat_fold,
    fold_char,
    non_ascii,
    normalise,
)

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


# The plain scan: the number-word runs, case-sensitive, over the whole lower-cased text.
_PLAIN_WORD_RUN = re.compile(_WORD_RUN.pattern)


def _runs(text: str) -> list[tuple[int, int]]:
    """`_word_runs` as the numbers gate calls it: at the candidates of the byte view."""
    return [m.span() for m in _word_runs(text, _word_candidates(_word_view(text)))]


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_word_runs_are_the_plain_scan(text: str) -> None:
    expected = [m.span() for m in _PLAIN_WORD_RUN.finditer(_lower(text))]
    assert _runs(text) == expected


NUMBER_PIECES = st.lists(
    st.sampled_from(PIECES + ["'", "\u2009", "\u00bd", "?", "0", "007", "1.5", "3,250"]),
    max_size=40,
).map("".join)


@settings(max_examples=600, deadline=None)
@given(NUMBER_PIECES)
def test_digit_runs_are_the_ascii_digit_runs(text: str) -> None:
    """`_scan`'s runs are the runs of ASCII digits, and a run it takes as a whole
    number by itself (no group set) is one the full reading (`_NUMBER`, a vulgar
    fraction after it, a dot before it) reads as exactly itself."""
    view = text.encode("ascii", "replace").translate(_RUN_VIEW)
    runs = list(_RUN.finditer(view))
    assert [m.span() for m in runs] == [m.span() for m in re.finditer(r"[0-9]+", text)]
    for run in runs:
        if run.lastindex is not None:
            continue  # read in full by `_NUMBER`
        start, end = run.span()
        assert not (start and text[start - 1] == ".")
        assert text[end : end + 1] not in VULGAR_FRACTIONS
        m = _NUMBER.match(text, start)
        assert m is not None and m.span() == (start, end) and m.group("int") == text[start:end]


NAME_PIECES = st.lists(
    st.sampled_from(PIECES + ["Ab", "ab", "of", "van", "kW", "C", "&", "'s", "-", "\u00c9"]),
    max_size=40,
).map("".join)


@settings(max_examples=600, deadline=None)
@given(NAME_PIECES)
def test_names_skim_reads_the_words_of_the_plain_scan(text: str) -> None:
    """`find_names` skims stretches of lower-case words: spelled out into `_WORD`'s
    words, they are exactly the words `_WORD` finds, and each stretch's words all
    start with a lower-case ASCII letter."""
    words = []
    for m in _SKIM.finditer(text):
        if m.lastgroup != "lower":
            words.append(m.span())
            continue
        stretch = [w.span() for w in _WORD.finditer(text, m.start(), m.end())]
        assert all("a" <= text[a] <= "z" for a, _ in stretch)
        words += stretch
    assert words == [m.span() for m in _WORD.finditer(text)]


STEM_PIECES = st.lists(
    st.sampled_from(["this", "thisx", "weekend", "week", "ferry", "Ferry", "afternoon", "ab",
                     "_", "1", " ", "-", "'", "crossings", "FERRY", "ferrY", "said", "x"]),
    max_size=30,
).map("".join)  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(STEM_PIECES)
def test_stems_of_an_ascii_text_are_the_plain_reading(text: str) -> None:
    expected = {w[:5] for w in _LONG_WORD.findall(text) if w.islower() and w not in _EVENT_STOP}
    assert _stems(text) == expected


COUNT_PIECES = st.lists(
    st.sampled_from(PIECES + ["1,250", "61-year-old", "U.S.", "Ostbrook's", "a.", "4,5a", "'"]),
    max_size=40,
).map("".join)


@settings(max_examples=600, deadline=None)
@given(COUNT_PIECES)
def test_source_length_words_are_the_backtracking_patterns(text: str) -> None:
    plain = re.compile(r"\w+(?:[-'\u2019.]\w+|(?<=[0-9]),[0-9]+)*")
    assert [m.span() for m in _SOURCE_WORD.finditer(text)] == [
        m.span() for m in plain.finditer(text)
    ]


@settings(max_examples=1500, deadline=None)
@given(COUNT_PIECES)
def test_source_length_counts_the_words_the_pattern_finds(text: str) -> None:
    """`count_words` counts runs of word characters less the joins between them, in a
    byte view, when it can; it counts what `_WORD` finds, on texts with non-ASCII
    letters and digits, apostrophes, a letter straight after a digit group ("4,5a")."""
    assert count_words(text) == len(_SOURCE_WORD.findall(text))


def test_source_length_counts_a_long_source_s_words_without_a_list_of_them() -> None:
    """The runs of word characters are counted where one begins (`bytes.count`), not
    split into a list of a source's thousands of words: the memory at the peak is a few
    byte views of the text, not a word object each (session 14)."""
    import tracemalloc

    text = "The harbour board's 2,145 berths - quay, pier and lock - met on Monday. " * 180
    count_words(text)  # anything imported or cached on first use, before measuring
    tracemalloc.start()
    try:
        words = count_words(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert words == len(_SOURCE_WORD.findall(text))
    assert peak < 4 * len(text)


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_non_ascii_is_every_non_ascii_character(text: str) -> None:
    assert non_ascii(text) == frozenset(c for c in text if not c.isascii())


@settings(max_examples=200, deadline=None)
@given(TEXTS, TEXTS)
def test_a_long_text_s_non_ascii_characters_are_its_own(text: str, other: str) -> None:
    """A long text's answer is kept (a source is asked a dozen times): an equal text
    built apart gets the same answer, a text that differs by one character its own."""
    long = (text + " harbour board of Kelmont ") * 40
    same = "".join(list(long))  # another string object, equal
    assert non_ascii(long) == non_ascii(same) == frozenset(c for c in long if not c.isascii())
    changed = long + other + "\u00e9"
    assert non_ascii(changed) == frozenset(c for c in changed if not c.isascii())


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
    assert _runs("\u212aone two") == [(5, 8)]
    assert _runs("\u201cone two") == [(1, 8)]


# --- the source's numbers, read once and indexed (guards.numbers._SourceNumbers) -----------
NUMBER_PIECES = [
    "12", "1,250", "1.25", "4,500", "46m", "£48m", "$48m", "17 per cent", "17%", "2½",
    "15 200", "85 000", "minus 3", "-3", "1.125 million", "two", "twenty-one", "a dozen",
    "2026", "10.30am", "46 metres", "0", "00", "31 votes to 17", " ", " and ", ", ", ".\n",
]  # fmt: skip
NUMBER_TEXTS = st.lists(st.sampled_from(NUMBER_PIECES), max_size=25).map("".join)


@settings(max_examples=300, deadline=None)
@given(NUMBER_TEXTS, st.lists(NUMBER_TEXTS, min_size=1, max_size=5))
def test_drafts_checked_one_after_another_read_the_source_as_a_fresh_reading(
    source: str, drafts: list[str]
) -> None:
    """Each draft against a source its predecessors left half read and indexed gets the
    verdict and evidence it gets against the source read afresh."""
    from guards.numbers import numbers_grounded
    from guards.sourcetext import source_text

    fresh = []
    for draft in drafts:
        source_text.cache_clear()
        fresh.append(numbers_grounded(source, None, draft))
    source_text.cache_clear()
    assert [numbers_grounded(source, None, draft) for draft in drafts] == fresh


LOWER_PIECES = [
    "Jan", "jan.", "MARCH", "May", "9", " ", "\u201c", "\u201d", "£", "é", "É", "ß", "ẞ",
    "\u0130", "\u0131", "\u017f", "\u212a", "\u03a3", "ǅ", "Ⅻ", "ⓐ", "\u00a0", "ﬁ", "İ",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(LOWER_PIECES), max_size=20).map("".join))
def test_lowers_as_ascii_only_when_lowering_reads_alike(text: str) -> None:
    """Where `lowers_as_ascii`, the lower-cased text keeps every offset, and an ASCII
    letter pattern matches it where it matches the text case-insensitively."""
    from guards.text import lowers_as_ascii

    if not lowers_as_ascii(text):
        return
    low = text.lower()
    assert len(low) == len(text)
    for i, ch in enumerate(text):
        ascii_match = re.fullmatch("[a-z]", ch, re.IGNORECASE) is not None
        assert ascii_match == (low[i].isascii() and low[i].isalpha()), ch
        assert (re.fullmatch(r"\w", ch) is None) == (re.fullmatch(r"\w", low[i]) is None), ch


CLOCK_PIECES = ["10", "1", ".", ":", "h", "30", ",", " ", "am", "x", "2026", "7"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(CLOCK_PIECES), max_size=12).map("".join))
def test_a_minute_is_looked_for_right_before_it(text: str) -> None:
    """`_clock` searches `_CLOCK_BEFORE` in the three characters before a number, not
    from the text's start: the same answer at every offset."""
    from guards.numbers import _CLOCK_BEFORE

    for i in range(len(text) + 1):
        window = _CLOCK_BEFORE.search(text, max(0, i - 3), i)
        whole = _CLOCK_BEFORE.search(text, 0, i)
        assert (window and window.span()) == (whole and whole.span()), (text, i)


# Head words, their longer spellings, words that only start like them, and joiners.
DATE_WORDS = (
    "monday mondays sun sunny thurs thus tue tues last night week weekend today tonight "
    "yesterdays next x 1 _ on wed weds fri friday sat"
).split() + [" ", "  ", "\n", ".", ",", "-", "é", "\u201c", "last night", "this"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(DATE_WORDS), max_size=30).map("".join))
def test_date_words_looked_for_at_their_heads_are_the_plain_scan(text: str) -> None:
    for pattern in _HEADS:
        expected = [m.span() for m in _LOWER[pattern].finditer(text)]
        assert [m.span() for m in _matches_at_heads(pattern, text)] == expected


SCORE_WORDS = ["score", "SCORE", "sCoRe", "sc", "ore", "\u017fcore", "\u0130", "\u212a",
               "s\u0301core", "é", " ", "a", "dozen", "_", "1"]  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(SCORE_WORDS), max_size=12).map("".join))
def test_the_word_view_has_score_where_the_lower_cased_text_has_it(text: str) -> None:
    assert (b"score" in _word_view(text)) == ("score" in text.lower())


# --- a source's NFC check and case folding, from its characters (session 10) --------------
@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_nfc_from_the_characters_is_the_full_check(text: str) -> None:
    assert _is_nfc(text) == unicodedata.is_normalized("NFC", text)


def test_every_pair_of_nfc_stable_characters_is_nfc() -> None:
    """The characters `_is_nfc` answers for, with ASCII, two by two (composition in NFC
    joins a character only to the one before it, so pairs are every case)."""
    blocks = [*range(0xA0, 0x180), *range(0x2000, 0x2070), *range(0x20A0, 0x20D0)]
    stable = [chr(c) for c in blocks if _nfc_stable(chr(c))] + [chr(c) for c in range(32, 127)]
    assert "\u2000" not in stable  # en quad: NFC makes it an en space
    assert all(unicodedata.is_normalized("NFC", a + b) for a in stable for b in stable)


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_lowering_the_ascii_bytes_is_str_lower_where_nothing_else_has_case(text: str) -> None:
    low = _lower_ascii_letters(text)
    assert len(low) == len(text)
    assert all(a == b or (b.isascii() and a == b.lower()) for a, b in zip(low, text, strict=True))


# Session 11: three prefilters read with patterns `re` can skip through in C.
_PLAIN_LANGUAGE_MATTERS = re.compile(r"[0-9][,\s][0-9]{3}(?![0-9])|illion|[0-9],[0-9]{3}")
_PLAIN_WORD_START = re.compile(r"(?<![a-z0-9_])[a-z]+")
NUMBER_PIECES = ["1", "12", "123", "1234", ",", " ", "\u00a0", "\u2009", "\n", ".", "illion",
                 "m", "b", "x", "\u0663", "\uff14"]  # fmt: skip
DATE_PIECES = PIECES + ["mars", "Août", "janv", "lundi", "’", "'", "Mitte", "hier", "\u00bd",
                        "\u2164", "9", "_x"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(NUMBER_PIECES), max_size=30).map("".join))
def test_whether_the_language_matters_is_the_plain_search(text: str) -> None:
    assert _language_matters(text) == bool(_PLAIN_LANGUAGE_MATTERS.search(text))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(DATE_PIECES), max_size=40).map("".join))
def test_date_prefilter_words_are_the_plain_scan(text: str) -> None:
    low = text.lower().replace("’", "'")
    assert _lower_words(low) == _DATES_LOWER_WORD.findall(low)
    assert _WORD_START.findall(_lower(text)) == _PLAIN_WORD_START.findall(_lower(text))


def test_a_non_ascii_letter_or_numeral_takes_the_unicode_scan() -> None:
    # é is a letter, Ⅴ (Roman numeral five) and ½ are alphanumeric: [a-z] would split
    # or drop them; ’ and “ are not, and the ASCII range reads the same words.
    for text in ["café mars", "\u2164mars", "mars\u00bdx", "\u201cmars\u201d d'avril."]:
        assert _lower_words(text) == _DATES_LOWER_WORD.findall(text)
    assert _lower_words("café") == ["café"]


# Session 12: a draft's non-ASCII characters are read once for every gate.
@settings(max_examples=200, deadline=None)
@given(TEXTS, TEXTS)
def test_a_draft_s_non_ascii_characters_are_its_own(text: str, other: str) -> None:
    """A draft-length text's answer is kept too (a small cache of its own): an equal text
    built apart gets the same answer, a text that differs by one character its own."""
    piece = text + " harbour board of Kelmont "
    draft = (piece * (300 // len(piece) + 1))[:300]
    same = "".join(list(draft))
    assert non_ascii(draft) == non_ascii(same) == frozenset(c for c in draft if not c.isascii())
    changed = draft[:-1] + (other + "\u00e9")[:1]
    assert non_ascii(changed) == frozenset(c for c in changed if not c.isascii())


def test_every_gate_reads_a_draft_s_characters_once() -> None:
    source = (
        "The harbour board of Kelmont said on Monday that 41,200 containers passed through "
        "the terminal. Lena Varga said: \u201cThe quay will reopen in March.\u201d "
    ) * 8
    draft = (
        "The harbour board of Kelmont said on Monday that 41,200 containers passed "
        "through the terminal, a record for the port and its three cranes. Lena Varga, "
        "the harbour master, said: \u201cThe quay will reopen in March.\u201d The board "
        "meets again next week to set the winter tolls for barges and tugs."
    )
    assert 160 <= len(draft) < 512 and not draft.isascii()
    before = _non_ascii_recent.cache_info()
    gates = _gates(150, None)
    for name in DRAFT_GATES:
        gates[name](source, None, draft)
    after = _non_ascii_recent.cache_info()
    assert after.hits - before.hits >= 3  # asked by several gates, read once


# Pieces that join digits into grouped integers and decimals, and the ones that make
# `_NUMBER` read them otherwise: a clock time, a dotted date, a fraction, a leading zero.
JOINED_WORDS = [
    "0", "1", "12", "210", "007", ",", ".", "840", "000", "5", "25", " ", "'", "am",
    " pm", " Uhr", "\u00bd", "\u00a0", "£", "?", "x", "-", "%", "\u0663", "1,234", "2.5",
    "012", "1,5", "30.11.2026", "10.30am", "1.250", "\u2019",
]  # fmt: skip
JOINED_PIECES = st.lists(
    st.sampled_from(JOINED_WORDS),
    max_size=16,
).map("".join)


@settings(max_examples=1500, deadline=None)
@given(JOINED_PIECES, st.sampled_from([None, "en", "de", "fr"]))
def test_a_number_joined_in_the_byte_view_is_the_full_reading(text: str, lang: str | None) -> None:
    """A grouped integer (210,840) or a one-digit decimal (1.5) that `_joined` reads from
    the byte view is the token `_NUMBER` reads there, and the whole scan of a text is the
    scan that sends every joined run to `_NUMBER`."""
    from unittest import mock

    from guards import numbers
    from guards.numbers import _joined, _scan, _tokens

    view = text.encode("ascii", "replace").translate(_RUN_VIEW)
    for run in _RUN.finditer(view):
        token = _joined(view, text, text, run.start(), lang)
        if token is not None:
            m = _NUMBER.match(text, run.start())
            assert m is not None and m.end() == token.end
            assert [token] == _tokens(m, text, lang)
    fast = list(_scan(text, text, lang))
    with mock.patch.object(numbers, "_joined", lambda *args: None):
        assert fast == list(_scan(text, text, lang))


# Narration and quotations that attribute, inherit and fall back to the sentence before.
SPEAKER_PIECES = [
    "Lena Varga said: ", "she said. ", ", said Tomas Reint. ", "The mayor said ", " ",
    "\u201cThe quay will open.\u201d ", "\u201cwe will see\u201d", ", he added. ",
    "\n\n", "\n", "It rained. ", "Mira Tallis", " told reporters ", "\u201cNo,\u201d ",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(SPEAKER_PIECES), max_size=14).map("".join))
def test_a_quotation_is_attributed_alike_alone_or_after_the_ones_before(text: str) -> None:
    """A quotation asked about alone (a source's, found by a draft) gets the speaker it
    gets when every quotation before it was attributed first, and the attribution of
    the one before it ends where that quotation ends (all `_attribute` reads of it)."""
    from guards.speakers import _Attributions, find_attributions

    in_order = find_attributions(text)
    quotes = _Attributions(text).quotes
    for k, attribution in enumerate(in_order):
        assert attribution.end == quotes[k].end
        assert _Attributions(text).at(k) == attribution


def test_a_quotation_its_narration_attributes_does_not_read_the_ones_before() -> None:
    """The speaker of the third quotation of a paragraph, named beside it, is read
    without working out the first two's (their speakers are needed only to inherit)."""
    from guards.speakers import _Attributions

    text = (
        "Lena Varga said: \u201cThe quay will open.\u201d Tomas Reint said: \u201cNot "
        "this winter.\u201d Mira Tallis said: \u201cThe levy stays.\u201d"
    )
    attributions = _Attributions(text)
    assert attributions.at(2).speaker == "Mira Tallis"
    assert list(attributions._done) == [2]


# Quotations in every style, with invisible and combining characters and ellipses.
QUOTE_PIECES = [
    "We", " ", "will", "\u2019", "'", "\u201c", "\u201d", "\u00ab", "\u00bb", "\u2014", "-",
    "\u2013", "\u00a0", "\u200b", "e\u0301", "\u0301", "...", "\u2026", ".", ",", "`", "\u00e9",
    "=\u0338", "!", "\n", "Gr\u00fc\u00dfe", "\u2009",
]  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(QUOTE_PIECES), max_size=20).map("".join))
def test_a_quotation_s_fragments_are_already_normalised_as_a_passage(quote: str) -> None:
    """A fragment of a quotation is what `locate_passage` normalises it to, so the
    quotes gate may look a one-fragment quotation up with `locate_passage` (cached) and
    the speakers gate then finds the same place without a second search."""
    from guards.quotes import _ENDS, fragments
    from guards.text import clean, unify_style

    for part in fragments(quote):
        assert _ENDS.sub("", unify_style(clean(part))) == part


def test_the_speakers_gate_finds_a_quotation_the_quotes_gate_has_located() -> None:
    """One search of the source per quotation of the draft, for both gates."""
    from guards.quotes import locate_passage

    source = "Lena Varga said: \u201cThe quay will open in March.\u201d The board met. " * 3
    draft = "Lena Varga said: \u201cThe quay will open in March.\u201d"
    gates = _gates(150, None)
    locate_passage.cache_clear()
    gates["quotes_verbatim"](source, None, draft)
    misses = locate_passage.cache_info().misses
    assert gates["speakers_match"](source, None, draft).passed
    assert locate_passage.cache_info().misses == misses


# --- a date's words found from their first word, not tried at every position (session 14) --
DATE_WORD_PIECES = [
    "last", "week", "yesterday", "today", "the", "day", "after", "tomorrow", "this", "night",
    "march", "mar", "ch", ".", "t.", "sept", "sep", "tember", "may", "june", " ", "  ", "\n",
    "\t", "\u00a0", "_", "x", "\u00e9", "9", "-", "\u00df", "\u212a", "\u2019",
]  # fmt: skip
RELATIVE_VALUES = [
    "yesterday", "today", "tomorrow", "tonight", "last night", "this week", "next weekend",
    "last month", "the day after tomorrow", "the day before yesterday",
]  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.sampled_from(DATE_WORD_PIECES), max_size=24).map("".join),
    st.sampled_from(RELATIVE_VALUES),
)
def test_a_relative_date_s_pattern_matches_where_the_word_boundary_one_did(
    text: str, value: str
) -> None:
    """`_phrase` starts with its first word (re skips to it in C) and asks for the word
    boundary before it after it: the same matches as `\\bword\\s+word\\b`."""
    from guards.dates import _phrase

    plain = r"\b" + r"\s+".join(map(re.escape, value.split())) + r"\b"
    expected = [m.span() for m in re.finditer(plain, text)]
    assert [m.span() for m in re.finditer(_phrase(value), text)] == expected


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.sampled_from(DATE_WORD_PIECES), max_size=24).map("".join),
    st.integers(min_value=1, max_value=12),
)
@example("by may. then", 5)  # "may" then "." : the name first, as the alternation had it
@example("from sept. 9 and sep. 3_sept", 9)
def test_a_month_s_pattern_matches_where_the_word_boundary_one_did(text: str, month: int) -> None:
    """The month's name or abbreviation in the source, found from its first three
    letters: the first match of `\\b(?:march|mar\\.)(?!\\w)`, "sept." too for September."""
    from guards.dates import _MONTH_NAMES, _month_in_source

    name = _MONTH_NAMES[month - 1]
    short = f"{name[:3]}\\.|sept\\." if month == 9 else f"{name[:3]}\\."
    plain = re.search(rf"\b(?:{name}|{short})(?!\w)", text)
    found = _month_in_source(text, month)
    if plain is not None:
        assert found == plain.span()
    else:
        assert found is None or text[found[0] : found[1]][:1].isdigit()  # an ISO or slashed date


CONTENT_PIECES = st.lists(
    st.sampled_from(["ferries", "crossed", "the", "Tollmere", "quay", "12", "7", "ab", "_",
                     " ", "-", "'", "é", "ß", "Σ", "\u212a", "٣", "running", "sadly", "said",
                     "İ", "x", "a1", "ﬁ"]),
    max_size=30,
).map("".join)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(CONTENT_PIECES)
@example("Tollmere ferries crossed 12 times, sadly")
def test_content_words_are_the_plain_reading(text: str) -> None:
    """`content_words` scans an ASCII text with [A-Za-z0-9]+ and stems each word
    once a process (issue 24, session 15): the same words as the plain reading."""
    folded = normalise(text).text
    expected = set()
    for w in re.findall(r"[^\W_]+", folded):
        if w in checks._STOPWORDS or not (len(w) > 2 or w.isdigit()):
            continue
        for suffix in ("ing", "ed", "es", "s", "ly"):
            if len(w) > len(suffix) + 3 and w.endswith(suffix):
                w = w[: -len(suffix)]
                break
        expected.add(w)
    assert checks.content_words(text) == expected
