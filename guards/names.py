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
  (dates_grounded checks those), number words (numbers_grounded), a single
  capitalised word after a German article ("die Schließung": German capitalises
  every noun; not an acronym, "die SPD"), also before "der" ("die Schließung der
  Halle"), but not before "von" ("die Bank von Ostbrück": "Bank" and "Ostbrück"
  are both checked; "Bank" is grounded by a compound with that head naming the same
  thing, "die Landesbank von Ostbrück", not by "das Bankhaus Ostbrück", whose head is
  Haus), "I", and at
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
from guards.sourcetext import source_text
from guards.text import INVISIBLE, clean, drop_invisible
from guards.verdict import Verdict, all_found

GATE = "names_grounded"

# An invisible character inside a word ("Ma\u200bra") does not split it: it is
# dropped when the word is looked up.
_WORD = re.compile(rf"[^\W\d_][\w{INVISIBLE}]*(?:[-'\u2019.][^\W\d_][\w{INVISIBLE}]*)*['\u2019]?|&")
_CONNECTORS = frozenset("of de van von der den la le du da di del and for für &".split())
# `find_names` reads the words of a text with `_WORD`, but only a capitalised word, or
# the word right after one, can make or end a name. A stretch of words that start with
# an ASCII lower-case letter (and what separates them: no letter, no "&") is one match
# of `_SKIM` (group `lower`), so the loop runs once per stretch, not once per word. Its
# words are `_WORD`'s words: the same pattern from a lower-case letter, and nothing
# between them that `_WORD` could start a word at.
_LOWER_WORD = rf"[a-z][\w{INVISIBLE}]*(?:[-'\u2019.][^\W\d_][\w{INVISIBLE}]*)*['\u2019]?"
_SKIM = re.compile(rf"(?P<lower>{_LOWER_WORD}(?:(?:(?!&)[\W\d_])*{_LOWER_WORD})*)|{_WORD.pattern}")
_ORGANISATION_CONNECTORS = frozenset("of for für and &".split())
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
_COMMON = _COMMON | frozenset(
    "la le les l une un des der die das den dem des ein eine el los las il lo gli".split()
)
_NUMBER_WORDS = frozenset(_UNITS + _ORDINALS)
# Acronyms of common nouns, not of anyone's name: a draft's "GP" names nobody.
GENERIC_ACRONYMS = frozenset(
    """
    GP GPs MP MPs MEP MEPs MSP MSPs CEO CEOs CFO COO CTO AGM EGM PM TV DJ HR PR ICU GDP
    VAT CCTV PhD MBA QC KC OBE MBE CBE AI EV EVs LED SUV HGV HGVs ID PIN ATM FAQ DIY IVF
    PPE SMS URL USB CV CVs UFO LGBT LGBTQ NGO NGOs SME SMEs IPO PDF
    """.split()
)
# Units written after a number: "450 MW", "-17.4C", "28C" are not names.
UNIT_WORDS = frozenset(
    "C F K MW GW KW kW kWh MWh GWh TWh Mbps Gbps GB TB MB KB Hz kHz MHz GHz dB V W mAh".split()
)
# Titles before a name say nothing of who it is ("Judge Ruth Marsh" is not Judge Helen
# Marsh): they are left out when two names are compared word for word.
TITLES = frozenset(
    """
    councillor cllr captain chief superintendent inspector sergeant constable detective
    judge justice president minister secretary professor doctor mayor deputy senator
    father sister brother bishop general colonel major commander officer director
    bürgermeister bürgermeisterin maire ministre président présidente juez alcalde sindaco
    """.split()
)
# Words that make a name a place or an organisation, not a person.
NOT_PERSON = frozenset(
    """
    council college association trust university academy library hospital agency union
    party ltd limited plc group company board committee court school church police
    service services department ministry office bank club society foundation institute
    county borough city town port harbour authority government commission federation
    friends news times gazette courier park street road lane avenue square bridge hall
    centre center house station airport river hill way close row quay wharf estate
    retail market mall field fields farm green gate gardens place terrace drive
    """.split()
)
_ROMAN = re.compile(r"(?:I|II|III|IV|V|VI|VII|VIII|IX|X|XI|XII)$")
# Headline verbs written Title Case ("Keldmoor Buys Tallis Foods"): not names.
_HEADLINE_VERBS = frozenset(
    """
    buys sells wins loses cuts hits backs slams axes eyes vows says sees gets sets plans
    warns urges faces seeks takes makes opens closes shuts raises lifts drops ends starts
    agrees rejects approves blocks bans calls denies admits launches unveils names hires
    fires quits joins leaves returns signs scraps delays halts probes sues charges jails
    buy sell win lose cut back slam axe eye vow say see get set plan warn urge face seek
    take make open close shut raise lift drop end start agree reject approve block ban
    over for with after amid into from about against as at by in on to of up out off new
    """.split()
)
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
    return drop_invisible(_unpossessive(word))


