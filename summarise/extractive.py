"""The offline summariser: deterministic, no network, no key.

It only ever copies whole sentences of the source (the lead, as a news desk
would), so it cannot invent a number, a name or a quote: the draft gates can
never fail on its output. That makes it the safe default, and a baseline.

Two things keep that promise (tests/test_extractive.py checks it on generated
articles): sentences are joined so that no new token forms across a join (a
paragraph ending "rose to 12" and the next starting "500 people" would read
"12 500", one number), and the article's title is the headline only when
every draft gate passes on it against the text; else the lead sentence is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from guards.registry import DRAFT_GATES, run_gates
from summarise.base import Article, Draft, SummaryFailed

# A sentence ends at . ! ? (optionally followed by a closing quote or bracket)
# before whitespace and an upper-case letter, digit or opening quote.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”’')\]]?\s+(?=[\"“‘(\[]?[A-Z0-9])")
_ABBREVIATIONS = re.compile(
    r"\b(?:Mr|Mrs|Ms|Dr|Prof|St|Sr|Jr|Gen|Col|Capt|Lt|Sgt|Rev|Hon|Cllr|No|Co|Ltd|Inc|vs|etc|"
    r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|[A-Z])\.$"
)
HEADLINE_MAX = 110
SUMMARY_MAX_WORDS = 110


def split_sentences(text: str) -> Iterator[str]:
    """Sentences of a paragraph-separated text, in order; abbreviations do not end
    one. A paragraph is cut only when the caller asks for its sentences: the
    summariser stops at its third (issue 24, session 15: every paragraph of the page
    was cut first, as much CPU as a run of the draft gates on the title)."""
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = " ".join(paragraph.split())
        if not paragraph:
            continue
        start = 0
        for match in _SENTENCE_END.finditer(paragraph):
            candidate = paragraph[start : match.start()].rstrip()
            head = paragraph[start : match.start() + 1].rstrip()
            if _ABBREVIATIONS.search(head.rstrip("\"”’')]")):
                continue
            if candidate:
                yield paragraph[start : match.end()].strip()
            start = match.end()
        tail = paragraph[start:].strip()
        if tail:
            yield tail


# A sentence that ends like this is closed: a space after it cannot glue tokens.
_CLOSED = re.compile(r"[.!?…:;,—–-][\"”’')\]]*$")


def join_sentences(sentences: list[str]) -> str:
    """Sentences joined by spaces; one that ends without punctuation (a
    paragraph's unpunctuated tail) gets a full stop first, so "rose to 12" and
    "500 people..." never read as "12 500"."""
    return " ".join(s if _CLOSED.search(s) else s + "." for s in sentences)


def _grounded(headline: str, text: str) -> bool:
    """Every draft gate passes on the headline alone, against the article's text."""
    modes = dict.fromkeys(DRAFT_GATES, "discard")
    return all(r.verdict.passed for r in run_gates(DRAFT_GATES, text, None, headline, modes=modes))


def _grounded_lead(sentence: str, text: str) -> str:
    """The lead sentence cut to a headline at a space where the draft gates still
    pass: a cut must not part a number from its scale word ("3.5… million")."""
    limit = HEADLINE_MAX
    while limit > 20:
        cut = _shorten(sentence, limit)
        if cut == sentence or _grounded(cut, text):
            return cut
        limit = len(cut.rstrip("…").rsplit(" ", 1)[0])  # one word shorter
    return _shorten(sentence, 20)


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


class ExtractiveSummariser:
    """Lead sentences of the article body; the headline is the article's own title."""

    name = "extractive"
    local = True  # no network call: the run drafts on its own thread (pipeline/run.py)

    def __init__(self, sentences: int = 3, max_words: int = SUMMARY_MAX_WORDS):
        self.sentences = sentences
        self.max_words = max_words

    def summarise(self, article: Article) -> Draft:
        body = article.text
        if article.title and body.startswith(article.title):
            body = body[len(article.title) :]
        picked: list[str] = []
        words = 0
        for sentence in split_sentences(body):
            n = len(sentence.split())
            if n < 4:  # datelines, bylines, captions
                continue
            if picked and words + n > self.max_words:
                break
            picked.append(sentence)
            words += n
            if len(picked) >= self.sentences:
                break
        if not picked:
            raise SummaryFailed("no sentence to build a summary from", transient=False)
        # The title when the draft gates pass on it; only then is the lead cut to a
        # headline (issue 24, session 12: a run of every draft gate an article was
        # spent on a lead headline that a grounded title made unused).
        if article.title and _grounded(article.title, body):
            headline = article.title
        else:
            headline = _grounded_lead(picked[0], body)
        return Draft(headline=headline, summary=join_sentences(picked), backend=self.name)
