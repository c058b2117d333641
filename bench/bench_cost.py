"""Cost per article (issue 24): `copydesk run` beside the simplest alternative.

The same N loopback pages of about 300 words (a feed linking to each; served by
another process), read three ways, each in its own process so its CPU and peak
RSS are its own:

- bare: httpx + feedparser + `trafilatura.extract`, one page after another;
- extractive: `copydesk run` with the extractive backend;
- model: `copydesk run` with the Anthropic backend against a loopback server
  (another process) answering as the Messages API does, every call taking
  `--latency` seconds, at `--concurrency` calls at a time.

Ratios are within one run (the machine is shared: compare the ratios, and read
the load printed beside them), and each extractive case's are against the bare loop
run just before and just after it (`beside`: the machine's speed drifts between
minutes).

The pages come with a stated latency (`--page-latency`, default 40 ms a page, with
TCP_NODELAY), as real pages do: a sequential loop waits for each, and copydesk's
overlap of fetches is what its rate ratio measures. Waiting is not free on every
machine (on this project's VM a loop that sleeps 40 ms between pages paid two to three
times the CPU a page of one that does not: waking with cold caches), so the bare loop
also runs over a second page server with no wait, and "run x work" is copydesk's CPU
within the run over that loop's: the cost against the loop's work alone, the stricter
ratio (session 16). The bare child imports nothing of copydesk (this
module imports only the standard library at its top: it used to import
bench_scale, and with it copydesk, into the bare loop too, about 1.5 s of CPU
that flattered every ratio), and every child runs from compiled bytecode
(`compile_bytecode`, before the clock starts): an installed copydesk has its .pyc
files as the libraries do, and with `PYTHONDONTWRITEBYTECODE` set each run
compiled the project's sources again.
"CPU" is the copydesk process's own, every thread, from wait4: not the loopback
API's nor the page server's (other processes), nor PostgreSQL's backends. "once s"
is the part of it outside `Pipeline.run` (interpreter, imports, configuration,
the store opened, the API's reachability asked; about 2.2 s on the model path,
1.4 s of it `import anthropic`), paid once a process; "run ms/a" the part within
the run, per article. The bare loop's row has both parts too (its run from its
first request, after its imports), and "run x bare" is the within-run ratio: CPU
per article with what each process pays once set aside. bench_scale.py's
worker rows count other things: workers forked from a process that has imported
copydesk already (no import paid), a scripted model (no SDK, no HTTP, no
model-call rows in the ledger), and PostgreSQL's backends and the feed server
added; so its 12-13 ms an article and this table's 26-33 measure different runs,
not one run twice (issue 24, session 11).
"writer ms/item" is the time the run's writer spent committing outcomes
(`Writer.commit_batch`), per item; "of ideal" is calls x latency / concurrency
over the run's wall time.

    .venv/bin/python bench/bench_cost.py                  # 320 articles, SQLite
    .venv/bin/python bench/bench_cost.py --articles 3200  # the RSS goal
    .venv/bin/python bench/bench_cost.py --pg-url postgresql+psycopg://...  # PostgreSQL too
    .venv/bin/python bench/bench_cost.py --cases extractive --profile /tmp/run.prof
    COPYDESK_BENCH_RSS_TRACE=/tmp/rss.txt .venv/bin/python bench/bench_cost.py --cases model

Every figure of issue 24 in one table (an idle machine; about 20 minutes):

    .venv/bin/python -m bench cost --articles 320,3200 --pg-url "$COPYDESK_TEST_PG_URL" \
        --workers 1,3
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KEY = "sk-ant-bench-0123456789abcdef"
CASES = ("bare", "extractive", "model", "writer")
# The worker rows' articles at least (issue 24, session 12: 320 articles took 3.7 s
# with 3 workers, too short a run to compare on a shared machine), each count run
# --worker-repeats times.
WORKER_ARTICLES = 960


# --------------------------------------------------------------------------- children


def bare(feed_url: str) -> None:
    """The simplest alternative: fetch the feed, then each page, extract its text.
    Its CPU within the run is counted from after its imports to its last page, as
    copydesk's is from `Pipeline.run`'s entry to its exit (`run_copydesk`)."""
    import feedparser
    import httpx
    import trafilatura

    kept = 0
    with httpx.Client(timeout=30) as client:
        run_from = _cpu()
        feed = feedparser.parse(client.get(feed_url).content)
        for entry in feed.entries:
            html = client.get(entry.link).text
            kept += bool(trafilatura.extract(html))
    print(json.dumps({"items": kept, "run_cpu": _cpu() - run_from, "own_rss": _own_peak_rss()}))


def after_idle(pause: float, rounds: int = 40) -> None:
    """What waiting costs the work after it on this machine: one page's
    `trafilatura.extract`, CPU each, back to back and after `pause` seconds idle each,
    alternated twice. On session 16's VM: 0.9 ms back to back, 2.3 ms after 40 ms
    idle (a tight arithmetic loop: the same either way); what slows is work that
    reads much memory after the core sat idle (cold caches), so a loop that waits for
    each page pays for it in CPU, and copydesk, whose fetches overlap, mostly not.
    That is why "run x work" is the stricter ratio."""
    import trafilatura

    from bench.bench_scale import page

    html = page(1, 0).decode()
    trafilatura.extract(html)  # warm: imports and first-call set-up out of the count
    spent = {0.0: 0.0, pause: 0.0}
    for wait in (0.0, pause, 0.0, pause):
        for _ in range(rounds):
            if wait:
                time.sleep(wait)
            started = _cpu()
            trafilatura.extract(html)
            spent[wait] += _cpu() - started
    busy, idle = (spent[k] * 1000 / (2 * rounds) for k in (0.0, pause))
    print(json.dumps({"busy_ms": busy, "idle_ms": idle}))


def _own_peak_rss() -> float:
    """This process's peak resident memory in MB since its exec (VmHWM, proc(5)); the
    `ru_maxrss` that wait4 gives keeps the high-water mark of the process before its
    exec, which is the bench's own, copied by the fork (the bare loop read 104-121 MB,
    as much as the bench process that started it). Linux; elsewhere, wait4's figure."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return 0.0
    line = next((x for x in status.splitlines() if x.startswith("VmHWM:")), "")
    return int(line.split()[1]) / 1024 if line else 0.0


