"""Issue 24: page fetching overlaps the rest of the run. While one page's response
is held by the server, the other pages are fetched, extracted, summarised and
committed: a run takes as long as its slowest page, not the sum of them all.

No timing: the server holds page 0 until the run's writer has committed every
other item (an Event), and the test asserts that this is what released it. A
pipeline that fetched pages one after another, or under one lock, or that stopped
feeding the page readers behind a slow page, never gets there: the held page is
released only when WAIT runs out, and the test fails."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sqlmodel import Session, select
from typer.testing import CliRunner

from copydesk.cli import app
from copydesk.services.pipeline import writer as pipeline_writer
from store.db import open_store
from store.models import Item
from tests.articles import rss
from tests.run_helpers import article_html, write_config

N = 12
WAIT = 120  # seconds: a bound for a broken pipeline, never a timing the outcome depends on


@contextmanager
def newsroom(released: threading.Event, held: list[bool]) -> Iterator[str]:
    """A feed of N pages; page 0's response waits for `released` (`held` says,
    per request for it, whether it was released or WAIT ran out)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            if self.path == "/feed.xml":
                entries = [
                    {"guid": f"d-{i}", "title": f"Story {i}", "link": f"{base}/news/{i}"}
                    for i in range(N)
                ]
                body, kind = rss(entries), "application/rss+xml"
            else:
                i = int(self.path.rsplit("/", 1)[1])
                if i == 0:
                    held.append(released.wait(WAIT))
                body, kind = article_html(i), "text/html"
            data = body.encode()
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/feed.xml"
    finally:
        released.set()
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_held_page_does_not_hold_up_the_other_pages(tmp_path, sqlite_url, monkeypatch) -> None:
    released = threading.Event()
    held: list[bool] = []  # page 0's requests: released (True) or ran out of WAIT
    committed: list[str] = []  # the committed items' pages, in commit order
    inner = pipeline_writer.Writer.commit_batch

    def commit_batch(self, outs):  # type: ignore[no-untyped-def]
        inner(self, outs)
        committed.extend(out.job.source_url for out in outs)
        if len([url for url in committed if not url.endswith("/news/0")]) == N - 1:
            released.set()  # every other page is in: page 0 may come

    monkeypatch.setattr(pipeline_writer.Writer, "commit_batch", commit_batch)
    with newsroom(released, held) as feed_url:
        config = write_config(tmp_path, sqlite_url, feed_url, backend="extractive")
        # A fetch may wait longer than WAIT: only the server decides when page 0 comes.
        text = config.read_text().replace(
            "respect_robots = false\n", "respect_robots = false\ntimeout_seconds = 600\n"
        )
        config.write_text(text)
        result = CliRunner().invoke(
            app, ["--config", str(config), "--quiet", "run", "--json"], catch_exceptions=False
        )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.strip().splitlines()[-1])["totals"]["drafts"] == N

    assert held == [True], "the held page held up the others"  # [False]: WAIT ran out
    assert committed[-1].endswith("/news/0")  # the held page came in last, once
    assert len(committed) == N
    engine = open_store(sqlite_url)
    with Session(engine) as session:
        statuses = session.exec(select(Item.status)).all()
    engine.dispose()
    assert statuses == ["draft"] * N