def _unpossessive(word: str) -> str:
    for suffix in ("'s", "\u2019s", "'S", "\u2019S"):
        if word.endswith(suffix):
            return word[: -len(suffix)]
    return word.rstrip("'\u2019.")


def _title_case_lines(text: str) -> list[tuple[int, int]]:
    """Spans of lines whose longer words are mostly capitalised (headlines); a line
    ending with a full stop is a sentence, not a headline."""
    spans = []
    pos = 0
    for line in text.split("\n"):
        if not line.rstrip().endswith("."):  # its words are read only then (most are not)
            long = [w for w in _WORD.findall(line) if len(w) >= 4]
            if len(long) >= 3 and sum(map(_is_capitalised, long)) >= 0.6 * len(long):
                spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def find_names(draft: str) -> list[Name]:
    """The proper names of the draft (see the module docstring)."""
    names: list[Name] = []
    run: list[re.Match[str]] = []
    start, word = -1, "x"
    for m in [*_SKIM.finditer(draft), None]:
        if m is not None and m.lastgroup == "lower":
            if not run:
                continue  # ordinary words outside any run (most words): nothing to do
            # Only its first word can end the run or join it (a connector before a
            # capitalised word is a stretch of one word): read it as `_WORD` does.
            m = _WORD.match(draft, m.start())
        if m is not None:
            # Each word's offset and text read once: this loop runs for every word.
            start, word = m.start(), m.group()
            if not run and not word[0].isupper():
                continue  # an ordinary word outside any run (most words): nothing to do
            if (
                start
                and (draft[start - 1].isdigit() or word in UNIT_WORDS)
                and _after_number(draft, m)
            ):
                # -17.4C, 450 MW: a unit, and it ends a run of capitalised words
                m, start, word = _NOT_A_NAME, -1, "x"
        gap = draft[run[-1].end() : start] if m is not None and run else "x"
        if gap.strip() == "" and gap.count("\n") < 2:  # a name never runs over a blank line
            if word[0].isupper() or (word in _CONNECTORS and _next_capitalised(draft, m)):
                run.append(m)
                continue
        if run:
            names += _name_of(draft, run)
            run = []
        if m is not None and word[0].isupper():
            run = [m]
    return names


class _NotAName:
    """Stands for a word that is not a name (a unit after a number): ends any run."""

    @staticmethod
    def group() -> str:
        return "x"

    @staticmethod
    def start() -> int:
        return -1

    @staticmethod
    def end() -> int:
        return -1


_NOT_A_NAME: Any = _NotAName()
_NUMBER_BEFORE = re.compile(r"[0-9][0-9.,]*[^\S\n]?$")


def _after_number(draft: str, m: re.Match[str]) -> bool:
    """A word glued to a digit ("17.4C", "450MW"), or a unit after a number ("450 MW")."""
    start = m.start()
    if start and draft[start - 1].isdigit():
        return True
    return m.group() in UNIT_WORDS and bool(_NUMBER_BEFORE.search(draft, max(0, start - 12), start))


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
        if low in HONORIFICS or low in _DATE_WORDS or low in _NUMBER_WORDS or word == "A":
            continue
        roman = word == "I" and k > 0 and run[k - 1].group() not in _CONNECTORS
        if word in GENERIC_ACRONYMS or (word == "I" and not roman):
            continue  # "I" stays only as a numeral after a name: "World War I"
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
    """Whether the draft writes `word` (it starts and ends with a word character) as a
    whole word that does not start a sentence; found with `str.find`, not a regex
    compiled per word."""
    pos = 0
    while (i := draft.find(word, pos)) >= 0:
        pos = i + 1
        end = i + len(word)
        if i and (draft[i - 1].isalnum() or draft[i - 1] == "_"):
            continue
        if end < len(draft) and (draft[end].isalnum() or draft[end] == "_"):
            continue
        if not _sentence_start(draft, i):
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


