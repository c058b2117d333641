"""quotes_verbatim: every passage the draft puts in quotation marks is in the source word for word.

Finding the quotes (over the whole draft: a quotation may run over paragraphs):

* Every quotation mark newsrooms and feeds use: straight and curly double
  and single marks, low-9 and high-reversed-9 („ ‟ ‚ ‛), guillemets (« » ‹ ›),
  CJK corner brackets (「 」 『 』 and their halfwidth/vertical forms),
  fullwidth marks (＂ ＇), double primes used as quotes (″ 〝 〞) and the
  ornamental ones (❝ ❞). `_MARK_VIEW` reads each as the mark it stands for.
  A draft whose only quotation marks are others (any Unicode Pi/Pf character
  the finder does not pair) fails: it is not read as "no quotations".
* Double marks pair like a reader pairs them, with a stack so quotes can nest:
  "..." (straight marks alternate), “...”, „...“ or „...”, «...», »...«,
  ‹...›, ”...” (Swedish). A mark that cannot open or close anything is ignored.
  An opening mark at the start of a paragraph while a quote of the same mark
  is open continues it (the style for a quotation over several paragraphs);
  a quote still open at the end of the draft runs to that end.
  A straight " right after a digit is an inch mark (a 15" screen) unless a
  letter follows it: in 2024"we will..." it opens a quote.
* Single marks (‘ ’ ‚ and straight ') are also apostrophes, so they are told
  apart by shape. An opening mark follows the start of the text, a space, an
  opening bracket/dash/quote or : ; , (said:'We...), and is followed by a
  non-space; a closing mark follows a non-space and is not followed by a
  letter or digit, so don’t and rock'n'roll are never marks. A single quote
  closes at the first closing mark before the next opening mark (an opening
  mark at a paragraph start continues the quote), preferring one that is not
  a plural possessive ("the Smiths’ house": s’ then a space and a word), so
  ‘The Smiths’ house is big,’ is one quote and ‘We won,’ said the Smiths’
  lawyer is "We won,". One word is enough (a 'liar' is a quotation). An
  opening mark that looks like an elision ('em, 'til, 'cause, 'tis, 'twas,
  'n', '90s, '20) opens a quote only if a closing mark follows in the same
  paragraph and the quote is more than the elision itself: '90s and rock 'n'
  roll are not quotes, '20 months from now...,' and 'Cause of the fire...,'
  are. A single mark that never closes is an apostrophe.

Matching: case, runs of whitespace, the style of quotation marks, apostrophes
and dashes, Unicode composition and invisible characters (soft hyphens,
zero-width spaces) do not matter; punctuation at the ends of a quote (and of
each fragment) is dropped. Everything else is word for word, on word
boundaries: "the port" is not in "the portfolio". Quotation marks inside a
quote must be in the source too (any style, single or double): quoting the
narration around a source's quote would put words in the speaker's mouth.
An ellipsis (… ... . . . or […]) splits a quote into fragments that must
appear in the source in order, as one passage. The rule: an ellipsis may leave
out an aside, never what decides the meaning of the words kept. So the omitted
text is at most MAX_OMISSION (250) characters and MAX_OMITTED_WORDS (20)
words, holds no paragraph break or quotation mark, and no word that turns the
kept words round (`_TURNS`, in English, French, German, Spanish, Italian and
Dutch): a negation (not, no, never, n't, without, nor, none, cannot, hardly;
ne, pas, jamais; nicht, kein, nie; no, nunca; non, mai; niet, geen), a verb of
opposition, refusal or denial (oppose, reject, refuse, deny, block, prevent,
resist, fight, scrap, cancel, abandon, reverse, veto, ban, dispute, doubt,
fail, avoid, withdraw; s'opposer, refuser, rejeter, nier, empêcher; ablehnen,
verweigern, verhindern, bestreiten; rechazar, oponerse; rifiutare, opporsi;
weigeren, verzetten), a word of contrast or condition (against, instead,
rather, unless, except, but, although, however, if, whether; contre, sans,
sauf, si; gegen, ohne, außer, wenn, falls; contra, sin, si; contro, senza, se;
tegen, zonder, als). "I would ... close the central library" from "I would
oppose any plan to close the central library" fails, and so does "We will ...
raise taxes" from "We will not raise taxes". The evidence names the omission
and why it was refused.
A quotation the source continues into the next paragraph with a continuation
mark (the paragraph opens with a quotation mark again) is verbatim when the
draft joins the parts: the mark is not a word of the quotation (nor is the space
a French source sets after a guillemet, "« Nous").
Square-bracketed editorial insertions ("[The mayor] said") are not accepted:
they are not words of the source.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from functools import lru_cache
from typing import Any, NamedTuple

from guards.closest import closest_passage
from guards.sourcetext import source_text
from guards.text import (
    DASHES,
    DOUBLE_QUOTES,
    SINGLE_QUOTES,
    Normalised,
    clean,
    non_ascii,
    shorten,
    translated,
    unify_style,
)
from guards.verdict import Verdict, all_found

GATE = "quotes_verbatim"


class Quote(NamedTuple):
    """A quoted passage: offsets of its text (without the marks) in the draft."""

    start: int
    end: int
    closed: bool = True


# --- finding quotes ----------------------------------------------------------

_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n\s*")

# Other quotation marks, read as the mark they stand for (one character for
# one, so offsets hold): corner brackets pair like “ ”, white corner brackets
# (quotes inside them) like « », fullwidth and double-prime marks like ".
_MARK_VIEW = str.maketrans(
    {
        "\u201f": "\u201c",  # ‟ high-reversed-9 opens
        "\u201b": "\u2018",  # ‛
        "\u300c": "\u201c",  # 「
        "\u300d": "\u201d",  # 」
        "\u300e": "\u00ab",  # 『
        "\u300f": "\u00bb",  # 』
        "\uff62": "\u201c",  # ｢ halfwidth corner brackets
        "\uff63": "\u201d",  # ｣
        "\ufe41": "\u201c",  # ﹁ vertical corner brackets
        "\ufe42": "\u201d",  # ﹂
        "\ufe43": "\u00ab",  # ﹃
        "\ufe44": "\u00bb",  # ﹄
        "\uff02": '"',  # ＂ fullwidth
        "\uff07": "'",  # ＇
        "\u2033": '"',  # ″ double prime used as a quotation mark
        "\u2036": '"',  # ‶ reversed double prime
        "\u301d": "\u201c",  # 〝 CJK double prime quotation marks
        "\u301e": "\u201d",  # 〞
        "\u301f": "\u201d",  # 〟
        "\u275d": "\u201c",  # ❝ ornaments
        "\u275e": "\u201d",  # ❞
        "\u275b": "\u2018",  # ❛
        "\u275c": "\u2019",  # ❜
        "\u276e": "\u2039",  # ❮
        "\u276f": "\u203a",  # ❯
        "\u2e42": "\u201e",  # ⹂ double low-reversed-9
        "\U0001f676": "\u201c",  # 🙶
        "\U0001f677": "\u201d",  # 🙷
        "\U0001f678": "\u201e",  # 🙸
    }
)

_MARK_KEYS = frozenset(map(chr, _MARK_VIEW))

# opener -> the marks that close it
_DOUBLE_CLOSERS = {
    '"': '"',
    "\u201c": "\u201d\u201c",  # “ -> ” (or a mistyped “ that looks closing)
    "\u201e": "\u201c\u201d",  # „ -> “ or ”
    "\u201d": "\u201d",  # ” -> ” (Swedish)
    "\u00ab": "\u00bb",  # « -> »
    "\u00bb": "\u00ab",  # » -> « (German, Danish)
    "\u2039": "\u203a",  # ‹ -> ›
    "\u203a": "\u2039",  # › -> ‹
}
_DOUBLE_MARK = re.compile('["\u201c\u201d\u201e\u00ab\u00bb\u2039\u203a]')
# Marks that open only where an opening mark is expected (else they are strays).
_OPEN_IF_LOOKS_OPENING = "\u201d\u00bb\u203a"
_SINGLE_MARK = re.compile("['\u2018\u2019\u201a]")
# ’ opens too when it looks like an opening mark: a badly typeset ’We won,’
_SINGLE_OPENERS = "'\u2018\u201a\u2019"
_OPENING_CONTEXT = set("([{<\"'\u201c\u201e\u00ab\u00bb\u2039\u203a\u2018\u201a-\u2013\u2014/:;,")
_ELISION = re.compile(r"(?:em|til|cause|tis|twas|n|[0-9]{2}s?)\b", re.IGNORECASE)
_ELISION_ONLY = re.compile(r"(?:em|til|cause|tis|twas|n|[0-9]{2}s?)", re.IGNORECASE)
_WORD_CHUNK = re.compile(r"\S*\w\S*")


def _looks_opening(text: str, i: int, start: int, end: int) -> bool:
    """Preceded by start/space/opening punctuation, followed by a non-space."""
    before_ok = i == start or text[i - 1].isspace() or text[i - 1] in _OPENING_CONTEXT
    return before_ok and i + 1 < end and not text[i + 1].isspace()


def _looks_closing(text: str, i: int, start: int, end: int) -> bool:
    """Preceded by a non-space, not followed by a letter or digit."""
    after_ok = i + 1 >= end or not (text[i + 1].isalnum() or text[i + 1] == "_")
    return after_ok and i > start and not text[i - 1].isspace()


def _possessive(text: str, i: int, end: int) -> bool:
    """s’ followed by a space and a word: probably "the Smiths’ house", not a closing mark."""
    return text[i - 1] in "sS" and i + 2 < end and text[i + 1].isspace() and text[i + 2].isalnum()


def _double_quotes(text: str, starts: frozenset[int]) -> list[Quote]:
    """The double-mark quotes of the text. `starts` are the offsets where
    paragraphs start: an opening mark there while a quote is open continues
    it (a quotation over several paragraphs reopens each one)."""
    end = len(text)
    quotes: list[Quote] = []
    stack: list[tuple[str, int]] = []  # (opening mark, offset just after it)
    for m in _DOUBLE_MARK.finditer(text):
        mark, i = m.group(), m.start()
        if i in starts and stack and mark == stack[-1][0]:
            continue  # the continuation mark of a quotation over paragraphs
        depth = next(
            (d for d in range(len(stack) - 1, -1, -1) if mark in _DOUBLE_CLOSERS[stack[d][0]]),
            None,
        )
        # “ closes a „ quote; it closes a “ quote only when it looks like a closer (a typo).
        if depth is not None and mark == "\u201c" and stack[depth][0] == "\u201c":
            if not _looks_closing(text, i, 0, end):
                depth = None
        if depth is not None:
            quotes.append(Quote(stack[depth][1], i))
            del stack[depth:]
        elif mark == '"' and i and text[i - 1].isdigit() and not _glued_opening(text, i):
            continue  # an inch mark: a 15" screen
        elif mark not in _OPEN_IF_LOOKS_OPENING or _looks_opening(text, i, 0, end):
            stack.append((mark, i + 1))
    quotes += (Quote(after, end, closed=False) for _, after in stack)
    return quotes


def _glued_opening(text: str, i: int) -> bool:
    """A " after a digit and before a letter opens a quote: in 2024"we will..."."""
    return i + 1 < len(text) and text[i + 1].isalpha()


