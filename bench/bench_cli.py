"""How long the command line takes to answer `--help` (issue 22: under 1 s) and to
check one pair (`copydesk check`, issue 20: under 0.5 s), and what it imports on the way.

    python bench/bench_cli.py [--repeat N] [--top N]

Wall and CPU time (user + system, from the kernel's accounting of the child:
`resource.getrusage(RUSAGE_CHILDREN)`) of the console script, median of N runs, for
`copydesk --help`, `copydesk run --help`, `copydesk --version` and a gates-only
`copydesk check` of one invented pair, beside the simplest alternative: the same
interpreter starting and doing nothing (`python -c pass`), in the same run. On a
loaded machine the CPU time is the steadier figure: wall time waits for a core.
Then `python -X importtime` on `copydesk --help`
(https://docs.python.org/3/using/cmdline.html#cmdoption-X): the total import time
and the slowest modules by cumulative time, to show what a lazy import would save.
Note the machine's load (`uptime`) beside the figures: they are wall times.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = str(Path(sys.executable).parent / "copydesk")
CASES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "copydesk --help": [SCRIPT, "--help"],
    "copydesk run --help": [SCRIPT, "run", "--help"],
    "copydesk --version": [SCRIPT, "--version"],
}


# An invented pair for `check` (Tillbury and its library do not exist).
SOURCE = (
    "Tillbury's library will open on Sundays from 4 May, the town council said on "
    "Friday. The trial will last 12 weeks and cost 6,400 pounds, paid from the arts fund."
)
DRAFT = "Tillbury library to open on Sundays\n\nA 12-week trial starts on 4 May."


def check_case(folder: Path) -> list[str]:
    """`copydesk check` of the pair above, with a gates-only config (no database)."""
    (folder / "source.txt").write_text(SOURCE, encoding="utf-8")
    (folder / "draft.txt").write_text(DRAFT, encoding="utf-8")
    (folder / "config.toml").write_text("[gates]\nmin_source_words = 10\n", encoding="utf-8")
    return [SCRIPT, "--config", str(folder / "config.toml"), "check"] + [
        str(folder / "source.txt"),
        str(folder / "draft.txt"),
        "--url",
        "https://news.example.org/tillbury-library",
    ]


def timed(argv: list[str], repeat: int) -> tuple[float, float]:
    """Median wall and median CPU seconds of `argv` over `repeat` runs."""
    walls, cpus = [], []
    env = {k: v for k, v in os.environ.items() if not k.startswith("COPYDESK_")}
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, env=env, check=False)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def import_times(argv: list[str], depth: int) -> list[tuple[int, str]]:
    """(cumulative microseconds, module) of every import nested at most `depth` deep,
    slowest first (depth 0: what the script itself imports)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], capture_output=True, text=True, check=False
    )
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _self, cumulative, name = line[12:].split("|")
        level = (len(name) - len(name.lstrip(" ")) - 1) // 2  # two spaces a level
        if level <= depth:
            rows.append((int(cumulative), "  " * level + name.strip()))
    return sorted(rows, reverse=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args(argv)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    base = None
    with tempfile.TemporaryDirectory() as folder:
        cases = CASES | {"copydesk check (1 pair)": check_case(Path(folder))}
        for label, case in cases.items():
            seconds, cpu = timed(case, args.repeat)
            base = base or (seconds, cpu)
            print(
                f"{label:24} wall {seconds * 1000:6.0f} ms ({seconds / base[0]:4.1f}x), "
                f"cpu {cpu * 1000:6.0f} ms ({cpu / base[1]:4.1f}x python -c pass)"
            )
    rows = import_times([SCRIPT, "--help"], 2)
    total = sum(us for us, name in rows if not name.startswith(" "))
    print(f"\nimports for copydesk --help: {total / 1000:.0f} ms; slowest, 3 levels deep:")
    for us, name in rows[: args.top]:
        print(f"  {us / 1000:7.1f} ms  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
