"""A newsroom over loopback for tests that run real `copydesk run` processes: a
feed of `n` entries whose texts live on their pages (every GET counted), the
config for it, and a run started as its own process (shared by
tests/test_runs_at_scale.py and tests/test_calls_in_flight.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path

from tests.articles import FERRY, LIBRARY, paragraphs_html, rss
from tests.loopback_http import QuietHandler

KEY = "sk-ant-test-scale-0123456789"
ROOT = Path(__file__).resolve().parent.parent
CLI = "from copydesk.cli import main; main()"
STORY = re.compile(r"Dispatch number (\d+) from")


def article_html(i: int) -> str:
    body = f"Dispatch number {i} from the Tollmere desk.\n\n" + (FERRY, LIBRARY)[i % 2]
    return (
        f"<html><head><title>Story {i}</title></head><body><article><h1>Story {i}</h1>"
        f"{paragraphs_html(body)}</article></body></html>"
    )


class Newsroom:
    """A feed of `n` entries whose texts live on their pages; counts every GET.
    `before_page(i)`, when given, runs in the server's thread before page i is
    answered (a test may hold a page there)."""

    def __init__(self, n: int, before_page: Callable[[int], None] | None = None):
        self.n = n
        self.before_page = before_page
        self.gets: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.base = ""

    def feed(self) -> str:
        entries = [
            {"guid": f"d-{i}", "title": f"Story {i}", "link": f"{self.base}/news/{i}"}
            for i in range(self.n)
        ]
        return rss(entries)

    @contextmanager
    def serve(self) -> Iterator[str]:
        room = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                with room.lock:
                    room.gets[self.path] += 1
                if self.path == "/feed.xml":
                    body, kind = room.feed(), "application/rss+xml"
                elif self.path.startswith("/news/"):
                    i = int(self.path.rsplit("/", 1)[1])
                    if room.before_page is not None:
                        room.before_page(i)
                    body, kind = article_html(i), "text/html"
                else:
                    self.send_error(404)
                    return
                self.send_body(body.encode(), kind)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        self.base = f"http://127.0.0.1:{server.server_address[1]}"
        try:
            yield f"{self.base}/feed.xml"
        finally:
            server.shutdown()
            server.server_close()
            thread.join()

    def page_gets(self) -> Counter[str]:
        return Counter({p: n for p, n in self.gets.items() if p.startswith("/news/")})


def write_config(
    tmp_path: Path, db_url: str, feed_url: str, *, lease: float = 30, backend: str = "anthropic"
) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[database]\nurl = "{db_url}"\n\n'
        f'[summarise]\nbackend = "{backend}"\nmax_retries = 0\nmax_concurrency = 4\n'
        "retry_base_seconds = 0\n\n"
        '[ingest]\nallow_private = ["127.0.0.0/8"]\nrespect_robots = false\n'
        "per_host_concurrency = 4\n\n"
        f"[runs]\nlease_seconds = {lease}\n\n"
        f'[[feeds]]\nname = "Tollmere Gazette"\nurl = "{feed_url}"\n'
    )
    return path


def start_run(config: Path, base_url: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COPYDESK_", "ANTHROPIC_"))}
    env.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=base_url)
    return subprocess.Popen(
        [sys.executable, "-c", CLI, "--config", str(config), "run", "--json"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 240) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err
