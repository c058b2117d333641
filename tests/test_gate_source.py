"""Source gates: an item needs an absolute http(s) source URL and a real article's worth of text."""

from __future__ import annotations

import json

import pytest

from guards.source import count_words, source_length, source_url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (None, "no source URL"),
        ("", "no source URL"),
        ("   ", "no source URL"),
        ("/news/harbour-board", "source URL scheme is none (relative URL), not http(s)"),
        ("news.example.org/harbour", "source URL scheme is none (relative URL), not http(s)"),
        ("//news.example.org/harbour", "source URL scheme is none (relative URL), not http(s)"),
        ("javascript:alert(1)", "source URL scheme is javascript, not http(s)"),
        ("JavaScript:alert(1)", "source URL scheme is javascript, not http(s)"),
        ("ftp://files.example.org/a.txt", "source URL scheme is ftp, not http(s)"),
        ("file:///etc/passwd", "source URL scheme is file, not http(s)"),
        ("mailto:desk@example.org", "source URL scheme is mailto, not http(s)"),
        ("data:text/html,hello", "source URL scheme is data, not http(s)"),
        ("https://", "source URL has no host"),
        ("http:///harbour", "source URL has no host"),
        ("https://:443/harbour", "source URL has no host"),
        ("http://[::1", "source URL cannot be parsed: Invalid IPv6 URL"),
    ],
)
def test_bad_source_urls_fail(url: str | None, reason: str) -> None:
    v = source_url("text", url, "draft")
    assert v.gate == "source_url"
    assert v.passed is False
    assert v.reason == reason
    assert v.evidence["url"] == url


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://news.example.org/ostbrook/harbour", "news.example.org"),
        ("http://news.example.org", "news.example.org"),
        ("HTTPS://News.Example.org/a?b=c#d", "news.example.org"),
        ("  https://news.example.org/a  ", "news.example.org"),
        ("https://news.example.org:8443/a", "news.example.org"),
        ("http://127.0.0.1:8080/feed", "127.0.0.1"),
        ("http://[::1]/a", "::1"),
        ("https://user@news.example.org/a", "news.example.org"),
    ],
)
def test_good_source_urls_pass(url: str, host: str) -> None:
    v = source_url("text", url, "draft")
    assert v.passed is True
    assert v.reason == "absolute http(s) URL with a host"
    assert v.evidence == {"url": url, "host": host}
    json.dumps(v.to_dict())


def test_source_url_needs_neither_source_nor_draft() -> None:
    assert source_url(None, "https://news.example.org/a").passed


def words(n: int) -> str:
    return " ".join(["harbour"] * n)


@pytest.mark.parametrize(
    ("n", "passes"), [(0, False), (1, False), (149, False), (150, True), (151, True), (600, True)]
)
def test_source_length_threshold(n: int, passes: bool) -> None:
    v = source_length(words(n), "https://news.example.org/a", "draft")
    assert v.gate == "source_length"
    assert v.passed is passes
    assert v.evidence == {"words": n, "min_words": 150}
    if passes:
        assert v.reason == f"source has {n} words"
    else:
        assert v.reason == f"source has {n} words, fewer than 150"


def test_source_length_threshold_is_configurable() -> None:
    assert source_length(words(20), min_words=20).passed
    assert not source_length(words(19), min_words=20).passed


@pytest.mark.parametrize("source", [None, "", "   \n\t ", "— … !!"])
def test_empty_source_has_no_words(source: str | None) -> None:
    v = source_length(source, min_words=1)
    assert not v.passed
    assert v.evidence["words"] == 0


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("The harbour board met on Monday.", 6),
        ("A well-known 61-year-old chair", 4),
        ("Ostbrook's board and the Smiths\u2019 yard", 6),
        ("aged 31, 45 and 52", 5),
        ("It cost 41,200 or 8.7 million", 6),
        ("U.S. officials", 2),
        ("Grüße aus Köln", 3),
        ("line\none\ttwo", 3),
    ],
)
def test_count_words(text: str, n: int) -> None:
    assert count_words(text) == n