def _cpu() -> float:
    """This process's CPU so far, every thread (user + system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_copydesk(config: str, out: str, profile: str | None) -> None:
    """`copydesk --config CONFIG run --json`, with the writer's time recorded, and the
    process's CPU when `Pipeline.run` starts and ends: what is paid once a process
    (interpreter, imports, configuration, the store opened) and what a run pays."""
    from copydesk.cli import app
    from copydesk.services.pipeline.run import Pipeline
    from copydesk.services.pipeline.writer import Writer

    marks: dict[str, float] = {}
    run = Pipeline.run

    def marked(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        marks["run_from"] = _cpu()
        try:
            return run(self, *args, **kwargs)
        finally:
            marks["run_to"] = _cpu()

    Pipeline.run = marked  # type: ignore[method-assign]

    spent = [0.0, 0]
    inner = Writer.commit_batch

    def timed(self, outs):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            inner(self, outs)
        finally:
            spent[0] += time.perf_counter() - started
            spent[1] += len(outs)

    Writer.commit_batch = timed  # type: ignore[method-assign]
    trace = os.environ.get("COPYDESK_BENCH_RSS_TRACE")
    if trace:
        _trace_rss(Path(trace))
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    try:
        app(["--config", config, "--quiet", "run", "--json"], standalone_mode=False)
    finally:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile)
        run_cpu = marks.get("run_to", 0.0) - marks.get("run_from", 0.0)
        Path(out).write_text(
            json.dumps(
                {
                    "writer_s": spent[0],
                    "written": spent[1],
                    "run_cpu": run_cpu,
                    "own_rss": _own_peak_rss(),
                }
            )
        )


def _trace_rss(path: Path, every: float = 1.0) -> None:
    """Resident memory every `every` seconds into `path` ("seconds MB" a line): does
    RSS grow with the run, or is it paid once? (COPYDESK_BENCH_RSS_TRACE=FILE set for
    a bench_cost run; Linux only.)"""
    import threading

    started = time.monotonic()

    def sample() -> None:
        with path.open("w") as out:
            while True:
                status = Path("/proc/self/status").read_text()
                rss = next(line for line in status.splitlines() if line.startswith("VmRSS"))
                out.write(f"{time.monotonic() - started:.1f} {int(rss.split()[1]) / 1024:.1f}\n")
                out.flush()
                time.sleep(every)

    threading.Thread(target=sample, daemon=True, name="rss-trace").start()


def fake_api(port_out, latency: float) -> None:  # type: ignore[no-untyped-def]
    """The loopback Messages API, each reply after `latency` seconds: a grounded
    model (the headline is the article's title line, the summary its next two
    sentences, verbatim) and a careful judge of it, so every item becomes a draft
    after two calls."""
    from tests import anthropic_fake as fake

    def slow(request_json):  # type: ignore[no-untyped-def]
        time.sleep(latency)
        source = fake.article_text(request_json)
        draft = fake.draft_text(request_json)
        if draft is not None:
            return fake.check_reply(fake.grounded_check(source, draft))
        title, _, body = source.partition("\n\n")
        summary = ". ".join(body.strip().split(". ")[:2]).rstrip(".") + "."
        return fake.summary_reply(title.strip(), summary)

    with fake.FakeAnthropic(responder=slow, api_key=KEY).serve() as url:
        port_out.put(url)
        while True:
            time.sleep(3600)


def writer_alone(db_url: str, n: int, batch: int, profile: bool = False) -> dict[str, float]:
    """The writer by itself, on this thread with no other thread running: `n`
    claimed items of ~300 words, each with its nine gate verdicts, fingerprint,
    URL aliases and draft, committed `batch` at a time as a busy run does.
    Returns the writer's wall and CPU seconds per item, and SQL statements per item."""
    from datetime import timedelta

    from sqlalchemy import event

    from bench.bench_scale import PARAGRAPH
    from copydesk.config import Settings
    from copydesk.services.heartbeat import start_run_row
    from copydesk.services.pipeline.handoff import Job, Outcome, compose_source
    from copydesk.services.pipeline.state import RunState
    from copydesk.services.pipeline.writer import Writer
    from guards.registry import DRAFT_GATES, SOURCE_GATES, run_gates
    from ingest.dedup import text_fingerprint
    from store import claims
    from store import status as st
    from store.changes import ItemChanges
    from store.db import open_store, session_scope
    from store.models import Item

    engine = open_store(db_url)
    with session_scope(engine) as session:
        for i in range(n):
            url = f"http://tollmere.example.test/p/{i}"
            item = Item(dedup_key=url, source_url=url, title=f"Dispatch {i}")
            st.create(session, item, actor="cli", reason="bench")
    run_id = start_run_row(engine, "run", "bench")
    with session_scope(engine) as session:
        claimed = claims.claim_items(session, run_id, n, timedelta(hours=1))
    outs = []
    for c in claimed:
        body = " ".join(PARAGRAPH.format(i=c.item_id) + f"Part {k}." for k in range(4))
        source = compose_source(c.title, body)
        summary = ". ".join(body.split(". ")[:2]).rstrip(".") + "."
        draft = f"{c.title}\n\n{summary}"
        verdicts = [
            ("source", r) for r in run_gates(SOURCE_GATES, source, c.source_url, "", modes={})
        ]
        verdicts += [
            ("draft", r) for r in run_gates(DRAFT_GATES, source, c.source_url, draft, modes={})
        ]
        changes = ItemChanges(
            source_text=source,
            word_count=len(source.split()),
            headline=c.title,
            summary=summary,
            summariser="extractive",
            text_origin="page",
        )
        job = Job(c.item_id, c.version, c.dedup_key, c.source_url, c.title, False, 0, None)
        outs.append(
            Outcome(
                job,
                st.DRAFT,
                changes=changes,
                verdicts=verdicts,
                fingerprint=text_fingerprint(body, c.title),
                aliases=[],
            )
        )
    state = RunState(Settings(), engine, run_id=run_id)
    try:
        writer = Writer(state, counts=lambda: {"totals": {"drafts": 0}})  # type: ignore[call-arg]
    except TypeError:  # the writer before issue 24 (for a before/after in one run)
        writer = Writer(state)
    statements = [0]

    def count(*args: object) -> None:
        statements[0] += 1

    event.listen(engine, "before_cursor_execute", count)
    profiler = None
    if profile:
        import cProfile

        # CPU time, not wall: on a shared machine wall time is mostly waiting for a core.
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
    cpu, wall = time.process_time(), time.perf_counter()
    for start in range(0, len(outs), batch):
        writer.commit_batch(outs[start : start + batch])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if profiler is not None:
        profiler.disable()
        _where_it_goes(profiler, n)
    engine.dispose()
    return {"wall": wall / n, "cpu": cpu / n, "statements": statements[0] / n}