def _single_quotes(text: str, paragraphs: list[tuple[int, int]]) -> list[Quote]:
    """The single-mark quotes of the text (see the module docstring)."""
    end = len(text)
    openers: list[int] = []
    closers: list[int] = []
    low_closers: list[int] = []  # ‘ closes only a German ‚...‘ quote
    for m in _SINGLE_MARK.finditer(text):
        mark, i = m.group(), m.start()
        if mark in _SINGLE_OPENERS and _looks_opening(text, i, 0, end):
            openers.append(i)
        elif _looks_closing(text, i, 0, end) and mark != "\u201a":
            (low_closers if mark == "\u2018" else closers).append(i)
    starts = {s for s, _ in paragraphs}
    quotes: list[Quote] = []
    after_last = 0
    for n, o in enumerate(openers):
        if o < after_last:
            continue  # inside the quote just found
        elision = bool(_ELISION.match(text, o + 1))
        para_end = next(e for s, e in paragraphs if s <= o <= e)
        limit = end
        for later in openers[n + 1 :]:
            if later in starts and not elision:
                continue  # a continuation mark: the quotation goes on
            limit = later
            break
        if elision:
            limit = min(limit, para_end)  # an elision pairs only in its paragraph
        candidates = closers + low_closers if text[o] == "\u201a" else closers
        closing = sorted(c for c in candidates if o < c < limit)
        if not closing:
            continue
        strong = [c for c in closing if not _possessive(text, c, end)]
        c = strong[0] if strong else closing[0]
        inner = text[o + 1 : c]
        if _WORD_CHUNK.search(inner) and not _ELISION_ONLY.fullmatch(inner):
            quotes.append(Quote(o + 1, c))
            after_last = c + 1
    return quotes


