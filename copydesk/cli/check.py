"""`copydesk check`: run every deterministic gate on a source and a draft, offline.

For one pair from two files it prints a table (or `--json`); for many pairs,
`--jsonl FILE` streams one JSON line in, one JSON line out. The stream path is
built for thousands of pairs a second: it reads line by line, builds plain dicts
(no rich objects) and writes in batches.

No database is touched: the same gates and modes as the pipeline, from settings.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import itertools
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, BinaryIO

import typer

from copydesk.cli import context as cx
from copydesk.cli.context import EXIT_FAILED, EXIT_OK, EXIT_USAGE, fail, load, out

if TYPE_CHECKING:
    from copydesk.config import Settings
    from guards.registry import GateResult
    from summarise.checks import Checker

_BATCH = 256  # --jsonl lines per chunk: checked together, written in one call


def register(app: typer.Typer) -> None:
    app.command("check")(check_command)


@functools.cache
def all_gates() -> tuple[str, ...]:
    """Every source and draft gate, in the pipeline's order (guards/registry.py)."""
    from guards.registry import DRAFT_GATES, SOURCE_GATES

    return tuple(SOURCE_GATES + DRAFT_GATES)


@dataclass(frozen=True)
class Gates:
    """The gates to run with their modes, as the pipeline runs them."""

    modes: dict[str, str]
    min_source_words: int

    @classmethod
    def from_settings(cls, settings: Settings) -> Gates:
        modes = {name: settings.gates.mode(name) for name in all_gates()}
        return cls(modes, settings.gates.min_source_words)

    def run(
        self, source: str, url: str | None, draft: str, language: str | None = None
    ) -> list[GateResult]:
        """`language`: the item's (ISO 639-1), None to detect it from the text."""
        return _run_gates()(
            all_gates(),
            source,
            url,
            draft,
            modes=self.modes,
            min_source_words=self.min_source_words,
            language=language,
        )


@functools.cache
def _run_gates() -> Callable[..., list[GateResult]]:
    """guards.registry.run_gates, imported once (`--jsonl` calls it per line)."""
    from guards.registry import run_gates

    return run_gates


def verdict_json(result: GateResult) -> dict[str, Any]:
    """One verdict for JSON output (built by hand: cheaper than `asdict` per line)."""
    v = result.verdict
    return {
        "gate": v.gate,
        "passed": v.passed,
        "mode": result.stored_mode,
        "reason": v.reason,
        "evidence": v.evidence,
    }


