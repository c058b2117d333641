"""dates_grounded reads abbreviated month names in every language it reads (issue 20):
en "Jan.", "Sept."; fr "janv.", "févr.", "déc."; de "Jan.", "Mrz.", "Okt."; es "ene.",
"dic."; it "gen.", "dic."; nl "jan.", "mrt.", "okt.". An abbreviation is a month only with
its full stop and beside a day or a year ("14 sept. 2026", "am 2. Mrz."), as style guides
use them; it is compared by value, so "12 janv." grounds "12 janvier" and "12 January"
and the other way round. Every place, person and event is invented.
"""

from __future__ import annotations

import pytest

from guards.dates import dates_grounded, find_dates
from guards.registry import DEFAULT_MODES, run_gates

URL = "https://news.example.org/passerelle"

EN = (
    "The Harwick county board said on Tuesday that the Millbeck footbridge will close on "
    "Jan. 12 for repairs and reopen on Sept. 14, 2026. Tenders for the steelwork open on "
    "Feb. 3, the board said."
)
FR = (
    "Le conseil départemental de Vaulmont a annoncé que la passerelle du Ruisseau-Noir "
    "fermera le 12 janv. pour travaux et rouvrira le 14 sept. 2026. Les offres pour la "
    "charpente seront ouvertes le 1er déc., et le chantier du quai commencera le 3 févr."
)
DE = (
    "Der Kreistag von Kelbrunn teilte mit, dass die Fußgängerbrücke am 12. Jan. für "
    "Reparaturen schließt und am 14. Okt. 2026 wieder öffnet. Die Angebote für den Stahlbau "
    "werden am 2. Mrz. geöffnet, die Arbeiten am Kai beginnen am 1. Dez."
)
ES = (
    "El cabildo de Valdoria anunció que la pasarela del Arroyo Negro cerrará el 12 de ene. "
    "por obras y reabrirá el 14 de oct. de 2026. Las ofertas para la estructura se abrirán "
    "el 1 de dic."
)
IT = (
    "Il consiglio provinciale di Valdorno ha annunciato che la passerella del Rio Nero "
    "chiuderà il 12 gen. per lavori e riaprirà il 14 ott. 2026. Le offerte per la struttura "
    "saranno aperte il 1° dic."
)
NL = (
    "De provincie Oostbroek meldde dat de loopbrug over de Zwartebeek op 12 jan. dichtgaat "
    "voor herstel en op 14 okt. 2026 weer opengaat. De offertes voor de staalconstructie "
    "worden op 3 mrt. geopend."
)

# Per language, its source and (draft, passes, why).
STORIES = {
    "en": (
        EN,
        [
            ("The footbridge reopens in September.", True, "Sept. names September"),
            ("The footbridge reopens in October.", False, "another month"),
            ("The footbridge reopens on Sept. 15.", False, "Sept., another day"),
        ],
    ),
    "fr": (
        FR,
        [
            ("La passerelle fermera le 12 janvier.", True, "janv. is janvier"),
            ("La passerelle fermera le 13 janvier.", False, "another day"),
            ("Les offres seront ouvertes le 1er décembre.", True, "déc. is décembre"),
            ("Le chantier du quai commencera le 3 février.", True, "févr. is février"),
            ("Le chantier du quai commencera le 3 févr.", True, "févr. in both"),
            ("Le chantier du quai commencera le 4 févr.", False, "févr., another day"),
            ("Le chantier du quai commencera en février.", True, "a bare month"),
            ("The quay works begin on 3 February.", True, "English draft"),
        ],
    ),
    "de": (
        DE,
        [
            ("Die Brücke schließt am 12. Januar.", True, "Jan. is Januar"),
            ("Die Brücke öffnet am 14. Oktober wieder.", True, "Okt. is Oktober"),
            ("Die Brücke öffnet im Oktober 2026 wieder.", True, "Okt. with its year"),
            ("Die Brücke öffnet im Oktober 2027 wieder.", False, "another year"),
            ("Die Angebote werden am 2. März geöffnet.", True, "Mrz. is März"),
            ("Die Angebote werden am 2. Mrz. geöffnet.", True, "Mrz. in both"),
            ("Die Angebote werden am 3. Mrz. geöffnet.", False, "Mrz., another day"),
            ("Tenders open on 2 March.", True, "English draft"),
        ],
    ),
    "es": (
        ES,
        [
            ("La pasarela cerrará el 12 de enero.", True, "ene. is enero"),
            ("La pasarela cerrará el 12 de ene.", True, "ene. in both"),
            ("Las ofertas se abrirán el 1 de diciembre.", True, "dic. is diciembre"),
            ("Las ofertas se abrirán el 2 de dic.", False, "dic., another day"),
            ("La pasarela reabrirá en octubre de 2026.", True, "oct. with its year"),
        ],
    ),
    "it": (
        IT,
        [
            ("La passerella chiuderà il 12 gennaio.", True, "gen. is gennaio"),
            ("Le offerte saranno aperte il 1° dicembre.", True, "dic. is dicembre"),
            ("La passerella chiuderà il 13 gen.", False, "gen., another day"),
            ("La passerella riaprirà il 14 ott.", True, "ott. in both"),
        ],
    ),
    "nl": (
        NL,
        [
            ("De offertes worden op 3 maart geopend.", True, "mrt. is maart"),
            ("De offertes worden op 4 mrt. geopend.", False, "mrt., another day"),
            ("De loopbrug gaat op 14 oktober weer open.", True, "okt. is oktober"),
            ("The tenders open on 3 March.", True, "English draft"),
        ],
    ),
}
CASES = [(lang, source, *case) for lang, (source, cases) in STORIES.items() for case in cases]


