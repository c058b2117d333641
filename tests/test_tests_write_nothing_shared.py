"""The test suite writes only where it may: a test's `tmp_path`, a folder it made
with `tempfile`, or tests/artifacts/ (ignored by git; a failed browser test's
screenshots, tests/browser.py). A fixed path such as /tmp/x.png (a debugging
screenshot once left in tests/test_review_bulk_browser.py) is shared by every run
on the machine, two runs at once overwrite each other's, and it outlives the run."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
FIXED_TEMP = re.compile(r"""["'](/tmp|/var/tmp|/dev/shm)/""")


def test_no_test_names_a_fixed_temporary_path() -> None:
    found = [
        f"{path.name}:{number}: {line.strip()}"
        for path in sorted(TESTS.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if FIXED_TEMP.search(line)
    ]
    assert found == [], "a test writes to a fixed temporary path:\n" + "\n".join(found)