def check_command(
    cli: typer.Context,
    source_file: str | None = typer.Argument(
        None, metavar="SOURCE_FILE", help="the article text", show_default=False
    ),
    draft_file: str | None = typer.Argument(
        None, metavar="DRAFT_FILE", help="the draft (headline and summary)", show_default=False
    ),
    url: str | None = typer.Option(None, "--url", help="the article's source URL"),
    jsonl: str | None = typer.Option(
        None,
        "--jsonl",
        metavar="FILE",
        help='lines of {"id", "source", "summary", "url", "language"} (language: the '
        'item\'s, "fr", "de-AT", or null to detect it); "-" reads stdin',
    ),
    as_json: bool = typer.Option(False, "--json", help="one JSON object instead of a table"),
    workers: int | None = typer.Option(
        None,
        "--workers",
        metavar="N",
        help="with --jsonl: processes that check the lines (default: one per CPU this "
        "process may use; a few hundred lines or fewer are checked in this process)",
        show_default=False,
    ),
    model: bool = typer.Option(
        False,
        "--model",
        help="also run the model checks ([checks] in config.toml: claims and the judge); "
        "needs ANTHROPIC_API_KEY",
    ),
) -> None:
    """Run every deterministic gate on SOURCE_FILE and DRAFT_FILE (or on each line of
    --jsonl FILE); with --model, then the model checks, as the pipeline does. Exits 1
    when a gate in `discard` mode fails, 3 when the model checks could not run, 0
    otherwise."""
    if jsonl is not None:
        if source_file is not None or draft_file is not None:
            fail("give SOURCE_FILE DRAFT_FILE or --jsonl FILE, not both", EXIT_USAGE)
        if model:
            fail("--model goes with SOURCE_FILE DRAFT_FILE, not --jsonl", EXIT_USAGE)
        if url is not None:
            fail(
                "--url goes with SOURCE_FILE DRAFT_FILE; with --jsonl each line has its url",
                EXIT_USAGE,
            )
        if workers is not None and workers < 1:
            fail(f"--workers must be at least 1, not {workers}", EXIT_USAGE)
        processes = default_workers() if workers is None else workers
        if jsonl == "-":
            stdin = getattr(sys.stdin, "buffer", sys.stdin)
            gates = Gates.from_settings(load(cli, database=False))
            raise typer.Exit(check_jsonl(stdin, sys.stdout, gates, processes))
        with _open_jsonl(jsonl) as stream:
            gates = Gates.from_settings(load(cli, database=False))
            raise typer.Exit(check_jsonl(stream, sys.stdout, gates, processes))
    if workers is not None:
        fail("--workers goes with --jsonl FILE", EXIT_USAGE)

    if source_file is None or draft_file is None:
        fail("give SOURCE_FILE DRAFT_FILE --url URL, or --jsonl FILE", EXIT_USAGE)
    if url is None:
        fail("--url URL is required with SOURCE_FILE DRAFT_FILE", EXIT_USAGE)
    source = _read_text(source_file, "SOURCE_FILE")
    draft = _read_text(draft_file, "DRAFT_FILE")
    settings = load(cli, database=False)
    checker = _model_checker(settings) if model else None
    gates = Gates.from_settings(settings)
    results = gates.run(source, url, draft)
    not_run: str | None = None
    if checker is not None:
        checks, not_run = _model_checks(settings, checker, source, url, draft, results)
        results += checks
    passed = not any(r.hard_fail for r in results)
    if as_json:
        document = {"passed": passed, "verdicts": [verdict_json(r) for r in results]}
        cx.emit_json(document)
    else:
        _print_results(results, passed)
    if not passed:
        raise typer.Exit(EXIT_FAILED)
    if not_run:
        fail(f"the model checks did not run: {not_run}")
    raise typer.Exit(EXIT_OK)


def _model_checker(settings: Settings) -> Checker:
    """The checking model, said out loud; without a key, exit 3 before any work."""
    from summarise.checks import NoChecker
    from summarise.factory import BackendChoiceError, make_checker

    try:
        checker = make_checker(settings.checks, os.environ)
    except BackendChoiceError as exc:
        fail(str(exc))
    if isinstance(checker, NoChecker):
        why = (
            "ANTHROPIC_API_KEY is not set"
            if checker.why == "no model"
            else f"[checks] backend is {checker.why}"
        )
        fail(f"--model needs a checking model: {why} (model {settings.checks.model})")
    cx.note(f"model checks: {checker.name}")
    return checker


def _model_checks(
    settings: Settings,
    checker: Checker,
    source: str,
    url: str | None,
    draft: str,
    results: list[GateResult],
) -> tuple[list[GateResult], str | None]:
    """The model checks after the deterministic gates passed (as in the pipeline),
    and why they did not run, if they did not."""
    from guards.registry import run_checks
    from summarise.base import Article
    from summarise.checks import RAN

    modes = settings.gates.all_modes()
    if any(r.hard_fail for r in results):
        why = "a deterministic gate failed"
        return run_checks(source, draft, None, modes=modes, why_not=why), None
    checked = checker.check(Article("check", None, url, source), draft)
    checks = run_checks(
        source,
        draft,
        checked.reply,
        modes=modes,
        why_not=checked.reason or "",
        state=checked.state,
        require=settings.checks.require,
    )
    return checks, None if checked.state == RAN else f"{checked.state} ({checked.reason})"


# --- one pair ---------------------------------------------------------------------------------


def _read_text(path: str, what: str) -> str:
    """The file's text, or a usage error naming the file (exit 2)."""
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        fail(f"{what} {path} does not exist", EXIT_USAGE)
    except UnicodeDecodeError as exc:
        fail(f"{what} {path} is not UTF-8 text: {exc.reason} at byte {exc.start}", EXIT_USAGE)
    except OSError as exc:
        fail(f"cannot read {what} {path}: {exc.strerror or exc}", EXIT_USAGE)