def _paragraphs(text: str) -> list[tuple[int, int]]:
    spans = []
    start = 0
    for brk in [*_PARAGRAPH_BREAK.finditer(text), None]:
        end = brk.start() if brk else len(text)
        spans.append((start, end))
        if brk:
            start = brk.end()
    return spans


def find_quotes(draft: str) -> list[Quote]:
    """Every quoted passage of the draft, in order of where it starts.

    A quotation may run over paragraphs; one still open at the end of the
    draft runs to that end (closed=False)."""
    return list(_quotes_of(draft))


@lru_cache(maxsize=64)
def _quotes_of(draft: str) -> tuple[Quote, ...]:
    """`find_quotes`, once per text: quotes_verbatim and speakers_match read the
    same draft (a cache keyed by the text itself, so an edited draft is read again)."""
    view = translated(draft, _MARK_VIEW, _MARK_KEYS)
    end = len(view.rstrip())
    view = view[:end]
    paragraphs = _paragraphs(view)
    starts = frozenset(s for s, _ in paragraphs[1:])
    quotes = _double_quotes(view, starts) + _single_quotes(view, paragraphs)
    quotes.sort()
    return tuple(quotes)


# Quotation marks the finder does not pair: a draft with one of them is not
# read as "no quotations" (initial and final punctuation, Unicode Pi and Pf).
def unrecognised_marks(draft: str) -> list[str]:
    view = translated(draft, _MARK_VIEW, _MARK_KEYS)
    return sorted(c for c in non_ascii(view) if c not in _KNOWN_MARKS and _is_quote_punct(c))