# The writer's parts, by function (file suffix, name), for `--profile-writer`.
PARTS = [
    ("writer.py", "_commit", "commit_batch, all of it"),
    ("writer.py", "write_outcome", "  an item's rows (duplicate check, verdict rows)"),
    ("pipeline/duplicates.py", "find_duplicates", "    duplicate look-up, the whole batch"),
    ("models.py", "row_of", "    verdict rows built"),
    ("status.py", "move", "  status move"),
    ("duplicates.py", "signed", "    near-duplicate signature (MinHash)"),
    ("status.py", "_compare_and_set", "    compare-and-set UPDATE"),
    ("duplicates.py", "write_bands", "    band rows INSERT"),
    # The batch's events are appended together, after every move (`st.move_many`).
    ("audit_chain.py", "append_many", "  audit append, the batch (hash, INSERT)"),
    ("session.py", "commit", "  COMMIT"),
    ("audit_chain.py", "advance_anchor", "    anchor file (fsync, rename)"),
]


def _where_it_goes(profiler, n: int) -> None:  # type: ignore[no-untyped-def]
    import pstats

    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    print(f"{'writer part (CPU under cProfile)':<50} {'ms/item':>8}")
    for suffix, name, label in PARTS:
        total = sum(
            cumtime
            for (path, _, func), (_, _, _, cumtime, _) in stats.items()
            if func == name and path.endswith(suffix)
        )
        print(f"{label:<50} {total * 1000 / n:>8.2f}")


