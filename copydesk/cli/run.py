"""`copydesk init`, `run`, `feeds` and `demo`: the commands a scheduler and a newcomer use."""

from __future__ import annotations

import gc
import logging
import os
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from copydesk.cli import context as cx
from copydesk.cli.review import free_port, launch_review, port_free

if TYPE_CHECKING:
    from copydesk.services.compose import Desk
    from copydesk.services.reports import RunReport
    from ingest.fetch import Fetcher
    from summarise.base import Summariser
    from summarise.checks import Checker


log = logging.getLogger("copydesk.run")

SAMPLE_DIR = Path(__file__).parents[1] / "sample"  # copydesk/sample
SAMPLE_FEED = SAMPLE_DIR / "feed.xml"
SAMPLE_REPLIES = SAMPLE_DIR / "recorded_replies.json"
SAMPLE_ORIGIN = "sample"  # feeds.origin of the demo's feed (copydesk/cli/feeds.py)


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("migrate")(init)
    app.command("run")(run)
    app.command("recheck")(recheck)
    app.command("demo")(demo)


MIGRATE_URL_ENV = "COPYDESK_MIGRATE_DATABASE_URL"


def init(
    cli: typer.Context,
    review_role: str | None = typer.Option(
        None,
        "--review-role",
        metavar="ROLE",
        help="PostgreSQL: the review server's role; the database URL's role becomes the "
        "workers' role, which the database lets neither decide nor change approved text",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="print the database and the roles given rights as JSON"
    ),
) -> None:
    """Create or upgrade the database schema (`init` and `migrate` are the same).

    With COPYDESK_MIGRATE_DATABASE_URL set (PostgreSQL: the role that owns the
    schema), migrates as that role and grants the role of the database URL (the
    runtime role) only what it needs: no ownership, and only SELECT and INSERT on
    the audit log. With --review-role too, that role gets the same rights and is
    the only one (besides the owner) allowed to decide. Without the owner's URL,
    migrates with the database URL; other commands also bring an existing schema up
    to date on first use when their role may."""
    from sqlalchemy.engine import make_url

    from store.db import StoreError, migrate_as_owner

    settings = cx.load(cli)
    owner_url = os.environ.get(MIGRATE_URL_ENV) or settings.database.url
    try:
        granted = migrate_as_owner(owner_url, settings.database.url, review_role=review_role)
    except StoreError as exc:
        cx.fail(str(exc).splitlines()[0])
    where = make_url(owner_url).render_as_string(hide_password=True)
    if as_json:
        roles = {"runtime_role": granted, "review_role": review_role if granted else None}
        cx.emit_json({"database": where} | roles)
        return
    cx.out.print(f"database ready: {where}", markup=False)
    if granted and review_role:
        cx.out.print(
            f"workers' role {granted}: reads and writes, appends to the audit log, owns "
            "nothing, cannot decide or change approved text",
            markup=False,
        )
        cx.out.print(f"review role {review_role}: the same rights, and decides", markup=False)
    elif granted:
        cx.out.print(
            f"runtime role {granted}: reads and writes, appends to the audit log, owns "
            "nothing, decides (give the review server a role of its own: --review-role)",
            markup=False,
        )


