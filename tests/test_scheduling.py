"""How `make test` shares the modules between its pytest-xdist workers
(tests/scheduling.py, used by tests/conftest.py `pytest_xdist_make_scheduler`)."""

from __future__ import annotations

from pathlib import Path

from tests.scheduling import (
    UNKNOWN_SECONDS,
    browser_workers,
    durations_from_log,
    is_browser,
    load_durations,
    main,
    next_unit,
)

# As a durations file gives them (seconds).
DURATIONS = {
    "tests/test_review_browser.py": 160.0,
    "tests/test_desk_browser.py": 30.0,
    "tests/test_review_viewer_keys_browser.py": 60.0,
    "tests/test_corpora.py": 45.0,
    "tests/test_cli_ops.py": 20.0,
    "tests/test_gates.py": 5.0,
}
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
    first workers asked are the ones that take the browser modules)."""
    taken: list[list[str]] = [[] for _ in range(workers)]
    left = list(queue)
    turn = 0
    while left:
        browser_worker = turn < browser_workers(workers)
        unit = next_unit(left, browser_worker=browser_worker, durations=DURATIONS)
        left.remove(unit)
        taken[turn].append(unit)
        turn = (turn + 1) % workers
    return taken


def test_half_the_workers_rounded_up_take_the_browser_modules() -> None:
    assert [browser_workers(n) for n in (1, 2, 3, 4)] == [1, 1, 2, 2]


def test_two_workers_one_takes_the_browser_modules_the_other_the_rest_longest_first() -> None:
    first, second = _drain(QUEUE, 2)
    assert first == [
        "tests/test_review_browser.py",
        "tests/test_review_viewer_keys_browser.py",
        "tests/test_desk_browser.py",
    ]
    assert second == ["tests/test_corpora.py", "tests/test_cli_ops.py", "tests/test_gates.py"]


def test_three_workers_two_share_the_browser_modules_longest_first() -> None:
    first, second, third = _drain(QUEUE, 3)
    assert first == ["tests/test_review_browser.py", "tests/test_desk_browser.py"]
    assert second == ["tests/test_review_viewer_keys_browser.py", "tests/test_cli_ops.py"]
    assert third == ["tests/test_corpora.py", "tests/test_gates.py"]


def test_a_worker_out_of_its_kind_takes_the_other_kind() -> None:
    # Another worker, its modules done: the shortest browser module (the browser
    # workers go on with the long ones).
    left = ["tests/test_review_browser.py", "tests/test_desk_browser.py"]
    assert next_unit(left, browser_worker=False, durations=DURATIONS) == left[1]
    # A browser worker, its modules done: the longest of the rest.
    left = ["tests/test_gates.py", "tests/test_corpora.py"]
    assert next_unit(left, browser_worker=True, durations=DURATIONS) == left[1]


def test_a_module_the_file_does_not_name_counts_as_a_short_one() -> None:
    left = ["tests/test_new.py", "tests/test_gates.py", "tests/test_cli_ops.py"]
    durations = {"tests/test_gates.py": UNKNOWN_SECONDS - 1, "tests/test_cli_ops.py": 1.0}
    assert next_unit(left, browser_worker=False, durations=durations) == "tests/test_new.py"
    assert next_unit(left, browser_worker=False, durations={}) == "tests/test_new.py"


def test_one_worker_runs_everything_browser_modules_first() -> None:
    (only,) = _drain(QUEUE, 1)
    assert sorted(only) == sorted(QUEUE)
    assert [is_browser(unit) for unit in only] == [True] * 3 + [False] * 3


LOG = """\
[gw0] [ 99%] PASSED tests/test_a_browser.py::test_x[sqlite]
============================== slowest durations ===============================
12.50s call     tests/test_a_browser.py::test_x[sqlite]
3.00s setup    tests/test_b.py::test_y[a b::c]
0.25s teardown tests/test_b.py::test_y[a b::c]
1.00s call     tests/test_a_browser.py::test_x[postgres]
=========== 3 passed in 20.00s ============
"""


def test_the_durations_file_is_written_from_a_durations_report(tmp_path: Path) -> None:
    assert durations_from_log(LOG) == {"tests/test_a_browser.py": 13.5, "tests/test_b.py": 3.2}
    log, out = tmp_path / "ci.log", tmp_path / "durations.json"
    log.write_text(LOG)
    assert main([str(log)], out) == 0
    assert load_durations(out) == {"tests/test_a_browser.py": 13.5, "tests/test_b.py": 3.2}


def test_a_log_without_a_report_or_no_log_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "durations.json"
    (tmp_path / "ci.log").write_text("=== 3 passed in 20.00s ===\n")
    assert main([str(tmp_path / "ci.log")], out) == 1
    assert main([str(tmp_path / "missing.log")], out) == 2
    assert not out.exists()
    assert load_durations(out) == {}


def test_the_recorded_durations_name_browser_modules_and_the_rest() -> None:
    durations = load_durations()
    assert all(seconds >= 0 for seconds in durations.values())
    assert any(is_browser(name) for name in durations)
    assert any(not is_browser(name) for name in durations)
