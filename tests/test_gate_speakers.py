"""A quotation belongs to its speaker (issue 20): speakers_match, the ellipsis rule,
and quotations continued over paragraphs, in English, French and German newsroom
prose. Every place, person and quotation is invented.
"""

from __future__ import annotations

import pytest

from guards.quotes import quotes_verbatim
from guards.registry import DEFAULT_MODES, DRAFT_GATES, run_gates
from guards.speakers import find_attributions, speakers_match

URL = "https://news.example.org/kelbrook/library"

SOURCE_EN = (
    "Kelbrook council will vote next week on the future of the central library.\n\n"
    "The council leader, Ruth Calloway, said: \u201cWe have to find savings, and every "
    "building is on the table.\u201d\n\n"
    "\u201cI would oppose any plan to close the central library,\u201d said Helen Marsh, "
    "who chairs the libraries committee. \u201cIt is the only warm room some people have.\n\n"
    "\u201cWe will fight this in every meeting.\u201d\n\n"
    "The mayor, Tomas Reint, told reporters that the building was \u201cnot fit for the "
    "next fifty years\u201d. He added: \u201cWe cannot keep patching the roof.\u201d\n\n"
    "A spokesperson for the Friends of Kelbrook Library said the group \u201cwill not "
    "accept a reduced service\u201d. Ms Marsh later said the committee would meet on Friday."
)

SOURCE_FR = (
    "Le conseil municipal de Vellmont votera mardi sur la fermeture de la piscine.\n\n"
    "\u00ab Nous n'avons plus les moyens de chauffer le bassin \u00bb, a déclaré le maire, "
    "Julien Faure. L'opposition, menée par Claire Dumas, a dénoncé \u00ab une décision "
    "prise dans le dos des habitants \u00bb."
)

SOURCE_DE = (
    "Der Stadtrat von Ostbrück hat am Montag über die Schließung des Hallenbads beraten.\n\n"
    "\u201eWir können das Becken nicht mehr heizen\u201c, sagte Bürgermeisterin Anna Keller. "
    "Oppositionsführer Jonas Brandt sagte dagegen: \u201eDas ist eine Entscheidung gegen "
    "die Familien.\u201c"
)

SPEAKER_CASES = [
    # (source, draft, passes, why)
    (
        SOURCE_EN,
        "Helen Marsh said: \u201cI would oppose any plan to close the central library.\u201d",
        True,
        "the source's speaker",
    ),
    (
        SOURCE_EN,
        "Ruth Calloway said: \u201cI would oppose any plan to close the central library.\u201d",
        False,
        "moved to the council leader",
    ),
    (
        SOURCE_EN,
        "\u201cI would oppose any plan to close the central library,\u201d said Ms Marsh.",
        True,
        "surname and honorific",
    ),
    (
        SOURCE_EN,
        "\u201cWe have to find savings,\u201d said the mayor, Tomas Reint.",
        False,
        "the leader's words given to the mayor",
    ),
    (
        SOURCE_EN,
        "\u201cWe have to find savings,\u201d said the council leader.",
        True,
        "a role the source gives the speaker",
    ),
    (
        SOURCE_EN,
        "\u201cWe cannot keep patching the roof,\u201d Ruth Calloway said.",
        False,
        "the source's 'He added' is the mayor: a pronoun resolved to the last name",
    ),
    (
        SOURCE_EN,
        "\u201cWe cannot keep patching the roof,\u201d the mayor said.",
        True,
        "the pronoun's antecedent, by role",
    ),
    (
        SOURCE_EN,
        "The council will vote. \u201cWe cannot keep patching the roof.\u201d",
        True,
        "no speaker in the draft: nothing to compare",
    ),
    (
        SOURCE_EN,
        "According to Tomas Reint, the group \u201cwill not accept a reduced service\u201d.",
        False,
        "the friends' spokesperson's words given to the mayor",
    ),
    (
        SOURCE_FR,
        "\u00ab Nous n'avons plus les moyens de chauffer le bassin \u00bb, a déclaré Claire Dumas.",
        False,
        "fr: the mayor's words given to the opposition",
    ),
    (
        SOURCE_FR,
        "Le maire Julien Faure a déclaré : \u00ab Nous n'avons plus les moyens de chauffer "
        "le bassin \u00bb.",
        True,
        "fr: the mayor",
    ),
    (
        SOURCE_DE,
        "\u201eWir können das Becken nicht mehr heizen\u201c, sagte Jonas Brandt.",
        False,
        "de: the mayor's words given to the opposition leader",
    ),
    (
        SOURCE_DE,
        "Anna Keller sagte: \u201eWir können das Becken nicht mehr heizen.\u201c",
        True,
        "de: the mayor",
    ),
]