# --------------------------------------------------------------------------- measuring


def compile_bytecode() -> None:
    """Compile the project's sources (into their __pycache__ folders, which git
    ignores), as an installed package has its .pyc files: then no child pays for
    compiling them, whether or not PYTHONDONTWRITEBYTECODE is set, and the
    libraries' own .pyc files are used as before."""
    packages = [str(ROOT / name) for name in PACKAGES if (ROOT / name).is_dir()]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], check=True)


PACKAGES = ("copydesk", "guards", "store", "ingest", "summarise", "publish", "review_ui", "bench")


def measure(argv: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Run a child; its wall time, CPU (user + system) and peak RSS, from wait4."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    output = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0,):
        raise SystemExit(f"{argv[-1][:60]}... exited {proc.returncode}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss": usage.ru_maxrss / 1024,
        "output": output,  # type: ignore[dict-item]
    }


def child(code: str) -> list[str]:
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); {code}"]


def write_config(folder: Path, db_url: str, feed_url: str, backend: str, level: int) -> Path:
    model = ""
    if backend != "extractive":
        model = (
            "max_retries = 0\n"
            '[summarise.prices."claude-haiku-4-5"]\ninput = 1.0\noutput = 5.0\n'
            "cache_write = 1.25\ncache_read = 0.1\n"
        )
    path = folder / "config.toml"
    path.write_text(
        f'[database]\nurl = "{db_url}"\n\n'
        f"[runs]\naudit_anchor = {str(folder / 'audit.anchor')!r}\n\n"
        '[ingest]\nallow_private = ["127.0.0.0/8"]\nrespect_robots = false\n'
        "per_host_concurrency = 8\n\n"
        f'[[feeds]]\nname = "Tollmere"\nurl = "{feed_url}"\n\n'
        f'[summarise]\nbackend = "{backend}"\nmax_concurrency = {level}\n{model}'
    )
    return path


