"""Text extraction: the real-page benchmark (bag-of-words F1 against what a person
marked as the article body), and the details the pipeline relies on."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter

import pytest
import trafilatura
from hypothesis import given, settings
from hypothesis import strategies as st
from trafilatura.utils import load_html

from ingest.extract import EXTRACT_OPTIONS, extract_page, fragment_to_text, reduce_page, tidy
from tests.articles import LIBRARY, TITLES, page_html
from tests.ingest_helpers import corpora

MIN_F1 = 0.94
_WORD = re.compile(r"\w+")


def bag(text: str) -> Counter[str]:
    return Counter(_WORD.findall(text.lower()))


def pooled_f1(pairs: list[tuple[str, str]]) -> tuple[float, float, float]:
    """Micro-averaged bag-of-words precision, recall and F1: the overlap of
    lower-cased word tokens, pooled over all pages (so long pages weigh more)."""
    tp = fp = fn = 0
    for extracted, truth in pairs:
        got, want = bag(extracted), bag(truth)
        overlap = sum((got & want).values())
        tp += overlap
        fp += sum(got.values()) - overlap
        fn += sum(want.values()) - overlap
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def benchmark_pages() -> list[tuple[bytes, str, str]]:
    """The 62 real pages: (html, url, the article body a person marked)."""
    root = corpora() / "articles" / "scrapinghub-dev"
    truth = json.loads((root / "ground-truth.json").read_text(encoding="utf-8"))
    pages = sorted((root / "html").glob("*.html.gz"))
    assert len(pages) == len(truth) == 62
    found = []
    for page in pages:
        key = page.name.removesuffix(".html.gz")
        html = gzip.decompress(page.read_bytes())
        found.append((html, truth[key]["url"], truth[key]["articleBody"]))
    return found


def test_pooled_f1_is_computed_as_documented():
    assert pooled_f1([("a b c", "a b c")]) == (1.0, 1.0, 1.0)
    p, r, f1 = pooled_f1([("a b", "a b c d"), ("x", "y")])
    assert (p, r) == (2 / 3, 2 / 5) and f1 == pytest.approx(0.5)


def test_benchmark_pages_reach_the_f1_floor(capsys):
    pairs = [(extract_page(html, url).text, body) for html, url, body in benchmark_pages()]
    precision, recall, f1 = pooled_f1(pairs)
    with capsys.disabled():
        print(f"\nextraction benchmark: P={precision:.4f} R={recall:.4f} F1={f1:.4f} (62 pages)")
    assert f1 >= MIN_F1, f"bag-of-words F1 {f1:.4f} < {MIN_F1}"
    assert not EXTRACT_OPTIONS["include_comments"]


def full_metadata_call(html: bytes, url: str | None) -> dict[str, str | None]:
    """What `extract_page` read up to session 9: one `bare_extraction` with trafilatura's
    full metadata (title, author, date, site name, categories, tags, licence...)."""
    tree = load_html(reduce_page(html, None)[0])
    raw = trafilatura.bare_extraction(
        tree,
        url=url,
        date_extraction_params={"original_date": True, "extensive_search": False},
        include_comments=False,
        include_tables=True,
        favor_precision=True,
        with_metadata=True,
    )
    assert raw is not None
    return {"text": tidy(raw.text), "title": raw.title, "author": raw.author, "date": raw.date}


def test_text_and_title_are_those_of_the_full_metadata_call_on_the_62_pages():
    """The pipeline asks trafilatura for the text and reads the title alone; on every
    real page both are what the full metadata call gave, and `copydesk extract`
    (full_metadata, with or without the page's URL) still gives its author and date."""
    for html, url, _ in benchmark_pages():
        old = full_metadata_call(html, url)
        new = extract_page(html, url)
        assert (new.text, new.title) == (old["text"], old["title"]), url
        assert new.author is None and new.date is None, url
        old = full_metadata_call(html, None)
        full = extract_page(html, None, full_metadata=True)
        assert (full.text, full.title, full.author, full.date) == tuple(old.values()), url


def test_only_the_extract_command_reads_the_byline_and_date():
    html = page_html(TITLES["library"], LIBRARY).replace(
        "<title>",
        '<meta name="author" content="Mabel Tunney"><meta name="date" content="2026-11-30"><title>',
    )
    url = "https://gazette.example.org/news/library"
    light, full = extract_page(html, url), extract_page(html, url, full_metadata=True)
    assert light.title == full.title == TITLES["library"] and light.text == full.text
    assert (light.author, light.date) == (None, None)
    assert (full.author, full.date) == ("Mabel Tunney", "2026-11-30")


def test_comments_navigation_and_footer_are_not_the_article():
    html = page_html(TITLES["library"], LIBRARY)
    extracted = extract_page(html, "https://gazette.example.org/news/library")
    assert "40% of its roof timbers" in extracted.text
    assert "Mabel Tunney" in extracted.text
    assert "First! Great article" not in extracted.text
    assert "All rights reserved" not in extracted.text
    assert extracted.title == TITLES["library"]


def test_declared_canonical_is_absolute():
    html = page_html(TITLES["library"], LIBRARY, canonical="/news/library-closure?utm_source=x")
    extracted = extract_page(html, "https://m.gazette.example.org/news/123")
    assert (
        extracted.canonical_url == "https://m.gazette.example.org/news/library-closure?utm_source=x"
    )
    assert extract_page(page_html("t", LIBRARY), "https://x.example.org/a").canonical_url is None


def test_the_declared_canonical_and_language_compile_no_xpath_a_page(monkeypatch):
    """The page's rel=canonical and declared language are read with XPath expressions
    compiled once a process (issue 24, session 15: `tree.xpath(text)` compiled up to five
    expressions a page, 41 us of its 1.8 ms extraction); the same answers."""
    import lxml.html

    from ingest import extract

    compiled = []
    xpath = lxml.html.HtmlElement.xpath

    def counted(self, path, *args, **kwargs):  # type: ignore[no-untyped-def]
        compiled.append(path)
        return xpath(self, path, *args, **kwargs)

    html = page_html(TITLES["library"], LIBRARY, canonical="/news/library-closure")
    html = html.replace("<html>", '<html lang="fr-CA">', 1)
    tree = load_html(html)
    monkeypatch.setattr(lxml.html.HtmlElement, "xpath", counted)
    canonical = extract.declared_canonical(tree, "https://m.gazette.example.org/news/123")
    assert canonical == "https://m.gazette.example.org/news/library-closure"
    assert extract.declared_language(tree) == "fr"
    assert compiled == []  # failed before: the canonical's and html/@lang, compiled again


@pytest.mark.parametrize(
    "junk", [b"", b"\x00\x01\x02", b"%PDF-1.4 binary", "<html><body></body></html>"]
)
def test_junk_gives_empty_text_not_an_exception(junk):
    assert extract_page(junk, "https://x.example.org/a").text == ""


def test_fragment_to_text_keeps_paragraphs_and_drops_scripts():
    html = (
        "<p>First  paragraph.</p><script>alert(1)</script>"
        "<p>Second<br>line.</p><ul><li>one</li></ul>"
    )
    assert fragment_to_text(html) == "First paragraph.\n\nSecond\nline.\n\none"
    assert fragment_to_text("plain &amp; simple") == "plain &amp; simple"
    assert fragment_to_text("") == ""


def test_a_page_builds_no_trafilatura_options_and_gets_the_same_ones(monkeypatch):
    """trafilatura's options (its `Extractor`) are built once a process, each page given
    a copy with its URL (issue 24, session 16: built again for every page from the
    keywords, eight configparser reads, 46 us a page); the copy holds, slot by slot,
    what `bare_extraction` built from EXTRACT_OPTIONS and the page's URL."""
    import trafilatura.core
    from trafilatura.settings import Extractor

    built: list[Extractor] = []
    init = Extractor.__init__

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        built.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(Extractor, "__init__", counted)
    html = page_html(TITLES["library"], LIBRARY)
    pages = [extract_page(html, f"https://gazette.example.org/news/{n}") for n in range(3)]
    assert built == []  # failed before: one Extractor a page
    assert all(p.text and p.title == TITLES["library"] for p in pages)

    from ingest.extract import extractor_for

    given: list[Extractor] = []
    sequence = trafilatura.core.trafilatura_sequence

    def recorded(tree, options, url):  # type: ignore[no-untyped-def]
        given.append(options)
        return sequence(tree, options, url)

    monkeypatch.setattr(trafilatura.core, "trafilatura_sequence", recorded)
    for url in ("https://gazette.example.org/news/brücke?a=1", None):
        trafilatura.bare_extraction(load_html(html), url=url, **EXTRACT_OPTIONS)
        trafilatura.bare_extraction(load_html(html), options=extractor_for(url))
        old, new = given[-2:]
        assert new is not old
        for slot in Extractor.__slots__:
            assert getattr(new, slot) == getattr(old, slot), slot


def _tidy_before(text: str) -> str:
    """`tidy` as it was before issue 24, session 17: every run of spaces and tabs,
    line by line, replaced by one space (a lone space by itself)."""
    spaces = re.compile(r"[ \t\r\f\v]+")
    lines = [spaces.sub(" ", line).strip() for line in text.replace("\xa0", " ").split("\n")]
    return re.sub(r"\n\s*\n+", "\n\n", "\n".join(lines)).strip()


def test_tidy_scans_no_text_whose_spaces_are_single(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 24, session 17: `tidy` ran its spaces pattern over every line, 28 us of
    the 32 it took on a bench page though nothing there changed; a text whose every
    run is one space is not scanned now (5 scans of its lines before), and a text with
    others is tidied as before."""
    from ingest import extract

    scans: list[str] = []
    spaces = extract._SPACES

    class Counted:
        def sub(self, repl: str, text: str) -> str:
            scans.append(text)
            return spaces.sub(repl, text)

    monkeypatch.setattr(extract, "_SPACES", Counted())
    single = "Dispatch 7\nThe harbour board met.\n\nMembers heard.\nPart 0.\n\xa0End."
    assert tidy(single) == _tidy_before(single)
    assert scans == []
    messy = "  Lead \t line\xa0 here \n\n\n\x0bsecond  para\r\n\u2003third\f"
    assert tidy(messy) == _tidy_before(messy) == "Lead line here\n\nsecond para\nthird"
    assert len(scans) == 1


@given(st.text(alphabet=st.sampled_from(" \t\r\f\v\n\xa0\u2003\x1c\x85ab."), max_size=60))
@settings(max_examples=400, deadline=None)
def test_tidy_is_what_it_was(text: str) -> None:
    assert tidy(text) == _tidy_before(text)
