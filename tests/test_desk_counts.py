"""Issue 12: a gate's pass message counts what the reader sees, as its failure
message does: "40" written twice is one number, not two."""

from __future__ import annotations

from guards.dates import dates_grounded
from guards.names import names_grounded
from guards.numbers import numbers_grounded
from guards.quotes import quotes_verbatim

SOURCE = (
    "The Vell Valley council met on Tuesday, 3 March. Councillor Ines Marrow said the "
    '40 new homes would be finished by 2027. "We will not cut the library," she said. '
    "The scheme costs £12 million and adds 15 parking spaces."
)


def test_a_number_written_twice_counts_once_passing_and_failing() -> None:
    passed = numbers_grounded(SOURCE, None, "40 homes by 2027. Yes, 40 homes, and 15 spaces.")
    assert passed.passed
    assert passed.reason == "all 3 numbers found in the source"
    failed = numbers_grounded(SOURCE, None, "40 homes by 2027. Yes, 40 homes, and 16 spaces.")
    assert not failed.passed
    assert failed.reason.startswith("1 of 3 numbers not in the source")


def test_one_number_is_singular() -> None:
    v = numbers_grounded(SOURCE, None, "40 homes, 40 of them.")
    assert v.reason == "the 1 number found in the source"


def test_names_dates_and_quotes_count_distinct_too() -> None:
    names = names_grounded(SOURCE, None, "Ines Marrow spoke. Ines Marrow again.")
    assert names.passed and names.reason == "the 1 name found in the source", names.reason
    quote = 'She said "We will not cut the library" and again "We will not cut the library".'
    quotes = quotes_verbatim(SOURCE, None, quote)
    assert quotes.passed and quotes.reason == "the 1 quotation found in the source"
    bad = quotes_verbatim(SOURCE, None, '"We will cut it." And again: "We will cut it."')
    assert bad.reason.startswith("1 of 1 quotations not in the source"), bad.reason
    dates = dates_grounded(SOURCE, None, "On Tuesday, 3 March they met; 3 March was wet.")
    written = [e["date"] for e in dates.evidence]
    assert dates.passed, dates.reason
    assert len(written) > len(set(written))  # a date written twice...
    assert dates.reason == f"all {len(set(written))} dates found in the source"  # ...counts once