@pytest.mark.parametrize(
    ("language", "source", "draft", "passes", "why"),
    CASES,
    ids=[f"{c[0]}-{c[4]}-{'pass' if c[3] else 'fail'}" for c in CASES],
)
def test_abbreviated_months(language: str, source: str, draft: str, passes: bool, why: str) -> None:
    """With the language the feed declared, and detected from the texts."""
    (declared,) = run_gates(
        ("dates_grounded",), source, URL, draft, modes=dict(DEFAULT_MODES), language=language
    )
    v = declared.verdict
    assert v.passed is passes, (why, v.reason, v.evidence)
    assert v.evidence, "the draft's date was not read at all"
    assert all(e["found"] for e in v.evidence) is passes
    detected = dates_grounded(source, URL, draft)
    assert detected.passed is passes, (why, detected.reason)


# Every abbreviation a newsroom of each language writes, with its month: "9 <abbr>" in a
# source grounds "9 <full name>" in a draft and not the next month's.
ABBREVIATIONS = {
    "en": {"Jan.": 1, "Feb.": 2, "Mar.": 3, "Apr.": 4, "Jun.": 6, "Jul.": 7, "Aug.": 8,
           "Sep.": 9, "Sept.": 9, "Oct.": 10, "Nov.": 11, "Dec.": 12},
    "fr": {"janv.": 1, "févr.": 2, "fév.": 2, "avr.": 4, "juil.": 7, "sept.": 9, "oct.": 10,
           "nov.": 11, "déc.": 12},
    "de": {"Jan.": 1, "Feb.": 2, "Febr.": 2, "Mrz.": 3, "Apr.": 4, "Jun.": 6, "Jul.": 7,
           "Aug.": 8, "Sep.": 9, "Sept.": 9, "Okt.": 10, "Nov.": 11, "Dez.": 12},
    "es": {"ene.": 1, "feb.": 2, "mar.": 3, "abr.": 4, "may.": 5, "jun.": 6, "jul.": 7,
           "ago.": 8, "sep.": 9, "sept.": 9, "oct.": 10, "nov.": 11, "dic.": 12},
    "it": {"gen.": 1, "feb.": 2, "mar.": 3, "apr.": 4, "mag.": 5, "giu.": 6, "lug.": 7,
           "ago.": 8, "set.": 9, "sett.": 9, "ott.": 10, "nov.": 11, "dic.": 12},
    "nl": {"jan.": 1, "feb.": 2, "mrt.": 3, "apr.": 4, "jun.": 6, "jul.": 7, "aug.": 8,
           "sep.": 9, "sept.": 9, "okt.": 10, "nov.": 11, "dec.": 12},
}  # fmt: skip
FULL = {
    "en": "January February March April May June July August September October November December",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre "
    "diciembre",
    "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre "
    "novembre dicembre",
    "nl": "januari februari maart april mei juni juli augustus september oktober november december",
}
# How each language writes "the meeting is on 9 <month>" (invented).
SENTENCE = {
    "en": "The Ostbrook harbour board meets on 9 {m}, its clerk said.",
    "fr": "Le conseil du port d'Ostbrook se réunira le 9 {m}, selon son greffier.",
    "de": "Der Hafenrat von Ostbrook tagt am 9. {m}, sagte sein Schriftführer.",
    "es": "La junta del puerto de Ostbrook se reunirá el 9 de {m}, según su secretario.",
    "it": "Il consiglio del porto di Ostbrook si riunirà il 9 {m}, ha detto il segretario.",
    "nl": "De havenraad van Ostbrook vergadert op 9 {m}, zei de secretaris.",
}
TABLE = [
    (lang, abbr, month) for lang, table in ABBREVIATIONS.items() for abbr, month in table.items()
]


@pytest.mark.parametrize(("language", "abbreviation", "month"), TABLE)
def test_every_abbreviation_is_its_month(language: str, abbreviation: str, month: int) -> None:
    months = FULL[language].split()
    source = SENTENCE[language].format(m=abbreviation)
    same = SENTENCE[language].format(m=months[month - 1])
    other = SENTENCE[language].format(m=months[month % 12])
    for draft, passes in ((same, True), (other, False)):
        (r,) = run_gates(
            ("dates_grounded",), source, URL, draft, modes=dict(DEFAULT_MODES), language=language
        )
        assert r.verdict.passed is passes, (source, draft, r.verdict.reason)
    # And the other way round: the abbreviation in the draft, the full name in the source.
    (r,) = run_gates(
        ("dates_grounded",), same, URL, source, modes=dict(DEFAULT_MODES), language=language
    )
    assert r.verdict.passed and r.verdict.evidence, (same, source, r.verdict.reason)
    (r,) = run_gates(
        ("dates_grounded",), other, URL, source, modes=dict(DEFAULT_MODES), language=language
    )
    assert not r.verdict.passed, (other, source)


@pytest.mark.parametrize(
    ("text", "language"),
    [
        # An abbreviation without a day or year beside it is a word (or an abbreviation
        # of something else): "sept." is seven, "mar." the sea, "gen." a general.
        ("Ils étaient sept. Le maire a salué leur courage.", "fr"),
        ("La flota volvió al mar. Los barcos siguen en el puerto.", "es"),
        ("Il gen. Bruno Ferri ha visitato il porto.", "it"),
        ("Volgens de voorzitter, mr. Jan. de Wit, gaat de brug dicht.", "nl"),
        # Without its full stop an abbreviation is not read: "sept" is seven.
        ("Les 7 sept ponts de la ville seront inspectés.", "fr"),
    ],
)
def test_abbreviations_that_are_not_dates(text: str, language: str) -> None:
    assert find_dates(text, language=language) == []