def _print_results(results: list[GateResult], passed: bool) -> None:
    from rich.table import Table
    from rich.text import Text

    from copydesk.render.text import plain, render_evidence

    table = Table()
    table.add_column("gate", no_wrap=True)
    table.add_column("mode")
    table.add_column("result")
    table.add_column("reason", overflow="fold")
    for r in results:
        if r.verdict.passed:
            result = Text("passed", style="green")
        elif r.hard_fail:
            result = Text("FAILED", style="bold red")
        elif r.not_run:
            result = Text(r.verdict.reason.split(" (")[0].upper(), style="yellow")
        else:
            result = Text(f"failed ({r.mode})", style="yellow")
        table.add_row(Text(r.gate), Text(r.mode), result, plain(r.verdict.reason))
    out.print(table)
    for r in results:
        if not r.verdict.passed and r.verdict.evidence not in (None, {}, []):
            out.print(Text(f"{r.gate} evidence:", style="bold"))
            render_evidence(out, r.verdict.evidence, indent=2)
    hard = [r.gate for r in results if r.hard_fail]
    if passed:
        out.print(Text("passed: no hard gate failed", style="bold green"))
    else:
        out.print(Text(f"failed: {', '.join(hard)}", style="bold red"))


# --- many pairs -------------------------------------------------------------------------------


def _open_jsonl(path: str) -> BinaryIO:
    """The file opened for binary line iteration: each line is decoded on its own,
    so one bad line is one error line, not the end of the run."""
    try:
        return open(path, "rb")
    except FileNotFoundError:
        fail(f"--jsonl file {path} does not exist", EXIT_USAGE)
    except OSError as exc:
        fail(f"cannot read --jsonl file {path}: {exc.strerror or exc}", EXIT_USAGE)


def check_jsonl(
    lines: Iterable[bytes | str], output: IO[str], gates: Gates, workers: int = 1
) -> int:
    """Check every line, write one result line each, in input order; the exit code (1
    if any item failed a hard gate or was malformed). Blank lines are skipped. With
    `workers` above 1 and more than two chunks of lines, the chunks are checked by
    that many processes (`_checked_chunks`)."""
    counts = {"passed": 0, "failed": 0, "malformed": 0}
    write: Callable[[str], Any] = output.write
    for checked in _checked_chunks(_chunks(lines), gates, workers):
        for outcome in checked.outcomes:
            counts[outcome] += 1
        write(checked.text)
    output.flush()
    cx.note(
        f"checked {sum(counts.values())}: {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['malformed']} malformed"
    )
    return EXIT_FAILED if counts["failed"] or counts["malformed"] else EXIT_OK


@dataclass(frozen=True)
class _Checked:
    """A chunk of lines checked: the result lines to write, and each one's outcome."""

    text: str
    outcomes: list[str]


def _chunks(lines: Iterable[bytes | str]) -> Iterator[list[tuple[int, bytes | str]]]:
    """The non-blank lines with their line numbers, `_BATCH` at a time."""
    chunk: list[tuple[int, bytes | str]] = []
    for number, raw in enumerate(lines, 1):
        if raw.strip():
            chunk.append((number, raw))
            if len(chunk) >= _BATCH:
                yield chunk
                chunk = []
    if chunk:
        yield chunk


def _check_chunk(gates: Gates, chunk: list[tuple[int, bytes | str]]) -> _Checked:
    """Check a chunk of lines (in this process or in a worker)."""
    # A result line is a tree of fresh dicts and lists, never circular: the check for
    # circular references (on every container, per line) is skipped. Python docs, json:
    # "If check_circular is false, then the circular reference check for container
    # types will be skipped" (https://docs.python.org/3/library/json.html#json.JSONEncoder).
    dumps = json.JSONEncoder(separators=(",", ":"), default=str, check_circular=False).encode
    results, outcomes = [], []
    for number, raw in chunk:
        result, outcome = check_line(raw, number, gates)
        results.append(dumps(result))
        outcomes.append(outcome)
    return _Checked("\n".join(results) + "\n", outcomes)


