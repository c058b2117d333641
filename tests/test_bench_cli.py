"""`python -m bench NAME` runs that benchmark only (with its own arguments)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_named_benchmark_runs_alone_with_its_arguments() -> None:
    done = bench("scale", "--help")
    assert done.returncode == 0, done.stderr
    assert "usage: bench_scale.py" in done.stdout
    assert "== bench_" not in done.stdout  # no other benchmark ran
    assert bench("bench_scale.py", "--help").stdout == done.stdout


def test_an_unknown_benchmark_is_a_usage_error() -> None:
    done = bench("nosuch")
    assert done.returncode == 2
    first, known = done.stderr.strip().split("; known: ")
    assert first == "no benchmark 'nosuch'"
    names = known.split(", ")
    assert names == sorted(names) and {"checks", "gates", "scale"} <= set(names)
    assert done.stdout == ""