def copydesk_case(
    db_url: str, feed_url: str, backend: str, level: int, api: str | None, profile: str | None
) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = write_config(folder, db_url, feed_url, backend, level)
        out = folder / "writer.json"
        env = dict(os.environ, NO_COLOR="1")
        if api:
            env.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=api)
        else:
            env.pop("ANTHROPIC_API_KEY", None)
        code = (
            "from bench.bench_cost import run_copydesk; "
            f"run_copydesk({str(config)!r}, {str(out)!r}, {profile!r})"
        )
        result = measure(child(code), env)
        result.update(json.loads(out.read_text()))
        report = json.loads(str(result.pop("output")).strip().splitlines()[-1])
        totals = report["totals"]
        result["items"] = totals["drafts"] + totals["errors"] + totals["discarded"]
        result["drafts"] = totals["drafts"]
        result["calls"] = ledger_calls(db_url)
    return result


def ledger_calls(db_url: str) -> int:
    from sqlalchemy import create_engine, func, select

    from store.models import ModelCall

    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(ModelCall)).scalar_one()
    finally:
        engine.dispose()


class Database:
    """A fresh, empty database per case: a SQLite file, or a PostgreSQL database
    created beside the one `--pg-url` names (dropped afterwards)."""

    def __init__(self, pg_url: str | None, tmp: Path):
        self.pg_url, self.tmp = pg_url, tmp

    def __enter__(self) -> str:
        if not self.pg_url:
            self.path = self.tmp / f"{secrets.token_hex(4)}.db"
            url = f"sqlite:///{self.path}"
        else:
            from sqlalchemy import create_engine, text
            from sqlalchemy.engine import make_url

            admin_url = make_url(self.pg_url)
            self.admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
            self.name = f"copydesk_cost_{secrets.token_hex(4)}"
            with self.admin.connect() as conn:
                conn.execute(text(f'CREATE DATABASE "{self.name}"'))
            url = admin_url.set(database=self.name).render_as_string(hide_password=False)
        from store.db import open_store

        open_store(url).dispose()  # migrated before the clock starts
        return url

    def __exit__(self, *exc: object) -> None:
        if self.pg_url:
            from sqlalchemy import text

            with self.admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE "{self.name}" WITH (FORCE)'))
            self.admin.dispose()