_KNOWN_MARKS = frozenset(_DOUBLE_CLOSERS) | frozenset(_SINGLE_OPENERS) | {"\u201a"}


def _is_quote_punct(ch: str) -> bool:
    return unicodedata.category(ch) in ("Pi", "Pf")


# --- matching quotes -----------------------------------------------------------

_ELLIPSIS = re.compile(r"[\[(]\s*(?:…|\.\s*\.\s*\.)\s*[\])]|…|\.\s*\.\s*\.")
_ENDS = re.compile(r"^[\W_]+|[\W_]+$")
_PIECES = re.compile(r"\w+|[^\w\s]")
_QUOTE_MARKS = frozenset("'\"" + SINGLE_QUOTES + DOUBLE_QUOTES)
_DASH_MARKS = frozenset("-" + DASHES)


def fragments(quote_text: str) -> list[str]:
    """The quote's words, split at ellipses, each with end punctuation dropped."""
    norm = unify_style(clean(quote_text))
    parts = (_ENDS.sub("", part) for part in _ELLIPSIS.split(norm))
    return [part for part in parts if part]


def _is_word(piece: str) -> bool:
    return piece[0].isalnum() or piece[0] == "_"


def _find(text: str, pieces: list[str], pos: int) -> tuple[int, int] | None:
    """The first [start, end) at or after `pos` where `pieces` (words and single
    punctuation marks, already folded like `text`) appear in order: whole words
    at both ends, whitespace required between two words and optional around
    punctuation, any style of quotation mark, apostrophe or dash. A quotation
    mark inside the quote must be in the source too: a draft that quotes the
    narration around a source's quote puts words in a speaker's mouth.

    Candidates are the occurrences of the first piece (`str.find`, in C); a
    regex compiled per quote would cost more than the rest of the gate."""
    first = pieces[0]
    while (start := text.find(first, pos)) >= 0:
        pos = start + 1
        if start and _is_word(first) and _is_word(text[start - 1]):
            continue
        end = _match_rest(text, start + len(first), pieces)
        if end is not None:
            return start, end
    return None


def _match_rest(text: str, i: int, pieces: list[str]) -> int | None:
    n = len(text)
    for k in range(1, len(pieces)):
        piece = pieces[k]
        j = i
        while j < n and text[j].isspace():
            j += 1
        if j == i and _is_word(piece) and _is_word(pieces[k - 1]):
            return None  # two words need a space between them
        if piece in _QUOTE_MARKS:
            ok = j < n and text[j] in _QUOTE_MARKS
        elif piece in _DASH_MARKS:
            ok = j < n and text[j] in _DASH_MARKS
        else:
            ok = text.startswith(piece, j)
        if not ok and j > i and "\n" in text[i:j] and text[j] in _QUOTE_MARKS:
            # The continuation mark of a quotation the source carries into the next
            # paragraph: the draft joins the parts without it (and without the space a
            # French source sets after a guillemet: "« Nous").
            j += 1
            while j < n and text[j].isspace() and text[j] != "\n":
                j += 1
            ok = piece not in _QUOTE_MARKS and text.startswith(piece, j)
        if not ok:
            return None
        i = j + len(piece)
    if i < n and _is_word(pieces[-1]) and _is_word(text[i]):
        return None  # the last word goes on in the source: "the port" in "the portfolio"
    return i


