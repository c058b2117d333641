"""Ingest speed and memory: a feed of N entries, each linking to its own page on
a loopback server in another process, through the whole pipeline (fetch under
the per-host limit, extraction, dedup, extractive summary, gates) into a fresh
SQLite database. Prints entries per second and the peak RSS of this process.

    .venv/bin/python bench/bench_ingest.py --entries 2000 --workers 8

Text comes from ../shared/corpora (real article openings and real feed titles)
when it is there, else from a short invented paragraph.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import sys
import tempfile
import time
from html import escape
from http.server import ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from copydesk.config import Settings  # noqa: E402
from copydesk.services.pipeline import Pipeline  # noqa: E402
from ingest.fetch import Fetcher  # noqa: E402
from store.db import open_store  # noqa: E402
from store.models import Feed  # noqa: E402
from summarise.extractive import ExtractiveSummariser  # noqa: E402
from tests.loopback_http import QuietHandler  # noqa: E402

CORPORA = ROOT.parent / "shared" / "corpora"
HOSTS = ["wire-a.bench", "wire-b.bench", "wire-c.bench"]
INVENTED = (
    "The Morrow Vale district council voted on Thursday to reopen the Lantern Street "
    "footbridge after a repair costing 412,000 pounds, its engineer Tamsin Roe said. "
) * 12


def article_bodies() -> list[str]:
    truth = CORPORA / "articles" / "scrapinghub-dev" / "ground-truth.json"
    if not truth.exists():
        return [INVENTED]
    data = json.loads(truth.read_text(encoding="utf-8"))
    bodies = []
    for _, value in sorted(data.items()):
        kept, words = [], 0
        for paragraph in value["articleBody"].split("\n"):
            if paragraph.strip():
                kept.append(paragraph)
                words += len(paragraph.split())
                if words >= 220:
                    break
        bodies.append("\n".join(kept))
    return bodies


def feed_xml(n: int, port: int) -> bytes:
    items = []
    for i in range(n):
        link = f"http://{HOSTS[i % len(HOSTS)]}:{port}/story/{i}"
        items.append(
            f"<item><title>Wire story {i}</title><link>{link}</link>"
            f'<guid isPermaLink="false">bench-{i}</guid>'
            f"<description>Teaser {i}</description></item>"
        )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Bench</title>'
        f"<link>http://{HOSTS[0]}/</link>{''.join(items)}</channel></rss>"
    ).encode()


def serve(port_queue: multiprocessing.Queue, n: int) -> None:
    bodies = article_bodies()

    class Handler(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path == "/feed.xml":
                self.send_body(feed_xml(n, self.server.server_address[1]), "application/rss+xml")
            elif self.path == "/robots.txt":
                self.send_body(b"User-agent: *\nDisallow: /private/\n", "text/plain")
            elif self.path.startswith("/story/"):
                i = int(self.path.rsplit("/", 1)[1])
                paragraphs = [
                    f"Report {i} from the wire desk.",
                    *bodies[i % len(bodies)].split("\n"),
                ]
                html = "".join(f"<p>{escape(p)}</p>" for p in paragraphs)
                page = f"<html><head><title>Story {i}</title></head><body><article>{html}</article>"
                self.send_body((page + "</body></html>").encode(), "text/html; charset=utf-8")
            else:
                self.send_body(b"not found", "text/plain", 404)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port_queue.put(server.server_address[1])
    server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--per-host", type=int, default=2)
    parser.add_argument("--db-url", default=None, help="default: a fresh SQLite file")
    args = parser.parse_args()

    ports: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve, args=(ports, args.entries), daemon=True)
    server.start()
    port = ports.get(timeout=30)
    db_url = args.db_url or f"sqlite:///{Path(tempfile.mkdtemp()) / 'bench.db'}"
    settings = Settings.model_validate(
        {
            "database": {"url": db_url},
            "summarise": {"backend": "extractive", "max_concurrency": args.workers},
            "ingest": {
                "allow_private": ["127.0.0.0/8"],
                "per_host_concurrency": args.per_host,
                "respect_robots": True,
            },
        }
    )
    engine = open_store(db_url)
    from sqlmodel import Session

    with Session(engine) as session:
        session.add(Feed(url=f"http://127.0.0.1:{port}/feed.xml", name="Bench"))
        session.commit()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    with Fetcher(settings.ingest, resolver=lambda host, port: ["127.0.0.1"]) as fetcher:
        report = Pipeline(settings, engine, ExtractiveSummariser(), fetcher).run()
    elapsed = time.perf_counter() - start
    server.terminate()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    totals = report.totals()
    print(
        f"entries: {totals['seen']}  items: {totals['new']}  drafts: {totals['drafts']}  "
        f"discarded: {totals['discarded']}  errors: {totals['errors']}"
    )
    print(
        f"wall: {elapsed:.1f} s   {totals['seen'] / elapsed:.1f} entries/s   "
        f"workers {args.workers}, {args.per_host} per host, {len(HOSTS)} hosts"
    )
    print(f"peak RSS: {peak / 1024:.0f} MB (before the run: {rss_before / 1024:.0f} MB)")


if __name__ == "__main__":
    main()