def table(rows: list[tuple[str, int, dict[str, float]]]) -> None:
    """One table: every case at every size, its ratios beside the bare loop of the
    same size. The worker rows (bench_scale.py workers: a scripted model, PostgreSQL)
    give their rate against one worker in the rate column, and as CPU all the run
    used (workers, PostgreSQL's backends, the feed server)."""
    bares = {n: r for name, n, r in rows if name.startswith("bare")}  # the latest
    print(
        f"{'':<24} {'wall s':>7} {'CPU s':>6} {'RSS MB':>7} {'wall ms/a':>10} {'CPU ms/a':>9}"
        f" {'once s':>7} {'run ms/a':>9}"
        f" {'rate x bare':>12} {'CPU x bare':>11} {'run x bare':>11} {'run x work':>11}"
        f" {'writer ms/item':>15} {'of ideal':>9}"
    )
    for name, n, r in rows:
        rate = cpu = run_x = run_work = writer = ideal = once = in_run = ""
        # Whole-process CPU mixes what a process pays once (interpreter, imports:
        # about 1 s for copydesk, 0.26 s for the bare loop's three libraries) with what
        # each article costs; at 320 articles the imports alone were a third of the
        # extractive path's excess over the bare loop (issue 24, session 11). So each
        # side is also measured within its run, after its imports, the same way (the
        # bare loop from its first request to its last page, copydesk from
        # `Pipeline.run`'s entry to its exit), and "run x bare" is the ratio of those:
        # the cost per article, which the process's ratio approaches as runs grow.
        if r.get("run_cpu"):  # CPU paid once a process, and within the run
            once = f"{r['cpu'] - r['run_cpu']:.2f}"
            in_run = f"{r['run_cpu'] * 1000 / n:.1f}"
        base = r.get("beside") or bares.get(n)
        if "x1" in r:
            rate = f"{r['x1']:.2f} x1"  # workers: the rate against one worker
        elif base and not name.startswith("bare"):
            rate = f"{base['wall'] / r['wall']:.2f}"
            cpu = f"{r['cpu'] / base['cpu']:.2f}"
            if r.get("run_cpu") and base.get("run_cpu"):
                run_x = f"{r['run_cpu'] / base['run_cpu']:.2f}"
            if r.get("run_cpu") and base.get("work_cpu"):
                run_work = f"{r['run_cpu'] / base['work_cpu']:.2f}"
        if "writer_s" in r:
            writer = f"{r['writer_s'] * 1000 / max(1, r['written']):.1f}"
        if r.get("ideal"):
            ideal = f"{r['ideal'] / r['wall']:.2f}"  # ideal seconds over the run's
        peak = r.get("own_rss") or r.get("rss")  # the child's own since its exec, if known
        rss = f"{peak:>7.0f}" if peak else f"{'':>7}"
        print(
            f"{name + f' {n}':<24} {r['wall']:>7.1f} {r['cpu']:>6.1f} {rss}"
            f" {r['wall'] * 1000 / n:>10.1f} {r['cpu'] * 1000 / n:>9.1f}"
            f" {once:>7} {in_run:>9}"
            f" {rate:>12} {cpu:>11} {run_x:>11} {run_work:>11} {writer:>15} {ideal:>9}"
        )


def linearity(rows: list[tuple[str, int, dict[str, float]]]) -> None:
    """Per-article CPU and wall at the largest size over the smallest, case by case
    (1.00: cost grows linearly)."""
    sizes = sorted({n for _, n, _ in rows})
    if len(sizes) < 2:
        return
    small, large = sizes[0], sizes[-1]
    by = {(name, n): r for name, n, r in rows}
    for name in dict.fromkeys(name for name, _, _ in rows):
        a, b = by.get((name, small)), by.get((name, large))
        if a and b and "x1" not in a:
            in_run = ""
            if a.get("run_cpu") and b.get("run_cpu"):
                ratio = (b["run_cpu"] / large) / (a["run_cpu"] / small)
                in_run = f" (within the run {ratio:.2f})"
            print(
                f"linearity {name}: CPU per article at {large} / at {small} = "
                f"{(b['cpu'] / large) / (a['cpu'] / small):.2f}{in_run}, wall "
                f"{(b['wall'] / large) / (a['wall'] / small):.2f}"
            )


