"""Article text from HTML: trafilatura for whole pages, a light walk for the
HTML fragments that feeds carry in `content:encoded`."""

from __future__ import annotations

import logging
import re
import threading
from copy import copy
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urljoin, urlsplit

import lxml.etree
import lxml.html
import trafilatura
from trafilatura.metadata import examine_meta, extract_meta_json, extract_metadata, extract_title
from trafilatura.settings import Extractor
from trafilatura.utils import load_html

from ingest.language import first_language

_BLOCKS = {
    "p",
    "div",
    "li",
    "blockquote",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "tr",
    "section",
    "article",
    "figcaption",
    "dd",
    "dt",
}
# trafilatura on lxml is not safe to call from several threads at once: concurrent
# extract() calls intermittently crash the process with a segmentation fault
# (https://github.com/adbar/trafilatura/issues/840, and /925 still open with
# trafilatura 2.2 on lxml 6.1; seen here once in about ten runs of the corpora test).
# The run's page workers extract one page at a time; fetching stays concurrent.
_PARSING = threading.Lock()
log = logging.getLogger(__name__)

_SPACES = re.compile(r"[ \t\r\f\v]+")
_BLANKS = re.compile(r"\n\s*\n+")


@dataclass(frozen=True)
class Extracted:
    text: str
    title: str | None = None
    author: str | None = None
    date: str | None = None
    canonical_url: str | None = None  # the page's own <link rel="canonical">, absolute
    cut: bool = False  # the page's markup was longer than the extraction cap
    language: str | None = None  # the language the page declares (ingest.language)
    not_html: bool = False  # the content does not parse as an HTML page at all


def _not_html_line(record: logging.LogRecord) -> bool:
    """trafilatura logs an ERROR when `load_html` rejects its input ("wrong data type
    or not valid HTML"); copydesk reports that itself (`Extracted.not_html`), once."""
    return "not valid HTML" not in record.getMessage()


logging.getLogger("trafilatura.utils").addFilter(_not_html_line)


def tidy(text: str) -> str:
    """Collapse runs of spaces inside lines and blank-line runs between paragraphs."""
    text = text.replace("\xa0", " ")
    # `_SPACES` changes nothing in a text whose every run is one space, and its scan
    # costs about 20 ns a character however few runs match (28 us of a bench page's
    # 32 in `tidy`; issue 24, session 17): five substring tests tell first. The whole
    # text at once: no run spans a line ("\n" is not in the class).
    if "  " in text or "\t" in text or "\r" in text or "\f" in text or "\v" in text:
        text = _SPACES.sub(" ", text)
    lines = [line.strip() for line in text.split("\n")]
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip()


def fragment_to_text(html: str) -> str:
    """Plain text of an HTML fragment, one paragraph per block element.

    Feed content is the publisher's own article body, so nothing is dropped as
    boilerplate; scripts, styles and embedded media are."""
    if not html or not html.strip():
        return ""
    if "<" not in html:
        return tidy(html)
    try:
        root = lxml.html.fragment_fromstring(html, create_parent="div")
    except (ValueError, lxml.etree.ParserError):
        return tidy(re.sub(r"<[^>]+>", " ", html))
    for bad in root.xpath("//script|//style|//noscript|//iframe|//object|//embed|//template"):
        bad.drop_tree()
    for br in root.iter("br"):
        br.tail = "\n" + (br.tail or "")
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.lower() in _BLOCKS:
            el.tail = "\n\n" + (el.tail or "")
            if el.text is not None or len(el):
                el.text = "\n\n" + (el.text or "")
    return tidy(root.text_content())


# The options that serve news best on the real-page benchmark in
# tests/test_extraction.py (bag-of-words F1, pooled over 62 pages): comments are
# not the article, and favouring precision drops the related-story lists, share
# bars and captions that otherwise cling to it (F1 0.953 -> 0.977). The text only:
# the metadata is read apart (`page_title`, or `extract_metadata` when asked).
EXTRACT_OPTIONS = {
    "include_comments": False,
    "include_tables": True,
    "favor_precision": True,
    "with_metadata": False,
}
# The same options as trafilatura's `Extractor` (the object `bare_extraction` builds
# from its keyword arguments), built once a process: each one built reads eight values
# from trafilatura's configparser and the date, 46 us a page (issue 24, session 16).
# `bare_extraction(options=...)` takes "a whole extractor configuration" (its docstring,
# https://github.com/adbar/trafilatura/blob/master/trafilatura/core.py); a page's copy
# carries its URL, as the keyword `url` did (trafilatura copies an Extractor before it
# changes one itself: core.py's recall retry). Its `date_params` hold the day it was
# built; they are read only with metadata, which this never asks trafilatura for.
_EXTRACTOR = Extractor(
    output_format="python",
    precision=EXTRACT_OPTIONS["favor_precision"],
    comments=EXTRACT_OPTIONS["include_comments"],
    tables=EXTRACT_OPTIONS["include_tables"],
    with_metadata=EXTRACT_OPTIONS["with_metadata"],
)


