"""`make bench`: run every bench/bench_*.py script in turn, each in its own process.

    python -m bench                          every benchmark, small sizes
    python -m bench scale                    only bench_scale.py
    python -m bench scale workers --articles 500   ...with its own arguments

Benchmarks measure speed and memory; tests never do. Each script prints its own
figures, as ratios measured within one run where a comparison makes sense, so a
slower or busier machine does not change the conclusion.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def scripts() -> dict[str, Path]:
    """Benchmarks by short name: bench_scale.py is "scale"."""
    return {p.stem.removeprefix("bench_"): p for p in sorted(HERE.glob("bench_*.py"))}


def main(argv: list[str]) -> int:
    known = scripts()
    if argv and argv[0] not in ("-h", "--help"):
        name = argv[0].removesuffix(".py").removeprefix("bench_")
        if name not in known:
            print(f"no benchmark {argv[0]!r}; known: {', '.join(known)}", file=sys.stderr)
            return 2
        return subprocess.call([sys.executable, str(known[name]), *argv[1:]], cwd=HERE.parent)
    if argv:
        print(__doc__)
        return 0
    failures = 0
    for name, script in known.items():
        print(f"== bench_{name}", flush=True)
        failures += subprocess.call([sys.executable, str(script)], cwd=HERE.parent) != 0
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
