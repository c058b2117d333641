"""The model checks' gates: the model proposes, code disposes.

A checking model (see `summarise.checks`) lists the draft's claims with the
source passages it says support them, and judges each draft sentence for seven
kinds of error. Nothing it says is taken on trust. These pure functions decide:

claims_supported
    A claim is supported only when (rules, in this order, the first broken one
    is named): it has a passage; the passage is in the source word for word
    (case, whitespace, quotation style and invisible characters do not matter,
    as for `quotes_verbatim`, but an ellipsis is not a gap); the passage is
    bounded (at most MAX_PASSAGE_SENTENCES sentences and MAX_PASSAGE_WORDS
    words: the whole article is not a passage); it shares content with the
    claim (a one-word passage like "the" supports nothing); every number of the
    claim is grounded in that passage by the rules of `numbers_grounded`; the
    claim's content is in a sentence of the draft (claims about another text
    than the draft support nothing of it); and the model said the passage
    supports it. Then every sentence of the draft must be covered by at least
    one supported claim whose content is in that sentence. Zero claims from a
    non-empty draft is a failure, not a pass.

faithfulness
    Each judged sentence is first verified: it must be a sentence of the draft,
    and its settling passage must be in the source. An unverified judgement is
    void: "not verified", never "faithful". A verified `wrong_fact` (the source
    contradicts the sentence) fails the gate (mode `discard` discards the item).
    A verified material error of another kind fails it flag-only: the editor sees
    the kind, the passage and the rewrite. Any named error kind is at least a
    flag, material or not ("factual" with material false is still an error), and
    `material: true` without a kind is a flag that says the kind is missing.
    Parts of the draft no judgement covers are "not judged". The rewrite is
    evidence for the editor, never a replacement of the draft: copydesk
    discards, it does not correct.

One call per reply
    A reply with more than one call of the purpose's tool fails closed (the
    check, or the summary): `single_call` names why. The last call silently
    winning would let a model answer twice and have the easier answer count.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from guards.numbers import ground_numbers
from guards.quotes import locate_passage
from guards.text import normalise, shorten
from guards.verdict import Verdict

CLAIMS_GATE = "claims_supported"
FAITHFULNESS_GATE = "faithfulness"

# The seven kinds of error the judge names (see summarise.prompt for their wording).
ERROR_KINDS = ("factual", "attribution", "relation", "modality", "scope", "time", "framing")


@dataclass(frozen=True)
class Claim:
    """One factual claim of the draft as the model stated it."""

    claim: str
    passage: str | None  # the source passage, copied word for word, or None
    supports: bool  # the model's own word that the passage supports the claim


@dataclass(frozen=True)
class SentenceJudgement:
    """The model's judgement of one draft sentence."""

    sentence: str
    errors: tuple[str, ...]  # a subset of ERROR_KINDS
    wrong_fact: bool  # the source contradicts the sentence
    rewrite: str  # a faithful rewrite: shown to the editor, never shipped
    reader_draft: str  # what a reader concludes from the draft sentence
    reader_rewrite: str  # ... and from the rewrite
    material: bool  # those two conclusions differ
    passage: str | None  # the source passage that settles it


@dataclass(frozen=True)
class CheckReply:
    """Everything one check call answered (the check tool's input, typed)."""

    claims: tuple[Claim, ...]
    sentences: tuple[SentenceJudgement, ...]


# --------------------------------------------------------------------------- reply rules

