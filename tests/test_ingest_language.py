"""The language a feed or page declares is stored with its item at ingest and read by
the draft gates instead of detecting it; detection stays the fallback (issue 20).

The story is invented: a bilingual local report whose long French opening makes the
text *look* French to the gates' detector, so "4,500 people" would read 4.5 (a comma
before three digits is a decimal mark in French) and a faithful English draft would
be discarded. The feed or the page says the article is English: the draft stands.
"""

from __future__ import annotations

import json

import pytest
from sqlmodel import Session, select

from copydesk.config import Settings
from copydesk.services.feeds import add_feed
from copydesk.services.pipeline import Pipeline
from copydesk.services.replay import replay
from guards.registry import DEFAULT_MODES, run_gates
from guards.units import detect_language
from ingest.extract import extract_page
from ingest.feeds import parse_feed
from ingest.fetch import Fetcher, FetchResult
from ingest.language import language_code
from store import verdicts as stored_verdicts
from store.models import GateVerdict, Item
from summarise.recorded import RecordedReply, RecordedSummariser
from tests.ingest_helpers import LOOPBACK_ALLOW
from tests.language_material import HEADLINE, SOURCE, SUMMARY, TITLE


def test_the_story_looks_french_to_the_detector() -> None:
    """The premise: without a declared language the gates misread 4,500."""
    assert detect_language(SOURCE) == "fr"
    draft = f"{HEADLINE}\n\n{SUMMARY}"
    modes = dict(DEFAULT_MODES)
    (guessed,) = run_gates(("numbers_grounded",), SOURCE, None, draft, modes=modes)
    (declared,) = run_gates(("numbers_grounded",), SOURCE, None, draft, modes=modes, language="en")
    assert (guessed.hard_fail, declared.hard_fail) == (True, False)
    # A language the gates do not read is detected, as if nothing were declared.
    (other,) = run_gates(("numbers_grounded",), SOURCE, None, draft, modes=modes, language="pt")
    assert other.hard_fail


@pytest.mark.parametrize(
    ("declared", "code"),
    [
        ("en-GB", "en"),
        ("de_AT", "de"),
        (" FR ", "fr"),
        ("nl-BE", "nl"),
        ("English", "en"),
        ("Deutsch", "de"),
        ("x-klingon", None),
        ("*", None),
        ("und", None),
        ("", None),
        (None, None),
        (42, None),
        ("en-GB; q=0.8, fr", None),
        # ISO 639-2/B, 639-2/T and 639-3 codes of the languages the gates read
        ("eng", "en"),
        ("ger", "de"),
        ("deu", "de"),
        ("fre", "fr"),
        ("fra-CA", "fr"),
        ("spa", "es"),
        ("ITA", "it"),
        ("dut", "nl"),
        ("nld", "nl"),
        ("por", "por"),  # a language the gates do not read: as written
    ],
)
def test_language_code(declared: object, code: str | None) -> None:
    assert language_code(declared) == code


def _fetched(body: str, content_type: str) -> FetchResult:
    url = "http://feeds.example.test/feed"
    return FetchResult(url, url, 200, {"content-type": content_type}, body.encode("utf-8"))


RSS = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Vallée</title><link>http://v.example.test/</link>
<description>d</description>{language}
<item><title>One</title><link>http://v.example.test/1</link><guid>1</guid></item>
</channel></rss>"""

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="fr-CA"><title>Vallée</title>
<id>urn:v</id><updated>2026-11-30T09:00:00Z</updated>
<entry><title>Un</title><id>urn:v:1</id><updated>2026-11-30T09:00:00Z</updated>
<link href="http://v.example.test/1"/>
<content type="html">&lt;p&gt;Texte&lt;/p&gt;</content></entry>
<entry xml:lang="en"><title>Two</title><id>urn:v:2</id><updated>2026-11-30T09:00:00Z</updated>
<link href="http://v.example.test/2"/>
<content type="html">&lt;p&gt;Text&lt;/p&gt;</content></entry>
</feed>"""


def test_feeds_declare_languages() -> None:
    rss = parse_feed(_fetched(RSS.format(language="<language>en-ca</language>"), "text/xml"))
    assert [e.language for e in rss.entries] == ["en"]
    bare = parse_feed(_fetched(RSS.format(language=""), "text/xml"))
    assert [e.language for e in bare.entries] == [None]
    # Atom: the feed's xml:lang, and an entry's own xml:lang over it.
    atom = parse_feed(_fetched(ATOM, "application/atom+xml"))
    assert [e.language for e in atom.entries] == ["fr", "en"]
    # JSON Feed 1.1: "language" on the feed and on an item.
    items = [
        {"id": "1", "url": "http://v.example.test/1", "content_text": "Texte"},
        {"id": "2", "url": "http://v.example.test/2", "content_text": "Text", "language": "en"},
    ]
    feed = {"version": "https://jsonfeed.org/version/1.1", "language": "fr", "items": items}
    parsed = parse_feed(_fetched(json.dumps(feed), "application/feed+json"))
    assert [e.language for e in parsed.entries] == ["fr", "en"]


