"""Throughput and memory at scale (issue 13).

Three measurements, each printed as ratios measured in the same run:

- concurrency: N articles (feed + one page each, on a loopback server in another
  process) through the whole pipeline with a scripted model whose every call
  takes 400 ms, at max_concurrency 1, 4 and 16, against the ideal
  (N x 0.4 s / concurrency): the share of ideal reached end to end.
- workers: the same on PostgreSQL with 1, 2 and 3 worker processes at once
  (each a Pipeline, claims sharing the backlog): total articles per second.
- memory: peak RSS of a run with 4 workers over 8 pages of 15 MB, with what
  reaches trafilatura capped (`ingest.max_extract_bytes`, the default) and
  uncapped (the simplest alternative: hand the whole page to trafilatura).

    .venv/bin/python bench/bench_scale.py concurrency --articles 500 --levels 1,4,16
    .venv/bin/python bench/bench_scale.py workers --articles 500 --pg-url postgresql+psycopg://...
    .venv/bin/python bench/bench_scale.py workers --articles 500 --latency 2 --per-worker 4
    .venv/bin/python bench/bench_scale.py memory

With no argument (`make bench`) a small version of each runs (100 articles, no
PostgreSQL part unless COPYDESK_TEST_PG_URL is set).
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import os
import resource
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from copydesk.config import FeedSettings, Settings  # noqa: E402
from copydesk.services.pipeline import Pipeline  # noqa: E402
from copydesk.services.pipeline.writer import COMMIT_BATCH, Writer  # noqa: E402
from ingest.fetch import Fetcher  # noqa: E402
from store.db import open_store  # noqa: E402
from summarise.base import Article, Draft  # noqa: E402
from summarise.extractive import ExtractiveSummariser  # noqa: E402
from tests.loopback_http import QuietHandler  # noqa: E402

LATENCY = 0.4
PARAGRAPH = (
    "The harbour board of Tollmere met on Tuesday to discuss dispatch {i}, the ferry "
    "timetable and the dredging of the inner basin, which its engineer Ansel Corrie "
    "said had silted faster than expected after the spring storms. Members heard that "
    "the work would take eleven weeks and that the ferry would run from the outer "
    "quay while it lasted. "
)


class ScriptedModel:
    """A model whose every call takes `latency` seconds (LATENCY unless told),
    writing the article's own first sentences (so every gate passes, as with a
    grounded real model)."""

    name = "scripted-400ms"

    def __init__(self, latency: float = LATENCY) -> None:
        self.inner = ExtractiveSummariser(sentences=2)
        self.latency = latency

    def summarise(self, article: Article) -> Draft:
        time.sleep(self.latency)
        draft = self.inner.summarise(article)
        draft.backend = self.name
        return draft


# --------------------------------------------------------------------------- the server


def page(i: int, big: int = 0) -> bytes:
    body = "".join(f"<p>{PARAGRAPH.format(i=i)}Part {k} of dispatch {i}.</p>" for k in range(4))
    filler = b""
    if big:
        # What makes real pages huge: inline scripts and data, styles, comments,
        # and a long tail of related-story markup around a short article.
        block = (
            b"<script>window.__DATA__=" + b'{"k":"' + b"x" * 8000 + b'"};</script>'
            b"<style>.c{color:red}" + b" " * 2000 + b"</style><!-- " + b"c" * 1000 + b" -->"
            b'<div class="related"><a href="/r">Related story</a></div>' * 4
        )
        filler = block * (big // len(block))
    return (
        (
            f"<html><head><title>Dispatch {i}</title></head><body><article><h1>Dispatch {i}</h1>"
            f"{body}</article>"
        ).encode()
        + filler
        + b"</body></html>"
    )


def serve(port_out, n: int, big: int, latency: float | None = None) -> None:  # type: ignore[no-untyped-def]
    """The feed and its pages. `latency` None: as before session 15, the headers and
    the body in two sends without TCP_NODELAY, so a client that reads one page at a
    time waits for its delayed acknowledgement (about 40 ms a page on Linux); a
    number: TCP_NODELAY (`StreamRequestHandler.disable_nagle_algorithm`, which sets it on
    each connection: CPython's Lib/socketserver.py, bpo-6192) and that many seconds of
    stated wait before each page."""
    pages = {}

    class Handler(QuietHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = latency is not None

        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/feed.xml":
                items = "".join(
                    f"<item><guid>d-{i}</guid><title>Dispatch {i}</title>"
                    f"<link>http://127.0.0.1:{port}/p/{i}</link></item>"
                    for i in range(n)
                )
                channel = f"<channel><title>Tollmere</title>{items}</channel>"
                data = f'<?xml version="1.0"?><rss version="2.0">{channel}</rss>'.encode()
                kind = "application/rss+xml"
            else:
                i = int(self.path.rsplit("/", 1)[1])
                if latency:
                    time.sleep(latency)
                data = pages.get(i) or page(i, big)
                if big:
                    pages[i] = data
                kind = "text/html"
            self.send_body(data, kind)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    port_out.put(port)
    server.serve_forever()


def start_server(
    n: int, big: int = 0, latency: float | None = None
) -> tuple[multiprocessing.Process, str]:
    queue: multiprocessing.Queue[int] = multiprocessing.Queue()
    proc = multiprocessing.Process(target=serve, args=(queue, n, big, latency), daemon=True)
    proc.start()
    return proc, f"http://127.0.0.1:{queue.get(timeout=30)}/feed.xml"


def settings_for(db_url: str, feed_url: str, concurrency: int, **ingest: object) -> Settings:
    return Settings.model_validate(
        {
            "database": {"url": db_url},
            "summarise": {"backend": "extractive", "max_concurrency": concurrency},
            "ingest": {
                "allow_private": ["127.0.0.0/8"],
                "respect_robots": False,
                "per_host_concurrency": 8,
                **ingest,
            },
            "feeds": [FeedSettings(url=feed_url, name="Tollmere").model_dump()],
            # One anchor file a database (the workers of one database share it), out of
            # the working folder: a relative "audit.anchor" there belonged to the first
            # database benched, and every later one's anchor was refused, its fsyncs
            # not made (flattering the runs after the first).
            "runs": {"audit_anchor": str(_anchor_of(db_url))},
        }
    )


def _anchor_of(db_url: str) -> Path:
    digest = hashlib.sha256(db_url.encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"copydesk-bench-{digest}.anchor"


def one_run(settings: Settings, latency: float = LATENCY) -> dict[str, int]:
    engine = open_store(settings.database.url)
    with Fetcher(settings.ingest) as fetcher:
        report = Pipeline(settings, engine, ScriptedModel(latency), fetcher).run()
    engine.dispose()
    return report.totals()


# --------------------------------------------------------------------------- concurrency


def concurrency(articles: int, levels: list[int], batches: list[int]) -> None:
    """Each level once per commit batch size (`writer.COMMIT_BATCH`; 1: one
    transaction per item, as before batching), in the same run."""
    from copydesk.services.pipeline import writer

    server, feed_url = start_server(articles)
    print(f"{articles} articles, scripted model {LATENCY * 1000:.0f} ms per call, SQLite")
    print(
        f"{'commit batch':>12} {'concurrency':>11} {'seconds':>8} {'ideal':>7} {'of ideal':>9}"
        f" {'drafts':>7} {'commit ms':>10}"
    )
    spent = _timed_commits()
    try:
        for level in levels:
            for batch in batches:
                writer.COMMIT_BATCH = batch
                spent[0] = 0.0
                with tempfile.TemporaryDirectory() as tmp:
                    settings = settings_for(f"sqlite:///{tmp}/b.db", feed_url, level)
                    started = time.perf_counter()
                    totals = one_run(settings)
                    took = time.perf_counter() - started
                ideal = articles * LATENCY / level
                print(
                    f"{batch:>12} {level:>11} {took:>8.1f} {ideal:>7.1f} {ideal / took:>9.2f}"
                    f" {totals['drafts']:>7} {spent[0] * 1000 / articles:>10.1f}"
                )
    finally:
        server.terminate()
        writer.COMMIT_BATCH = COMMIT_BATCH
    print("commit ms: time the run's one writer thread spent committing, per article.")


# --------------------------------------------------------------------------- workers


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class BackendCPU:
    """The CPU the PostgreSQL server spends on one database, sampled from /proc
    every 0.3 s for the backends pg_stat_activity lists (same machine)."""

    def __init__(self, admin, database: str) -> None:  # type: ignore[no-untyped-def]
        self.admin, self.database = admin, database
        self.seen: dict[int, float] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        from sqlalchemy import text

        query = text("SELECT pid FROM pg_stat_activity WHERE datname = :d")
        with self.admin.connect() as conn:
            while not self.stop.wait(0.3):
                for (pid,) in conn.execute(query, {"d": self.database}):
                    self.seen[pid] = max(self.seen.get(pid, 0.0), _cpu_of(pid))

    def __enter__(self) -> BackendCPU:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()

    @property
    def seconds(self) -> float:
        return sum(self.seen.values())


def _timed_commits() -> list[float]:
    """Time spent committing outcomes on the run's writer thread (one thread)."""
    spent = [0.0]
    inner = Writer.commit_batch

    def timed(self, outs):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            inner(self, outs)
        finally:
            spent[0] += time.perf_counter() - started

    Writer.commit_batch = timed  # type: ignore[method-assign]
    return spent


def _timed_locks() -> dict[str, float]:
    """Seconds this process's statements spent waiting for PostgreSQL advisory
    locks, by lock: the audit chain's and the stories' (duplicate look-ups)."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    from store import audit_chain, locks

    names = {audit_chain.PG_CHAIN_LOCK: "chain", locks.key("stories"): "stories"}
    waited: dict[str, float] = {"chain": 0.0, "stories": 0.0}

    @event.listens_for(Engine, "before_cursor_execute")
    def before(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        if "pg_advisory_xact_lock" in statement:
            conn.info["lock_started"] = time.perf_counter()

    @event.listens_for(Engine, "after_cursor_execute")
    def after(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        started = conn.info.pop("lock_started", None)
        if started is not None:
            key = (parameters or {}).get("key") if isinstance(parameters, dict) else None
            name = names.get(key, "other")  # type: ignore[arg-type]
            waited[name] = waited.get(name, 0.0) + time.perf_counter() - started

    return waited


def _timed_claims() -> list[float]:
    """Time this process spent claiming items (`claims.claim_items`: one UPDATE ...
    RETURNING, skipping rows another run has locked on PostgreSQL), all its threads."""
    from store import claims

    spent = [0.0]
    inner = claims.claim_items

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - started

    claims.claim_items = timed  # type: ignore[assignment]
    return spent


def _worker(db_url: str, feed_url: str, level: int, latency: float, out) -> None:  # type: ignore[no-untyped-def]
    # Forked from this process, which has imported copydesk already: the CPU it
    # reports has no import in it, and its model is scripted (no SDK, no HTTP, no
    # ledger rows); bench_cost.py's "once s" and "run ms/a" split the real run's.
    spent = _timed_commits()
    waited = _timed_locks()
    claiming = _timed_claims()
    totals = one_run(settings_for(db_url, feed_url, level), latency)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out.put((totals, usage.ru_utime + usage.ru_stime, spent[0], waited | {"claims": claiming[0]}))


def _workers_once(
    count: int, articles: int, admin, feed_url: str, server_pid: int, level: int, latency: float
) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """`count` workers at once over `articles` on a new database: its figures."""
    from sqlalchemy import text

    name = f"copydesk_bench_{secrets.token_hex(4)}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    db_url = admin.url.set(database=name).render_as_string(hide_password=False)
    open_store(db_url).dispose()  # migrated once, before the workers start
    out: multiprocessing.Queue[tuple[dict[str, int], float, float, dict[str, float]]] = (
        multiprocessing.Queue()
    )
    procs = [
        multiprocessing.Process(target=_worker, args=(db_url, feed_url, level, latency, out))
        for _ in range(count)
    ]
    server_cpu = _cpu_of(server_pid)
    with BackendCPU(admin, name) as pg:
        started = time.perf_counter()
        for p in procs:
            p.start()
        results = [out.get() for _ in procs]
        took = time.perf_counter() - started
        for p in procs:
            p.join()
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    worker_cpu = sum(r[1] for r in results)
    server_cpu = _cpu_of(server_pid) - server_cpu
    per = 1000 / articles

    def waited(lock: str) -> float:
        return sum(r[3][lock] for r in results) * per

    return {
        "workers": count,
        "wall": took,
        "rate": articles / took,
        "drafts": sum(r[0]["drafts"] for r in results),
        "cpu": worker_cpu + pg.seconds + server_cpu,
        "worker_ms": worker_cpu * per,
        "pg_ms": pg.seconds * per,
        "feed_ms": server_cpu * per,
        "commit_ms": sum(r[2] for r in results) * per,
        "chain_ms": waited("chain"),
        "stories_ms": waited("stories"),
        "claims_ms": waited("claims"),
    }


def workers(
    articles: int, pg_url: str, counts: list[int], level: int, latency: float, repeats: int = 1
) -> list[dict[str, float]]:
    """Prints the table, and returns its rows (bench_cost.py puts them in its own).
    With `repeats`, the counts are run in turn that many times (1, 3, 1, 3, ...: a
    change in the machine's load falls on every count alike), each run printed, and
    each count's row is its run of median rate (issue 24, session 12: one run of 320
    articles, 3.7 s with 3 workers, read 2.35x one worker where the run before read
    2.78x)."""
    from statistics import median

    from sqlalchemy import create_engine

    server, feed_url = start_server(articles)
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    ideal1 = level / latency
    print(
        f"{articles} articles, PostgreSQL, each worker at max_concurrency {level}, model "
        f"{latency * 1000:.0f} ms per call (ideal {ideal1:.1f} articles/s per worker), "
        f"{repeats} run(s) of each count; load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'workers':>7} {'seconds':>8} {'articles/s':>11} {'of ideal':>9} {'drafts':>7}"
        f" {'CPU ms/article':>15} {'(workers':>9} {'pg':>5} {'feed)':>6} {'commit ms':>10}"
        f" {'chain ms':>9} {'stories ms':>11} {'claims ms':>10} {'load':>5}"
    )
    runs: dict[int, list[dict[str, float]]] = {count: [] for count in counts}
    try:
        for _ in range(repeats):
            for count in counts:
                r = _workers_once(count, articles, admin, feed_url, server.pid, level, latency)
                r["ideal"] = articles / (ideal1 * count)
                runs[count].append(r)
                print(
                    f"{count:>7} {r['wall']:>8.1f} {r['rate']:>11.1f}"
                    f" {r['rate'] / (ideal1 * count):>9.2f} {r['drafts']:>7.0f}"
                    f" {r['cpu'] * 1000 / articles:>15.0f} {r['worker_ms']:>9.0f}"
                    f" {r['pg_ms']:>5.0f} {r['feed_ms']:>6.0f} {r['commit_ms']:>10.1f}"
                    f" {r['chain_ms']:>9.1f} {r['stories_ms']:>11.1f} {r['claims_ms']:>10.1f}"
                    f" {os.getloadavg()[0]:>5.1f}",
                    flush=True,
                )
    finally:
        server.terminate()
        admin.dispose()
    rows: list[dict[str, float]] = []
    base = None
    for count in counts:
        rates = sorted(r["rate"] for r in runs[count])
        middle = median(rates)
        row = min(runs[count], key=lambda r: abs(r["rate"] - middle))
        base = base or middle
        row |= {"rate": middle, "x1": middle / base, "spread": (rates[0], rates[-1])}
        rows.append(row)
        print(
            f"{count} worker(s): median {middle:.1f} articles/s over {len(rates)} run(s)"
            f" (from {rates[0]:.1f} to {rates[-1]:.1f}), {middle / base:.2f}x one worker"
        )
    print(
        "CPU ms/article: all CPU the run used (worker processes, PostgreSQL backends, "
        "the loopback feed server) per article; commit ms: writer-thread time per article; "
        "chain ms / stories ms: time the writers waited for the audit chain's lock and the "
        "duplicate look-ups' lock (PostgreSQL advisory locks), per article; claims ms: time "
        "spent claiming items (one UPDATE ... RETURNING that skips locked rows), per article."
    )
    return rows


# --------------------------------------------------------------------------- memory


def _memory_child(feed_url: str, cap: int, strip: bool) -> None:
    if not strip:  # the simplest alternative: the whole page to trafilatura
        import ingest.extract

        ingest.extract.strip_inert = lambda html: html
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_for(
            f"sqlite:///{tmp}/m.db", feed_url, 4, max_extract_bytes=cap, max_page_bytes=16_000_000
        )
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        totals = one_run(settings)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    how = f"strip + cap {cap / 1e6:g} MB" if strip else "whole page"
    print(f"{how:>20} {before / 1024:>10.0f} {peak / 1024:>9.0f} {totals['drafts']:>7}")


def memory(pages: int = 8, size: int = 15_000_000) -> None:
    server, feed_url = start_server(pages, big=size)
    print(f"{pages} pages of {size / 1e6:.0f} MB, 4 workers; peak RSS of the run's process")
    print(f"{'to trafilatura':>20} {'start MB':>10} {'peak MB':>9} {'drafts':>7}")
    cap = Settings().ingest.max_extract_bytes
    try:
        for strip in (True, False):
            code = (
                f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                "from bench.bench_scale import _memory_child; "
                f"_memory_child({feed_url!r}, {cap if strip else 10**9}, {strip})"
            )
            subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    finally:
        server.terminate()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", choices=("concurrency", "workers", "memory"))
    parser.add_argument("--articles", type=int, default=100)
    parser.add_argument("--levels", default="1,4,16")
    parser.add_argument(
        "--commit-batch", default=f"1,{COMMIT_BATCH}", help="outcomes per transaction, compared"
    )
    parser.add_argument("--workers", default="1,2,3")
    parser.add_argument("--per-worker", type=int, default=1, help="max_concurrency of each")
    parser.add_argument("--latency", type=float, default=LATENCY, help="seconds per model call")
    parser.add_argument("--pg-url", default=os.environ.get("COPYDESK_TEST_PG_URL"))
    parser.add_argument("--repeats", type=int, default=1, help="runs of each worker count")
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    if args.mode in (None, "concurrency"):
        batches = [int(x) for x in args.commit_batch.split(",")]
        concurrency(args.articles, levels, batches)
    if args.mode in (None, "workers") and args.pg_url:
        counts = [int(x) for x in args.workers.split(",")]
        workers(args.articles, args.pg_url, counts, args.per_worker, args.latency, args.repeats)
    if args.mode in (None, "memory"):
        memory()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