def _checked_chunks(
    chunks: Iterator[list[tuple[int, bytes | str]]], gates: Gates, workers: int
) -> Iterator[_Checked]:
    """The chunks checked, in order. In this process when `workers` is 1 or there are
    at most two chunks (starting processes costs more than a few hundred lines);
    otherwise by `workers` forked processes (`_Workers`), two chunks per worker in
    flight, so a long input is read as it is checked, not all at once."""
    first = list(itertools.islice(chunks, 3))
    if workers <= 1 or len(first) <= 2:
        yield from (_check_chunk(gates, chunk) for chunk in itertools.chain(first, chunks))
        return
    with _Workers(gates, workers) as pool:
        yield from pool.check(itertools.chain(first, chunks))


# A worker's two pipes are widened to hold a chunk's lines and its results (a 256-line
# chunk of 190-word pairs is some 460 KB each way; a pipe holds 64 KB by default). The
# parent then writes a chunk and the worker its results in one go each: neither waits
# for the other to be scheduled to empty the pipe (with both cores busy checking, each
# such wait cost milliseconds a chunk). Python docs, fcntl: "On Linux >= 2.6.11, the
# fcntl module exposes the F_GETPIPE_SZ and F_SETPIPE_SZ constants, which allow to check
# and modify a pipe's size respectively" (https://docs.python.org/3/library/fcntl.html);
# above /proc/sys/fs/pipe-max-size (1 MiB by default) an unprivileged process gets EPERM
# (man 7 pipe), and the pipe keeps its size.
_PIPE_SIZE = 1 << 20


def _widen(connection: Any) -> None:
    import fcntl

    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only
    if setpipe is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(connection.fileno(), setpipe, _PIPE_SIZE)


class _Workers:
    """`workers` forked processes, each with a pipe of chunks in and a pipe of results
    out: the gates come with the fork (never pickled), each chunk is sent once and its
    `_Checked` comes back whole. The parent hands out chunks (each worker's are sent by a
    thread of its own, `_Worker`) and writes the results in input order."""

    def __init__(self, gates: Gates, workers: int) -> None:
        import multiprocessing  # only a long input pays for it

        # fork: the workers start with the gates already imported (the Linux default).
        context = multiprocessing.get_context("fork")
        self.workers: list[_Worker] = []
        parents_ends: list[Any] = []  # the pipes' ends this process keeps
        for _ in range(workers):
            task_end, tasks = context.Pipe(duplex=False)
            results, result_end = context.Pipe(duplex=False)
            _widen(tasks)
            _widen(results)
            parents_ends += [tasks, results]
            # The worker closes the parent's ends it inherits (its own and the earlier
            # workers'), so that a parent that dies leaves it an end of input.
            process = context.Process(
                target=_serve, args=(gates, task_end, result_end, parents_ends), daemon=True
            )
            process.start()
            task_end.close()
            result_end.close()
            self.workers.append(_Worker(process, tasks, results))
        # The sending threads start once every worker is forked: a fork copies only the
        # thread that calls it, and a lock another thread holds stays held in the child.
        for worker in self.workers:
            worker.sender.start()

    def check(self, chunks: Iterable[list[tuple[int, bytes | str]]]) -> Iterator[_Checked]:
        """The chunks checked, in input order: two in flight per worker, the next one
        sent to whichever worker answers."""
        from multiprocessing.connection import wait

        numbered = enumerate(chunks)
        for worker in self.workers:
            worker.send(numbered)
            worker.send(numbered)
        by_pipe = {worker.results: worker for worker in self.workers}
        done: dict[int, _Checked] = {}
        following = 0
        while busy := [w.results for w in self.workers if w.in_flight]:
            for pipe in wait(busy):
                worker = by_pipe[pipe]
                done[worker.in_flight.popleft()] = worker.receive()
                worker.send(numbered)
            while following in done:
                yield done.pop(following)
                following += 1

    def __enter__(self) -> _Workers:
        return self

    def __exit__(self, error: type[BaseException] | None, *rest: object) -> None:
        """Each worker told there is no more (it returns), or, when the run stops half
        way (an error, Ctrl-C, a closed output), stopped at once."""
        for worker in self.workers:
            if error is not None:
                worker.process.terminate()
            worker.outbox.put(None)  # after the chunks: the end
        for worker in self.workers:
            worker.sender.join()
            worker.process.join()
            worker.tasks.close()
            worker.results.close()


