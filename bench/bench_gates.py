"""Micro benchmark of the deterministic draft gates.

    .venv/bin/python bench/bench_gates.py [pairs]

Builds invented articles full of numbers, names, dates and quotations and
3-sentence drafts taken from them, then prints, on one core and counting this
process's CPU time:

* the full deterministic stack (numbers, quotes, speakers, names, dates) per
  2,000-word article, beside a straight port of the naive substring gate (strip
  digit separators, look for each digit run of the draft in the source) measured
  in the same run; the target (issue 20) is at most 1 ms;
* `copydesk check --jsonl` (its `check_jsonl`, in process) in pairs per second
  on ~190-word articles, beside the naive gate; the target is at least 3,000; the
  same in wall-clock time with one process and with `--workers`' default (one per
  CPU), as a user runs it; and the lines carrying their item's language ("en":
  nothing detected);
* names_grounded alone on a 2,000-word source, and its precision and recall on
  the annotated material in tests/names_material.py;
* the per-gate lines (pairs per second on ~190-word sources).
Every figure is CPU time of this process (`time.process_time`), not wall time, so a
loaded machine does not add the time other processes ran; it still slows each
instruction (shared caches, a busy sibling core), so the load average is printed at the
start and the end of the run, and figures compare as ratios to the naive gate measured in
the same run. For a comparison of two versions of the code that the load does not move,
count instructions instead (docs/gates.md, "Speed of the gates").
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import sys
import time
from pathlib import Path

from copydesk.cli.check import Gates, check_jsonl, default_workers
from guards.dates import dates_grounded
from guards.names import names_grounded
from guards.numbers import numbers_grounded
from guards.quotes import quotes_verbatim
from guards.registry import DEFAULT_MODES
from guards.speakers import speakers_match

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


DATES = ["on Monday", "on 9 January", "yesterday", "in March 2026", "last week", "on Friday"]


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randrange(12, 24))]
    if rng.random() < 0.3:
        words.insert(rng.randrange(1, len(words)), rng.choice(NAMES))
    if rng.random() < 0.15:
        words.insert(rng.randrange(1, len(words)), rng.choice(DATES))
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


def pair(rng: random.Random, invented: bool, words: int = 600) -> tuple[str, str]:
    """(source, draft): two source sentences and one with a quotation; when
    `invented`, the last sentence carries a number the source likely lacks
    (the gate then reads the whole source)."""
    sentences = article(rng, words)
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


_SEPARATOR = re.compile(r"(?<=[0-9])[,.'\u00a0\u2009\u202f ](?=[0-9]{3})")
_RUN = re.compile(r"[0-9]{2,}")


def naive_gate(source: str, url: str | None, draft: str) -> bool:
    """The simplest numbers gate a user would write: strip digit separators and
    look for every run of two or more digits of the draft in the source."""
    haystack = _SEPARATOR.sub("", source)
    return all(run in haystack for run in _RUN.findall(_SEPARATOR.sub("", draft)))


STACK = (numbers_grounded, quotes_verbatim, speakers_match, names_grounded, dates_grounded)


def ms_per_pair(pairs: list[tuple[str, str]], gates) -> float:
    start = time.process_time()
    for source, draft in pairs:
        for gate in gates:
            gate(source, None, draft)
    return (time.process_time() - start) / len(pairs) * 1000


def jsonl_rate(pairs: list[tuple[str, str]], language: str | None = None) -> float:
    """Pairs per second through `check_jsonl`: parse, all gates, JSON out; with
    `language`, each line carries the item's language (nothing is detected)."""
    extra = {"language": language} if language else {}
    lines = [json.dumps({"id": i, "source": s, "summary": d, "url": "https://x.example/a"}
                        | extra)
             for i, (s, d) in enumerate(pairs)]  # fmt: skip
    gates = Gates(dict(DEFAULT_MODES), 150)
    start = time.process_time()
    check_jsonl(lines, io.StringIO(), gates)
    return len(pairs) / (time.process_time() - start)


def jsonl_wall_rate(pairs: list[tuple[str, str]], workers: int) -> tuple[float, float]:
    """Pairs per second through `check_jsonl` with `workers` processes, each source
    new to this process (no cache shared with an earlier run): in wall time (the pool's
    start included, as a user pays it; on a loaded machine the other processes' share
    of the cores is in it too), and as the CPU time says an idle machine would run it:
    pairs over the larger of this process's CPU time and the workers' per worker."""
    lines = [json.dumps({"id": i, "source": s + f" {workers}", "summary": d,
                         "url": "https://x.example/a"})
             for i, (s, d) in enumerate(pairs)]  # fmt: skip
    gates = Gates(dict(DEFAULT_MODES), 150)
    before, start = os.times(), time.perf_counter()
    check_jsonl(lines, io.StringIO(), gates, workers)
    wall, after = time.perf_counter() - start, os.times()
    own = after.user + after.system - before.user - before.system
    children = (
        after.children_user + after.children_system
        - before.children_user - before.children_system
    )  # fmt: skip
    busiest = own if workers == 1 else max(own, children / workers)
    return len(pairs) / wall, len(pairs) / busiest


