"""names_grounded against recombined names: every word of the draft's name is in
the source, but from two different people ("Mara Ode" from "Mara Velt" and
"Jonas Ode"). The model blends names it read; the gate must not call that grounded."""

from __future__ import annotations

import pytest

from guards.names import names_grounded

SOURCE = (
    "The Orrin Dyke pumping station will close for repairs in March, the drainage "
    "board's chair, Mara Velt, said on Tuesday. Its engineer, Jonas Ode, told the "
    "meeting that the work could take eleven weeks. Dr Ilka Brandt-Sorel of the Harlow "
    "Fen Trust asked who would pay. Mara J. Velt has chaired the board since 2019. "
    "Residents of Stallbridge said Velt had promised a public meeting."
)

# (draft, passes, why)
CASES = [
    ("Mara Velt said the station would close.", True, "the name as the source gives it"),
    ("Mara Ode said the station would close.", False, "her first name, his surname"),
    ("Jonas Velt said the work could take eleven weeks.", False, "his first name, her surname"),
    ("Ode Mara said the station would close.", False, "recombined, reversed"),
    ("Mara Ode's board met.", False, "recombined, possessive"),
    ("Dr Mara Ode chairs the board.", False, "recombined behind an honorific"),
    ("Ma\u200bra Ode said so.", False, "recombined with an invisible character"),
    ("Mara Velt-Ode said so.", False, "recombined as a double-barrelled name"),
    ("Ilka Sorel asked who would pay.", True, "part of a hyphenated surname, same person"),
    ("Ilka Ode asked who would pay.", False, "a first name and another's surname"),
    ("Velt said the station would close.", True, "a surname alone"),
    ("Mara J. Velt said so.", True, "with the middle initial the source gives"),
    ("Jonas Ode and Mara Velt spoke.", True, "two names, each as the source gives it"),
    ("The Harlow Fen Trust asked who would pay.", True, "an organisation as written"),
    ("The Stallbridge Trust asked who would pay.", False, "a place and another's organisation"),
    ("Orrin Dyke will close in March.", True, "a place as written"),
]


@pytest.mark.parametrize(("draft", "passes", "why"), CASES, ids=[c[0] for c in CASES])
def test_recombined_names(draft: str, passes: bool, why: str) -> None:
    v = names_grounded(SOURCE, None, draft)
    assert v.passed is passes, (why, v.reason, v.evidence)


def test_recombined_evidence_names_both_sources() -> None:
    v = names_grounded(SOURCE, None, "Mara Ode said the station would close.")
    (entry,) = v.evidence
    assert entry["found"] is False and entry["missing"] == []
    assert entry["recombined"] == {"Mara": "Mara Velt", "Ode": "Jonas Ode"}
    assert "Mara Ode (recombined: Mara from Mara Velt, Ode from Jonas Ode)" in v.reason


def test_an_invisible_character_does_not_move_the_highlighted_span() -> None:
    draft = "Board chair Ma\u200bra Ode's plan."
    v = names_grounded(SOURCE, None, draft)
    (entry,) = v.evidence
    start, end = entry["draft_span"]
    assert draft[start:end] == "Ma\u200bra Ode" and entry["recombined"]


# --- issue 20: names without noise, and the misses -------------------------------


def _labelled_scores(cases) -> tuple[int, int, int]:
    tp = fp = fn = 0
    for source, draft, invented in cases:
        flagged = [
            e["name"] for e in names_grounded(source, None, draft).evidence if not e["found"]
        ]
        tp += sum(any(x in name for x in invented) for name in flagged)
        fp += sum(not any(x in name for x in invented) for name in flagged)
        fn += sum(not any(x in name for name in flagged) for x in invented)
    return tp, fp, fn


def test_labelled_set_precision_and_recall() -> None:
    """Issue 20: precision at least .65 and recall at least .59 on tests/names_labelled.py."""
    from tests.names_labelled import CASES

    tp, fp, fn = _labelled_scores(CASES)
    assert tp / max(1, tp + fp) >= 0.65 and tp / max(1, tp + fn) >= 0.59, (tp, fp, fn)


@pytest.mark.parametrize("index", range(30))
def test_labelled_case(index: int) -> None:
    """Each labelled case on its own: what is flagged is exactly what was invented."""
    from tests.names_labelled import CASES

    source, draft, invented = CASES[index]
    flagged = [e["name"] for e in names_grounded(source, None, draft).evidence if not e["found"]]
    assert all(any(x in name for x in invented) for name in flagged), flagged
    assert all(any(x in name for name in flagged) for x in invented), flagged


def test_source_is_read_once_per_source(monkeypatch) -> None:
    """Speed: the source's names are found once, not once per draft name."""
    import guards.names as names

    calls = []
    real = names.find_names

    def counting(text: str):
        calls.append(len(text))
        return real(text)

    monkeypatch.setattr(names, "find_names", counting)
    source = "Mara Velt met Jonas Ode. " * 20
    draft = "Mara Ode met Jonas Velt and Mara Jonas and Ode Velt."
    names.names_grounded(source, None, draft)
    names.names_grounded(source, None, draft)
    assert sum(n == len(source) for n in calls) <= 1