def extractor_for(url: str | None) -> Extractor:
    """trafilatura's options for a page at `url`: `_EXTRACTOR`'s, with the page's URL
    (`url` and `source`, as `Extractor.__init__` sets them)."""
    options = copy(_EXTRACTOR)
    options.url = url
    options.source = url and url.encode("utf-8", "replace").decode("utf-8")
    return options


# The XPath expressions a page is read with, compiled once a process: `tree.xpath(text)`
# compiles its expression at every call (41 us a page for these five, issue 24);
# an `XPath` object has "the same semantics" and is "more efficient for frequent
# evaluation" (https://lxml.de/xpathxslt.html). Used under _PARSING, one page at a time;
# shared by threads it would still be safe: each XPath object evaluates under a lock of
# its own (`_XPathEvaluatorBase._eval_lock`, lxml's src/lxml/xpath.pxi).
_CANONICAL = lxml.etree.XPath(
    "//link[@href][contains(concat(' ', normalize-space("
    "translate(@rel, 'CANONICAL', 'canonical')), ' '), ' canonical ')]/@href"
)


def _date_params() -> dict[str, object]:
    """Dates from the page's markup only. htmldate's extensive search falls back to
    dateparser on free text, which costs seconds the first time in a process and
    tens of milliseconds per page after; the pipeline takes its dates from feeds,
    and the benchmark pages all date themselves in markup."""
    return {
        "original_date": True,
        "extensive_search": False,
        "max_date": datetime.now().astimezone().strftime("%Y-%m-%d"),
    }


def page_title(tree: lxml.html.HtmlElement) -> str | None:
    """The page's title, as trafilatura's full metadata reads it, without the rest.

    trafilatura's metadata read (`with_metadata`, https://trafilatura.readthedocs.io/
    en/latest/quickstart.html; `extract_metadata` in its published source,
    https://trafilatura.readthedocs.io/en/latest/_modules/trafilatura/metadata.html)
    also searches the page for a date, author, site name, categories, tags and
    licence: about 5 ms of a real page's 19, where this takes 0.6. The pipeline uses
    only the title (author and date come from the feed). These are the steps by which
    `extract_metadata` reaches the title, in its order: meta elements (Open Graph
    first), then JSON-LD, then the <h1>/<title> fallbacks, then its trim.
    tests/test_extraction.py holds the title equal to the full read's on 62 real
    pages; trafilatura is pinned in requirements.lock."""
    found = examine_meta(tree)
    if found.author and " " not in found.author:  # as extract_metadata, for JSON-LD's sake
        found.author = None
    try:
        found = extract_meta_json(tree, found)
    except Exception as exc:  # noqa: BLE001 - as extract_metadata: a JSON-LD bug is no title
        log.warning("error in the page's JSON-LD metadata: %s", exc)
    found.title = found.title or extract_title(tree)
    found.clean_and_trim()
    return found.title


def declared_canonical(tree: lxml.html.HtmlElement, url: str | None) -> str | None:
    """The page's rel=canonical link, absolute (relative ones resolve against the
    page's URL), or None when there is none or it is not http(s)."""
    for href in _CANONICAL(tree):
        href = str(href).strip()
        if not href:
            continue
        try:
            absolute = urljoin(url, href) if url else href
            parts = urlsplit(absolute)
        except ValueError:
            continue
        if parts.scheme.lower() in ("http", "https") and parts.hostname:
            return absolute
    return None


_LANGUAGE_PATHS = tuple(
    lxml.etree.XPath(path)
    for path in (
        "/html/@lang",
        "/html/@*[name()='xml:lang']",
        "//head/meta[translate(@http-equiv, 'CONTENT-LANGUAGE', 'content-language')"
        "='content-language']/@content",
        "//head/meta[@property='og:locale']/@content",
    )
)


