"""`python -m bench NAME` runs that benchmark only (with its own arguments)."""

from __future__ import annotations

import re
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


def test_every_benchmark_reads_its_arguments_with_argparse() -> None:
    """`python -m bench gates --help` once ran the benchmark's int(sys.argv[1]) and ended
    in a traceback; a script that reads arguments does so with argparse (usage, -h, one
    line for a bad value), which this checks from the source, without running them."""
    scripts = sorted((ROOT / "bench").glob("bench_*.py"))
    assert len(scripts) >= 10
    by_hand = [
        p.name for p in scripts if re.search(r"sys\.argv\[\d+\]", p.read_text(encoding="utf-8"))
    ]
    assert by_hand == []
    assert all("ArgumentParser(" in p.read_text(encoding="utf-8") for p in scripts)
