"""A test-only hold on a page run (tests/browser.py `page_runs_held`).

While the FIFO `<point>.fifo` exists
in the folder this names, every page run waits on it at that point ("start", before
anything is drawn; "middle", once the draft and its buttons are drawn but not the
rest; "end"), until the test lets it go: a test presses a key during a run without
timing anything. Unset (always, outside the tests), it costs one dictionary look-up.
"""

from __future__ import annotations

import os
import stat

HOLD_ENV = "COPYDESK_REVIEW_TEST_HOLD"


def hold_for_tests(point: str) -> None:
    folder = os.environ.get(HOLD_ENV)
    if not folder:
        return
    path = os.path.join(folder, f"{point}.fifo")
    try:
        if not stat.S_ISFIFO(os.stat(path).st_mode):
            return
        with open(path, "rb") as fifo:
            fifo.read()
    except OSError:
        return
