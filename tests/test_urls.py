"""Canonical URLs and the dedup keys built on them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as s

from ingest.dedup import MAX_KEY_BYTES, item_keys, text_fingerprint, url_aliases
from ingest.urls import canonical_url, is_tracking_param


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTP://News.Example.ORG/Story", "http://news.example.org/Story"),
        ("https://news.example.org:443/a", "https://news.example.org/a"),
        ("http://news.example.org:80/a", "http://news.example.org/a"),
        ("http://news.example.org:8080/a", "http://news.example.org:8080/a"),
        ("https://news.example.org", "https://news.example.org/"),
        ("https://news.example.org/a#comments", "https://news.example.org/a"),
        (
            "https://news.example.org/a?utm_source=x&utm_medium=email&id=7&fbclid=abc&gclid=def",
            "https://news.example.org/a?id=7",
        ),
        ("https://news.example.org/a?UTM_Campaign=x", "https://news.example.org/a"),
        ("https://news.example.org/a?b=2&a=1", "https://news.example.org/a?b=2&a=1"),  # order kept
        ("https://news.example.org/a?flag&x=1", "https://news.example.org/a?flag&x=1"),
        ("https://news.example.org/a?q=one%20two", "https://news.example.org/a?q=one%20two"),
        ("https://news.example.org/%7euser/a%2fb", "https://news.example.org/~user/a%2Fb"),
        ("https://news.example.org/a/./b/../c", "https://news.example.org/a/c"),
        ("https://news.example.org./a", "https://news.example.org/a"),
        ("http://[2001:DB8::1]:80/a", "http://[2001:db8::1]/a"),
        ("  https://news.example.org/a  ", "https://news.example.org/a"),
        # user names and passwords are not part of the article's address
        ("https://editor@news.example.org/a", "https://news.example.org/a"),
        ("https://desk:s3cret@News.Example.org:443/a", "https://news.example.org/a"),
        # AT Internet campaign parameters go; a site's own at_ parameters stay
        (
            "https://news.example.org/a?at_medium=email&at_campaign=daily&at_page=2",
            "https://news.example.org/a?at_page=2",
        ),
        ("https://news.example.org/a?at_time=0930", "https://news.example.org/a?at_time=0930"),
    ],
)
def test_canonical_url(url, expected):
    assert canonical_url(url) == expected


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "file:///etc/passwd", "mailto:desk@example.org", "http://[::1", ""],
)
def test_non_web_or_broken_links_come_back_as_given(url):
    assert canonical_url(url) == url.strip()


def test_tracking_parameters():
    for name in ("utm_source", "utm_content", "fbclid", "gclid", "mc_eid", "_hsenc"):
        assert is_tracking_param(name)
    for name in ("at_medium", "at_campaign", "AT_Creation", "pk_campaign", "mtm_source"):
        assert is_tracking_param(name)
    for name in ("id", "page", "article", "utmost", "at_page", "at_time", "at"):
        assert not is_tracking_param(name)


@given(s.text(max_size=200))
def test_canonical_url_never_raises_and_is_idempotent(text):
    once = canonical_url(text)
    assert canonical_url(once) == once


@given(
    path=s.lists(s.sampled_from(["news", "2026", "a-b", "x.html", "%7e", "."]), max_size=5),
    params=s.lists(
        s.tuples(
            s.sampled_from(["id", "utm_source", "fbclid", "page", "gclid"]),
            s.text("ab1", max_size=3),
        ),
        max_size=5,
    ),
)
def test_no_tracking_parameter_survives(path, params):
    query = "&".join(f"{k}={v}" for k, v in params)
    url = canonical_url(f"HTTPS://News.Example.org/{'/'.join(path)}?{query}#frag")
    assert url.startswith("https://news.example.org/")
    assert "#" not in url
    assert not any(f"{name}=" in url for name in ("utm_source", "fbclid", "gclid"))


def test_item_keys_web_links_share_a_key_across_feeds():
    a = item_keys(1, "guid-1", "https://News.example.org/a?utm_source=rss")
    b = item_keys(2, "other-guid", "https://news.example.org/a#top")
    assert a == b == ("https://news.example.org/a", "https://news.example.org/a")


def test_item_keys_non_web_links_are_keyed_by_their_entry():
    source, key = item_keys(3, "g7", "javascript:alert(1)")
    assert source == "javascript:alert(1)" and key == "entry:3:g7"
    assert item_keys(3, "g8", None) == (None, "entry:3:g8")
    assert item_keys(None, None, "file:///etc/passwd")[1] == "entry:0:file:///etc/passwd"


def test_very_long_keys_are_hashed_to_stay_indexable():
    long_url = "https://news.example.org/a?" + "&".join(f"p{i}=v" for i in range(600))
    _, key = item_keys(1, "g", long_url)
    assert len(key.encode()) <= MAX_KEY_BYTES and key.startswith("url:sha256:")
    assert item_keys(1, "g", long_url)[1] == key  # stable


def test_url_aliases_drop_the_items_own_url_and_non_web_urls():
    own = "https://news.example.org/a"
    aliases = url_aliases(
        own,
        "https://news.example.org/a?utm_source=x",
        "https://www.news.example.org/a",
        "ftp://x/a",
        None,
    )
    assert aliases == ["https://www.news.example.org/a"]


def test_text_fingerprint_ignores_layout_case_and_the_headline():
    body = "The harbour board met on Tuesday.\n\nIt approved 14 new moorings."
    a = text_fingerprint(
        f"Harbour board approves moorings\n\n{body}", "Harbour board approves moorings"
    )
    b = text_fingerprint(
        "Moorings approved\n\n" + body.upper().replace("\n\n", "  "), "Moorings approved"
    )
    assert a == b
    assert a != text_fingerprint(body.replace("14", "15"))
