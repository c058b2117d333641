"""Micro benchmark of the two deterministic draft gates.

    .venv/bin/python bench/bench_gates.py [pairs]

Builds invented ~600-word articles full of numbers and quotations and
3-sentence drafts taken from them, then prints (source, draft) pairs checked
per second on one core, counting this process's CPU time. Every pair has its
own source (the `copydesk check --jsonl` case); the last line re-checks
drafts against sources already seen (cached normalisation).
"""

from __future__ import annotations

import random
import sys
import time

from guards.numbers import numbers_grounded
from guards.quotes import quotes_verbatim

WORDS = (
    "the harbour board of Ostbrook said on Monday that containers passed through "
    "terminal council crane ferry tide pier dredging quay barge tug warden levy toll "
    "berth canal lock keeper winter summer fishermen boatyard mayor deputy budget rose fell"
).split()
NAMES = ["Lena Varga", "Tomas Reint", "Mira Tallis", "Jan Olde", "Marie Coste"]


def number(rng: random.Random) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        return f"{rng.randrange(1, 999_999):,}"
    if kind == 1:
        return f"{rng.randrange(1, 99)}.{rng.randrange(1, 9)} million"
    if kind == 2:
        return f"{rng.randrange(1, 60)}%"
    if kind == 3:
        return str(rng.randrange(1990, 2030))
    if kind == 4:
        return f"£{rng.randrange(10, 900)},000"
    return f"{rng.randrange(2, 90)}-year-old"


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randrange(12, 24))]
    for _ in range(rng.randrange(0, 3)):
        words.insert(rng.randrange(1, len(words)), number(rng))
    if rng.random() < 0.3:
        quote = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(3, 9)))
        words.append(f"{rng.choice(NAMES)} said: \u201c{quote.capitalize()}.\u201d")
        return " ".join(words).capitalize()
    return " ".join(words).capitalize() + "."


def article(rng: random.Random, target_words: int = 600) -> list[str]:
    sentences: list[str] = []
    while sum(len(s.split()) for s in sentences) < target_words:
        sentences.append(sentence(rng))
    return sentences


def pair(rng: random.Random, invented: bool) -> tuple[str, str]:
    """(source, draft): two source sentences and one with a quotation; when
    `invented`, the last sentence carries a number the source likely lacks
    (the gate then reads the whole source)."""
    sentences = article(rng)
    quoted = [s for s in sentences if "\u201c" in s] or sentences
    draft = [rng.choice(sentences[:8]), rng.choice(sentences), rng.choice(quoted)]
    if invented:
        draft[-1] = f"It also cited {number(rng)} tolls."
    return " ".join(sentences), " ".join(draft)


def run(pairs: list[tuple[str, str]], gates) -> float:
    """Pairs per second of this process's CPU time (the machine may be shared)."""
    start = time.process_time()
    for source, draft in pairs:
        for gate in gates:
            gate(source, None, draft)
    return len(pairs) / (time.process_time() - start)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    rng = random.Random(20261130)
    faithful = [pair(rng, invented=False) for _ in range(n)]
    invented = [pair(rng, invented=True) for _ in range(n)]
    words = sum(len(s.split()) for s, _ in faithful) / n
    print(f"{n} pairs, sources of {words:.0f} words on average, 3-sentence drafts")
    both = (numbers_grounded, quotes_verbatim)
    print(f"faithful drafts, both gates:    {run(faithful, both):8.0f} pairs/s")
    print(f"invented number, both gates:    {run(invented, both):8.0f} pairs/s")
    print(f"invented number, numbers only:  {run(invented, both[:1]):8.0f} pairs/s")
    print(f"faithful drafts, quotes only:   {run(faithful, both[1:]):8.0f} pairs/s")
    warm = faithful[:50] * (n // 50)
    print(f"same 50 sources again and again: {run(warm, both):7.0f} pairs/s")


if __name__ == "__main__":
    main()
