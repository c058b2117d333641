"""Number words from ten to twenty and the tens in French, German, Spanish, Italian and
Dutch are read as English ones are (issue 20, session 10).

Before, only the word for twelve (and dozens) was read in those languages: a source's
"zwanzig" grounded no 20, so a faithful "20" was discarded, and a draft's "Quinze"
asked the source for nothing, so it passed against a source's "treize". Now each word
from ten to twenty and each ten (twenty to ninety; French "soixante-dix",
"quatre-vingts", "quatre-vingt-dix" and the Belgian and Swiss "septante", "nonante") is
its value, both ways: the source's word grounds the draft's digits and the other way
round, and a neighbouring value is refused. Since session 14 each
compound from twenty-one to ninety-nine ("vingt-trois", "dreiundzwanzig", "veintitrés",
"treinta y dos", "vingt et un", "ventitré", "drieëntwintig") is its own value too
(`COMPOUNDS`), never the word inside it: before, it was not read at all, so a faithful
"23" against a source's "vingt-trois" was discarded and a draft's "vingt-quatre" passed
against a source's "vingt-trois". Not read (neither grounded nor refused by value, the
safe side of "several million"): a word or a compound before a scale word ("zwanzig
Millionen", "vingt-trois mille"). A word that is also an ordinary word of another language the
gates read ("elf", "once", "seize", "onze", "quince", "venti") is a number only in its
own language. Every place and figure
is invented.
"""

from __future__ import annotations

import pytest

from guards.numbers import numbers_grounded, tokenise

WORDS = {  # (ten to nineteen, then twenty to ninety by tens)
    "fr": (
        "dix onze douze treize quatorze quinze seize dix-sept dix-huit dix-neuf",
        "vingt trente quarante cinquante soixante soixante-dix quatre-vingts quatre-vingt-dix",
    ),
    "de": (
        "zehn elf zwölf dreizehn vierzehn fünfzehn sechzehn siebzehn achtzehn neunzehn",
        "zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig",
    ),
    "es": (
        "diez once doce trece catorce quince dieciséis diecisiete dieciocho diecinueve",
        "veinte treinta cuarenta cincuenta sesenta setenta ochenta noventa",
    ),
    "it": (
        "dieci undici dodici tredici quattordici quindici sedici diciassette diciotto diciannove",
        "venti trenta quaranta cinquanta sessanta settanta ottanta novanta",
    ),
    "nl": (
        "tien elf twaalf dertien veertien vijftien zestien zeventien achttien negentien",
        "twintig dertig veertig vijftig zestig zeventig tachtig negentig",
    ),
}
VALUES = [*range(10, 20), *range(20, 100, 10)]
SENTENCE = {  # a source sentence and a draft sentence with {n} where the number goes
    "fr": ("À Valbrune, {n} maisons ont été évacuées mardi.", "{n} maisons évacuées."),
    "de": ("In Ostbrück wurden am Dienstag {n} Häuser geräumt.", "{n} Häuser geräumt."),
    "es": ("En Valdoria, {n} casas fueron evacuadas el martes.", "{n} casas evacuadas."),
    "it": ("A Borgonero, {n} case sono state evacuate martedì.", "{n} case evacuate."),
    "nl": ("In Oosterwolde werden dinsdag {n} huizen ontruimd.", "{n} huizen ontruimd."),
}
CASES = [
    (lang, word, value)
    for lang, words in WORDS.items()
    for word, value in zip(" ".join(words).split(), VALUES, strict=True)
]
# Twenty-one to ninety-nine in one compound (session 14): each is its value too.
COMPOUNDS = [  # (language, as written, value)
    ("fr", "vingt-trois", 23), ("fr", "vingt et un", 21), ("fr", "vingt-et-une", 21),
    ("fr", "trente-cinq", 35), ("fr", "quarante-huit", 48), ("fr", "cinquante-deux", 52),
    ("fr", "soixante-sept", 67), ("fr", "soixante et onze", 71), ("fr", "soixante-douze", 72),
    ("fr", "soixante-dix-sept", 77), ("fr", "quatre-vingt-un", 81),
    ("fr", "quatre-vingt-six", 86), ("fr", "quatre-vingt-onze", 91),
    ("fr", "quatre-vingt-dix-neuf", 99), ("fr", "septante-deux", 72), ("fr", "nonante-neuf", 99),
    ("de", "einundzwanzig", 21), ("de", "dreiundzwanzig", 23), ("de", "fünfunddreißig", 35),
    ("de", "achtundvierzig", 48), ("de", "siebenundsechzig", 67), ("de", "neunundneunzig", 99),
    ("es", "veintiuno", 21), ("es", "veintitrés", 23), ("es", "veintiséis", 26),
    ("es", "treinta y cinco", 35), ("es", "cuarenta y ocho", 48), ("es", "noventa y nueve", 99),
    ("it", "ventuno", 21), ("it", "ventitré", 23), ("it", "ventotto", 28),
    ("it", "trentacinque", 35), ("it", "quarantotto", 48), ("it", "novantanove", 99),
    ("nl", "eenentwintig", 21), ("nl", "drieëntwintig", 23), ("nl", "vijfendertig", 35),
    ("nl", "achtenveertig", 48), ("nl", "zevenenzestig", 67), ("nl", "negenennegentig", 99),
]  # fmt: skip