class _SourceIndex:
    """What names_grounded needs of one source, read once per source (and cached for
    the next draft of the same source): its folded words, the words it writes in
    lower case, its own names and the acronyms of its names. Lookups are then set
    lookups, not a scan of the source per draft name."""

    def __init__(self, source: str):
        self.source = source
        self.norm = _source(source)
        self._words: frozenset[str] | None = None
        self._lookups = 0
        self._names: list[tuple[str, tuple[str, ...]]] | None = None
        self._lower: frozenset[str] | None = None
        self._acronyms: frozenset[str] | None = None

    @property
    def words(self) -> frozenset[str]:
        """Every word of the folded source, read once."""
        if self._words is None:
            self._words = frozenset(_TOKEN.findall(self.norm.text))
        return self._words

    def has_word(self, folded: str) -> bool:
        """Whether the folded source has `folded` as a whole word. The first few
        lookups search the text (cheaper than reading every word of a long source
        for a draft with two names); from the ninth on, the source's words are read
        once into a set and every later lookup, for this draft or the next draft of
        the same source, is a set lookup."""
        self._lookups += 1
        if self._words is None and self._lookups <= _SCANS_BEFORE_INDEX:
            return _word_at(self.norm.text, folded) >= 0
        if folded in self.words:
            return True
        if _TOKEN.fullmatch(folded):
            return False  # a plain word the source does not have
        return _word_at(self.norm.text, folded) >= 0  # O'Neill, words with marks

    @property
    def names(self) -> list[tuple[str, tuple[str, ...]]]:
        """Each name of the source as written and as folded words."""
        if self._names is None:
            text = clean(self.source)
            self._names = [
                (" ".join(n.words), tuple(w.casefold() for w in n.words)) for n in find_names(text)
            ]
        return self._names

    @property
    def lower(self) -> frozenset[str]:
        """Words the source writes in lower case (ordinary words, not names)."""
        if self._lower is None:
            self._lower = frozenset(w for w in _TOKEN.findall(self.source) if w.islower())
        return self._lower

    @property
    def acronyms(self) -> frozenset[str]:
        """The initials of every run of up to six words starting with a capital, with and
        without its connecting words: "Competition and Markets Authority" gives CMA,
        "Caisse des dépôts et consignations" CDC, "Kreditanstalt für Wiederaufbau" KFW."""
        if self._acronyms is None:
            words = _TOKEN.findall(clean(self.source))
            found = set()
            for i, first in enumerate(words):
                if not first[:1].isupper():
                    continue
                full = short = ""
                for w in words[i : i + 9]:
                    full += w[0]
                    if w.lower() not in _CONNECTORS and w.lower() not in _ACRONYM_SKIP:
                        short += w[0]
                    if 2 <= len(short) <= 6:
                        found.add(short.upper())
                    if 2 <= len(full) <= 6:
                        found.add(full.upper())
            self._acronyms = frozenset(found)
        return self._acronyms

    def person_word(self, folded: str) -> bool:
        """Whether the source gives `folded` as (part of) a person's name, or at least
        not only inside the name of a place or an organisation ("Kelbrook Retail
        Park" does not make anyone Ms Park)."""
        holders = [n for _, n in self.names if folded in n]
        if not holders:
            return folded not in self.words or folded in self.lower_folded
        return any(
            len(n) == 1 or not any(w in NOT_PERSON or w in _ORGANISATION_CONNECTORS for w in n)
            for n in holders
        )

    def has_compound_of(self, head: str, rest: tuple[str, ...]) -> bool:
        """Whether the folded source names the same thing with a compound whose head
        (last part) is `head`: "die Bank von Ostbrück" from "die Landesbank von
        Ostbrück" or "Landesbank Ostbrück". German compounds are right-headed: a
        Landesbank is a Bank, a Bankhaus is not (its head is Haus). The rest of the
        compound has three letters or more."""
        name = r"\s+".join(map(re.escape, rest))
        pattern = rf"(?<!\w)\w{{3,}}{re.escape(head)}\s+(?:von\s+)?{name}(?!\w)"
        return re.search(pattern, self.norm.text) is not None

    @property
    def lower_folded(self) -> frozenset[str]:
        return frozenset(w.casefold() for w in self.lower)