@pytest.mark.parametrize(
    ("source", "draft", "passes", "why"),
    SPEAKER_CASES,
    ids=[f"{i}:{c[3]}" for i, c in enumerate(SPEAKER_CASES)],
)
def test_speaker(source: str, draft: str, passes: bool, why: str) -> None:
    v = speakers_match(source, URL, draft)
    assert v.passed is passes, (why, v.reason, v.evidence)


def test_moved_speaker_is_explained() -> None:
    draft = "Ruth Calloway said: \u201cI would oppose any plan to close the central library.\u201d"
    v = speakers_match(SOURCE_EN, URL, draft)
    (entry,) = v.evidence
    assert entry["draft_speaker"] == "Ruth Calloway"
    assert entry["source_speaker"] == "Helen Marsh"
    assert "Helen Marsh" in v.reason and "Ruth Calloway" in v.reason


def test_attributions_in_narration() -> None:
    found = find_attributions("\u201cWe won,\u201d said the mayor. Ms Varga said: \u201cNo.\u201d")
    assert [a.speaker for a in found] == ["the mayor", "Ms Varga"]


def test_speaker_gate_is_registered_in_flag_mode() -> None:
    assert "speakers_match" in DRAFT_GATES
    assert DEFAULT_MODES["speakers_match"] == "flag"
    draft = "Ruth Calloway said: \u201cI would oppose any plan to close the central library.\u201d"
    results = run_gates(DRAFT_GATES, SOURCE_EN, URL, draft, modes={})
    (speaker,) = [r for r in results if r.gate == "speakers_match"]
    assert speaker.flagged and not speaker.hard_fail
    assert next(r for r in results if r.gate == "quotes_verbatim").verdict.passed


# --- ellipses: what may be left out -----------------------------------------------

ELLIPSIS_CASES = [
    # (source, draft quote, passes, why)
    (SOURCE_EN, "I would \u2026 close the central library", False, "omits 'oppose any plan to'"),
    (SOURCE_EN, "I would oppose any plan \u2026 the central library", True, "keeps the verb"),
    (SOURCE_EN, "We will \u2026 accept a reduced service", False, "omits 'not'"),
    (
        "\u201cThe board rejected the proposal to sell the pier to a developer,\u201d she said.",
        "The board \u2026 the proposal to sell the pier",
        False,
        "omits 'rejected'",
    ),
    (
        "\u201cThe board approved, after a long and heated debate, the proposal,\u201d he said.",
        "The board approved \u2026 the proposal",
        True,
        "an aside left out",
    ),
    (
        "\u201cWe refused to sign the contract for the new ferry,\u201d she said.",
        "We \u2026 sign the contract",
        False,
        "omits 'refused to'",
    ),
    (
        "\u201cThe minister denied that the port would close next spring,\u201d he said.",
        "The minister \u2026 that the port would close",
        False,
        "omits 'denied'",
    ),
    (
        "\u201cWe voted against raising the harbour levy this year,\u201d she said.",
        "We voted \u2026 raising the harbour levy",
        False,
        "omits 'against'",
    ),
    (
        "\u00ab Nous refusons de fermer la piscine municipale cette année \u00bb, dit-il.",
        "Nous \u2026 fermer la piscine",
        False,
        "fr: omits 'refusons de'",
    ),
    (
        "\u201eWir lehnen es ab, das Hallenbad in diesem Jahr zu schließen\u201c, sagte sie.",
        "Wir \u2026 das Hallenbad in diesem Jahr zu schließen",
        False,
        "de: omits 'lehnen es ab'",
    ),
    (
        "\u201eWir werden das Bad, wie versprochen, im Mai öffnen\u201c, sagte sie.",
        "Wir werden das Bad \u2026 im Mai öffnen",
        True,
        "de: an aside left out",
    ),
    (
        "\u201cThe pier will reopen "
        + "after the repairs and the inspection " * 5
        + "in May.\u201d",
        "The pier will reopen \u2026 in May",
        False,
        "more than 20 words left out",
    ),
]


@pytest.mark.parametrize(
    ("source", "quote", "passes", "why"),
    ELLIPSIS_CASES,
    ids=[c[3] for c in ELLIPSIS_CASES],
)
def test_ellipsis(source: str, quote: str, passes: bool, why: str) -> None:
    v = quotes_verbatim(source, URL, f"She said: \u201c{quote}.\u201d")
    assert v.passed is passes, (why, v.reason, v.evidence)


# --- a quotation continued over paragraphs --------------------------------------


def test_continued_quotation_joined_by_the_draft_is_verbatim() -> None:
    draft = (
        "Helen Marsh said: \u201cIt is the only warm room some people have. "
        "We will fight this in every meeting.\u201d"
    )
    v = quotes_verbatim(SOURCE_EN, URL, draft)
    assert v.passed, v.evidence
    assert speakers_match(SOURCE_EN, URL, draft).passed


