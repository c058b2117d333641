"""speakers_match: a quotation in the draft belongs to the speaker the source gives it.

A verbatim quotation moved to another person passes quotes_verbatim and is the
libel risk no other gate sees. This gate (flag mode by default: attribution is
read by a heuristic) compares, for each quotation of the draft that the source
also quotes, who says it in each text.

Who says a quotation (in the draft and in the source alike):

* The narration of its sentence is read: the words after the closing mark up
  to the end of the sentence or a relative clause (", who chairs..."), else
  the words from the start of the sentence up to the opening mark. It must
  hold a verb of attribution (said, says, told, added, according to, warned...;
  a déclaré, dit, selon, estime...; sagte, erklärte, laut, betonte...).
* The speaker is what stands beside that verb: the names there (runs of
  capitalised words, as names_grounded reads them, with an honorific: "Ms
  Marsh") and the role ("the mayor", "le maire", "a spokesperson": the head
  noun after an article; in German the capitalised noun after der, die, den or
  dem, "die Bürgermeisterin", which is a role, not a name), or a pronoun (he,
  she, they, il, elle, er, sie), which stands for the last name written before
  it (within 600 characters).
* A quotation with no attribution of its own takes the speaker of the
  quotation before it when that one ends in the same paragraph (a second
  quote, or a quotation continued over paragraphs with continuation marks).

Two speakers are the same when they share a name or role word, or when a
sentence of the source names them together ("The mayor, Tomas Reint, said"
makes "the mayor" and "Tomas Reint" one person). A draft quotation without a
speaker, or one the source does not quote, is not compared (quotes_verbatim
checks the words). Known gaps: a speaker named only in another paragraph than
the quote; two people named in one sentence are taken as possibly the same.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache
from typing import Any, NamedTuple

from guards.names import HONORIFICS, find_names
from guards.numbers import _trie
from guards.quotes import _CONTINUATION, find_quotes, fragments, locate_passage
from guards.sourcetext import source_text
from guards.text import shorten
from guards.verdict import Verdict

GATE = "speakers_match"

_VERBS = (
    "said says say told tells added adds explained explains warned warns argued argues "
    "claimed claims insisted insists stated states wrote writes asked asks recalled recalls "
    "noted notes replied replies admitted admits declared announced complained urged "
    "acknowledged commented remarked called calls described describes adding saying "
    "déclaré déclare dit affirmé affirme ajouté ajoute expliqué explique estimé estime "
    "dénoncé dénonce souligné souligne indiqué indique assuré assure selon lancé martelé "
    "prévenu confié sagte sagt sagten erklärte erklärt betonte betont meinte meint warnte "
    "warnt laut fügte kritisierte kritisiert nannte dijo afirmó declaró según explicó detto "
    "dichiarato secondo zei zegt volgens "
    # replies and rejoinders: a reply's speaker is the one who replies, not the one before
    "responded retorted répondu répond répondit rétorqué rétorque répliqué réplique précisé "
    "entgegnete entgegnet erwiderte erwidert antwortete antwortet ergänzte ergänzt "
    "respondió replicó añadió risposto replicato aggiunto antwoordde verklaarde"
).split()
# A trie of the verbs, matched in lower-cased text: `re` follows one branch at each
# place instead of trying ninety words in turn (see guards.numbers._trie).
_VERB = re.compile(r"\b(?:according\s+to|" + _trie(_VERBS) + r")\b")
_PRONOUN = re.compile(r"\b(?:he|she|they|il|elle|er|sie|él|ella|lui|hij|zij)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?\u2026;](?=[\s\"'\u201d\u2019\u00bb]|$)|\n")
_CLAUSE_END = re.compile(
    r",\s+(?:who|which|whose|and|but|qui|dont|et|mais|der|die|das|und|aber|que|che|dat)\b"
    r"|\s+(?:and|et|und)\s+"
)
_RELATIVE = re.compile(r",\s*(?:who|which|whose|qui|dont|der|die|das|que|che|dat)\b[^,]*,")
_BEFORE_START = re.compile(r"[.!?\u2026;][\"'\u201d\u2019\u00bb]?\s+|\n")
_OPENING_MARKS = frozenset("\"'\u201c\u201e\u00ab\u2018\u201a\u2039\u300c\u300e")
# A German role is a capitalised noun after its article ("die Bürgermeisterin").
_GERMAN_ROLE = r"(?i:der|die|den|dem)\s+(?P<noun>[A-Z\u00c4\u00d6\u00dc][\w-]*)"
_ARTICLE = re.compile(
    r"\b(?:(?i:the|a|an|le|la|l['\u2019]|der|die|das|den|dem|el|il|lo|de|het|een)\s+"
    r"(?P<role>(?:[^\W\d_A-Z][\w-]*\s+){0,2}[^\W\d_A-Z][\w-]*)|" + _GERMAN_ROLE + ")"
)
# After a verb, a role is the speaker only when it ends the clause: "said the mayor."
# ("said the decision followed a review" reports what was said).
_ROLE_AFTER = re.compile(
    r"\s*(?:(?i:the|a|an|le|la|l['\u2019]|der|die|el|il|de|het|een)\s+"
    r"(?:[^\W\d_A-Z][\w-]*\s+){0,2}[^\W\d_A-Z][\w-]*|" + _GERMAN_ROLE + r")\s*(?:[,.;:]|$)"
)
_ROLE_BEFORE_QUOTE = re.compile(
    r"\s*(?:(?i:the|a|an|le|la|l['\u2019]|der|die|el|il|de|het|een)\s+"
    r"(?:[^\W\d_A-Z][\w-]*\s+){0,2}[^\W\d_A-Z][\w-]*|" + _GERMAN_ROLE + r")\s*[,;:]"
)
_ROLE_STOP = frozenset(
    "for of the a an and to at in on with from by who which that said says told is was "
    "de du des la le et pour von der des und für el del y di della e per van het en".split()
)
_ORGANISATION = frozenset(
    """
    council college association trust university academy library hospital agency union
    party ltd limited plc group company board committee court school church police
    service services department ministry office bank club society foundation institute
    county borough city town port harbour authority government commission federation
    friends news times gazette courier
    """.split()
)
# Titles before a name say nothing of who it is: two councillors are two people.
_TITLES = frozenset(
    """
    councillor cllr captain chief superintendent inspector sergeant constable detective
    judge justice president minister secretary professor doctor mayor deputy senator
    father sister brother bishop general colonel major commander officer director
    bürgermeister bürgermeisterin maire ministre président présidente juez alcalde sindaco
    """.split()
)
_WORD = re.compile(r"[^\W\d_][\w'\u2019-]*")
_PRONOUN_LOOKBACK = 600
_AFTER_VERB_WITHIN = 5  # words: '," the council's head of housing said' is as far as it goes


class Attribution(NamedTuple):
    """Who says one quotation: as written, the words that identify them, and how."""

    start: int  # the quotation's text in its document
    end: int
    speaker: str | None
    identity: frozenset[str]
    how: str  # "named", "pronoun", "inherited", "previous sentence", "none"


_NONE = Attribution(0, 0, None, frozenset(), "none")


def _names(text: str) -> list[tuple[int, int, str]]:
    """(start, end, written) of the names in `text`, an honorific before one kept."""
    out = []
    for name in find_names(text):
        start = name.start
        before = re.search(r"([^\W\d_]+)\.?\s+$", text[max(0, start - 8) : start])
        if before and before.group(1).lower() in HONORIFICS:
            start -= len(before.group())
        out.append((start, name.end, text[start : name.end]))
    return out


def _person_like(written: str) -> bool:
    """A person's name: with an honorific, or two or more words none of which names
    an organisation or a place kind, and not a possessive ("Kelmont's")."""
    words = _WORD.findall(written)
    if words and words[0].lower().rstrip(".") in HONORIFICS:
        return True
    if len(words) < 2 or written.endswith(("'s", "\u2019s")):
        return False
    return not any(w.lower().strip("'\u2019") in _ORGANISATION for w in words)


def _role(text: str) -> str | None:
    """The head noun of the first article phrase in `text` ("the council leader": leader)."""
    for m in _ARTICLE.finditer(text):
        words = []
        for w in (m.group("role") or m.group("noun")).split():
            if w.lower() in _ROLE_STOP:
                break
            words.append(w)
        if words:
            return " ".join(words)
    return None


def _identity(names: list[tuple[int, int, str]], role: str | None) -> frozenset[str]:
    words = {w.lower().strip("'\u2019") for _, _, n in names for w in _WORD.findall(n)}
    if role and not words:  # a name says who; a role beside it may be anything ("the group")
        words.add(role.split()[-1].lower())
    words = {w[:-2] if w.endswith(("'s", "\u2019s")) else w for w in words}
    if not role or len(words) > 1:
        words -= _TITLES
    return frozenset(w for w in words if w not in HONORIFICS and len(w) > 1)


def _who(text: str, part: str, at: int, nearest_last: bool) -> Attribution | None:
    """The speaker `part` (at offset `at` of `text`) names: names, else a role, else a pronoun."""
    names = _names(part)
    if names and {n[2] for n in names} == {_role(part)}:
        names = []  # "sagte die Bürgermeisterin": a German role, capitalised, not a name
    if names:
        people = [n for n in names if _person_like(n[2])] or names
        shown = people[-1] if nearest_last else people[0]
        return Attribution(0, 0, shown[2], _identity(names, None), "named")
    role = _role(part)
    if role:
        return Attribution(0, 0, f"the {role}", _identity([], role), "named")
    pronoun = _PRONOUN.search(part)
    if pronoun:
        return _resolve(text, at + pronoun.start())
    return None


def _speaker_in(text: str, region_start: int, region_end: int, after: bool) -> Attribution | None:
    """The speaker a narration region names beside its verb of attribution; `after`:
    the region follows the quotation (", said Helen Marsh" / "", she said")."""
    region = text[region_start:region_end]
    low = region.lower()
    if len(low) != len(region):  # a few characters (İ) lower-case to two
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in region)
    verbs = list(_VERB.finditer(low))
    if not verbs:
        return None
    verb = verbs[0] if after else verbs[-1]  # the verb nearest the quotation
    if after and len(region[: verb.start()].split()) > _AFTER_VERB_WITHIN:
        return None  # '" and said she had asked...': the narration goes on, it attributes nothing
    rest = region[verb.end() :]
    stripped = rest.lstrip(" :,\u00a0")
    role_after = (_ROLE_AFTER if after else _ROLE_BEFORE_QUOTE).match(rest)
    named_after = bool(stripped[:1].isupper() or role_after)
    if after or named_after:
        if named_after or not region[: verb.start()].strip(" ,\u00a0"):
            cut = _CLAUSE_END.search(rest)
            part = rest[: cut.start()] if cut else rest
            found = _who(text, part, region_start + verb.end(), nearest_last=False)
            if found:
                return found
    before = _RELATIVE.sub(", ", region[: verb.start()])
    return _who(text, before, region_start, nearest_last=True)