# German capitalises every noun: a single capitalised word after an article, in a German
# draft, is a noun ("die Schließung", "das Wasser"), not a name; an acronym ("die SPD") and a
# run of capitalised words ("Bürgermeisterin Anna Brandt") are still read as names.
SOURCE_DE_NOUNS = (
    "Der Rat von Ostbrück hat am Montag angekündigt, dass das Hallenbad im März schließt. "
    "Die Arbeiten dauern bis Juni 2026, sagte Bürgermeisterin Anna Keller. Auch der "
    "Hafen bleibt zu."
)
GERMAN_NOUN_CASES = [
    # (draft, passes, why)
    ("Bürgermeisterin Anna Keller kündigte die Schließung an.", True, "die Schließung"),
    ("Das Wasser im Hallenbad von Ostbrück ist kalt, sagte Anna Keller.", True, "das Wasser"),
    ("Der Rat von Ostbrück plant einen Neubau.", True, "einen Neubau"),
    ("Die Stadt Ostbrück schließt das Hallenbad, teilte die SPD mit.", False, "die SPD"),
    ("Bürgermeisterin Anna Brandt kündigte die Schließung an.", False, "Anna Brandt"),
    ("Laut Keller zahlt die Sparkasse Kelmbach den Umbau.", False, "Sparkasse Kelmbach"),
    # A run after an article: its head noun before "von" or "der" is a noun too; the name
    # after "von", and a run of capitalised words after "der", are still checked.
    ("Die Arbeiten am Hafen von Ostbrück dauern bis Juni 2026.", True, "am Hafen von Ostbrück"),
    ("Die Arbeiten am Hafen von Kelmbach dauern bis Juni.", False, "am Hafen von Kelmbach"),
    # The head noun before "von" and a name is the name's own head ("die Bank von
    # Ostbrück" is an institution): the source must have it, not just another noun with
    # "von Ostbrück" ("der Rat von Ostbrück").
    ("Die Bank von Ostbrück zahlt den Umbau, sagte Anna Keller.", False, "die Bank von Ostbrück"),
    ("Laut Keller zahlt die Sparkasse von Ostbrück.", False, "die Sparkasse von Ostbrück"),
    ("Der Rat von Ostbrück plant einen Neubau am Hafen.", True, "der Rat von Ostbrück"),
    ("Anna Keller kündigte die Schließung der Schwimmhalle an.", True, "Schließung der Halle"),
    ("Keller kündigte die Schließung der Sparkasse Kelmbach an.", False, "der Sparkasse Kelmbach"),
    ("Anna Keller sprach im Namen von Jonas Ode.", False, "im Namen von Jonas Ode"),
    ("Keller kündigte das Ende der Ära Brandt an.", False, "das Ende der Ära Brandt"),
]


@pytest.mark.parametrize("case", GERMAN_NOUN_CASES, ids=lambda case: case[2])
def test_a_german_noun_after_its_article_is_not_a_name(case: tuple[str, bool, str]) -> None:
    draft, passes, why = case
    v = names_grounded(SOURCE_DE_NOUNS, None, draft)
    assert v.passed is passes, (why, v.reason)


def test_a_name_does_not_run_over_a_blank_line() -> None:
    """A paragraph that ends with a name and one that starts with another are two names,
    not one blended name (hypothesis found an extractive draft joined that way)."""
    source = "Ostbrook council met on Monday. Mira Tallis chaired it.\n\nOstbrook voted."
    draft = "The meeting was chaired by Mira Tallis\n\nOstbrook voted."
    v = names_grounded(source, None, draft)
    assert v.passed, v.reason
    assert [e["name"] for e in v.evidence] == ["Mira Tallis"]  # a lone sentence-initial word


# German compounds are right-headed: a "Landesbank" is a Bank, a "Kreissparkasse" a
# Sparkasse, but a "Bankhaus" is (grammatically) a Haus (issue 20, session 10). A head
# noun the source has only as the head of a compound naming the same thing ("die
# Landesbank von Ostbrück", "Kreissparkasse Ostbrück") is grounded by it; a draft's
# compound is never grounded by its parts, and a noun the source has only as the first
# part of a compound ("Bankhaus") or in another name is not grounded by it.
SOURCE_DE_COMPOUNDS = (
    "Die Landesbank von Ostbrück zahlt den Umbau des Hallenbads, sagte Bürgermeisterin "
    "Anna Keller. Die Kreissparkasse Ostbrück gibt einen Kredit, das Bankhaus Kelmbach "
    "einen zweiten."
)
SOURCE_DE_BANKHAUS = "Das Bankhaus Kelmbach gibt einen Kredit, sagte Anna Keller."
SOURCE_DE_BANK = "Die Bank von Ostbrück zahlt den Umbau, sagte Bürgermeisterin Anna Keller."
GERMAN_COMPOUND_CASES = [
    # (source, draft, passes, why)
    (SOURCE_DE_COMPOUNDS, "Die Bank von Ostbrück zahlt den Umbau.", True, "Landesbank: a Bank"),
    (SOURCE_DE_COMPOUNDS, "Die Sparkasse von Ostbrück gibt einen Kredit.", True, "Kreissparkasse"),
    (SOURCE_DE_BANKHAUS, "Die Bank von Kelmbach gibt einen Kredit.", False, "Bankhaus: a Haus"),
    (SOURCE_DE_COMPOUNDS, "Das Haus von Ostbrück zahlt.", False, "the Bankhaus is Kelmbach's"),
    (SOURCE_DE_BANK, "Das Bankhaus von Ostbrück zahlt den Umbau.", False, "Bank is not Bankhaus"),
    (SOURCE_DE_BANK, "Die Landesbank von Ostbrück zahlt den Umbau.", False, "nor Landesbank"),
    (SOURCE_DE_BANK, "Die Bank von Ostbrück zahlt den Umbau.", True, "the same words"),
]


@pytest.mark.parametrize("case", GERMAN_COMPOUND_CASES, ids=lambda case: case[3])
def test_a_german_compound_grounds_its_head_noun_only(case: tuple[str, str, bool, str]) -> None:
    source, draft, passes, why = case
    v = names_grounded(source, None, draft)
    assert v.passed is passes, (why, v.reason)