def run(
    cli: typer.Context,
    feed: list[str] = typer.Option(None, "--feed", help="only this feed (name or URL); repeatable"),
    all_feeds: bool = typer.Option(
        False, "--all", help="fetch every feed now, also those backing off after errors"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the closing report as JSON"),
    publish: bool = typer.Option(
        False, "--publish", help="then publish approved items to the configured targets"
    ),
) -> None:
    """Fetch every enabled feed, summarise new articles and store drafts or discards.

    Idempotent: safe to run every few minutes. Exit 0 when the run did its job
    (discards included), 3 when it could not (bad config, database, model key).
    With --json, stdout holds one JSON document also when the run is refused or
    cannot start ("status": "refused" or "failed", the exit code and why)."""
    printed: list[bool] = []
    try:
        _run(cli, feed, all_feeds, as_json, publish, printed)
    except typer.Exit as exc:
        if as_json and not printed:
            why = getattr(exc, "message", None)
            status = "refused" if exc.exit_code == 0 else "failed"
            document = {"run_id": None, "status": status, "exit_code": exc.exit_code}
            cx.emit_json(document | {"error": why})
        raise


def _run(
    cli: typer.Context,
    feed: list[str] | None,
    all_feeds: bool,
    as_json: bool,
    publish: bool,
    printed: list[bool],
) -> None:
    from copydesk.services.heartbeat import AnotherRunInProgress
    from ingest.fetch import Fetcher
    from store.db import StoreError, check_writable, describe_error

    ctx = cx.context(cli)
    _check_feed_names(ctx, feed)
    summariser = cx.summariser(ctx, command="run")
    checker = cx.checker(ctx)  # preflighted too: a refusal is one line before any work
    try:
        with Fetcher(ctx.settings.ingest) as fetcher:
            report = _run_pipeline(
                ctx,
                summariser,
                fetcher,
                command="run",
                only=feed,
                force=all_feeds,
                checker=checker,
            )
    except AnotherRunInProgress as exc:  # SQLite: one run at a time; not a failure
        cx.note(str(exc))
        raise cx.Failed(0, str(exc)) from None
    except Exception as exc:  # recorded on the run row; a person reads one line
        log.debug("run crashed", exc_info=True)
        try:  # a database it may not write: named with the fix, not the driver's words
            check_writable(ctx.engine)
        except StoreError as unwritable:
            cx.fail(str(unwritable))
        cx.fail(f"run crashed: {describe_error(exc)}")
    if report.fatal or not publish:
        _print_report(report, as_json)
        printed.append(True)
        if report.fatal:
            cx.fail(f"run stopped: {report.fatal}")
        return
    from copydesk.cli.publish import deliver, finish, print_report, report_dict

    if not as_json:
        _print_report(report, as_json=False)
    try:
        delivered = deliver(ctx, f"run:{report.run_id}", None)
    except cx.Failed as refused:  # the run happened: its report stays, the refusal inside
        if as_json:
            why = {"status": "failed", "exit_code": refused.exit_code, "error": refused.message}
            cx.emit_json(report.to_dict() | {"publish": why})
            printed.append(True)
        raise
    if as_json:  # one document: the run's report with the publication's inside
        cx.emit_json(report.to_dict() | {"publish": report_dict(delivered)})
    else:
        print_report(delivered)
    printed.append(True)
    finish(delivered)


def recheck(
    cli: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
    failed: bool = typer.Option(
        False,
        "--failed",
        help="also the drafts whose checks failed for a configuration reason (a wrong "
        "model, a refused temperature), once it is fixed; no attempts limit",
    ),
) -> None:
    """Re-check now the drafts whose model checks failed for a passing reason (an
    outage, a timeout, an overload), as every `copydesk run` also does: at most
    [checks] recheck_attempts times each, none started after [runs] deadline_seconds
    (the rest wait for the next run). With --failed, also those whose checks
    failed for a configuration reason. Exit 3 when no model can run the checks."""
    from ingest.fetch import Fetcher
    from summarise.checks import NoChecker

    ctx = cx.context(cli)
    checker = cx.checker(ctx)
    if isinstance(checker, NoChecker):
        cx.fail(f"model checks cannot run: {checker.why} (set ANTHROPIC_API_KEY)")
    summariser = cx.summariser(ctx, command="recheck")
    with Fetcher(ctx.settings.ingest) as fetcher:
        pipeline = ctx.pipeline(summariser, fetcher, command="recheck", checker=checker)
        report = pipeline.recheck_only(failed_too=failed)
    done = report.rechecks or {}
    if as_json:
        cx.emit_json({"run_id": report.run_id, "rechecks": done})
    elif done:
        cx.out.print(_rechecks_line(done), markup=False)
    else:
        cx.out.print("no draft is due for a re-check", markup=False)
    if report.fatal:
        cx.fail(f"re-check stopped: {report.fatal}")


def _rechecks_line(done: dict[str, int]) -> str:
    return (
        f"re-checked {done['attempted']} draft(s) whose model checks had failed: "
        f"{done['ran']} now checked, {done['discarded']} discarded (a verified wrong fact), "
        f"{done['failed_again']} failed again, {done['dropped']} dropped (moved meanwhile)"
        + (
            f", {done['deferred']} deferred to a later run (the run's deadline passed)"
            if done.get("deferred")
            else ""
        )
    )


def _check_feed_names(ctx: Desk, names: list[str] | None) -> None:
    """`--feed NAME` that matches no feed is a typo, not an empty run."""
    from sqlmodel import select

    from copydesk.services.feeds import sync_config_feeds
    from store.db import session_scope
    from store.models import Feed

    if not names:
        return
    with session_scope(ctx.engine) as session:
        sync_config_feeds(session, ctx.settings.feeds)
        known = {v for f in session.exec(select(Feed)) for v in (f.name, f.url)}
    unknown = [n for n in names if n not in known]
    if unknown:
        cx.fail(f"no feed named {', '.join(unknown)} (see copydesk feeds list)", cx.EXIT_USAGE)


@contextmanager
def _progress_bar() -> Iterator[callable]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=cx.stderr_console(),
        transient=True,
        disable=not cx.is_tty(),
    ) as bar:
        tasks: dict[str, int] = {}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total)
            bar.update(tasks[phase], completed=done, total=total)

        yield update