def declared_language(tree: lxml.html.HtmlElement) -> str | None:
    """The language the page declares: `<html lang>` (or xml:lang), then a
    content-language meta element, then Open Graph's og:locale ("fr_FR"); None when
    it declares none."""
    for path in _LANGUAGE_PATHS:
        try:
            found = path(tree)
        except lxml.etree.XPathError:
            continue
        code = first_language(*(str(v) for v in found))
        if code:
            return code
    return None


# Elements whose content is never article text. A 15 MB page is mostly these
# (inline scripts and data, styles, comments); parsing them into a tree cost
# hundreds of MB per page, for nothing the extraction keeps.
_INERT_OPEN = re.compile(rb"<(script|style|noscript|template)\b|<!--", re.IGNORECASE)
_INERT_CLOSE = {
    b"script": re.compile(rb"</script\s*>", re.IGNORECASE),
    b"style": re.compile(rb"</style\s*>", re.IGNORECASE),
    b"noscript": re.compile(rb"</noscript\s*>", re.IGNORECASE),
    b"template": re.compile(rb"</template\s*>", re.IGNORECASE),
    None: re.compile(rb"-->"),
}


def strip_inert(html: bytes) -> bytes:
    """The page without its scripts, styles, noscripts, templates and comments, in
    one pass (each search starts where the last ended, so hostile markup with
    thousands of unclosed tags stays linear). An element left open runs to the
    end, as an HTML parser would read it. lxml's Cleaner is not used: it needs
    the whole tree first, which is the memory this saves."""
    kept: list[bytes] = []
    pos = 0
    while True:
        opened = _INERT_OPEN.search(html, pos)
        if opened is None:
            kept.append(html[pos:])
            break
        name = opened.group(1).lower() if opened.group(1) else None
        closed = _INERT_CLOSE[name].search(html, opened.end())
        if name == b"script" and b"ld+json" in html[opened.end() : opened.end() + 300].lower():
            # Structured data (JSON-LD) is where trafilatura reads author and date.
            end = closed.end() if closed else len(html)
            kept.append(html[pos:end])
            pos = end
            continue
        kept.append(html[pos : opened.start()])
        if closed is None:
            break
        pos = closed.end()
    return b"".join(kept)


def reduce_page(html: str | bytes, max_bytes: int | None) -> tuple[bytes | str, bool]:
    """What reaches the extractor: inert parts stripped, then at most `max_bytes`
    (cut before a tag). (html, whether it was cut)."""
    if isinstance(html, str):
        return html, False
    html = strip_inert(html)
    if max_bytes is None or len(html) <= max_bytes:
        return html, False
    cut = html.rfind(b"<", 0, max_bytes)
    return html[: cut if cut > 0 else max_bytes], True


def extract_page(
    html: str | bytes,
    url: str | None = None,
    *,
    max_bytes: int | None = None,
    full_metadata: bool = False,
) -> Extracted:
    """The article of a whole web page, with its title and the canonical URL the page
    declares; its author and date too with `full_metadata` (`copydesk extract` shows
    them; the pipeline takes both from the feed). Never raises for bad HTML: an empty
    text. `max_bytes` caps the markup handed to the parser once inert parts are gone
    (`Extracted.cut` says it was reached)."""
    html, cut = reduce_page(html, max_bytes)
    with _PARSING:
        return _extract(html, url, cut, full_metadata)


def _extract(html: str | bytes, url: str | None, cut: bool, full_metadata: bool) -> Extracted:
    tree = load_html(html)
    if tree is None:  # trafilatura's log line for it is dropped (_NOT_HTML): said here
        return Extracted(text="", cut=cut, not_html=True)
    canonical = declared_canonical(tree, url)
    language = declared_language(tree)
    # bare_extraction works on its own copy of the tree: the metadata below reads the page
    # as trafilatura's full call did (it reads metadata before the text).
    raw = trafilatura.bare_extraction(tree, options=extractor_for(url))
    if raw is None:
        return Extracted(text="", canonical_url=canonical, cut=cut, language=language)
    if full_metadata:
        meta = extract_metadata(tree, url, _date_params())
        title, author, date = meta.title, meta.author, meta.date
    else:
        title, author, date = page_title(tree), None, None
    return Extracted(
        text=tidy(raw.text or ""),
        title=title,
        author=author,
        date=date,
        canonical_url=canonical,
        cut=cut,
        # trafilatura's own `language` is set only by its optional language filter.
        language=language or first_language(raw.language),
    )