def _narration(text: str) -> str:
    """`text` with every quotation blanked out (same length): a pronoun's antecedent
    is named in the narration, not inside someone's words."""
    out = list(text)
    for q in find_quotes(text):
        out[q.start : q.end] = " " * (q.end - q.start)
    return "".join(out)


def _resolve(text: str, at: int) -> Attribution:
    """A pronoun: the subject (first person's name) of the nearest sentence before it
    that names a person, else the last name written before it."""
    start = max(0, at - _PRONOUN_LOOKBACK)
    window = _narration(text[start:at])
    sentences = [s for s in re.split(r"(?<=[.!?;])\s+|\n+", window) if s.strip()]
    last = None
    for sentence in reversed(sentences):
        names = _names(sentence)
        people = [n for n in names if _person_like(n[2])]
        if people:
            return Attribution(0, 0, people[0][2], _identity([people[0]], None), "pronoun")
        if names and last is None:
            last = names[-1]
    if last is None:
        return Attribution(0, 0, None, frozenset(), "pronoun")
    return Attribution(0, 0, last[2], _identity([last], None), "pronoun")


def find_attributions(text: str) -> list[Attribution]:
    """Each quotation of `text` with the speaker its narration gives it (see the module)."""
    attributions = _Attributions(text)
    return [attributions.at(k) for k in range(len(attributions.quotes))]