_TOKEN = re.compile(r"[^\W_]+")
_SCANS_BEFORE_INDEX = 8
_ACRONYM_SKIP = frozenset("des et dei della di y e".split())


def _source_index(source: str) -> _SourceIndex:
    """The source's words and names, read once per source (guards.sourcetext)."""
    return source_text(source).derived("names", lambda s: _SourceIndex(s.text))


def _is_acronym(word: str) -> bool:
    return 2 <= len(word) <= 6 and sum(c.isupper() for c in word) >= 2 and word.isalpha()


def _lookup(index: _SourceIndex, name: Name, headline: bool) -> tuple[list[str], int, int]:
    """(words the source lacks, start, end of where the source has the name)."""
    source = index.norm
    missing = []
    text = source.text
    for k, word in enumerate(name.words):
        if word in _CONNECTORS:
            continue
        folded = source.fold(word)
        if index.has_word(folded):
            continue
        if _is_acronym(word) and word.upper() in index.acronyms:
            continue  # CMA for the Competition and Markets Authority
        lenient = headline or (k == 0 and name.initial)
        stem = folded[: max(4, len(folded) - 3)]
        if lenient and len(folded) > 4 and _word_at(text, stem, True) >= 0:
            continue
        missing.append(word)
    if missing:
        return missing, -1, -1
    phrase = source.fold(" ".join(name.words))
    at = _word_at(text, phrase)
    if at < 0 and len(name.words) > 1 and _ROMAN.match(name.words[-1]):
        return [name.words[-1]], -1, -1  # World War I is not World War II
    if at < 0:  # every word is there, not together: no one place to point at
        return [], -1, -1
    return [], at, at + len(phrase)


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
        if bare.lower() not in HONORIFICS and bare.lower() not in TITLES:
            parts[-1] += [part for part in re.split(r"[-.]", bare) if part]
        if bare != drop_invisible(token).rstrip("."):  # a possessive ends a part
            parts.append([])
    return [tuple(p) for p in parts if p]


def _in_order(words: tuple[str, ...], within: tuple[str, ...]) -> bool:
    it = iter(within)
    return all(word in it for word in words)


def _recombined(names: _SourceIndex, written: str) -> dict[str, str] | None:
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


_HONORIFIC_BEFORE = re.compile(
    r"\b(?:mr|mrs|ms|miss|mx|dr|herr|frau|mme|mlle|m|sir|dame|lord|lady)\.?\s+$", re.IGNORECASE
)


def _headline_names(draft: str, name: Name, index: _SourceIndex) -> list[Name]:
    """A run of capitalised words in a Title Case line, split at its ordinary words:
    a headline verb ("Buys"), a common word ("Over"), or a word the source writes
    in lower case ("Inquiry"); what is left are the names."""
    parts: list[list[re.Match[str]]] = [[]]
    for m in _WORD.finditer(draft, name.start, name.end):
        low = _bare(m.group()).lower()
        ordinary = (
            low in _HEADLINE_VERBS
            or low in _COMMON
            or low in index.lower
            or (low.endswith("s") and low[:-1] in index.lower)
        )
        if ordinary and m.group().lower() not in _CONNECTORS:
            parts.append([])
        else:
            parts[-1].append(m)
    out = []
    for part in parts:
        while part and part[-1].group() in _CONNECTORS:
            part.pop()
        while part and part[0].group() in _CONNECTORS:
            part.pop(0)
        words = tuple(w for m in part for w in re.split(r"[-.]", _bare(m.group())) if w)
        if words:
            out.append(Name(part[0].start(), part[-1].end(), words, name.initial))
    return out