def _run_pipeline(
    ctx: Desk,
    summariser: Summariser,
    fetcher: Fetcher,
    *,
    command: str,
    only: list[str] | None = None,
    fetch_pages: bool = True,
    force: bool = False,
    checker: Checker | None = None,
) -> RunReport:
    checker = checker or cx.checker(ctx)
    with _progress_bar() as progress:
        pipeline = ctx.pipeline(
            summariser,
            fetcher,
            command=command,
            fetch_pages=fetch_pages,
            progress=progress,
            checker=checker,
        )
        _freeze_what_is_loaded()
        return pipeline.run(only_feeds=only or None, force=force)


def _freeze_what_is_loaded() -> None:
    """Before the first run of this process, everything loaded so far (the modules,
    the SDK's models and schemas, the composed pipeline: about 290,000 objects) goes
    to the collector's permanent generation, which its collections ignore
    (https://docs.python.org/3/library/gc.html#gc.freeze). Each full collection
    otherwise walked all of it again: 1.4 ms per article of a 640-article model run
    (issue 24). Once per process: a later run (`watch`) freezes nothing of an earlier
    one's, whose objects may yet become garbage."""
    if gc.get_freeze_count() == 0:
        gc.freeze()


def _print_report(report: RunReport, as_json: bool) -> None:
    from rich.table import Table
    from rich.text import Text

    if as_json:
        cx.emit_json(report.to_dict())
        return
    table = Table(title=f"run {report.run_id} — summariser {report.backend}", title_justify="left")
    columns = (
        "feed",
        "seen",
        "new",
        "dup",
        "drafts",
        "discarded",
        "by gate or reason",
        "errors",
        "retried",
        "checks not run / failed",
    )
    for column in columns:
        left = column in ("feed", "by gate or reason")
        table.add_column(column, justify="left" if left else "right")
    for feed in report.feeds:
        row = feed.to_dict()
        name = feed.name
        if feed.skipped:
            name += f"\n  skipped: {feed.skipped} (copydesk run --all to force)"
        if feed.truncated:
            name += (
                f"\n  CUT OFF at max_feed_bytes after {feed.entries_read} entries: "
                "later entries were not read (raise [ingest] max_feed_bytes)"
            )
        if feed.fetch_error:
            name += f"\n  fetch failed: {feed.fetch_error} (next try {feed.next_fetch_at})"
        by = "\n".join(f"{gate} {n}" for gate, n in row["discarded_by"].items())
        table.add_row(
            Text(name),  # feed names and errors come from outside: never markup
            *(str(row[k]) for k in ("seen", "new", "duplicates", "drafts", "discarded")),
            Text(by),
            str(row["errors"]),
            str(row["retried"]),
            f"{row['checks_not_run']} / {row['checks_failed']}",
        )
    cx.out.print(table)
    totals = report.totals()
    if not report.feeds:
        cx.out.print("no feeds to poll: add one with `copydesk feeds add URL` or in config.toml")
    elif (
        totals["new"] == 0
        and totals["retried"] == 0
        and not any(f.fetch_error or f.skipped for f in report.feeds)
    ):
        cx.out.print("nothing new: every entry was already seen.")
    if totals["checks_not_run"] or totals["checks_failed"]:
        cx.out.print(
            f"model checks did not run on {totals['checks_not_run']} item(s) and failed on "
            f"{totals['checks_failed']}: never a pass; each such draft carries a warning "
            "for its editor."
        )
    if totals["pages_cut"]:
        cx.out.print(
            f"{totals['pages_cut']} page(s) CUT at max_page_bytes: their drafts tell the story "
            "only up to the cut, and say so in the queue (raise [ingest] max_page_bytes)."
        )
    if report.rechecks:
        cx.out.print(_rechecks_line(report.rechecks), markup=False)
    recorded = sum(f.recorded_replies for f in report.feeds)
    if recorded:
        cx.out.print(
            f"{recorded} item(s) were summarised from RECORDED model replies shipped "
            "with the demo, not live model calls; each such item is labelled so."
        )


# ---------------------------------------------------------------- demo