def _source(source: str) -> Normalised:
    """The source normalised and case folded, shared by the gates (guards.sourcetext)."""
    return source_text(source).norm


def _locate(source: Normalised, parts: list[str], pos: int = 0) -> list[tuple[int, int] | None]:
    """Where each fragment is, each searched after the previous one; None from
    the first fragment that is not there (the later ones cannot be in order)."""
    spans: list[tuple[int, int] | None] = []
    for part in parts:
        found = _find(source.text, _PIECES.findall(source.fold(part)), pos)
        if found is None:
            return spans + [None] * (len(parts) - len(spans))
        spans.append(source.original_span(*found))
        pos = found[1]
    return spans


# An ellipsis joins fragments of one passage: the omitted source text is at
# most this long, has no paragraph break or quotation mark (the fragments are
# of one quotation, not a quote and its narration) and no word that turns the
# kept words round (leaving out a "not" or an "oppose" inverts the meaning).
MAX_OMISSION = 250
MAX_OMITTED_WORDS = 20
_TURNS = re.compile(
    r"\b(?:"
    # negations
    r"not|no|never|nor|neither|none|nobody|nothing|nowhere|without|cannot|hardly|scarcely|"
    r"barely|ne|pas|jamais|aucune?|rien|personne|nicht|kein\w*|nie|niemals|nichts|nein|"
    r"nunca|nada|ningún|ninguna|non|mai|nessun[oa]?|niente|niet|geen|nooit|niets|"
    # opposition, refusal, denial, reversal
    r"oppos\w*|reject\w*|refus\w*|den(?:y|ies|ied|ying|ial)|block\w*|prevent\w*|resist\w*|"
    r"fight\w*|fought|halt\w*|scrap\w*|cancel\w*|abandon\w*|revers\w*|revok\w*|veto\w*|"
    r"ban|bans|banned|banning|disput\w*|doubt\w*|unlikely|fail\w*|avoid\w*|withdr[ae]w\w*|"
    r"stop|stops|stopped|stopping|dismiss\w*|overturn\w*|refut\w*|contest\w*|"
    r"rejet\w*|rejett\w*|ni[ée]\w*|nie[nr]?|empêch\w*|bloqu\w*|"
    r"\w*lehn\w*|verweiger\w*|verhinder\w*|bestreit\w*|bestritt\w*|stopp\w*|"
    r"rechaz\w*|opon\w*|negó|niega\w*|rifiut\w*|oppon\w*|oppost\w*|neg[ao]\w*|"
    r"weiger\w*|verzet\w*|ontken\w*|"
    # contrast and condition
    r"against|instead|rather|unless|except|but|although|though|however|if|whether|"
    r"contre|sans|sauf|si|mais|gegen|ohne|außer|aber|wenn|falls|sondern|contra|sin|"
    r"pero|sino|contro|senza|se|ma|tranne|tegen|zonder|als|tenzij|maar"
    r")\b|n['\u2019]t\b|\bn['\u2019]",
    re.IGNORECASE,
)
_OMISSION_STOP = re.compile(r"\n[^\S\n]*\n|[\"\u201c\u201d\u201e\u201f\u00ab\u00bb\u300c\u300d]")
_CONTINUATION = re.compile(
    r"(\n[^\S\n]*\n\s*)[\"'\u201c\u201e\u00ab\u00bb\u2018\u201a\u2039\u203a\u300c\u300e]"
)


def _omission_problem(text: str, start: int, end: int) -> str | None:
    """Why the source text [start, end) cannot be left out by an ellipsis, or None."""
    gap = text[start:end]
    if len(gap) > MAX_OMISSION:
        return f"more than {MAX_OMISSION} characters apart"
    if len(gap.split()) > MAX_OMITTED_WORDS:
        return f"more than {MAX_OMITTED_WORDS} words left out"
    if _OMISSION_STOP.search(gap):
        return "not one passage (a paragraph break or quotation mark between)"
    turn = _TURNS.search(gap)
    if turn:
        return f"the omission holds a negation, opposition or condition: “{turn.group()}”"
    return None


