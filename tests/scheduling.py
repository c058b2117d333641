"""How `make test` shares the test modules between its two pytest-xdist workers
(a helper module, not a test file; tests/conftest.py `pytest_xdist_make_scheduler`).

A unit of work is a test module: it runs whole on one worker, in its own order (its
module fixtures are made once; no test depends on which neighbours ran in its
process). xdist keeps the units in a queue, most tests first, and hands a worker its
next one when it is nearly done with its last.

Before, the browser modules were one unit on one worker and xdist's order sent the
modules with the fewest tests last, among them the longest (tests/test_corpora.py):
an idle clean-clone CI run took 874 s for about 830 s of CPU, so on average one of
the two cores had nothing to do. The browser modules spend much of their time
waiting on a page (a round trip to the review server, a page drawn by Chromium).
So one worker (the first to ask) takes the browser modules, most tests first,
while the other takes the rest, the modules in SLOW_MODULES first (a long module
started last would leave one worker alone at the end); a worker with none of its kind
left takes the other kind: the other worker takes the browser module with the fewest
tests, so both end together. Each worker that runs a browser module starts a review
server and a Chromium of its own (tests/browser.py).
"""

from __future__ import annotations

from collections.abc import Sequence

BROWSER_MODULE_SUFFIX = "_browser.py"

# The modules whose tests among the 60 slowest (`--durations=60`) of the clean-clone
# CI run of 2026-12-04 04:17 UTC (/tmp/ci-s7idle, load 7-18) add up to 15 s or more,
# longest total first: started before the rest. Refreshed by hand from such a run
# (test_scheduling checks only that each one exists and is not a browser module).
SLOW_MODULES = (
    "tests/test_corpora.py",  # 149 s (two tests)
    "tests/test_demo_anchor.py",  # 127 s
    "tests/test_runs_at_scale.py",  # 110 s
    "tests/test_publish_crash.py",  # 74 s
    "tests/test_calls_in_flight.py",  # 64 s
    "tests/test_desk_cli.py",  # 32 s
    "tests/test_desk_audit.py",  # 27 s (a 12 s setup)
    "tests/test_desk_stats.py",  # 22 s
    "tests/test_open_store.py",  # 21 s
    "tests/test_bench_cli.py",  # 20 s
    "tests/test_feed_caps.py",  # 16 s
    "tests/test_cli_operator_edges.py",  # 15 s
    "tests/test_model_outage.py",  # 15 s
)


def is_browser(scope: str) -> bool:
    return scope.endswith(BROWSER_MODULE_SUFFIX)


def _rest_first(queue: Sequence[str]) -> str:
    """The next module that is not a browser module: a slow one, else the first."""
    rest = [scope for scope in queue if not is_browser(scope)]
    slow = [scope for scope in SLOW_MODULES if scope in rest]
    return slow[0] if slow else rest[0]


def next_unit(queue: Sequence[str], *, browser_worker: bool) -> str:
    """The module a worker takes next from `queue` (xdist's order, not empty)."""
    browser = [scope for scope in queue if is_browser(scope)]
    if browser_worker:
        return browser[0] if browser else _rest_first(queue)
    if len(browser) < len(queue):
        return _rest_first(queue)
    return browser[-1]