def beside(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """The bare loop beside a case: the mean of the runs just before and just after it.

    Why not one bare run for the whole table (as until session 14): the machine's
    speed drifts. In session 14's idle runs the same code's bare loop read 2.7 ms of
    CPU an article in one run and 2.0 in the next; it ran once, for 141 s at 3,200
    articles, at other minutes than the copydesk cases (38 s each), so a case's
    ratio moved by a quarter with the minute it ran in, not with its code. A bare run
    just before and one just after each extractive case (A-B-A, the classic design
    for a drifting instrument) cancels a drift that is steady over the three runs;
    the table shows every bare run, so the drift itself stays visible."""
    keys = ["wall", "cpu", "run_cpu"] + (["work_cpu"] if "work_cpu" in before else [])
    return {key: (before[key] + after[key]) / 2 for key in keys}


def one_size(n: int, cases: list[str], args: argparse.Namespace, tmp: Path) -> list:
    """Every case of `cases` over n loopback articles: [(name, n, figures)]."""
    from bench.bench_scale import start_server

    page_server, feed_url = start_server(n, latency=args.page_latency)
    # The bare loop's work alone: the same pages from a server that does not wait.
    work_server = work_url = None
    if "bare" in cases and args.page_latency != 0:
        work_server, work_url = start_server(n, latency=0)
    api_proc = None
    api = None
    if "model" in cases:
        queue: multiprocessing.Queue[str] = multiprocessing.Queue()
        api_proc = multiprocessing.Process(target=fake_api, args=(queue, args.latency), daemon=True)
        api_proc.start()
        api = queue.get(timeout=30)
    print(
        f"{n} loopback articles of ~300 words; model {args.latency * 1000:.0f} ms per call at "
        f"concurrency {args.concurrency}; load average {os.getloadavg()[0]:.1f} "
        f"(nproc {os.cpu_count()})",
        flush=True,
    )
    backends = [("sqlite", None)] + ([("postgresql", args.pg_url)] if args.pg_url else [])
    rows: list[tuple[str, int, dict[str, float]]] = []
    bares: list[dict[str, float]] = []

    def bare_loop() -> dict[str, float]:
        r = measure(child(f"from bench.bench_cost import bare; bare({feed_url!r})"))
        r.update(json.loads(str(r.pop("output"))))  # items, run_cpu
        # Its work alone, just after it (with no wait it takes a tenth of the time).
        work = r
        if work_url:
            work = measure(child(f"from bench.bench_cost import bare; bare({work_url!r})"))
            work.update(json.loads(str(work.pop("output"))))
        r["work_cpu"] = work["run_cpu"]
        rows.append((f"bare ({len(bares) + 1})", n, r))
        bares.append(r)
        return r

    try:
        if "bare" in cases:
            bare_loop()
        for db_name, pg in backends:
            if "extractive" in cases:
                with Database(pg, tmp) as url:
                    r = copydesk_case(url, feed_url, "extractive", 4, None, args.profile)
                if bares:  # the bare loop before this case and the one after it
                    r["beside"] = beside(bares[-1], bare_loop())
                rows.insert(len(rows) - bool(bares), (f"extractive {db_name}", n, r))
            if "model" in cases:
                with Database(pg, tmp) as url:
                    r = copydesk_case(url, feed_url, "auto", args.concurrency, api, None)
                r["ideal"] = r["calls"] * args.latency / args.concurrency
                if bares:
                    r["beside"] = bares[-1]  # the latest (no ratio of it is a goal)
                rows.append((f"model {db_name}", n, r))
            if "writer" in cases:
                with Database(pg, tmp) as url:
                    r = writer_alone(url, n, args.batch, args.profile_writer)
                rows.append((f"writer {db_name}", n, r))
    finally:
        page_server.terminate()
        if work_server is not None:
            work_server.terminate()
        if api_proc is not None:
            api_proc.terminate()
    return rows


def page_latency(value: str) -> float | None:
    """`--page-latency`: seconds, or 'ack' (None: bench_scale.serve's two sends)."""
    return None if value == "ack" else float(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--articles", default="320", help="articles per run; several (320,3200): linearity"
    )
    parser.add_argument("--latency", type=float, default=0.4)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument(
        "--page-latency",
        type=page_latency,
        default=0.04,
        help="seconds the page server waits before each page, with TCP_NODELAY (0: no "
        "wait; default 0.04); 'ack': as the issue's figures were taken, headers and body "
        "in two sends without TCP_NODELAY, each page waiting about 40 ms for a delayed "
        "acknowledgement (session 15's note)",
    )
    parser.add_argument("--pg-url", default=None, help="also run the copydesk cases on PostgreSQL")
    parser.add_argument(
        "--workers",
        default=None,
        help="worker processes on PostgreSQL (1,3: bench_scale.py workers, in this table); "
        "needs --pg-url",
    )
    parser.add_argument(
        "--worker-articles",
        type=int,
        default=None,
        help=f"articles of each worker run (default: the largest --articles, at least "
        f"{WORKER_ARTICLES})",
    )
    parser.add_argument(
        "--worker-repeats",
        type=int,
        default=3,
        help="runs of each worker count, in turn; each row is the run of median rate",
    )
    parser.add_argument("--profile", default=None, help="cProfile file of the extractive run")
    parser.add_argument(
        "--profile-writer", action="store_true", help="where the writer's time goes, by part"
    )
    parser.add_argument("--batch", type=int, default=8, help="outcomes per commit (writer case)")
    args = parser.parse_args()
    cases = args.cases.split(",")
    sizes = [int(x) for x in str(args.articles).split(",")]
    rows: list[tuple[str, int, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        compile_bytecode()
        for n in sizes:
            rows += one_size(n, cases, args, Path(tmp))
    if args.workers and args.pg_url:
        from bench.bench_scale import workers

        counts = [int(x) for x in args.workers.split(",")]
        n = args.worker_articles or max(max(sizes), WORKER_ARTICLES)
        found = workers(n, args.pg_url, counts, args.concurrency, args.latency, args.worker_repeats)
        rows += [(f"workers pg x{w['workers']:.0f}", n, w) for w in found]
    print()
    table([(name, n, r) for name, n, r in rows if not name.startswith("writer")])
    linearity([(name, n, r) for name, n, r in rows if not name.startswith("writer")])
    for name, n, r in rows:
        if name.startswith("writer"):
            print(
                f"{name} alone ({n} items, {args.batch} per commit, no other thread): "
                f"{r['wall'] * 1000:.2f} ms/item wall, {r['cpu'] * 1000:.2f} ms/item CPU, "
                f"{r['statements']:.1f} SQL statements/item"
            )
    for name, n, r in rows:
        if "x1" in r:
            low, high = r["spread"]
            print(
                f"{name} ({n}): median of {low:.1f} to {high:.1f} articles/s; waited "
                f"{r['chain_ms']:.1f} ms/article for the audit chain's lock, "
                f"{r['stories_ms']:.1f} for the stories' locks; {r['claims_ms']:.1f} claiming"
            )
        elif not name.startswith(("bare", "writer")):
            print(
                f"{name} {n}: {r['items']} items ({r['drafts']} drafts), {r['calls']} model calls"
            )
    for n in dict.fromkeys(n for _, n, _ in rows):
        runs = [
            r["run_cpu"] * 1000 / n for name, m, r in rows if m == n and name.startswith("bare")
        ]
        if len(runs) > 1:
            print(
                f"bare loop at {n}, run ms/a in turn: {', '.join(f'{x:.2f}' for x in runs)} "
                f"(the machine's drift over the cases: {max(runs) / min(runs) - 1:.0%})"
            )
        work = [
            r["work_cpu"] * 1000 / n
            for name, m, r in rows
            if m == n and name.startswith("bare") and r.get("work_cpu") != r.get("run_cpu")
        ]
        if work:
            print(
                f"bare loop's work alone (no page wait) at {n}, run ms/a in turn: "
                f"{', '.join(f'{x:.2f}' for x in work)}"
            )
    if "bare" in cases and args.page_latency:
        found = measure(
            child(f"from bench.bench_cost import after_idle; after_idle({args.page_latency!r})")
        )
        idle = json.loads(str(found["output"]))
        print(
            f"this machine: one page's trafilatura.extract takes {idle['busy_ms']:.2f} ms of CPU "
            f"back to back, {idle['idle_ms']:.2f} ms after {args.page_latency * 1000:.0f} ms "
            f"idle ({idle['idle_ms'] / idle['busy_ms']:.1f}x: what the waiting loop pays for "
            "waiting)"
        )
    print(f"load average after {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