# A German article, or a preposition joined to one (im, am, zum, zur, vom, beim).
_GERMAN_ARTICLE_BEFORE = re.compile(
    r"(?<!\w)(?:[Dd](?:er|ie|as|en|em)|[Ee]ine[nmrs]?|[Ii]m|[Aa]m|[Zz]u[mr]|[Vv]om|[Bb]eim)"
    r"\s+$"
)


_GERMAN_LINK_ARTICLES = frozenset(("der", "den"))


def _after_german_article(draft: str, name: Name) -> bool:
    """Whether `name` follows a German article (and does not start a sentence)."""
    return not name.initial and bool(
        _GERMAN_ARTICLE_BEFORE.search(draft, max(0, name.start - 8), name.start)
    )


def _german_nouns(draft: str, name: Name) -> frozenset[str]:
    """The words of a name after a German article that are nouns, not names (no other
    language writes these articles before a name). German capitalises every noun:
    a single capitalised word after the article ("die Schließung", "das Wasser"),
    alone or before a genitive article ("die Schließung der Halle"), and a single word
    after "der" inside the run ("der Halle") are nouns. Not an acronym ("die SPD"), nor
    a run of capitalised words ("die Sparkasse Kelmbach", "der Ära Brandt"), nor what
    follows "von" ("von Ostbrück"), nor the head noun before "von" and a name: "die
    Bank von Ostbrück" names an institution, so its "Bank" must be in the source as
    well (another noun with "von Ostbrück" does not ground it). A short draft is too
    short to detect its language, so the article is the sign."""
    if not _after_german_article(draft, name):
        return frozenset()
    # The name's words in stretches between its connecting words, each with the
    # connecting word before it ("" for the first).
    stretches: list[tuple[str, list[str]]] = [("", [])]
    for word in name.words:
        if word in _CONNECTORS:
            stretches.append((word, []))
        else:
            stretches[-1][1].append(word)
    nouns = set()
    for k, (link, words) in enumerate(stretches):
        heads_a_name = k + 1 < len(stretches) and stretches[k + 1][0] not in _GERMAN_LINK_ARTICLES
        noun_place = (k == 0 and not heads_a_name) or (
            link in _GERMAN_LINK_ARTICLES and stretches[k - 1][1]
        )
        if noun_place and len(words) == 1 and not words[0].isupper():
            nouns.add(words[0])
    return frozenset(nouns)


def names_grounded(source: str, url: str | None, draft: str) -> Verdict:
    """Flag proper names of the draft that the source never mentions."""
    draft = draft or ""
    index = _source_index(source or "")
    norm = index.norm
    headlines = _title_case_lines(draft)
    names = []
    for name in find_names(draft):
        if any(s <= name.start < e for s, e in headlines):
            names += [(part, True) for part in _headline_names(draft, name, index)]
        else:
            names.append((name, False))
    source_names = index
    evidence: list[dict[str, Any]] = []
    missing: list[str] = []
    for name, headline in names:
        lacks, start, end = _lookup(index, name, headline)
        if (
            not lacks
            and len(name.words) == 1
            and _HONORIFIC_BEFORE.search(draft, max(0, name.start - 8), name.start)
        ):
            if not index.person_word(norm.fold(name.words[0])):
                lacks = [name.words[0]]  # "Ms Park" from "Kelbrook Retail Park"
        if lacks:  # "die Schließung", "am Hafen von": German nouns, capitalised, not names
            nouns = _german_nouns(draft, name)
            lacks = [word for word in lacks if word not in nouns]
        if lacks == [name.words[0]] and len(name.words) > 1 and _after_german_article(draft, name):
            rest = name.words[2:] if name.words[1] == "von" else name.words[1:]
            if index.has_compound_of(norm.fold(lacks[0]), tuple(map(norm.fold, rest))):
                lacks = []  # "die Bank von Ostbrück" of the "Landesbank von Ostbrück"
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
