"""guards/text.py `word_runs`: the words `\\w+` (or `[^\\W_]+`) finds, found without
the regex where it can (issue 24, session 17), for the text fingerprint
(ingest/dedup.py) and the near-duplicate shingles (store/duplicates.py)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guards import text as guards_text
from guards.text import word_runs
from ingest.dedup import text_fingerprint
from store import duplicates

# ASCII word characters and others, the underscore, non-ASCII word characters (é, an
# Arabic-Indic digit, a superscript two, CJK) and others (curly quotes, dashes,
# no-break and em spaces, a combining mark, a lone surrogate, a zero-width space).
_ALPHABET = "aZ09_ .,'-\n\t\x1c\x85éٳ²中’“—\xa0\u2003\u0301\ud800\u200b"


@given(st.text(alphabet=st.sampled_from(_ALPHABET), max_size=40))
@settings(max_examples=500, deadline=None)
def test_word_runs_are_the_regex_words(text: str) -> None:
    assert word_runs(text) == re.findall(r"\w+", text)
    assert word_runs(text, underscore=False) == re.findall(r"[^\W_]+", text)


def test_an_article_without_non_ascii_word_characters_runs_no_regex(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fingerprint and the shingles of an article whose every word is ASCII (its
    quotes curly) read its words without a regex: one regex pass each before (about
    20 ns a character whatever it found), none now; the same fingerprint and shingles."""
    title = "Harbour board meets"
    article = (
        f"{title}\n\nThe harbour board of Tollmere met on Tuesday to discuss dispatch 12, "
        "the “ferry timetable” and the dredging of the inner basin — its engineer’s_notes."
    )
    fingerprint = text_fingerprint(article, title)
    shingles = duplicates.shingles(title, article)
    scanned: list[str] = []

    class Counted:
        def __init__(self, pattern: re.Pattern[str]) -> None:
            self.pattern = pattern

        def findall(self, text: str) -> list[str]:
            scanned.append(text)
            return self.pattern.findall(text)

    monkeypatch.setattr(guards_text, "_WORD_RUN", Counted(guards_text._WORD_RUN))
    monkeypatch.setattr(guards_text, "_ALNUM_RUN", Counted(guards_text._ALNUM_RUN))
    assert text_fingerprint(article, title) == fingerprint
    assert duplicates.shingles(title, article) == shingles
    assert "notes" in shingles and "engineer" in shingles  # "_" parts shingles
    assert scanned == []
    # A non-ASCII word character: the regex reads the text, as before.
    assert word_runs("café crème") == ["café", "crème"] and len(scanned) == 1