class _Attributions:
    """The speakers of a text's quotations, each worked out only when asked for (a
    source is long; a draft asks about one or two of its quotations)."""

    def __init__(self, text: str, lo: int = 0, hi: int | None = None):
        self.text = text
        if lo == 0 and hi is None:
            self.quotes = find_quotes(text)
        else:  # the quotations of one passage (a source is long; one paragraph will do)
            self.quotes = [q._replace(start=q.start + lo, end=q.end + lo)
                           for q in find_quotes(text[lo:hi])]  # fmt: skip
        self.starts = [q.start for q in self.quotes]
        self._done: dict[int, Attribution] = {}

    def at(self, k: int) -> Attribution:
        if k in self._done:
            return self._done[k]
        text, q = self.text, self.quotes[k]
        # The quotation before, in this one's paragraph, bounds the narration read for
        # its speaker (where it ends: an attribution ends where its quotation does);
        # its own speaker is worked out only when this one has none to inherit it.
        needs_previous = k and self._needs_previous(k)
        before_end = self.quotes[k - 1].end if needs_previous else None
        found = _attribute(text, q.start, q.end, q.closed, before_end)
        if found is None and needs_previous:
            previous = self.at(k - 1)
            if previous.speaker is not None:
                if not _PARAGRAPH.search(text, previous.end, q.start):
                    found = previous._replace(how="inherited")
        if found is None:
            found = _previous_sentence(text, q.start)
        attribution = (found or _NONE)._replace(start=q.start, end=q.end)
        self._done[k] = attribution
        return attribution

    def _needs_previous(self, k: int) -> bool:
        """The quotation before is read only when it ends in this one's paragraph."""
        before = self.quotes[k - 1]
        return not _PARAGRAPH.search(self.text, before.end, self.quotes[k].start)

    def containing(self, offset: int) -> Attribution | None:
        k = bisect_right(self.starts, offset) - 1
        if k < 0 or offset >= max(self.quotes[k].end, self.quotes[k].start + 1):
            return None
        return self.at(k)


