"""names_grounded: every proper name in the draft is a name the source mentions.

A dependency-free heuristic (no model, no download; measured in the README):

* A name is a run of capitalised words (or all-capital acronyms such as NHS),
  with "of", "and", "for", "&", "de", "van", "von", "der", "la", "le", "du",
  "da", "di", "del" allowed inside it: "Vell County Council", "Bank of
  Ostbrook", "Food and Allied Workers' Federation", "Jean-Luc Moreau".
* A lone capitalised word at the start of a sentence is read as a name only
  when the draft also capitalises it mid-sentence: without a dictionary the
  gate cannot tell "Close it," from "Salmond said" there (a known gap).
* Skipped: honorifics (Mr, Mrs, Ms, Dr, Sir, Cllr...), month and weekday names
  (dates_grounded checks those), number words (numbers_grounded), "I", and at
  the start of a sentence (or after an opening quotation mark or a colon) a
  common word such as "The", "However", "Officials" or an -ly adverb.
* In a Title Case line (a headline) every word is capitalised, so a word there
  counts as grounded when the source has a word that starts like it
  ("Approves" for "approved"); so does the first word of a sentence
  ("Farmer Alun Price" when the source says he "farms").
* Every word of a name must be a word of the source, case-insensitively (a
  lower-cased source still grounds "London"); a possessive ("Smith's",
  "Traders'") is read without its 's, a hyphenated name part by part. A first
  name the source never gives ("Alex Salmond" where the source says only
  "Mr Salmond") is therefore a finding: the model added it from memory.
  Connecting words ("of", "and"...) are not looked up.
* Recombined names: when every word of a name is in the source but never
  together, the source's own names are consulted. A source name that has the
  draft name's words in order grounds it ("Mara J. Velt" for "Mara Velt",
  "Ilka Brandt-Sorel" for "Ilka Sorel"). Otherwise, when the name's first word
  belongs to one source name and its last word to another, and no source name
  has both, it is a finding: "Mara Ode" from "Mara Velt" and "Jonas Ode" (the
  model blended two people). A name is checked part by part, split at its
  connecting words and after a possessive ("Martin Halloran of Tollin Cross
  Academy", "Vellmouth's Eastgate"). A word the source has outside any of its
  names is not enough to call a blend: such a name is let through, since the
  gate cannot tell a reordered organisation from an invented one.

Evidence: per name, the name, whether it was found, its span in the draft, the
words the source lacks, and where the source has the name as written (None when
its words are there but not together).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from guards.numbers import _ORDINALS, _UNITS
from guards.quotes import _source
from guards.text import INVISIBLE, Normalised, clean
from guards.verdict import Verdict, all_found

GATE = "names_grounded"

# An invisible character inside a word ("Ma\u200bra") does not split it: it is
# dropped when the word is looked up.
_WORD = re.compile(rf"[^\W\d_][\w{INVISIBLE}]*(?:[-'\u2019.][^\W\d_][\w{INVISIBLE}]*)*['\u2019]?|&")
_DROP_INVISIBLE = dict.fromkeys(map(ord, INVISIBLE))
_CONNECTORS = frozenset("of de van von der den la le du da di del and for &".split())
HONORIFICS = frozenset(
    "mr mrs ms miss mx dr prof sir dame lord lady rev revd cllr mme mlle herr frau st".split()
)
MONTHS = (
    "january february march april may june july august september october november december"
).split()
WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_DATE_WORDS = frozenset(
    MONTHS
    + WEEKDAYS
    + "jan feb mar apr jun jul aug sep sept oct nov dec".split()
    + "mon tue tues wed thu thur thurs fri sat sun".split()
)
# Ordinary words that start sentences; any of them may also be capitalised
# after a colon or an opening quotation mark.
_COMMON = frozenset(
    """
    a an the this that these those it its he she they we i you his her their our my your
    there here but and or so yet if when while after before as at in on by for from with
    without under over of to into onto since until although though because however
    meanwhile also still now then earlier later last next first finally some many most
    more much few several all both each every no not none other another such what which
    who whom whose why how where according despite following asked speaking instead only
    even just already once officials police residents critics campaigners councillors
    people staff workers members local new former work plans figures data one two
    nobody nothing everyone everybody someone anyone something yes no please thanks
    mrs mr ms dr about above across against along among around behind below beside
    between beyond during inside near outside through throughout toward towards upon
    within do does did is are was were be been being has have had will would shall
    should can could may might must let lets it's that's there's we're they're i'm
    """.split()
)
_NUMBER_WORDS = frozenset(_UNITS + _ORDINALS)
_SENTENCE_BREAK = re.compile(
    r"(?:[.!?:;\u2026]|\n)[\"'\u201c\u201d\u2018\u2019\u00ab\u00bb)\]]*\s*$"
)
_OPENING_BEFORE = re.compile(r"[\"'\u201c\u2018\u00ab\u201e(\[\u2014\u2013-]\s*$")


class Name(NamedTuple):
    start: int
    end: int
    words: tuple[str, ...]  # the words to look up, possessives stripped
    initial: bool = False  # its first word starts a sentence (it may be an ordinary word)


def _is_capitalised(word: str) -> bool:
    return word[0].isupper()


def _sentence_start(text: str, i: int) -> bool:
    before = text[max(0, i - 4) : i]
    return (
        i == 0
        or not text[:i].strip()
        or bool(_SENTENCE_BREAK.search(text, max(0, i - 6), i) or _OPENING_BEFORE.search(before))
    )


def _bare(word: str) -> str:
    """The word without a possessive or invisible characters: Smith's -> Smith,
    Traders' -> Traders."""
    return _unpossessive(word).translate(_DROP_INVISIBLE)


