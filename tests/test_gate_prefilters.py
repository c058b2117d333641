"""The gates' fast paths (issue 20, speed) give the verdicts the full scan gives.

Each prefilter skips a pattern when a substring it needs is absent; these
properties run the gates with and without it over texts built from the words
that sit on its edges (case variants, the Kelvin sign and long s that
re.IGNORECASE folds, words that merely contain a month or weekday stem)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from guards.dates import find_dates

EDGE_WORDS = [
    "Monday", "MONDAY", "mondays", "Tue", "Thurs", "Weds", "Sat.", "sun", "Friday,",
    "9", "11th", "2026", "9/1", "12/03/2026", "of", "Jan.", "JANUARY", "March", "march",
    "Sept.", "May", "may", "june", "Dec", "decided", "market", "in", "since", "end of",
    "yesterday", "Today", "TONIGHT", "last", "night", "next", "week", "this", "year",
    "mayor", "thus", "mon9", "Sept.", "todays", "lastly", "Decs", "_sat", "9jan",
    "\u212aelvin", "yeſterday", "ſunday", "Mon\u212aey", "Ιan", "the", "board", "said", ",",
    # Non-ASCII drafts take the fast path too when lower-casing keeps every offset and
    # folds nothing to ASCII (guards.text.lowers_as_ascii): curly quotes, £, accents...
    "\u201cMonday\u201d", "\u201cJan.", "£40", "Zürich", "Éire", "Jánuary", "Mayé", "Décembre",
    "µ", "ß", "İzmir", "dı", "9\u00a0January", "Ḟriday", "MÄRZ", "—", "ǅ",
]  # fmt: skip
texts = st.lists(st.sampled_from(EDGE_WORDS), max_size=14).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_find_dates_prefilter_changes_nothing(text: str) -> None:
    assert find_dates(text) == find_dates(text, prefilter=False)


def test_find_dates_prefilter_keeps_every_kind() -> None:
    draft = "On Thu 9 January, yesterday and last week, the board met in March; 12/03/2026."
    kinds = {d.kind for d in find_dates(draft)}
    assert kinds == {"weekday", "day_month", "relative", "month"}
    assert find_dates(draft) == find_dates(draft, prefilter=False)