_PARAGRAPH = re.compile(r"\n[^\S\n]*\n")


def _attribute(
    text: str, start: int, end: int, closed: bool, previous_end: int | None
) -> Attribution | None:
    """The speaker of the quotation at `start`-`end` its narration names: after it,
    else before it, back to the end of the quotation before it in its paragraph
    (`previous_end`, None when there is none)."""
    inner = text[start:end].rstrip()
    if closed and end < len(text):
        after_start = end + 1
        tail = text[after_start : after_start + 40].lstrip(" ,\u00a0")
        ended = inner.endswith((".", "\u2026")) or (
            inner.endswith(("!", "?")) and not tail[:1].islower()
        )
        if not ended:
            stop = _SENTENCE_END.search(text, after_start)
            after_end = stop.start() if stop else len(text)
            nxt = next(
                (i for i in range(after_start, after_end) if text[i] in _OPENING_MARKS), None
            )
            if nxt is not None:
                after_end = nxt
            found = _speaker_in(text, after_start, after_end, after=True)
            if found:
                return found
    opening = start - 1
    window = max(0, opening - 300, previous_end + 1 if previous_end is not None else 0)
    breaks = list(_BEFORE_START.finditer(text, window, max(window, opening)))
    before_start = breaks[-1].end() if breaks else window
    if before_start >= opening:
        return None
    return _speaker_in(text, before_start, opening, after=False)


def _previous_sentence(text: str, start: int) -> Attribution | None:
    """A quotation opening a sentence of its own takes the speaker the sentence before
    it names, in the same paragraph: 'Mr Renwick said the decision followed a review.
    "Brackwater has..."'."""
    para = max(0, text.rfind("\n", 0, start) + 1)
    opening = start - 1
    ends = list(_BEFORE_START.finditer(text, para, opening))
    if not ends or text[ends[-1].end() : opening].strip():
        return None  # narration before the quotation in its own sentence: not this case
    prev_end = ends[-1].start()
    prev_start = ends[-2].end() if len(ends) > 1 else para
    found = _speaker_in(text, prev_start, prev_end + 1, after=False)
    return found._replace(how="previous sentence") if found else None


def _passage(text: str, at: int) -> tuple[int, int]:
    """The paragraph around `at`, with the paragraphs before it that a quotation
    continued over paragraphs started in (each opens with a quotation mark)."""
    lo = text.rfind("\n", 0, at) + 1
    for _ in range(6):
        if lo < 2 or text[lo:].lstrip()[:1] not in _OPENING_MARKS:
            break
        lo = text.rfind("\n", 0, lo - 1 - (text[lo - 2] == "\n")) + 1
    hi = text.find("\n", at)
    hi = hi if hi >= 0 else len(text)
    if at - lo > _REACH:  # one long paragraph: from a sentence end well before `at`
        cut = text.find(". ", at - _REACH, at)
        lo = cut + 2 if cut >= 0 else at - _REACH
    if hi - at > _REACH:
        cut = text.find(". ", at + _REACH)
        hi = cut + 1 if cut >= 0 else hi
    return lo, hi


