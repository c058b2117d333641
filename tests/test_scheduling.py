"""How `make test` shares the modules between its two pytest-xdist workers
(tests/scheduling.py, used by tests/conftest.py `pytest_xdist_make_scheduler`)."""

from __future__ import annotations

from pathlib import Path

from tests.scheduling import SLOW_MODULES, is_browser, next_unit

HERE = Path(__file__).resolve().parent

# In xdist's loadscope order (most tests first), as the scheduler sees the queue.
QUEUE = [
    "tests/test_cli_ops.py",
    "tests/test_review_browser.py",
    "tests/test_gates.py",
    "tests/test_desk_browser.py",
    "tests/test_corpora.py",
    "tests/test_review_viewer_keys_browser.py",
]


def _drain(queue: list[str], workers: int) -> list[list[str]]:
    """Hand out the whole queue, one unit at a time to each worker in turn (the
    first worker asked first is the one that takes the browser modules)."""
    taken: list[list[str]] = [[] for _ in range(workers)]
    left = list(queue)
    turn = 0
    while left:
        unit = next_unit(left, browser_worker=turn == 0)
        left.remove(unit)
        taken[turn].append(unit)
        turn = (turn + 1) % workers
    return taken


def test_one_worker_takes_the_browser_modules_the_other_the_rest_slowest_first() -> None:
    first, second = _drain(QUEUE, 2)
    # The browser worker: the browser modules, most tests first, and nothing else
    # while any is left; the other: the slow module first, then the rest in order.
    assert first == [
        "tests/test_review_browser.py",
        "tests/test_desk_browser.py",
        "tests/test_review_viewer_keys_browser.py",
    ]
    assert second == ["tests/test_corpora.py", "tests/test_cli_ops.py", "tests/test_gates.py"]


def test_a_worker_out_of_its_kind_takes_the_other_kind() -> None:
    # The other worker, its modules done: the browser module with the fewest tests
    # (the browser worker goes on with the big ones from the other end).
    left = ["tests/test_review_browser.py", "tests/test_desk_browser.py"]
    assert next_unit(left, browser_worker=False) == "tests/test_desk_browser.py"
    # The browser worker, its modules done: the slow module first.
    left = ["tests/test_gates.py", "tests/test_corpora.py"]
    assert next_unit(left, browser_worker=True) == "tests/test_corpora.py"


def test_one_worker_runs_everything_browser_modules_first() -> None:
    (only,) = _drain(QUEUE, 1)
    assert sorted(only) == sorted(QUEUE)
    assert [is_browser(unit) for unit in only] == [True] * 3 + [False] * 3


def test_every_slow_module_named_exists() -> None:
    missing = [name for name in SLOW_MODULES if not (HERE.parent / name).is_file()]
    assert missing == []
    assert not any(is_browser(name) for name in SLOW_MODULES)
