"""dates_grounded reads dates in every language the gates read (issue 20): French,
German, Spanish, Italian and Dutch drafts and sources, not only English. A day and
month, a month and year, a weekday, a bare month after a preposition and a relative
day are read in each; a draft's date is grounded by the same date in the source
however either writes it (9 janvier, 9. Januar, 2026-01-09, January 9). Every
place, person and event is invented.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guards.dates import _CALENDAR, _LOWER, _near_months, dates_grounded, find_dates
from guards.registry import DEFAULT_MODES, run_gates

URL = "https://news.example.org/vallee/gare"

FR = (
    "Le conseil municipal de Saint-Aulne a annoncé mardi la fermeture provisoire de la "
    "gare. Le dernier train partira vendredi, et le service reprendra le 9 janvier 2026. "
    "Les offres pour les travaux seront ouvertes en mars. Hier, la maire a visité le "
    "chantier du pont."
)
DE = (
    "Der Gemeinderat von Kelbrunn hat am Dienstag die vorläufige Schließung des Bahnhofs "
    "angekündigt. Der letzte Zug fährt am Freitag, der Betrieb wird am 9. Januar 2026 "
    "wieder aufgenommen. Die Angebote für die Bauarbeiten werden im März geöffnet. "
    "Gestern besuchte die Bürgermeisterin die Baustelle an der Brücke."
)
ES = (
    "El ayuntamiento de Valdoria anunció el martes el cierre provisional de la estación. "
    "El último tren saldrá el viernes, y el servicio se reanudará el 9 de enero de 2026. "
    "Las ofertas para las obras se abrirán en marzo. Ayer la alcaldesa visitó las obras "
    "del puente."
)
IT = (
    "Il consiglio comunale di Valdorno ha annunciato martedì la chiusura provvisoria della "
    "stazione. L'ultimo treno partirà venerdì, e il servizio riprenderà il 9 gennaio 2026. "
    "Le offerte per i lavori saranno aperte a marzo. Ieri la sindaca ha visitato il "
    "cantiere del ponte."
)
NL = (
    "De gemeenteraad van Oostbroek heeft dinsdag de tijdelijke sluiting van het station "
    "aangekondigd. De laatste trein vertrekt vrijdag, en de dienst wordt op 9 januari 2026 "
    "hervat. De offertes voor de werken worden in maart geopend. Gisteren bezocht de "
    "burgemeester de bouwplaats bij de brug."
)
ISO = "Service on the valley line resumes on 2026-01-09, the operator said."

CASES = [
    # (language, source, draft, passes, why)
    ("fr", FR, "Le service reprendra le 9 janvier.", True, "day and month"),
    ("fr", FR, "Le service reprendra le 19 janvier.", False, "another day"),
    ("fr", FR, "Le service reprendra le 9 février.", False, "another month"),
    ("fr", FR, "Le service reprendra en janvier 2026.", True, "month and year"),
    ("fr", FR, "Le service reprendra en janvier 2027.", False, "another year"),
    ("fr", FR, "Les offres seront ouvertes en mars.", True, "bare month"),
    ("fr", FR, "Les offres seront ouvertes en avril.", False, "bare month not stated"),
    ("fr", FR, "Le dernier train partira vendredi.", True, "weekday, same event"),
    ("fr", FR, "Le dernier train partira jeudi.", False, "weekday not stated"),
    ("fr", FR, "La maire a visité le chantier hier.", True, "relative day"),
    ("fr", FR, "La maire visitera le chantier demain.", False, "relative day not stated"),
    ("de", DE, "Der Betrieb wird am 9. Januar wieder aufgenommen.", True, "day and month"),
    ("de", DE, "Der Betrieb wird am 19. Januar wieder aufgenommen.", False, "another day"),
    ("de", DE, "Der Betrieb wird im Januar 2026 wieder aufgenommen.", True, "month and year"),
    ("de", DE, "Die Angebote werden im März geöffnet.", True, "bare month"),
    ("de", DE, "Die Angebote werden im Mai geöffnet.", False, "bare month not stated"),
    ("de", DE, "Der letzte Zug fährt am Freitag.", True, "weekday"),
    ("de", DE, "Der letzte Zug fährt am Samstag.", False, "weekday not stated"),
    ("de", DE, "Gestern besuchte die Bürgermeisterin die Baustelle.", True, "relative"),
    ("de", DE, "Heute besuchte die Bürgermeisterin die Baustelle.", False, "relative not stated"),
    ("es", ES, "El servicio se reanudará el 9 de enero.", True, "day and month"),
    ("es", ES, "El servicio se reanudará el 9 de junio.", False, "another month"),
    ("es", ES, "El servicio se reanudará en enero de 2026.", True, "month and year"),
    ("es", ES, "El último tren saldrá el viernes.", True, "weekday"),
    ("es", ES, "El último tren saldrá el sábado.", False, "weekday not stated"),
    ("es", ES, "Ayer la alcaldesa visitó las obras.", True, "relative"),
    ("it", IT, "Il servizio riprenderà il 9 gennaio.", True, "day and month"),
    ("it", IT, "Il servizio riprenderà il 9 luglio.", False, "another month"),
    ("it", IT, "L'ultimo treno partirà venerdì.", True, "weekday"),
    ("it", IT, "L'ultimo treno partirà domenica.", False, "weekday not stated"),
    ("it", IT, "Le offerte saranno aperte a marzo.", True, "bare month"),
    ("it", IT, "Le offerte saranno aperte a maggio.", False, "bare month not stated"),
    ("nl", NL, "De dienst wordt op 9 januari hervat.", True, "day and month"),
    ("nl", NL, "De dienst wordt op 9 maart hervat.", False, "another month"),
    ("nl", NL, "De laatste trein vertrekt vrijdag.", True, "weekday"),
    ("nl", NL, "De laatste trein vertrekt zaterdag.", False, "weekday not stated"),
    ("nl", NL, "Gisteren bezocht de burgemeester de bouwplaats.", True, "relative"),
    # Across languages: an English draft of a French source, a French draft of an
    # English one; the same date however it is written.
    ("fr", FR, "Service resumes on 9 January.", True, "English draft, French source"),
    ("fr", FR, "Service resumes on 10 January.", False, "English draft, another day"),
    ("fr", FR, "The last train leaves on Friday.", True, "English weekday, French source"),
    ("fr", FR, "The last train leaves on Thursday.", False, "English weekday not stated"),
    # A draft is read in its item's language (declared: "fr" here), not detected apart.
    (
        "fr",
        ISO,
        "La reprise du service est prévue le 9 janvier, selon la direction.",
        True,
        "French draft, ISO date in an English source",
    ),
    (
        "fr",
        ISO,
        "La reprise du service est prévue le 10 janvier, selon la direction.",
        False,
        "French draft, another day",
    ),  # fmt: skip
]


@pytest.mark.parametrize(
    ("language", "source", "draft", "passes", "why"),
    CASES,
    ids=[f"{c[0]}-{c[4]}-{'pass' if c[3] else 'fail'}" for c in CASES],
)
def test_dates_in_other_languages(
    language: str, source: str, draft: str, passes: bool, why: str
) -> None:
    """Detected from the texts, and with the language the feed or page declared."""
    detected = dates_grounded(source, URL, draft)
    assert detected.passed is passes, (why, detected.reason, detected.evidence)
    assert detected.evidence, "the draft's date was not read at all"
    (declared,) = run_gates(
        ("dates_grounded",), source, URL, draft, modes=dict(DEFAULT_MODES), language=language
    )
    assert declared.verdict.passed is passes, (why, declared.verdict.reason)


def test_the_other_event_rule_reads_french() -> None:
    """Friday is the last train's day, not the day service resumes: flagged."""
    v = dates_grounded(FR, URL, "Le service reprendra vendredi.")
    assert v.passed is False
    (entry,) = v.evidence
    assert "dernier train" in entry["other_event"]


