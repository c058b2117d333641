"""A dozen is twelve in every language the gates read (issue 20, session 9).

"a dozen" is 12 in English, and so are "une douzaine", "ein Dutzend", "una docena", "una
dozzina" and "een dozijn"; the word for twelve ("douze", "zwölf", "doce", "dodici",
"twaalf") is 12 as "twelve" is; a number of dozens is that many twelves ("deux
douzaines" 24, "zwei Dutzend" 24) and half a dozen is 6 ("une demi-douzaine"). Each is
compared by value both ways: a source's dozen grounds a draft's 12 and the other way
round. Not grounded: another value, and a dozen the source does not have ("deux
douzaines" is not the source's "deux", "soixante-douze" is 72, not 12). Every place and
figure is invented.
"""

from __future__ import annotations

import pytest

from guards.numbers import numbers_grounded

GROUNDED = [
    # (language, source, draft)
    ("fr", "Une douzaine de maisons ont été évacuées à Valbrune.", "12 maisons évacuées."),
    ("fr", "Une douzaine de maisons ont été évacuées à Valbrune.", "Douze maisons évacuées."),
    ("fr", "Douze maisons ont été évacuées à Valbrune.", "12 maisons évacuées."),
    ("fr", "12 maisons ont été évacuées à Valbrune.", "Une douzaine de maisons évacuées."),
    ("fr", "Deux douzaines de maisons ont été évacuées.", "24 maisons évacuées."),
    ("fr", "Trois douzaines de maisons ont été évacuées.", "36 maisons évacuées."),
    ("de", "Ein Dutzend Häuser wurden in Ostbrück geräumt.", "12 Häuser wurden geräumt."),
    ("de", "Zwölf Häuser wurden in Ostbrück geräumt.", "12 Häuser wurden geräumt."),
    ("de", "Zwei Dutzend Häuser wurden in Ostbrück geräumt.", "24 Häuser wurden geräumt."),
    ("es", "Una docena de casas fueron evacuadas en Valdoria.", "12 casas evacuadas."),
    ("es", "Doce casas fueron evacuadas en Valdoria.", "12 casas evacuadas."),
    ("es", "Dos docenas de casas fueron evacuadas en Valdoria.", "24 casas evacuadas."),
    ("it", "Una dozzina di case sono state evacuate a Borgonero.", "12 case evacuate."),
    ("it", "Dodici case sono state evacuate a Borgonero.", "12 case evacuate."),
    ("it", "Due dozzine di case sono state evacuate a Borgonero.", "24 case evacuate."),
    ("nl", "Een dozijn huizen werden in Oosterwolde ontruimd.", "12 huizen ontruimd."),
    ("nl", "Twaalf huizen werden in Oosterwolde ontruimd.", "12 huizen ontruimd."),
    ("nl", "Twee dozijn huizen werden in Oosterwolde ontruimd.", "24 huizen ontruimd."),
    ("en", "Two dozen homes were evacuated in Harwick.", "24 homes were evacuated."),
    ("en", "A dozen homes were evacuated in Harwick.", "Twelve homes were evacuated."),
]

NOT_GROUNDED = [
    # (language, source, draft): the draft's number is not the source's
    ("fr", "Une douzaine de maisons ont été évacuées à Valbrune.", "13 maisons évacuées."),
    ("fr", "Une douzaine de maisons ont été évacuées à Valbrune.", "24 maisons évacuées."),
    ("fr", "Deux maisons ont été évacuées à Valbrune.", "Deux douzaines de maisons évacuées."),
    ("fr", "Onze maisons ont été évacuées à Valbrune.", "Douze maisons évacuées."),
    ("fr", "Soixante-douze maisons ont été évacuées à Valbrune.", "12 maisons évacuées."),
    ("fr", "Douze mille personnes ont été évacuées à Valbrune.", "12 personnes évacuées."),
    ("de", "Zwei Häuser wurden in Ostbrück geräumt.", "Zwei Dutzend Häuser wurden geräumt."),
    ("de", "Ein Dutzend Häuser wurden in Ostbrück geräumt.", "Drei Dutzend Häuser geräumt."),
    ("es", "Dos casas fueron evacuadas en Valdoria.", "Dos docenas de casas evacuadas."),
    ("it", "Una dozzina di case sono state evacuate a Borgonero.", "Due dozzine evacuate."),
    ("nl", "Twee huizen werden in Oosterwolde ontruimd.", "Twee dozijn huizen ontruimd."),
    ("en", "Two homes were evacuated in Harwick.", "Two dozen homes were evacuated."),
]


@pytest.mark.parametrize("case", GROUNDED, ids=lambda c: f"{c[0]}: {c[2]}")
def test_a_dozen_grounds_twelve_and_twelve_a_dozen(case: tuple[str, str, str]) -> None:
    language, source, draft = case
    verdict = numbers_grounded(source, None, draft, language=language)
    assert verdict.passed, verdict.reason
    assert verdict.evidence, "the draft's number was read and compared"


@pytest.mark.parametrize("case", NOT_GROUNDED, ids=lambda c: f"{c[0]}: {c[2]}")
def test_another_number_of_dozens_is_not_grounded(case: tuple[str, str, str]) -> None:
    language, source, draft = case
    verdict = numbers_grounded(source, None, draft, language=language)
    assert not verdict.passed, verdict.reason


@pytest.mark.parametrize(
    "source",
    [
        "ZWÖLF HÄUSER WURDEN IN OSTBRÜCK GERÄUMT.",
        "UNE DOUZAINE DE MAISONS À VALBRUNE.",
        "DOS DOCENAS DE CASAS EN VALDORIA.",
        "TWAALF HUIZEN IN OOSTERWOLDE.",
    ],
)
def test_a_dozen_in_capitals_is_read(source: str) -> None:
    """The prefilter reads a lower-cased ASCII view of the text: capitals and "ö" pass."""
    draft = "24 maisons." if "DOCENAS" in source else "12 maisons."
    verdict = numbers_grounded(source, None, draft)
    assert verdict.passed, verdict.reason


def _every_number_of_dozens() -> list[tuple[str, str, int]]:
    """(how many, dozen word, value) for one to ten dozen in each language."""
    from guards.numbers import _DOZENS_OF

    out = []
    for word, (ones, more) in _DOZENS_OF.items():
        dozen = word.replace("s?", "s").replace("[ae]", "e")  # a plural spelling
        for n, count in [(1, ones.split()[0])] + list(enumerate(more.split(), start=2)):
            out.append((count, dozen if n > 1 else word.replace("s?", "").replace("[ae]", "a"), n))
    return out


@pytest.mark.parametrize(("count", "dozen", "n"), _every_number_of_dozens())
def test_every_number_of_dozens_grounds_its_value_and_only_it(
    count: str, dozen: str, n: int
) -> None:
    """Exhaustive over the table: "<count> <dozen>" in a source grounds 12 x count and
    neither neighbour; in a draft it is checked against the source's digits."""
    source = f"Selon le maire, {count} {dozen} de maisons ont été évacuées."
    assert numbers_grounded(source, None, f"{12 * n} maisons.").passed
    for other in (12 * n - 1, 12 * n + 1):
        assert not numbers_grounded(source, None, f"{other} maisons.").passed
    draft = f"{count.capitalize()} {dozen} de maisons."
    assert numbers_grounded(f"Le maire a parlé de {12 * n} maisons.", None, draft).passed
    assert not numbers_grounded(f"Le maire a parlé de {12 * n + 2} maisons.", None, draft).passed