def _locate_fragments(
    source: Normalised, parts: list[str]
) -> tuple[list[tuple[int, int] | None], str | None]:
    """Spans of an ellipsis quote's fragments, each close after the previous
    one with an omission `_omission_problem` accepts; (spans, None) on success,
    else the spans of the best attempt and what was omitted and why."""
    pieces = [_PIECES.findall(source.fold(part)) for part in parts]
    text = source.text
    best: tuple[list[tuple[int, int] | None], str | None] = (
        _locate(source, parts),
        None,
    )
    pos = 0
    while (first := _find(text, pieces[0], pos)) is not None:
        pos = first[0] + 1
        spans = [first]
        problem = None
        for piece in pieces[1:]:
            nxt = _find(text, piece, spans[-1][1])
            if nxt is None:
                break
            why = _omission_problem(text, spans[-1][1], nxt[0])
            if why:
                omitted = shorten(text[spans[-1][1] : nxt[0]].strip(), 60)
                problem = f"{why}: “{omitted}”"
                break
            spans.append(nxt)
        if len(spans) == len(parts):
            return [source.original_span(*sp) for sp in spans], None
        if problem and best[1] is None:
            best = (
                [source.original_span(*sp) for sp in spans] + [None] * (len(parts) - len(spans)),
                problem,
            )
        if len(spans) < len(parts) and problem is None:
            break  # a fragment is not after this start: it is not after a later one either
    return best


def quotes_verbatim(source: str, url: str | None, draft: str) -> Verdict:
    """Fail when a quotation in the draft is not word for word in the source."""
    quotes = find_quotes(draft or "")
    evidence: list[dict[str, Any]] = []
    missing: list[str] = []
    for q in quotes:
        raw = draft[q.start : q.end]
        parts = fragments(_CONTINUATION.sub(r"\1", raw))
        if not parts:
            continue  # "" or “…”: nothing was quoted
        norm = _source(source or "")
        problem = None
        if len(parts) == 1:
            # `locate_passage` is `_locate` for one fragment (already normalised as it
            # normalises a passage), cached: speakers_match looks the same one up next.
            spans = [locate_passage(source or "", parts[0])]
        else:
            spans, problem = _locate_fragments(norm, parts)
        located = [span for span in spans if span is not None]
        found = len(located) == len(spans)
        entry: dict[str, Any] = {
            "quote": raw.strip(),
            "found": found,
            "draft_span": [q.start, q.end],
            "source_span": [located[0][0], located[-1][1]] if found else None,
            "closed": q.closed,
        }
        if len(parts) > 1:
            entry["fragments"] = [
                {"text": part, "found": bool(span), "source_span": list(span) if span else None}
                for part, span in zip(parts, spans, strict=True)
            ]
            if problem and not found:
                entry["omission"] = problem
        if not found:  # what the source says instead, for the auditor
            entry["closest_in_source"] = closest_passage(source or "", raw.strip())
        evidence.append(entry)
        if not found and raw.strip() not in missing:
            missing.append(raw.strip())
    return _verdict(draft or "", evidence, missing)


def _verdict(draft: str, evidence: list[dict[str, Any]], missing: list[str]) -> Verdict:
    strays = unrecognised_marks(draft)
    if not evidence and strays:
        reason = f"quotation mark(s) not recognised: {' '.join(strays)}; cannot check the quote"
        return Verdict(GATE, False, reason, [{"text": c, "found": False} for c in strays])
    if not evidence:
        return Verdict(GATE, True, "no quotations in the draft", evidence)
    if missing:
        reason = (
            f"{len(missing)} of {len({e['quote'] for e in evidence})} quotations not in the source;"
            f" first: “{shorten(missing[0])}”"
        )
        return Verdict(GATE, False, reason, evidence)
    return Verdict(GATE, True, all_found([e["quote"] for e in evidence], "quotation"), evidence)


@lru_cache(maxsize=256)
def locate_passage(source: str, passage: str, start: int = 0) -> tuple[int, int] | None:
    """Where `passage` is in `source`, word for word with the normalisation the
    quotes use (case, whitespace, quotation style, invisibles, end punctuation),
    as the original [start, end); None when it is not there.

    Unlike a quotation, a passage is one contiguous run: an ellipsis is not a
    gap here (it must be in the source too), so a passage cannot stitch far
    apart words into a sentence the source never wrote. The search starts at
    the original offset `start`."""
    norm = _ENDS.sub("", unify_style(clean(passage or "")))
    if not norm:
        return None
    text = _source(source or "")
    if start and text.starts is not None:  # `start` is an original offset
        start = bisect_left(text.starts, start)
    return _locate(text, [norm], start)[0]