def _unpossessive(word: str) -> str:
    for suffix in ("'s", "\u2019s", "'S", "\u2019S"):
        if word.endswith(suffix):
            return word[: -len(suffix)]
    return word.rstrip("'\u2019.")


def _title_case_lines(text: str) -> list[tuple[int, int]]:
    """Spans of lines whose longer words are mostly capitalised (headlines)."""
    spans = []
    pos = 0
    for line in text.split("\n"):
        long = [w for w in _WORD.findall(line) if len(w) >= 4]
        if len(long) >= 3 and sum(_is_capitalised(w) for w in long) >= 0.6 * len(long):
            spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def find_names(draft: str) -> list[Name]:
    """The proper names of the draft (see the module docstring)."""
    names: list[Name] = []
    run: list[re.Match[str]] = []
    for m in [*_WORD.finditer(draft), None]:
        if m is not None and run and draft[run[-1].end() : m.start()].strip() == "":
            word = m.group()
            if _is_capitalised(word) or (word in _CONNECTORS and _next_capitalised(draft, m)):
                run.append(m)
                continue
        if run:
            names += _name_of(draft, run)
            run = []
        if m is not None and _is_capitalised(m.group()):
            run = [m]
    return names


def _next_capitalised(draft: str, m: re.Match[str]) -> bool:
    nxt = _WORD.match(draft, m.end() + 1) if m.end() + 1 < len(draft) else None
    return bool(nxt and _is_capitalised(nxt.group()) and draft[m.end()].isspace())


def _name_of(draft: str, run: list[re.Match[str]]) -> list[Name]:
    """The name in a run of capitalised words, without what is not a name."""
    while run and run[-1].group() in _CONNECTORS:
        run = run[:-1]
    kept = []
    for k, m in enumerate(run):
        word = _bare(m.group())
        low = word.lower()
        if low in HONORIFICS or low in _DATE_WORDS or low in _NUMBER_WORDS or word in ("I", "A"):
            continue
        if k == 0 and _sentence_start(draft, m.start()):
            if low in _COMMON or low.endswith("ly"):
                continue
            if len(run) == 1 and not _capitalised_mid_sentence(draft, word):
                continue  # "Close it," she said: an ordinary word, as far as we can tell
        kept.append(m)
    if not kept:
        return []
    words = tuple(part for m in kept for part in re.split(r"[-.]", _bare(m.group())) if part)
    initial = _sentence_start(draft, kept[0].start())
    end = kept[-1].start() + len(_unpossessive(kept[-1].group()))  # without a possessive 's
    return [Name(kept[0].start(), end, words, initial)] if words else []


def _capitalised_mid_sentence(draft: str, word: str) -> bool:
    for m in re.finditer(rf"\b{re.escape(word)}\b", draft):
        if not _sentence_start(draft, m.start()):
            return True
    return False


def _word_at(text: str, word: str, prefix: bool = False) -> int:
    """Offset of `word` (folded) as a whole word of `text`, or -1; with `prefix`,
    as the start of a word."""
    pos = 0
    n = len(word)
    while (i := text.find(word, pos)) >= 0:
        pos = i + 1
        if i and (text[i - 1].isalnum() or text[i - 1] == "_"):
            continue
        if prefix or i + n >= len(text) or not (text[i + n].isalnum() or text[i + n] == "_"):
            return i
    return -1


