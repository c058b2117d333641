"""How long the command line takes to answer `--help` (issue 22: under 1 s), and what
it imports on the way.

    python bench/bench_cli.py [--repeat N] [--top N]

Wall time of the console script, median of N runs, for `copydesk --help`,
`copydesk run --help` and `copydesk --version`, beside the simplest alternative: the
same interpreter starting and doing nothing (`python -c pass`), in the same run.
Then `python -X importtime` on `copydesk --help`
(https://docs.python.org/3/using/cmdline.html#cmdoption-X): the total import time
and the slowest modules by cumulative time, to show what a lazy import would save.
Note the machine's load (`uptime`) beside the figures: they are wall times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = str(Path(sys.executable).parent / "copydesk")
CASES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "copydesk --help": [SCRIPT, "--help"],
    "copydesk run --help": [SCRIPT, "run", "--help"],
    "copydesk --version": [SCRIPT, "--version"],
}


def wall(argv: list[str], repeat: int) -> float:
    times = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("COPYDESK_")}
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, env=env, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


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
    for label, case in CASES.items():
        seconds = wall(case, args.repeat)
        base = base or seconds
        print(f"{label:24} {seconds * 1000:7.0f} ms  ({seconds / base:4.1f}x python -c pass)")
    rows = import_times([SCRIPT, "--help"], 2)
    total = sum(us for us, name in rows if not name.startswith(" "))
    print(f"\nimports for copydesk --help: {total / 1000:.0f} ms; slowest, 3 levels deep:")
    for us, name in rows[: args.top]:
        print(f"  {us / 1000:7.1f} ms  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