def names_scores() -> tuple[float, float, float, float]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.names_material import ARTICLES, DRAFTS, HELD_OUT, HELD_OUT_ARTICLE

    def scores(items) -> tuple[float, float]:
        tp = fp = fn = 0
        for source, draft, invented in items:
            v = names_grounded(source, None, draft)
            flagged = [e["name"] for e in v.evidence if not e["found"]]
            tp += sum(any(x in n for x in invented) for n in flagged)
            fp += sum(not any(x in n for x in invented) for n in flagged)
            fn += sum(not any(x in n for n in flagged) for x in invented)
        return tp / (tp + fp), tp / (tp + fn)

    tuned = scores([(ARTICLES[a], d, inv) for a, d, inv in DRAFTS])
    held = scores([(HELD_OUT_ARTICLE, d, inv) for d, inv in HELD_OUT])
    return (*tuned, *held)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", nargs="?", type=int, default=3000, help="~190-word pairs")
    n = parser.parse_args().pairs
    rng = random.Random(20261130)
    big = n // 6
    long_faithful = [pair(rng, invented=False, words=2000) for _ in range(big)]
    long_invented = [pair(rng, invented=True, words=2000) for _ in range(big)]
    words = sum(len(s.split()) for s, _ in long_faithful) / big
    print(f"load average {_load()}")
    print(f"{big} pairs of {words:.0f}-word sources, 3-sentence drafts; CPU time, one core")
    for label, pairs in (("faithful", long_faithful), ("invented number", long_invented)):
        stack, naive = ms_per_pair(pairs, STACK), ms_per_pair(pairs, (naive_gate,))
        print(
            f"  {label:16} full stack {stack:6.3f} ms/article   naive substring gate "
            f"{naive:6.3f} ms   ratio {stack / naive:5.1f}x"
        )
    names_ms = ms_per_pair(long_faithful, (names_grounded,))
    print(f"  names_grounded alone {names_ms:.3f} ms/article (2,000 words)")
    p1, r1, p2, r2 = names_scores()
    print(f"  names_grounded precision {p1:.2f} recall {r1:.2f} (material); "
          f"held out: precision {p2:.2f} recall {r2:.2f}")  # fmt: skip
    faithful = [pair(rng, invented=False, words=190) for _ in range(n)]
    invented = [pair(rng, invented=True, words=190) for _ in range(n)]
    words = sum(len(s.split()) for s, _ in faithful) / n
    mixed = faithful[: n // 2] + invented[: n // 2]
    rate = jsonl_rate(mixed)
    naive = 1000 / ms_per_pair(mixed, (naive_gate,))
    print(f"{n} pairs of {words:.0f}-word sources (half with an invented number)")
    print(f"  check --jsonl (all gates, JSON in and out) {rate:8.0f} pairs/s   naive gate "
          f"{naive:8.0f} pairs/s   ratio {naive / rate:5.1f}x")  # fmt: skip
    workers = default_workers()
    (one, one_cpu), (many, many_cpu) = jsonl_wall_rate(mixed, 1), jsonl_wall_rate(mixed, workers)
    print(f"  wall clock: one process {one:6.0f} pairs/s, --workers {workers} (the default) "
          f"{many:6.0f} pairs/s")  # fmt: skip
    print(f"  by CPU time (an idle machine): one process {one_cpu:6.0f} pairs/s, "
          f"--workers {workers} {many_cpu:6.0f} pairs/s")  # fmt: skip
    declared = jsonl_rate(mixed, "en")
    print(f"  the same, each line with its language  {declared:8.0f} pairs/s   "
          f"ratio {naive / declared:5.1f}x")  # fmt: skip
    print(f"  faithful, all 5 draft gates:    {1000 / ms_per_pair(faithful, STACK):8.0f} pairs/s")
    print(f"  invented, all 5 draft gates:    {1000 / ms_per_pair(invented, STACK):8.0f} pairs/s")
    print(f"  invented number, numbers only:  {run(invented, STACK[:1]):8.0f} pairs/s")
    print(f"  faithful drafts, quotes only:   {run(faithful, STACK[1:2]):8.0f} pairs/s")
    warm = faithful[:50] * (n // 50)
    print(f"  same 50 sources again and again: {run(warm, STACK):7.0f} pairs/s")
    print(f"load average {_load()}")


def _load() -> str:
    """The 1, 5 and 15-minute load averages, to report beside the figures."""
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