def test_continued_quotation_speaker_is_the_first_paragraphs() -> None:
    draft = "Ruth Calloway said: \u201cWe will fight this in every meeting.\u201d"
    v = speakers_match(SOURCE_EN, URL, draft)
    assert not v.passed, v.evidence


def test_joining_a_quote_and_the_narration_is_not_verbatim() -> None:
    draft = (
        "She said: \u201cIt is the only warm room some people have. Kelbrook council will.\u201d"
    )
    assert not quotes_verbatim(SOURCE_EN, URL, draft).passed


def test_a_sources_speakers_are_read_once_per_passage(monkeypatch) -> None:
    """The desk re-runs the gates on every edit: the source's quotation in its passage is
    attributed the first time, then found again (guards.sourcetext), and gives the same
    verdicts as a fresh reading."""
    import guards.speakers as speakers
    from guards.sourcetext import source_text

    built: list[tuple[int, int | None]] = []
    real_init = speakers._Attributions.__init__

    def counted(self, text: str, lo: int = 0, hi: int | None = None) -> None:
        if text == source:
            built.append((lo, hi))
        real_init(self, text, lo, hi)

    monkeypatch.setattr(speakers._Attributions, "__init__", counted)
    source = SOURCE_EN + " Edition of the desk."  # a source no other test has read
    draft = "Ruth Calloway said: \u201cI would oppose any plan to close the central library.\u201d"
    first = speakers_match(source, URL, draft)
    edits = [speakers_match(source, URL, draft + " She spoke on Friday.") for _ in range(3)]
    assert len(built) == 1, built
    assert [e.evidence for e in edits] == [first.evidence] * 3
    source_text.cache_clear()  # a fresh reading gives the same verdict
    assert speakers_match(source, URL, draft).to_dict() == first.to_dict()


# French and German sources carry a quotation into the next paragraph too: the new
# paragraph opens with a guillemet (French spacing puts a space, often a narrow no-break
# one, after it) or with „.
SOURCE_FR_CONTINUED = (
    "Le conseil de Vellmont a voté mardi la fermeture de la piscine.\n\n"
    "\u00ab C'est le seul bassin chauffé de la vallée \u00bb, a déclaré Claire Dumas, qui "
    "préside le club de natation. \u00ab Les enfants apprennent à nager ici.\n\n"
    "\u00ab\u202fNous irons devant le tribunal administratif. \u00bb\n\n"
    "Le maire, Julien Faure, a répondu que la décision était prise."
)
SOURCE_DE_CONTINUED = (
    "Der Stadtrat von Ostbrück hat am Montag die Schließung des Hallenbads beschlossen.\n\n"
    "\u201eEs ist das einzige warme Becken im Tal\u201c, sagte Anna Keller vom Schwimmverein. "
    "\u201eDie Kinder lernen hier schwimmen.\n\n"
    "\u201e Wir werden vor das Verwaltungsgericht ziehen.\u201c\n\n"
    "Bürgermeister Jonas Brandt sagte, der Beschluss stehe fest."
)
CONTINUED_CASES = [
    # (source, draft, verbatim, same speaker, why)
    (
        SOURCE_FR_CONTINUED,
        "Claire Dumas a déclaré : \u00ab Les enfants apprennent à nager ici. Nous irons "
        "devant le tribunal administratif. \u00bb",
        True,
        True,
        "fr: the parts joined, a space after the continuation mark",
    ),
    (
        SOURCE_FR_CONTINUED,
        "Julien Faure a déclaré : \u00ab Les enfants apprennent à nager ici. Nous irons "
        "devant le tribunal administratif. \u00bb",
        True,
        False,
        "fr: joined and given to the mayor",
    ),
    (
        SOURCE_FR_CONTINUED,
        "Claire Dumas a déclaré : \u00ab Les enfants apprennent à nager ici. Le maire "
        "a répondu. \u00bb",
        False,
        True,
        "fr: the narration joined to the quotation",
    ),
    (
        SOURCE_DE_CONTINUED,
        "Anna Keller sagte: \u201eDie Kinder lernen hier schwimmen. Wir werden vor das "
        "Verwaltungsgericht ziehen.\u201c",
        True,
        True,
        "de: the parts joined",
    ),
    (
        SOURCE_DE_CONTINUED,
        "Jonas Brandt sagte: \u201eWir werden vor das Verwaltungsgericht ziehen.\u201c",
        True,
        False,
        "de: the second paragraph given to the mayor",
    ),
]