class _Worker:
    """One worker process, its pipes, the chunks sent to it and not answered yet (their
    numbers, in order), and the thread that sends them: a send waits until the worker
    has read what its pipe cannot hold, and the worker may meanwhile be waiting for this
    process to read its results, so the sends are never made by the thread that reads."""

    def __init__(self, process: Any, tasks: Any, results: Any) -> None:
        import queue
        import threading

        self.process = process  # multiprocessing's Process
        self.tasks = tasks  # the Connection the chunks go out by
        self.results = results  # and the one their results come back by
        self.in_flight: collections.deque[int] = collections.deque()
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()
        self.sender = threading.Thread(target=self._send_all, daemon=True)  # started later

    def send(self, numbered: Iterator[tuple[int, list[tuple[int, bytes | str]]]]) -> None:
        """Hand the next chunk, if any is left, to the sending thread."""
        item = next(numbered, None)
        if item is not None:
            self.outbox.put(item[1])
            self.in_flight.append(item[0])

    def _send_all(self) -> None:
        """The sending thread: each chunk of `outbox` in order, then None (the end)."""
        while True:
            chunk = self.outbox.get()
            try:
                self.tasks.send(chunk)
            except OSError:  # the worker was stopped
                return
            if chunk is None:
                return

    def receive(self) -> _Checked:
        try:
            answer = self.results.recv()
        except EOFError:
            raise RuntimeError(
                f"a --workers process stopped (exit code {self.process.exitcode})"
            ) from None
        if isinstance(answer, BaseException):
            raise answer
        return answer


def _serve(gates: Gates, tasks: Any, results: Any, parents_ends: list[Any]) -> None:
    """A worker's loop: check each chunk received and send its `_Checked` back (or the
    exception that stopped it, raised again in the parent), until None or the end.
    Ctrl-C is the parent's to handle: it stops the workers (`_Workers.__exit__`)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for end in parents_ends:
        end.close()
    while True:
        try:
            chunk = tasks.recv()
        except EOFError:
            return
        if chunk is None:
            return
        try:
            results.send(_check_chunk(gates, chunk))
        except Exception as exc:  # noqa: BLE001 (the parent raises it, as Pool did)
            results.send(exc)
            return


def default_workers() -> int:
    """The CPUs this process may run on (`--workers` when not given)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def check_line(raw: bytes | str, number: int, gates: Gates) -> tuple[dict[str, Any], str]:
    """One input line to one output object, and "passed", "failed" or "malformed"."""
    try:
        record = json.loads(raw)
    except ValueError as exc:  # also UnicodeDecodeError: not UTF-8
        return _malformed(None, number, f"not JSON: {exc}")
    if not isinstance(record, dict):
        return _malformed(None, number, f"not a JSON object but {type(record).__name__}")
    item_id = record.get("id")
    source, summary, url = record.get("source"), record.get("summary"), record.get("url")
    if not isinstance(source, str):
        return _malformed(item_id, number, '"source" must be a string')
    if not isinstance(summary, str):
        return _malformed(item_id, number, '"summary" must be a string')
    if url is not None and not isinstance(url, str):
        return _malformed(item_id, number, '"url" must be a string or null')
    language = record.get("language")
    if language is not None:
        if not isinstance(language, str):
            return _malformed(item_id, number, '"language" must be a string or null')
        language = _language_code(language)
        if language is None:
            return _malformed(
                item_id,
                number,
                f'"language" {json.dumps(record["language"])} is not a language code '
                '(an ISO 639-1 code such as "fr" or "de-AT", or null to detect it)',
            )
    results = gates.run(source, url, summary, language)
    passed = not any(r.hard_fail for r in results)
    line = {"id": item_id, "passed": passed, "verdicts": [verdict_json(r) for r in results]}
    return line, "passed" if passed else "failed"


@functools.cache
def _language_code(value: str) -> str | None:
    """The ISO 639-1 code of a line's "language", None when it names none (cached:
    a stream's lines mostly say the same few)."""
    from ingest.language import known_language

    return known_language(value)


def _malformed(item_id: Any, number: int, message: str) -> tuple[dict[str, Any], str]:
    line = {
        "id": item_id,
        "passed": False,
        "verdicts": [],
        "line": number,
        "error": f"line {number}: {message}",
    }
    return line, "malformed"
