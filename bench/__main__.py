"""`make bench`: run every bench/bench_*.py script in turn, each in its own process.

Benchmarks measure speed and memory; tests never do. Each script prints its own
figures, as ratios measured within one run where a comparison makes sense, so a
slower or busier machine does not change the conclusion.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    here = Path(__file__).parent
    failures = 0
    for script in sorted(here.glob("bench_*.py")):
        print(f"== {script.stem}", flush=True)
        failures += subprocess.call([sys.executable, str(script)], cwd=here.parent) != 0
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