def _ids(case: tuple[str, str, int]) -> str:
    return f"{case[0]}-{case[1]}"


@pytest.mark.parametrize("case", CASES + COMPOUNDS, ids=_ids)
def test_a_source_word_grounds_its_value_in_digits(case: tuple[str, str, int]) -> None:
    lang, word, value = case
    source, draft = SENTENCE[lang]
    verdict = numbers_grounded(source.format(n=word), None, draft.format(n=value), language=lang)
    assert verdict.passed, verdict.reason
    refused = numbers_grounded(
        source.format(n=word), None, draft.format(n=value + 1), language=lang
    )
    assert not refused.passed, f"{value + 1} grounded by {word}"


@pytest.mark.parametrize("case", CASES + COMPOUNDS, ids=_ids)
def test_a_draft_word_asks_the_source_for_its_value(case: tuple[str, str, int]) -> None:
    lang, word, value = case
    source, draft = SENTENCE[lang]
    written = draft.format(n=word.capitalize())  # first word of the draft
    verdict = numbers_grounded(source.format(n=value), None, written, language=lang)
    assert verdict.passed, verdict.reason
    assert [e["value"] for e in verdict.evidence] == [str(value)]
    refused = numbers_grounded(source.format(n=value + 1), None, written, language=lang)
    assert not refused.passed, f"{word} grounded by {value + 1}"


@pytest.mark.parametrize(
    ("lang", "text", "values"),
    [
        ("fr", "Septante maisons et nonante granges.", ["70", "90"]),
        ("fr", "Vingt-trois maisons et dix-sept granges.", ["23", "17"]),  # not 20 and 3
        ("de", "Dreiundzwanzig Häuser, zwanzig Millionen Euro.", ["23"]),
        ("fr", "Quatre-vingt-dix maisons.", ["90"]),  # not also 80 and 10
        ("es", "Veintitrés casas y treinta y dos granjas.", ["23", "32"]),
        ("fr", "Vingt et une maisons et trente et un bateaux.", ["21", "31"]),
        ("en", "An elf said once that the quince would seize the day.", []),
        ("nl", "Onze elf huizen.", ["11"]),  # "onze" is "our" in Dutch
        ("fr", "Onze maisons.", ["11"]),
        ("it", "Venti forti a Borgonero.", ["20"]),
        ("es", "Once casas y quince granjas.", ["11", "15"]),
        ("de", "Die Elf von Ostbrück gewann.", ["11"]),
    ],
)
def test_which_words_are_read(lang: str, text: str, values: list[str]) -> None:
    assert [t.value for t in tokenise(text, lang)] == values


def test_a_compound_is_not_grounded_by_its_tens() -> None:
    """ "Vingt-trois" asks the source for 23: its "vingt" (20) does not ground it."""
    source = "À Valbrune, vingt maisons ont été évacuées mardi."
    verdict = numbers_grounded(source, None, "Vingt-trois maisons évacuées.", language="fr")
    assert [(e["value"], e["found"]) for e in verdict.evidence] == [("23", False)]


@pytest.mark.parametrize("case", COMPOUNDS, ids=_ids)
def test_a_compound_is_neither_its_tens_nor_its_unit(case: tuple[str, str, int]) -> None:
    """A source's "vingt-trois" grounds no 20 and no 13 (its tens, its unit and ten),
    and no 22."""
    lang, word, value = case
    source, draft = SENTENCE[lang]
    for wrong in (value - 1, value // 10 * 10, value % 10 + 10):
        refused = numbers_grounded(
            source.format(n=word), None, draft.format(n=wrong), language=lang
        )
        assert not refused.passed, f"{wrong} grounded by {word}"


@pytest.mark.parametrize(
    ("lang", "text", "values"),
    [
        ("fr", "Vingt-trois mille euros.", []),  # before a scale word: not read
        ("de", "Dreiundzwanzig Millionen Euro.", []),
        ("es", "Treinta y dos millones de euros.", []),
        ("nl", "Vijfentwintig miljoen euro.", []),
        ("it", "Trentadue case e ventitré fienili.", ["32", "23"]),
        ("nl", "Drieëntwintig huizen en tweeëntwintig boerderijen.", ["23", "22"]),
        ("en", "Twenty-three houses.", ["23"]),  # English, as before
    ],
)
def test_which_compounds_are_read(lang: str, text: str, values: list[str]) -> None:
    assert [t.value for t in tokenise(text, lang)] == values