@pytest.mark.parametrize(
    ("source", "draft", "verbatim", "same", "why"),
    CONTINUED_CASES,
    ids=[c[4] for c in CONTINUED_CASES],
)
def test_continued_quotation_in_french_and_german(
    source: str, draft: str, verbatim: bool, same: bool, why: str
) -> None:
    q = quotes_verbatim(source, URL, draft)
    assert q.passed is verbatim, (why, q.reason)
    if verbatim:
        s = speakers_match(source, URL, draft)
        assert s.passed is same, (why, s.reason, s.evidence)


# Verbs of reply and rejoinder attribute a quotation too (French "a répondu", German
# "entgegnete", "erwiderte"): without them the quotation took the speaker before it, so a
# reply moved back to the first speaker passed.
SOURCE_FR_REPLY = (
    "Le conseil de Vellmont a voté mardi.\n\n"
    "\u00ab Nous ne fermerons pas la piscine cette année \u00bb, a déclaré le maire, Julien "
    "Faure. L'opposante Claire Dumas a répondu : \u00ab Nous refusons toute hausse des "
    "impôts locaux. \u00bb Puis elle a rétorqué : \u00ab Le budget est insincère. \u00bb"
)
SOURCE_DE_REPLY = (
    "Der Rat von Ostbrück hat am Montag beraten.\n\n"
    "\u201eWir werden das Hallenbad nicht schließen\u201c, sagte Bürgermeisterin Anna Keller. "
    "Oppositionsführer Jonas Brandt entgegnete: \u201eWir lehnen jede Erhöhung der Gebühren "
    "ab.\u201c Sein Stellvertreter Paul Rieger erwiderte: \u201eDer Haushalt ist unsolide.\u201c"
)
REPLY_CASES = [
    # (source, draft, passes, why)
    (
        SOURCE_FR_REPLY,
        "\u00ab Nous refusons toute hausse des impôts locaux \u00bb, a déclaré Julien Faure.",
        False,
        "fr: Claire Dumas's reply given to the mayor",
    ),
    (
        SOURCE_FR_REPLY,
        "Claire Dumas a déclaré : \u00ab Nous refusons toute hausse des impôts locaux. \u00bb",
        True,
        "fr: the reply with its speaker",
    ),
    (
        SOURCE_FR_REPLY,
        "Julien Faure a dit : \u00ab Le budget est insincère. \u00bb",
        False,
        "fr: 'elle a rétorqué' is Claire Dumas",
    ),
    (
        SOURCE_DE_REPLY,
        "\u201eWir lehnen jede Erhöhung der Gebühren ab\u201c, sagte Anna Keller.",
        False,
        "de: Jonas Brandt's reply given to the mayor",
    ),
    (
        SOURCE_DE_REPLY,
        "Jonas Brandt sagte: \u201eWir lehnen jede Erhöhung der Gebühren ab.\u201c",
        True,
        "de: the reply with its speaker",
    ),
    (
        SOURCE_DE_REPLY,
        "Jonas Brandt sagte: \u201eDer Haushalt ist unsolide.\u201c",
        False,
        "de: 'erwiderte' is Paul Rieger",
    ),
    (
        SOURCE_EN,
        "Helen Marsh said: \u201cWe cannot keep patching the roof.\u201d",
        False,
        "en: the mayor's words",
    ),
]


@pytest.mark.parametrize("case", REPLY_CASES, ids=lambda case: case[3])
def test_a_reply_is_attributed_to_who_replies(case: tuple[str, str, bool, str]) -> None:
    source, draft, passes, why = case
    v = speakers_match(source, URL, draft)
    assert v.passed is passes, (why, v.reason, v.evidence)


# A German role is a capitalised noun after its article: "sagte die Bürgermeisterin".
GERMAN_ROLE_CASES = [
    # (draft, passes, why)
    (
        "\u201eWir werden das Hallenbad nicht schließen\u201c, sagte die Bürgermeisterin.",
        True,
        "de: the mayor's words given to the mayor, by her role",
    ),
    (
        "Die Bürgermeisterin sagte: \u201eWir werden das Hallenbad nicht schließen.\u201c",
        True,
        "de: the role before the quotation",
    ),
    (
        "\u201eWir werden das Hallenbad nicht schließen\u201c, sagte der Oppositionsführer.",
        False,
        "de: the mayor's words given to the opposition leader, by his role",
    ),
    (
        "\u201eWir lehnen jede Erhöhung der Gebühren ab\u201c, sagte die Bürgermeisterin.",
        False,
        "de: the opposition leader's words given to the mayor, by her role",
    ),
]


@pytest.mark.parametrize("case", GERMAN_ROLE_CASES, ids=lambda case: case[2])
def test_a_german_role_is_a_capitalised_noun(case: tuple[str, bool, str]) -> None:
    draft, passes, why = case
    v = speakers_match(SOURCE_DE_REPLY, URL, draft)
    assert v.passed is passes, (why, v.reason, v.evidence)