@pytest.mark.parametrize(
    ("text", "language"),
    [
        # Words of another language that are not dates there: Italian "mai" is "never",
        # Dutch "hier" is "here", German capitalised "Morgen" is "morning", a Spanish
        # surname in English prose is not a Sunday.
        ("Non è mai stato così difficile, ha detto la sindaca.", "it"),
        ("De burgemeester was hier om de brug te openen.", "nl"),
        ("Am Morgen öffnete die Bürgermeisterin die Brücke.", "de"),
        ("Councillor Ana Domingo opened the bridge.", "en"),
    ],
)
def test_words_that_are_not_dates(text: str, language: str) -> None:
    assert find_dates(text) == []
    assert find_dates(text, language=language) == []


_TOKENS = ["9", "31st", "of", "January", "jan.", "Jan", "march", "May", "2026", "20", ",", "x"]
_TOKENS += ["on", "sept.", "12th", "the", "2026x", "mayor", "dec", "3", "nov", "20261", "  "]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=14))
def test_calendar_dates_searched_near_month_words_are_all_of_them(words: list[str]) -> None:
    """The fast path (search around each month word) finds what a scan of every
    position finds."""
    low = " ".join(words).replace(" ,", ",").lower()
    everywhere = [m.span() for m in _LOWER[_CALENDAR].finditer(low)]
    assert [m.span() for m in _near_months(low)] == everywhere