_REACH = 1500  # characters around a quotation read to find its quotation marks


@lru_cache(maxsize=64)
def _sentences(source: str) -> tuple[str, ...]:
    return tuple(s.lower() for s in re.split(r"(?<=[.!?])\s+|\n+", source) if s.strip())


def _is_role(a: Attribution) -> bool:
    return bool(a.speaker and a.speaker.startswith("the ") and a.how == "named")


def _same_person(draft: Attribution, source: Attribution, text: str) -> bool:
    """Shared name or role words; or, when one side is only a role, a source sentence
    naming both ("The mayor, Tomas Reint, said")."""
    if draft.identity & source.identity:
        return True
    if not (_is_role(draft) or _is_role(source)):
        return False  # two names with nothing in common: two people
    for sentence in _sentences(text):
        words = set(_WORD.findall(sentence))
        if words & draft.identity and words & source.identity:
            return True  # "The mayor, Tomas Reint, told reporters..."
    return False


_OCCURRENCES = 8  # the same words quoted again further down the source: read that many


def _passage_attributions(source: str, lo: int, hi: int) -> _Attributions:
    """The quotations of one passage of a source with their speakers, read once per
    source and passage (cached on its `SourceText`): the next draft of the same source
    (the desk's edits, `replay`) finds them, and the speakers worked out, there."""
    read = source_text(source).derived("speakers by passage", lambda _: {})
    if (lo, hi) not in read:
        read[lo, hi] = _Attributions(source, lo, hi)
    return read[lo, hi]


def _source_speaker(
    source: str, words: str, mine: Attribution, span: tuple[int, int] | None
) -> tuple[tuple[int, int], Attribution, bool] | None:
    """(where, whose, the same person?) for the source's quotation of `words`: the
    first occurrence whose speaker is the draft's, else the first attributed one.
    `span`: where the source has `words` first (`locate_passage`, found already)."""
    first = None
    start = 0
    for n in range(_OCCURRENCES):
        if n:
            span = locate_passage(source, words, start)
        if span is None:
            break
        start = span[0] + 1
        theirs = _passage_attributions(source, *_passage(source, span[0])).containing(span[0])
        if theirs is None or theirs.speaker is None:
            continue
        if _same_person(mine, theirs, source):
            return span, theirs, True
        first = first or (span, theirs, False)
    return first


def speakers_match(source: str, url: str | None, draft: str) -> Verdict:
    """Flag a quotation the draft gives to another speaker than the source does."""
    source, draft = source or "", draft or ""
    evidence: list[dict[str, Any]] = []
    moved: list[str] = []
    drafted = _Attributions(draft)
    for k, q in enumerate(drafted.quotes):
        raw = draft[q.start : q.end]
        parts = fragments(_CONTINUATION.sub(r"\1", raw))
        first = locate_passage(source, parts[0]) if parts else None
        if first is None:
            continue  # not quoted by the source: quotes_verbatim's finding
        mine = drafted.at(k)
        if mine.speaker is None:
            continue
        found = _source_speaker(source, parts[0], mine, first)
        if found is None:
            continue  # the source does not say who
        span, theirs, same = found
        evidence.append(
            {
                "quote": shorten(raw.strip(), 120),
                "draft_speaker": mine.speaker,
                "source_speaker": theirs.speaker,
                "found": same,
                "draft_span": [mine.start, mine.end],
                "source_span": list(span),
                "source_attribution": theirs.how,
            }
        )
        if not same:
            quote = shorten(raw.strip(), 50)
            moved.append(f"“{quote}” given to {mine.speaker}; the source: {theirs.speaker}")
    if not evidence:
        return Verdict(GATE, True, "no attributed quotation the source also quotes", evidence)
    if moved:
        reason = (
            f"{len(moved)} of {len(evidence)} quotations given to another speaker: "
            + "; ".join(moved)
        )
        return Verdict(GATE, False, reason, evidence)
    n = len(evidence)
    return Verdict(
        GATE, True, f"{n} quotation{'s' if n != 1 else ''} with the source's speaker", evidence
    )
