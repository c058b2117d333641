"""Every verdict of the five draft gates over a fixed set of invented pairs, as digests.

The gates' hot paths are rewritten for speed (issue 20) and must give exactly the
verdicts and evidence they gave before. `pairs()` builds, from a fixed seed, sources in
English, French and German full of numbers (grouped, scaled, with units and currencies),
names, dates and quotations, and drafts that copy, change or invent them;
`digests()` runs numbers_grounded, quotes_verbatim, speakers_match, names_grounded and
dates_grounded on each pair (with and without the item's language) and keeps a SHA-256
of each pair's five `Verdict.to_dict()`. `tests/test_gate_verdicts_golden.py` compares
them with `tests/golden/gate_verdicts.json`. When verdicts change on purpose, rewrite it
and read the pairs that changed:

    .venv/bin/python -m tests.gate_verdicts --write

Every place, person and figure is invented.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path

from guards.dates import dates_grounded
from guards.names import names_grounded
from guards.numbers import numbers_grounded
from guards.quotes import quotes_verbatim
from guards.speakers import speakers_match

GOLDEN = Path(__file__).parent / "golden" / "gate_verdicts.json"

PEOPLE = ["Ilse Dorran", "Tomas Reint", "Mira Tallis", "Judge Helen Marsh", "Ms Park", "Jan Olde"]
PLACES = ["Ostbrook", "Kelbrook Retail Park", "Vaulmont", "Kelbrunn", "the Millbeck quay"]
WORDS = {
    "en": "the harbour board said that ferry crossings fell while the council budget rose and "
    "the dredging of the canal lock was delayed by winter storms".split(),
    "fr": "le conseil du port a indiqué que les traversées du ferry ont baissé tandis que le "
    "budget de la ville augmentait et que le dragage du canal était retardé".split(),
    "de": "der Hafenrat teilte mit dass die Fährfahrten zurückgingen während der Haushalt "
    "der Stadt stieg und die Baggerarbeiten am Kanal verschoben wurden".split(),
}
SAID = {"en": "said", "fr": "a déclaré", "de": "sagte"}
DATES = {
    "en": ["on Monday", "on 9 January", "yesterday", "in March 2026", "last week", "by Oct.",
           "on 12/03/2026", "since Sept."],
    "fr": ["lundi", "le 9 janvier", "hier", "en mars 2026", "le 14 sept. 2026"],
    "de": ["am Montag", "am 9. Januar", "gestern", "im März 2026", "am 2. Mrz."],
}  # fmt: skip


def _number(rng: random.Random, lang: str) -> str:
    n = rng.randrange(1, 999_999)
    forms = [
        f"{n:,}" if lang == "en" else f"{n:,}".replace(",", "." if lang == "de" else "\u202f"),
        f"{rng.randrange(1, 99)}.{rng.randrange(1, 999)} million" if lang == "en"
        else f"{rng.randrange(1, 99)},{rng.randrange(1, 9)} Mio." if lang == "de"
        else f"{rng.randrange(1, 99)},{rng.randrange(1, 9)} millions d'euros",
        f"{rng.randrange(1, 60)}%",
        f"{rng.randrange(2, 40)} percentage points",
        str(rng.randrange(1990, 2030)),
        f"£{rng.randrange(10, 900)}m",
        f"€{rng.randrange(1, 90)}.{rng.randrange(1, 9)}bn",
        f"{rng.randrange(10, 99)}m",
        f"{rng.randrange(10, 99)} km",
        f"{rng.randrange(2, 90)}-year-old",
        f"every {rng.randrange(10, 60)} minutes",
        f"{rng.randrange(1, 12)}.{rng.choice(['00', '30', '45'])}am",
        f"{rng.randrange(2, 9)}\u00bd metres",
        "forty-two",
        "a dozen",
        "nineteen eighty-four",
        f"-{rng.randrange(10, 40)}.{rng.randrange(1, 9)}C",
    ]  # fmt: skip
    return rng.choice(forms)


def _sentence(rng: random.Random, lang: str) -> str:
    words = [rng.choice(WORDS[lang]) for _ in range(rng.randrange(8, 18))]
    for _ in range(rng.randrange(0, 3)):
        words.insert(rng.randrange(1, len(words)), _number(rng, lang))
    if rng.random() < 0.4:
        words.insert(rng.randrange(1, len(words)), rng.choice(PEOPLE + PLACES))
    if rng.random() < 0.3:
        words.insert(rng.randrange(1, len(words)), rng.choice(DATES[lang]))
    text = " ".join(words)
    text = text[0].upper() + text[1:]
    if rng.random() < 0.35:
        quote = " ".join(rng.choice(WORDS[lang]) for _ in range(rng.randrange(3, 9)))
        mark = rng.choice([("\u201c", "\u201d"), ('"', '"'), ("\u00ab ", " \u00bb")])
        return f"{text}. {rng.choice(PEOPLE)} {SAID[lang]}: {mark[0]}{quote.capitalize()}.{mark[1]}"
    return text + "."


def _draft(rng: random.Random, sentences: list[str], lang: str) -> str:
    picked = [rng.choice(sentences) for _ in range(3)]
    change = rng.randrange(6)
    if change == 1:  # an invented number
        picked[-1] = f"It also cited {_number(rng, lang)} tolls."
    elif change == 2:  # a quotation given to another speaker
        a, b = rng.sample(PEOPLE, 2)
        picked = [p.replace(a, b) for p in picked]
    elif change == 3:  # a date moved or invented
        picked[0] = f"{picked[0][:-1]} {rng.choice(DATES[lang])}."
    elif change == 4:  # a name invented
        picked[1] = picked[1].replace("the", "Mayor Ruth Calloway of", 1)
    return " ".join(picked)


def pairs(count: int = 240) -> list[tuple[str, str, str | None]]:
    """(source, draft, language) pairs from a fixed seed: three drafts per source."""
    rng = random.Random(20261203)
    out: list[tuple[str, str, str | None]] = []
    while len(out) < count:
        lang = rng.choice(["en", "en", "fr", "de"])
        sentences = [_sentence(rng, lang) for _ in range(rng.randrange(8, 30))]
        paragraphs = [" ".join(sentences[i : i + 4]) for i in range(0, len(sentences), 4)]
        source = "\n\n".join(paragraphs)
        for _ in range(3):
            declared = rng.choice([None, lang])
            out.append((source, _draft(rng, sentences, lang), declared))
    return out[:count]


def digests() -> list[str]:
    """A SHA-256 (its first 16 hex digits) of the five verdicts of each pair."""
    out = []
    for source, draft, language in pairs():
        verdicts = [
            numbers_grounded(source, None, draft, language=language),
            quotes_verbatim(source, None, draft),
            speakers_match(source, None, draft),
            names_grounded(source, None, draft),
            dates_grounded(source, None, draft, language=language),
        ]
        text = json.dumps([v.to_dict() for v in verdicts], sort_keys=True, ensure_ascii=False)
        out.append(hashlib.sha256(text.encode("utf-8")).hexdigest()[:16])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {GOLDEN}")
    args = parser.parse_args(argv)
    now = digests()
    if args.write:
        GOLDEN.write_text(json.dumps(now, indent=0) + "\n", encoding="utf-8")
        print(f"wrote {len(now)} digests to {GOLDEN}")
        return 0
    then = json.loads(GOLDEN.read_text(encoding="utf-8"))
    changed = [i for i, (a, b) in enumerate(zip(now, then, strict=True)) if a != b]
    print(f"{len(changed)} of {len(now)} pairs changed: {changed[:20]}")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