def _lookup(source: Normalised, name: Name, headline: bool) -> tuple[list[str], int, int]:
    """(words the source lacks, start, end of where the source has the name)."""
    missing = []
    text = source.text
    for k, word in enumerate(name.words):
        if word in _CONNECTORS:
            continue
        folded = source.fold(word)
        if _word_at(text, folded) >= 0:
            continue
        lenient = headline or (k == 0 and name.initial)
        stem = folded[: max(4, len(folded) - 3)]
        if lenient and len(folded) > 4 and _word_at(text, stem, True) >= 0:
            continue
        missing.append(word)
    if missing:
        return missing, -1, -1
    phrase = source.fold(" ".join(name.words))
    at = _word_at(text, phrase)
    if at < 0:  # every word is there, not together: no one place to point at
        return [], -1, -1
    return [], at, at + len(phrase)


class _SourceNames:
    """The source's own names (folded words), found once and only when needed."""

    def __init__(self, source: str):
        self.source = source
        self._names: list[tuple[str, tuple[str, ...]]] | None = None

    @property
    def names(self) -> list[tuple[str, tuple[str, ...]]]:
        if self._names is None:
            text = clean(self.source)
            self._names = [
                (" ".join(n.words), tuple(w.casefold() for w in n.words)) for n in find_names(text)
            ]
        return self._names


def _parts(written: str) -> list[tuple[str, ...]]:
    """A name's parts as written, split at its connecting words and after a
    possessive: "Jonas Ode and Mara Velt", "Martin Halloran of Tollin Cross
    Academy" and "Vellmouth's Eastgate" each name two things."""
    parts: list[list[str]] = [[]]
    for m in _WORD.finditer(written):
        token = m.group()
        if token.lower() in _CONNECTORS:
            parts.append([])
            continue
        bare = _bare(token)
        if bare.lower() not in HONORIFICS:
            parts[-1] += [part for part in re.split(r"[-.]", bare) if part]
        if bare != token.translate(_DROP_INVISIBLE).rstrip("."):  # a possessive ends a part
            parts.append([])
    return [tuple(p) for p in parts if p]


def _in_order(words: tuple[str, ...], within: tuple[str, ...]) -> bool:
    it = iter(within)
    return all(word in it for word in words)


def _recombined(names: _SourceNames, written: str) -> dict[str, str] | None:
    """{first word: the source name it comes from, last word: another source name}
    when the name blends two of the source's names (see the module), else None."""
    for part in _parts(written):
        folded = tuple(w.casefold() for w in part)
        if len(folded) < 2 or any(_in_order(folded, n) for _, n in names.names):
            continue
        first = [text for text, n in names.names if folded[0] in n]
        last = [text for text, n in names.names if folded[-1] in n]
        if first and last and not set(first) & set(last):
            return {part[0]: first[0], part[-1]: last[0]}
    return None


def names_grounded(source: str, url: str | None, draft: str) -> Verdict:
    """Flag proper names of the draft that the source never mentions."""
    draft = draft or ""
    names = find_names(draft)
    norm = _source(source or "")
    headlines = _title_case_lines(draft)
    source_names = _SourceNames(source or "")
    evidence: list[dict[str, Any]] = []
    missing: list[str] = []
    for name in names:
        headline = any(s <= name.start < e for s, e in headlines)
        lacks, start, end = _lookup(norm, name, headline)
        written = draft[name.start : name.end]
        entry: dict[str, Any] = {
            "name": written,
            "found": not lacks,
            "draft_span": [name.start, name.end],
            "missing": lacks,
            "source_span": list(norm.original_span(start, end)) if start >= 0 else None,
        }
        if not lacks and start < 0:  # every word there, never together
            blended = _recombined(source_names, written)
            if blended:
                entry.update(found=False, recombined=blended)
                how = ", ".join(f"{word} from {whose}" for word, whose in blended.items())
                missing.append(f"{written} (recombined: {how})")
        evidence.append(entry)
        if lacks and written not in missing:
            missing.append(f"{written} ({', '.join(lacks)})" if len(name.words) > 1 else written)
    if not evidence:
        return Verdict(GATE, True, "no proper names in the draft", evidence)
    if missing:
        distinct = len({e["name"] for e in evidence})
        reason = f"{len(missing)} of {distinct} names not in the source: {'; '.join(missing)}"
        return Verdict(GATE, False, reason, evidence)
    return Verdict(GATE, True, all_found([e["name"] for e in evidence], "name"), evidence)
