"""Text extraction: the real-page benchmark (bag-of-words F1 against what a person
marked as the article body), and the details the pipeline relies on."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter

import pytest

from ingest.extract import EXTRACT_OPTIONS, extract_page, fragment_to_text
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


def test_pooled_f1_is_computed_as_documented():
    assert pooled_f1([("a b c", "a b c")]) == (1.0, 1.0, 1.0)
    p, r, f1 = pooled_f1([("a b", "a b c d"), ("x", "y")])
    assert (p, r) == (2 / 3, 2 / 5) and f1 == pytest.approx(0.5)


def test_benchmark_pages_reach_the_f1_floor(capsys):
    root = corpora() / "articles" / "scrapinghub-dev"
    truth = json.loads((root / "ground-truth.json").read_text(encoding="utf-8"))
    pages = sorted((root / "html").glob("*.html.gz"))
    assert len(pages) == len(truth) == 62
    pairs = []
    for page in pages:
        key = page.name.removesuffix(".html.gz")
        extracted = extract_page(gzip.decompress(page.read_bytes()), truth[key]["url"])
        pairs.append((extracted.text, truth[key]["articleBody"]))
    precision, recall, f1 = pooled_f1(pairs)
    with capsys.disabled():
        print(f"\nextraction benchmark: P={precision:.4f} R={recall:.4f} F1={f1:.4f} (62 pages)")
    assert f1 >= MIN_F1, f"bag-of-words F1 {f1:.4f} < {MIN_F1}"
    assert not EXTRACT_OPTIONS["include_comments"]


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