def demo(
    cli: typer.Context,
    no_ui: bool = typer.Option(False, "--no-ui", help="stop after the run; do not open the queue"),
    directory: Path = typer.Option(
        Path("copydesk-demo"), "--dir", help="where the demo database goes"
    ),
    port: int | None = typer.Option(
        None, "--port", help="port of the review queue (default: [review] port, 8501)"
    ),
) -> None:
    """Run the whole pipeline on the bundled sample feed, offline, into a fresh database."""
    from copydesk.config import DEFAULT_ANCHOR
    from copydesk.services.compose import Desk
    from ingest.fetch import Fetcher
    from ingest.settings import FeedSettings
    from ingest.urls import canonical_url
    from summarise.checks import NoChecker, RecordedChecker
    from summarise.extractive import ExtractiveSummariser
    from summarise.recorded import RecordedSummariser, load_check_replies, load_replies

    settings = cx.load(cli)
    host, chosen = settings.review.host, settings.review.port if port is None else port
    if not no_ui and 0 < chosen < 65536 and not port_free(host, chosen):
        cx.fail(  # before the run and before any URL: nothing to undo
            f"port {chosen} on {host} is taken (another review server?): "
            f"try --port {free_port(host, chosen)}"
        )
    directory.mkdir(parents=True, exist_ok=True)
    db = (directory / "demo.db").resolve()
    # Its own anchor, beside its own database, where a command on it without a
    # config.toml looks (copydesk/config.py): the configured one belongs to the
    # production database, and a demo run in its folder must not move it (issue 22).
    anchor = db.with_name(f"{db.name}.{DEFAULT_ANCHOR}")
    for stale in (db, db.with_suffix(".db-wal"), db.with_suffix(".db-shm"), anchor):
        stale.unlink(missing_ok=True)
    settings.database.url = f"sqlite:///{db}"
    settings.runs.audit_anchor = str(anchor)
    settings.feeds = [FeedSettings(url=str(SAMPLE_FEED), name="Sample: The Vellmouth Courier")]
    settings.summarise.backend = "extractive"
    ctx = Desk(settings, cx.connect(settings, create=True))
    _name_sample_feed(ctx)
    summariser = RecordedSummariser(
        load_replies(SAMPLE_REPLIES, key=canonical_url),  # the dedup key of a linked item
        fallback=ExtractiveSummariser(sentences=settings.summarise.summary_sentences),
    )
    summariser.name = "extractive + recorded replies (demo)"
    checker = RecordedChecker(
        load_check_replies(SAMPLE_REPLIES, key=canonical_url), fallback=NoChecker("no model")
    )
    checker.name = "recorded check replies (demo)"
    cx.note(
        "demo: offline, no API key, no network; some articles replay RECORDED "
        "model replies to show the draft gates at work, and RECORDED check replies to show "
        "the model checks (a claims table, a wrong fact that discards, a dropped hedge that "
        "flags); the other drafts say their model checks were not run (no model)"
    )
    with Fetcher(settings.ingest) as fetcher:
        report = _run_pipeline(
            ctx, summariser, fetcher, command="demo", fetch_pages=False, checker=checker
        )
    _print_report(report, as_json=False)
    cx.out.print(f"\ndemo database: {db}", markup=False)
    cx.out.print(f"see why an item was discarded:  {demo_command(db, 'discards')}", markup=False)
    _launch_review(ctx, no_ui, port)


def demo_command(db: Path, command: str) -> str:
    """`command` as a line that works pasted into a fresh shell: the database named
    and the copydesk of this installation by its path (a fresh shell has no
    virtualenv active, so a bare `copydesk` may be missing or another one)."""
    script = Path(sys.executable).parent / "copydesk"
    program = Path(sys.argv[0]) if Path(sys.argv[0]).name == "copydesk" else script
    try:
        shown = program.resolve().relative_to(Path.cwd().resolve())
        path = str(shown) if str(shown).startswith(".") else f"./{shown}"
    except ValueError:
        path = str(program.resolve())
    url = shlex.quote(f"sqlite:///{db}")
    return f"COPYDESK_DATABASE_URL={url} {shlex.quote(path)} {command}"


def _name_sample_feed(ctx: Desk) -> None:
    from sqlmodel import select

    from copydesk.services.feeds import sync_config_feeds
    from store.db import session_scope
    from store.models import Feed

    with session_scope(ctx.engine) as session:
        sync_config_feeds(session, ctx.settings.feeds)
        for feed in session.exec(select(Feed)):  # the bundled snapshot: never "stale"
            feed.origin = SAMPLE_ORIGIN
            session.add(feed)


def _launch_review(ctx: Desk, no_ui: bool, port: int | None = None) -> None:
    from store.editors import ensure_demo_editor

    name, password = ensure_demo_editor(ctx.engine)
    cx.out.print(f"demo editor: {name}   password: {password}", markup=False)
    if no_ui:
        db = Path(ctx.settings.database.url.removeprefix("sqlite:///"))
        cx.out.print(f"review queue:  {demo_command(db, 'review')}", markup=False)
        return
    raise typer.Exit(launch_review(ctx.settings, port=port))