def _page(head: str = "", html_attrs: str = "") -> bytes:
    body = "".join(f"<p>{p}</p>" for p in SOURCE.split("\n\n"))
    return (
        f"<!doctype html><html{html_attrs}><head><meta charset='utf-8'>{head}"
        f"<title>{TITLE}</title></head><body><article><h1>{TITLE}</h1>{body}</article>"
        "</body></html>"
    ).encode()


@pytest.mark.parametrize(
    ("page", "code"),
    [
        (_page(html_attrs=' lang="en-GB"'), "en"),
        (_page(html_attrs=' xml:lang="en"'), "en"),
        (_page(head='<meta http-equiv="Content-Language" content="en-US">'), "en"),
        (_page(head='<meta property="og:locale" content="en_GB">'), "en"),
        (
            _page(
                html_attrs=' lang="x-private"', head='<meta property="og:locale" content="fr_FR">'
            ),
            "fr",
        ),
        (_page(), None),
    ],
)
def test_pages_declare_languages(page: bytes, code: str | None) -> None:
    extracted = extract_page(page, "http://v.example.test/1")
    assert "4,500 people" in extracted.text
    assert extracted.language == code


def _settings(db_url: str) -> Settings:
    return Settings.model_validate(
        {
            "database": {"url": db_url},
            "summarise": {"backend": "extractive", "retry_base_seconds": 0},
            "ingest": {"allow_private": LOOPBACK_ALLOW, "respect_robots": False},
        }
    )


def _run(engine, db_url: str, feed_url: str, page_url: str) -> Item:
    settings = _settings(db_url)
    with Session(engine, expire_on_commit=False) as session:
        add_feed(session, feed_url, "Vallée")
        session.commit()
    reply = RecordedReply(page_url, HEADLINE, SUMMARY)
    with Fetcher(settings.ingest) as fetcher:
        summariser = RecordedSummariser({page_url: reply})
        Pipeline(settings, engine, summariser, fetcher).run()
    with Session(engine) as session:
        (item,) = session.exec(select(Item)).all()
        session.expunge(item)
        return item


def _numbers_verdict(engine, item_id: int) -> GateVerdict:
    with Session(engine) as session:
        (found,) = [
            v for v in stored_verdicts.of_item(session, item_id) if v.gate == "numbers_grounded"
        ]
        return found


@pytest.mark.parametrize("declared", ["<language>en-ca</language>", ""])
def test_a_feed_language_is_stored_and_read_by_the_gates(
    httpserver, db_url: str, engine, declared: str
) -> None:
    """The feed carries the whole article: with <language>en-ca</language> the faithful
    draft is kept (and replay agrees); without it the detector reads French and the
    draft is discarded for a number it did not invent, as before."""
    page_url = httpserver.url_for("/saint-aulne")
    content = "".join(f"<p>{p}</p>" for p in SOURCE.split("\n\n"))
    feed = f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>
<title>Vallée</title><link>{httpserver.url_for("/")}</link><description>d</description>
{declared}<item><title>{TITLE}</title><link>{page_url}</link><guid>sa-1</guid>
<content:encoded><![CDATA[{content}]]></content:encoded></item></channel></rss>"""
    httpserver.expect_request("/feed.xml").respond_with_data(feed, content_type="text/xml")
    item = _run(engine, db_url, httpserver.url_for("/feed.xml"), page_url)
    assert item.text_origin == "feed_content"
    verdict = _numbers_verdict(engine, item.id)  # type: ignore[arg-type]
    if declared:
        assert (item.language, item.status, verdict.passed) == ("en", "draft", True)
        report = replay(engine, modes=dict(DEFAULT_MODES), min_source_words=150)
        assert (report.examined, report.flips) == (1, [])
    else:
        assert (item.language, item.status, verdict.passed) == (None, "discarded", False)


def test_a_page_language_is_stored_over_the_feed_and_read_by_the_gates(
    httpserver, db_url: str, engine
) -> None:
    """A teaser in a feed that declares French, the article on a page that declares
    English: the page's word is kept (it describes the article itself)."""
    page_url = httpserver.url_for("/saint-aulne")
    feed = RSS.format(language="<language>fr</language>").replace(
        "<link>http://v.example.test/1</link>", f"<link>{page_url}</link>"
    )
    httpserver.expect_request("/feed.xml").respond_with_data(feed, content_type="text/xml")
    httpserver.expect_request("/saint-aulne").respond_with_data(
        _page(html_attrs=' lang="en-GB"'), content_type="text/html; charset=utf-8"
    )
    item = _run(engine, db_url, httpserver.url_for("/feed.xml"), page_url)
    assert (item.text_origin, item.language, item.status) == ("page", "en", "draft")
    assert _numbers_verdict(engine, item.id).passed  # type: ignore[arg-type]
