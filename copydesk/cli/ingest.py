"""`copydesk submit URL` (an editor's tip) and `copydesk extract PATH_OR_URL`
(what trafilatura makes of a page, for anyone asking why an article was short)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import typer

from copydesk.cli import context as cx
from copydesk.cli.feeds import printable

if TYPE_CHECKING:
    from ingest.extract import Extracted


def register(app: typer.Typer) -> None:
    app.command("submit")(submit)
    app.command("extract")(extract)


def submit(
    cli: typer.Context,
    url: str = typer.Argument(..., help="the article's http(s) URL"),
    as_json: bool = typer.Option(False, "--json", help="print the outcome as JSON"),
) -> None:
    """Add one article by hand, through the same path as a feed entry: fetch,
    extract, gates, summary. The editor vouches for the link, so the allow-list
    (`ingest.allow_private`) applies to it. Exit 0 whatever became of the article
    (draft, discarded, error to retry, already known: the status and the reason
    are printed), 2 for a URL that is not an http(s) URL, 3 when the command could
    not work (bad config, database, model key)."""
    from sqlmodel import Session, select

    from ingest.fetch import Fetcher
    from store.models import AuditEvent, Item

    problem = url_problem(url)
    if problem:
        cx.fail(f"cannot submit {url!r}: {problem}", cx.EXIT_USAGE)
    ctx = cx.context(cli)
    summariser = cx.summariser(ctx, command="submit")
    with Fetcher(ctx.settings.ingest) as fetcher:
        pipeline = ctx.pipeline(summariser, fetcher, command="submit", checker=cx.checker(ctx))
        report, item_id, created = pipeline.submit(url)
    if report.fatal:
        cx.fail(f"submit stopped: {report.fatal}")
    with Session(ctx.engine) as session:
        item = session.get(Item, item_id)
        last = session.exec(
            select(AuditEvent).where(AuditEvent.item_id == item_id).order_by(AuditEvent.id.desc())
        ).first()
    reason = last.reason if last else None
    outcome = {
        "item_id": item_id,
        "new": created,
        "status": item.status,
        "reason": reason,
        "source_url": item.source_url,
        "run_id": report.run_id,
    }
    if as_json:
        cx.emit_json(outcome)
    else:
        known = "" if created else " (already known: not processed again)"
        cx.out.print(f"item {item_id}: {item.status}{known}", markup=False)
        if reason:
            cx.out.print(f"reason: {printable(reason)}", markup=False)
        cx.out.print(f"see everything about it: copydesk audit {item_id}", markup=False)


def url_problem(url: str) -> str | None:
    """Why `url` cannot be submitted at all (a usage error, no item is made), or None."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return "give an http or https URL"
    if not parts.hostname:
        return "the URL has no host"
    return None


def extract(
    cli: typer.Context,
    target: str = typer.Argument(..., help="a local .html (or .html.gz) file, or an http(s) URL"),
    as_json: bool = typer.Option(False, "--json", help="print the extraction as JSON"),
) -> None:
    """Print what the pipeline would extract from a page: title, author, date,
    canonical URL, word count and text. A URL is fetched exactly as the pipeline
    fetches it (address guard, size cap, robots.txt)."""
    from ingest.extract import extract_page
    from ingest.fetch import Fetcher, gunzip_capped

    settings = cx.load(cli)
    fetched: dict[str, object] = {}
    scheme = urlsplit(target).scheme.lower()
    if scheme in ("http", "https"):
        with Fetcher(settings.ingest) as fetcher:
            result = fetcher.get_page(target, trusted=True)  # the operator's own request
        if result.error:
            cx.fail(f"cannot fetch {target}: {result.error}", cx.EXIT_FAILED)
        fetched = {
            "status": result.status,
            "final_url": result.final_url,
            "bytes": len(result.content),
            "truncated": result.truncated,
            "content_type": result.headers.get("content-type"),
        }
        content, url = result.content, result.final_url
    elif "://" in target:
        cx.fail(f"{scheme}: is not read; give an http(s) URL or a local path", cx.EXIT_USAGE)
    else:
        path = Path(target)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            cx.fail(f"cannot read {path}: {exc.strerror}", cx.EXIT_USAGE)
        content, url = gunzip_capped(raw, settings.ingest.max_bytes)[0], None
    extracted = extract_page(content, url, full_metadata=True)
    if extracted.not_html:
        cx.fail(f"{target} is not an HTML page: nothing to extract", cx.EXIT_FAILED)
    minimum = settings.gates.min_source_words
    if as_json:
        cx.emit_json(_as_dict(extracted, fetched, minimum))
        return
    for line in _summary_lines(extracted, fetched, minimum):
        cx.out.print(printable(line), markup=False)
    cx.out.print("", markup=False)
    cx.out.print(printable(extracted.text) or "(no article text found)", markup=False)


def _as_dict(extracted: Extracted, fetched: dict[str, object], minimum: int) -> dict[str, object]:
    return {
        "title": extracted.title,
        "author": extracted.author,
        "date": extracted.date,
        "canonical_url": extracted.canonical_url,
        "word_count": _words(extracted),
        "min_source_words": minimum,
        "text": extracted.text,
        "fetch": fetched or None,
    }


def _summary_lines(extracted: Extracted, fetched: dict[str, object], minimum: int) -> list[str]:
    words = _words(extracted)
    verdict = "enough for an article" if words >= minimum else f"too short: minimum {minimum}"
    lines = []
    if fetched:
        cut = " (cut off at the size cap)" if fetched["truncated"] else ""
        lines.append(f"fetched: HTTP {fetched['status']}, {fetched['bytes']} bytes{cut}")
        lines.append(f"final url: {fetched['final_url']}")
    lines += [
        f"title: {extracted.title or '-'}",
        f"author: {extracted.author or '-'}",
        f"date: {extracted.date or '-'}",
        f"canonical: {extracted.canonical_url or '-'}",
        f"words: {words} ({verdict})",
    ]
    return lines


def _words(extracted: Extracted) -> int:
    """Counted as the source_length gate counts them: headline and text together."""
    from copydesk.services.pipeline import compose_source
    from guards.source import count_words

    return count_words(compose_source(extracted.title, extracted.text))
