"""A draft is read in its item's language (issue 20): the one the feed or page declared
(`items.language`), not one detected from the draft on its own. A short draft often has
too few function words to tell (its numbers then read as English), and a draft that
quotes another language can look like it. Only where nothing is declared is the draft's
language detected. Every place, person and figure is invented.
"""

from __future__ import annotations

from guards.dates import dates_grounded
from guards.numbers import numbers_grounded
from guards.registry import DEFAULT_MODES, run_gates
from guards.units import detect_language

URL = "https://news.example.org/vaulmont/port"

# A French report: "1,250 tonnes" is one and a quarter tonnes.
FR_SOURCE = (
    "Le port de Vaulmont a reçu 1,250 tonnes de sable pour la digue, selon la "
    "capitainerie, qui attend une deuxième livraison avant la fin du mois."
)
FR_DRAFT = "Vaulmont : 1,250 tonnes de sable"  # no function word the detector knows

# An English report quoting the harbour master in French: "hier" is French for yesterday.
QUOTE = (
    '"Nous avons fermé le quai hier pour la sécurité des marins et des dockers, et nous '
    'le rouvrirons quand les experts auront fini."'
)
EN_SOURCE = (
    "The harbour master of Port Vaulmont, Claire Vautrin, closed the outer quay on Tuesday "
    f"after a crane collapsed. Speaking in French to the crews, she said: {QUOTE} The port "
    "authority said the inspection of the crane would take a week and that the ferries to "
    "the islands would run as usual from the inner harbour. Union officials said the "
    "workers on the quay had warned of cracks in the crane's base last winter."
)
EN_DRAFT = (
    f"Port Vaulmont closes quay after crane collapse\n\nClaire Vautrin told the crews: {QUOTE}"
)


def test_the_premise_the_drafts_alone_say_another_language() -> None:
    assert (detect_language(FR_SOURCE), detect_language(FR_DRAFT)) == ("fr", None)
    assert (detect_language(EN_SOURCE), detect_language(EN_DRAFT)) == ("en", "fr")


def test_a_short_draft_reads_its_numbers_in_the_items_language() -> None:
    v = numbers_grounded(FR_SOURCE, URL, FR_DRAFT, language="fr")
    assert v.passed, v.reason
    (entry,) = v.evidence
    assert (entry["number"], entry["value"], entry["found"]) == ("1,250", "1.25", True)
    # A figure the source does not have is still refused, read the same way.
    invented = FR_DRAFT.replace("250", "750")
    assert not numbers_grounded(FR_SOURCE, URL, invented, language="fr").passed


def test_a_draft_quoting_another_language_is_read_in_the_items() -> None:
    """The English item's draft quotes French: its "hier" is not a date of the draft's
    (the source, read in English, has the same quotation and no "yesterday")."""
    v = dates_grounded(EN_SOURCE, URL, EN_DRAFT, language="en")
    assert v.passed, v.reason
    assert v.evidence == []
    # A date of the draft's own is still held to the source.
    changed = EN_DRAFT.replace("told the crews", "told the crews on Wednesday")
    assert not dates_grounded(EN_SOURCE, URL, changed, language="en").passed


def test_run_gates_gives_the_items_language_to_the_draft() -> None:
    modes = dict(DEFAULT_MODES) | {"dates_grounded": "discard"}
    gates = ("numbers_grounded", "dates_grounded")
    for source, draft, language in ((FR_SOURCE, FR_DRAFT, "fr"), (EN_SOURCE, EN_DRAFT, "en")):
        results = run_gates(gates, source, URL, draft, modes=modes, language=language)
        assert [r.gate for r in results if r.hard_fail] == [], language


def test_without_a_declared_language_the_draft_is_still_detected() -> None:
    """Nothing declared: detection as before (the source French, the draft's 1,250 read
    as English, so the draft is refused; an editor sees the declared language fix it)."""
    assert not numbers_grounded(FR_SOURCE, URL, FR_DRAFT).passed
    assert not dates_grounded(EN_SOURCE, URL, EN_DRAFT).passed


def test_run_gates_reads_a_stored_three_letter_code() -> None:
    """An item stored with an ISO 639-2 code ("fre", "deu") before codes were mapped is
    read in that language, as "fr" would be."""
    modes = dict(DEFAULT_MODES) | {"dates_grounded": "discard"}
    gates = ("numbers_grounded", "dates_grounded")
    for language in ("fre", "fra"):
        results = run_gates(gates, FR_SOURCE, URL, FR_DRAFT, modes=modes, language=language)
        assert [r.gate for r in results if r.hard_fail] == [], language