MAX_PASSAGE_SENTENCES = 5
MAX_PASSAGE_WORDS = 120
# A claim's content is "in" a draft sentence when every one of its content words
# (lightly stemmed) is in the draft and at least this share is in that sentence
# (a self-contained claim may name who "she" is from another sentence). So
# "approved" in a claim about a draft that says "rejected" is in no sentence.
CLAIM_IN_SENTENCE = 0.75
# A passage must share at least one content word with its claim, and at least one
# in PASSAGE_SHARE of the claim's, or PASSAGE_SHARE words when the claim is long (a
# passage may say it in other words, or settle one part of a long claim; not none).
PASSAGE_SHARE = 3
_STOPWORDS = frozenset(
    """a an and are as at be been but by for from had has have he her his in is it its
    of on or she that the their they this to was were which who will with would not no
    said says say also after before over than then there these those into about""".split()
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")  # _WORD on an ASCII text, scanned faster
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'\u201d\u2019)]*\s+(?=\S)")


def single_call(tool_names: Sequence[str], tool: str) -> str | None:
    """Why a reply whose tool calls are `tool_names` fails closed, or None: more
    than one call of `tool` (which would win is not the model's to choose)."""
    count = sum(1 for name in tool_names if name == tool)
    if count > 1:
        return f"the reply called {tool} {count} times; exactly one call is accepted"
    return None


# A word's stem is found once a process: the claims and passages a check reads again
# and again are the draft's and the source's words (issue 24, session 15: about a third
# of `content_words`). Bounded: a long-running review server reads many texts.
@functools.lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    """The words that carry content: folded, stop words out, lightly stemmed.
    Numbers count (a figure is content)."""
    folded = normalise(text or "").text
    words = (_ASCII_WORD if folded.isascii() else _WORD).findall(folded)
    return {_stem(w) for w in words if w not in _STOPWORDS and (len(w) > 2 or w.isdigit())}


def sentences_of(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text`: lines (a headline is one) split
    after sentence-ending punctuation."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for line in (text or "").split("\n"):
        start = pos
        pos += len(line) + 1
        if not line.strip():
            continue
        cut = start
        for match in _SENTENCE_END.finditer(line):
            spans.append((cut, start + match.start()))
            cut = start + match.end()
        spans.append((cut, start + len(line.rstrip())))
    return [(a, b) for a, b in spans if (text[a:b]).strip()]


def passage_unbounded(passage: str) -> str | None:
    """Why a passage is too long to be a passage, or None."""
    words = len(_WORD.findall(passage))
    count = len(sentences_of(passage))
    if count > MAX_PASSAGE_SENTENCES or words > MAX_PASSAGE_WORDS:
        return (
            f"the passage is {count} sentences and {words} words long: a passage is at most "
            f"{MAX_PASSAGE_SENTENCES} sentences and {MAX_PASSAGE_WORDS} words"
        )
    return None


def _words_in(wanted: set[str], sentence: set[str], draft: set[str]) -> bool:
    """Whether a claim's content words are in a sentence of the draft (see
    CLAIM_IN_SENTENCE), on `content_words` already read (issue 24: the draft and its
    sentences are read once per draft, not once per claim)."""
    if not wanted or not wanted <= draft:
        return False
    return len(wanted & sentence) >= CLAIM_IN_SENTENCE * len(wanted)


# --------------------------------------------------------------------------- claims


def _claim_outcome(
    source: str, claim: Claim, draft_words: set[str], sentence_words: Sequence[set[str]]
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "claim": claim.claim,
        "passage": claim.passage,
        "model_says_supports": claim.supports,
        "source_span": None,
    }

    def result(outcome: str, rule: str | None = None, detail: str | None = None) -> dict:
        entry.update(outcome=outcome, rule=rule, detail=detail, supported=outcome == "supported")
        return entry

    if not claim.claim.strip():
        return result("not supported", "empty claim")
    if not claim.passage or not claim.passage.strip():
        return result("not supported", "no passage")
    span = locate_passage(source, claim.passage)
    if span is None:
        return result("not supported", "passage not in the source")
    entry["source_span"] = list(span)
    too_long = passage_unbounded(claim.passage)
    if too_long:
        return result("not supported", "passage not bounded", too_long)
    wanted = content_words(claim.claim)
    shared = wanted & content_words(claim.passage)
    if not shared or len(shared) < min(PASSAGE_SHARE, -(-len(wanted) // PASSAGE_SHARE)):
        return result(
            "not supported",
            "passage shares no content with the claim",
            f"the passage “{shorten(claim.passage)}” says nothing the claim says",
        )
    numbers = ground_numbers(source[span[0] : span[1]], claim.claim)
    if not numbers.passed:
        return result("not supported", "number not in the passage", "; ".join(numbers.missing))
    in_draft = [
        i for i, words in enumerate(sentence_words) if _words_in(wanted, words, draft_words)
    ]
    entry["draft_sentences"] = in_draft
    if not in_draft:
        return result(
            "not supported",
            "claim not in the draft",
            "the claim says something no sentence of the draft says",
        )
    if not claim.supports:
        return result("not supported", "the model says the passage does not support it")
    return result("supported")


def claims_supported(source: str, draft: str, claims: Sequence[Claim]) -> Verdict:
    """Fail when a claim is not supported by a passage of the source (see the module)."""
    draft = draft or ""
    draft_sentences = [draft[a:b] for a, b in sentences_of(draft)]
    draft_words = content_words(draft)
    sentence_words = [content_words(s) for s in draft_sentences]
    evidence = [_claim_outcome(source or "", c, draft_words, sentence_words) for c in claims]
    if not evidence:
        if draft.strip():
            return Verdict(CLAIMS_GATE, False, "the model listed no claims for a non-empty draft")
        return Verdict(CLAIMS_GATE, True, "empty draft: no claims", evidence)
    failed = [e for e in evidence if e["outcome"] != "supported"]
    if failed:
        first = failed[0]
        reason = (
            f"{len(failed)} of {len(evidence)} claims not supported; first: "
            f"“{shorten(first['claim'])}” ({first['rule']})"
        )
        return Verdict(CLAIMS_GATE, False, reason, evidence)
    covered = {i for e in evidence for i in e.get("draft_sentences", ())}
    uncovered = [s for i, s in enumerate(draft_sentences) if i not in covered]
    if uncovered:
        reason = (
            f"{len(uncovered)} draft sentence(s) no claim covers; first: “{shorten(uncovered[0])}”"
        )
        return Verdict(CLAIMS_GATE, False, reason, evidence)
    return Verdict(CLAIMS_GATE, True, f"all {len(evidence)} claims supported", evidence)


# --------------------------------------------------------------------------- faithfulness

WRONG_FACT = "wrong fact"
MATERIAL = "material error"
MINOR = "minor error"
FAITHFUL = "faithful"
NOT_VERIFIED = "not verified"
# What an editor reads when the judge quoted nothing for a sentence it judged.
NO_PASSAGE_WORDS = (
    "not verified: the checking model quoted no passage of the source for this "
    "sentence, so its judgement could not be checked"
)
_WORDS = re.compile(r"\w+")


def _judged(source: str, draft: str, j: SentenceJudgement, after: int) -> dict[str, Any]:
    # Sentences come in draft order: a sentence the draft repeats (a headline the
    # summary restates) is looked for after the previous one first.
    draft_span = locate_passage(draft, j.sentence, after) or locate_passage(draft, j.sentence)
    source_span = locate_passage(source, j.passage) if j.passage else None
    errors = [kind for kind in j.errors if kind in ERROR_KINDS]
    material = j.material or j.wrong_fact  # a wrong fact is always material
    entry: dict[str, Any] = {
        "sentence": j.sentence,
        "errors": errors,
        "wrong_fact": j.wrong_fact,
        "material": material,
        "rewrite": j.rewrite,
        "reader_draft": j.reader_draft,
        "reader_rewrite": j.reader_rewrite,
        "passage": j.passage,
        "draft_span": list(draft_span) if draft_span else None,
        "source_span": list(source_span) if source_span else None,
    }
    too_long = passage_unbounded(j.passage) if j.passage else None
    if draft_span is None:
        entry.update(outcome=NOT_VERIFIED, why="the sentence is not in the draft")
    elif not j.passage or not j.passage.strip():
        entry.update(outcome=NOT_VERIFIED, why=NO_PASSAGE_WORDS)
    elif source_span is None:
        entry.update(outcome=NOT_VERIFIED, why="the passage is not in the source")
    elif too_long:
        entry.update(outcome=NOT_VERIFIED, why=too_long)
    elif j.wrong_fact:
        entry.update(outcome=WRONG_FACT, why="the source contradicts the sentence")
    elif material and errors:
        entry.update(outcome=MATERIAL, why=", ".join(errors))
    elif material:
        entry.update(outcome=MATERIAL, why="a material error whose kind the model did not name")
    elif errors:
        entry.update(outcome=MINOR, why=", ".join(errors))
    else:
        entry.update(outcome=FAITHFUL, why=None)
    return entry


def _not_judged(draft: str, entries: list[dict[str, Any]]) -> list[str]:
    """Runs of draft words that no judged sentence covers."""
    covered = [False] * len(draft)
    for e in entries:
        if e["draft_span"]:
            start, end = e["draft_span"]
            covered[start:end] = [True] * (end - start)
    gaps: list[str] = []
    run: list[str] = []
    for word in _WORDS.finditer(draft):
        if covered[word.start()]:
            if run:
                gaps.append(" ".join(run))
                run = []
        else:
            run.append(word.group())
    if run:
        gaps.append(" ".join(run))
    return gaps


def faithfulness(source: str, draft: str, sentences: Sequence[SentenceJudgement]) -> Verdict:
    """Fail on a verified wrong fact; fail flag-only on a verified material error,
    an unverified judgement or a part of the draft nobody judged (see the module)."""
    source, draft = source or "", draft or ""
    entries: list[dict[str, Any]] = []
    after = 0
    for j in sentences:
        entries.append(_judged(source, draft, j, after))
        if entries[-1]["draft_span"]:
            after = entries[-1]["draft_span"][1]
    gaps = _not_judged(draft, entries)
    evidence: dict[str, Any] = {"sentences": entries, "not_judged": gaps}
    wrong = [e for e in entries if e["outcome"] == WRONG_FACT]
    if wrong:
        first = wrong[0]
        reason = (
            f"{len(wrong)} sentence(s) contradicted by the source; first: "
            f"“{shorten(first['sentence'])}” (source: “{shorten(first['passage'])}”)"
        )
        return Verdict(FAITHFULNESS_GATE, False, reason, evidence)
    problems = []
    material = [e for e in entries if e["outcome"] == MATERIAL]
    if material:
        kinds = sorted({kind for e in material for kind in e["errors"]}) or ["kind not named"]
        problems.append(f"{len(material)} material error(s): {', '.join(kinds)}")
    minor = [e for e in entries if e["outcome"] == MINOR]
    if minor:
        kinds = sorted({kind for e in minor for kind in e["errors"]})
        problems.append(f"{len(minor)} error(s) the model called not material: {', '.join(kinds)}")
    unverified = [e for e in entries if e["outcome"] == NOT_VERIFIED]
    if unverified:
        problems.append(f"{len(unverified)} judgement(s) not verified ({unverified[0]['why']})")
    if gaps:
        problems.append(f"not judged: “{shorten(gaps[0])}”")
    if not entries and draft.strip():
        problems = ["the model judged no sentence of a non-empty draft"]
    if problems:
        return Verdict(FAITHFULNESS_GATE, False, "; ".join(problems), evidence, flag_only=True)
    return Verdict(
        FAITHFULNESS_GATE, True, f"all {len(entries)} sentences verified faithful", evidence
    )


# Whether a model check ran, as its stored verdict says (see `not_run`).
RAN, NOT_RUN, FAILED = "ran", "not run", "failed"
NOT_RUN_STATES = (NOT_RUN, FAILED)


def not_run(gate: str, reason: str, state: str = NOT_RUN, *, transient: bool = False) -> Verdict:
    """The verdict of a model check that could not run: never a pass.
    `state` is "not run" (no model, off for this item) or "failed" (the model
    failed, its reply did not parse, or broke the schema). `transient` marks a
    failure a later run may try again (an outage, a timeout, an overload)."""
    evidence: dict[str, Any] = {"state": state, "why": reason}
    if transient:
        evidence["transient"] = True
    return Verdict(gate, False, f"{state} ({reason})", evidence, ran=False)


def check_state(passed: bool, evidence: Any) -> str:
    """ "ran", "not run" or "failed": whether the model check behind a stored verdict
    (its `passed` and `evidence`) ran. The one reading of `not_run`'s evidence:
    the review queue, `copydesk audit`, `stats` and the re-check all ask here (the
    queue's SQL twin is `store.checks.did_not_run`)."""
    state = evidence.get("state") if isinstance(evidence, dict) else None
    return state if not passed and state in NOT_RUN_STATES else RAN
