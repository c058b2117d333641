"""Pages are extracted one at a time, whatever thread asks (issue 23): trafilatura
on lxml, called from several threads at once, intermittently crashes the process
with a segmentation fault (trafilatura issues 840 and 925, open for trafilatura
2.2 with lxml 6.1; seen here once in about ten runs of tests/test_corpora.py, in
the teardown after the run). A crashed run is a crashed CI worker."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import trafilatura

from ingest.extract import extract_page

PAGE = (
    "<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
    "<p>The Vellmoor ferry board met on Tuesday to approve {n} new crossings a day "
    "between Vellmoor and Strand Isle, the board's chair, Orla Finnick, said.</p>"
    "<p>The extra crossings start in March and cost the board {n}0 thousand crowns "
    "a year, paid from the harbour levy raised last spring.</p></article></body></html>"
)


def test_two_threads_never_extract_at_the_same_time(monkeypatch) -> None:
    both_inside = threading.Barrier(2)
    overlapped: list[str] = []
    real = trafilatura.bare_extraction

    def probe(*args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            # Passes only if the other thread is inside the extractor meanwhile;
            # one thread alone breaks the barrier after the timeout, and it stays
            # broken for the next (a loaded machine can only make this pass).
            both_inside.wait(timeout=2)
            overlapped.append(threading.current_thread().name)
        except threading.BrokenBarrierError:
            pass
        return real(*args, **kwargs)

    monkeypatch.setattr(trafilatura, "bare_extraction", probe)
    pages = [PAGE.format(title=f"Vellmoor ferry {n}", n=n) for n in (4, 7)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        found = list(pool.map(extract_page, pages))
    assert overlapped == []
    assert ["4 new crossings" in f.text for f in found] == [True, False]
    assert "7 new crossings" in found[1].text
