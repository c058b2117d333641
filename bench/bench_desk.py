"""The keyboard walk's speed: how long from pressing A to the next draft on screen.

    python -m bench desk                 15 approvals, SQLite, dwell 0
    python -m bench desk --decisions 30

Starts `copydesk review` over a fresh SQLite database of drafts made by the
real pipeline (tests/review_seed.py), signs in in headless Chromium at
1280x720, and for each decision waits until the draft on screen has been in
view for the dwell time (the page says so: `body[data-cd-seen]`; with the
default dwell of 0 there is nothing to wait for, so the same script measures
a tree from before that signal existed), presses A,
and measures the time until the next draft's marker is the only one on the
page (the whole run drawn). Prints every time, the median, and the machine's
load average, which decides most of the figure on a shared machine. Needs
/usr/bin/chromium. Not a test: tests never time anything.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import chromium, serve, signed_in_page  # noqa: E402
from tests.review_seed import seed_copies, seed_editor, seed_queue  # noqa: E402

# The draft on screen: "id_version" from the page's single marker, or "" mid-run.
ON_SCREEN = """() => {
  const marks = document.querySelectorAll("span.cd-draft");
  if (marks.length !== 1) return "";
  const m = marks[0].className.match(/cd-draft-([0-9]+)-([0-9]+)/);
  return m ? m[1] + "_" + m[2] : "";
}"""


def _seed(count: int):  # type: ignore[no-untyped-def]
    def seed(engine):  # type: ignore[no-untyped-def]
        ids = seed_queue(engine, ("bridge",))
        for n, item_id in enumerate(seed_copies(engine, "school", count)):
            ids[f"copy{n}"] = item_id
        seed_editor(engine, "alice")
        return ids

    return seed


def walk(decisions: int, dwell: float) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        url = f"sqlite:///{tmp / 'bench.db'}"
        with (
            serve(tmp, url, _seed(decisions + 1), dwell_seconds=dwell) as server,
            chromium() as browser,
        ):
            page = signed_in_page(browser, server, width=1280, height=720)
            for _ in range(decisions):
                page.wait_for_function(f"() => ({ON_SCREEN})() !== ''")
                draft = page.evaluate(ON_SCREEN)
                if dwell > 0:
                    page.wait_for_function(
                        "d => document.body.dataset.cdSeen === d", arg=draft, polling="raf"
                    )
                page.locator(".cd-headline").first.click()
                started = time.perf_counter()
                page.keyboard.press("a")
                page.wait_for_function(
                    f"d => {{ const now = ({ON_SCREEN})(); return now !== '' && now !== d; }}",
                    arg=draft,
                    polling="raf",
                )
                times.append(time.perf_counter() - started)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench_desk.py", description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=15)
    parser.add_argument("--dwell", type=float, default=0.0, help="[review] dwell_seconds")
    args = parser.parse_args()
    before = os.getloadavg()
    times = walk(args.decisions, args.dwell)
    after = os.getloadavg()
    print("key-to-next-draft (s):", " ".join(f"{t:.2f}" for t in times))
    print(
        f"median {statistics.median(times):.2f} s over {len(times)} approvals "
        f"(min {min(times):.2f}, max {max(times):.2f}); dwell {args.dwell:g} s"
    )
    print(
        "load average before "
        + " ".join(f"{x:.2f}" for x in before)
        + ", after "
        + " ".join(f"{x:.2f}" for x in after)
        + f" ({os.cpu_count()} cores)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
