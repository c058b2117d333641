"""How `make test` shares the test modules between its pytest-xdist workers (a helper
module, not a test file; tests/conftest.py `pytest_xdist_make_scheduler`).

A unit of work is a test module: it runs whole on one worker, in its own order (its
module fixtures are made once; no test depends on which neighbours ran in its
process). xdist keeps the units in a queue and hands a worker its next one when it
is nearly done with its last; `next_unit` chooses which.

The browser modules (`*_browser.py`: a real Streamlit server and Chromium) spend most
of their time waiting on a page, and together they take longer than the 10 minutes
the whole suite may (the idle clean-clone run of 2026-12-04 12:27 UTC: 774 s of the
suite's 1,680 s of test time, on two workers each busy about 840 s, while the two
cores were busy 800 s of CPU in all, about one core on average). So `make test` runs
three workers (Makefile): the first `browser_workers(n)` workers to ask (half,
rounded up: one of two, two of three) take the browser modules, the others the
rest, each the longest module of its kind left first (the longest-processing-time
rule: a long module started last would leave one worker alone at the end). A worker
with none of its kind left takes the other kind: a browser worker the longest of the
rest, another worker the shortest browser module (starting a review server and a
Chromium of its own costs about 10 s; tests/browser.py).

How long a module takes is read from tests/module_durations.json: the seconds of its
tests' setup, call and teardown in a `--durations=0` run, written by
`python -m tests.scheduling LOG` (the log of `make test` with
`PYTEST_ADDOPTS="--durations=0 -v"`, e.g. a clean-clone CI run). A module the file
does not name (new since) counts as `UNKNOWN_SECONDS`; a name it keeps for a module
since removed is never asked for. Nothing to keep by hand.
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

BROWSER_MODULE_SUFFIX = "_browser.py"
DURATIONS_FILE = Path(__file__).resolve().parent / "module_durations.json"
# About the median module of the 2026-12-04 run: a new module is not assumed long.
UNKNOWN_SECONDS = 3.0

# One line of pytest's `--durations` report: "12.34s call     tests/test_x.py::test_y".
_DURATION_LINE = re.compile(r"^(\d+(?:\.\d+)?)s (?:setup|call|teardown)\s+(\S+?)::")


def is_browser(scope: str) -> bool:
    return scope.endswith(BROWSER_MODULE_SUFFIX)


def browser_workers(workers: int) -> int:
    """How many of `workers` take the browser modules first: half, rounded up."""
    return (workers + 1) // 2


def durations_from_log(log: str) -> dict[str, float]:
    """Each module's seconds (setup + call + teardown of its tests) in the
    `--durations=0` report of a pytest log, longest first, to a tenth of a second."""
    seconds: dict[str, float] = defaultdict(float)
    for line in log.splitlines():
        match = _DURATION_LINE.match(line)
        if match:
            seconds[match[2]] += float(match[1])
    return {name: round(total, 1) for name, total in sorted(seconds.items(), key=lambda kv: -kv[1])}


def load_durations(path: Path = DURATIONS_FILE) -> dict[str, float]:
    """The recorded durations; none (every module unknown) when the file is missing."""
    if not path.is_file():
        return {}
    return {str(name): float(seconds) for name, seconds in json.loads(path.read_text()).items()}


def next_unit(queue: Sequence[str], *, browser_worker: bool, durations: Mapping[str, float]) -> str:
    """The module a worker takes next from `queue` (not empty), as the module
    docstring says."""

    def seconds(scope: str) -> float:
        return durations.get(scope, UNKNOWN_SECONDS)

    browser = [scope for scope in queue if is_browser(scope)]
    rest = [scope for scope in queue if not is_browser(scope)]
    mine = browser if browser_worker else rest
    if mine:
        return max(mine, key=seconds)
    if browser_worker:
        return max(rest, key=seconds)
    return min(browser, key=seconds)


def main(argv: Sequence[str], out: Path = DURATIONS_FILE) -> int:
    """`python -m tests.scheduling LOG`: rewrite tests/module_durations.json from LOG."""
    if len(argv) != 1:
        print("usage: python -m tests.scheduling LOG (a `--durations=0` pytest log)")
        return 2
    try:
        durations = durations_from_log(Path(argv[0]).read_text(errors="replace"))
    except OSError as error:
        print(f"{argv[0]}: cannot read it ({error.strerror}); nothing written")
        return 2
    if not durations:
        print(f"{argv[0]}: no `--durations=0` report in it; nothing written")
        return 1
    out.write_text(json.dumps(durations, indent=0) + "\n")
    print(f"{out.name}: {len(durations)} modules, {sum(durations.values()):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
