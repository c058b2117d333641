"""The bundled demo sample must exercise every gate the way its README promises.

These checks are deliberately independent of `guards/`: they pin down the
sample itself (a teaser, a link-less item, a duplicate, replies that break
exactly one gate), so a gate bug cannot make the sample look right.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import feedparser
import pytest

SAMPLE = Path(__file__).resolve().parent.parent / "copydesk" / "sample"
FEED = SAMPLE / "feed.xml"
REPLIES = SAMPLE / "recorded_replies.json"
BASE = "https://news.example.org/"

_WORD = re.compile(r"\w+(?:[-'’.]\w+)*")
# A number token: digits with optional thousands separators and decimal part.
_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
_QUOTED = re.compile(r"“([^”]+)”|\"([^\"]+)\"")


class _TextOnly(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_to_text(markup: str) -> str:
    parser = _TextOnly()
    parser.feed(markup)
    parser.close()
    return " ".join(" ".join(parser.parts).split())


def words(text: str) -> int:
    return len(_WORD.findall(text))


def numbers(text: str) -> set[str]:
    """Numbers of two or more digits, thousands separators dropped, decimals kept."""
    found = (token.replace(",", "") for token in _NUMBER.findall(text))
    return {n for n in found if sum(ch.isdigit() for ch in n) >= 2}


def quotations(text: str) -> list[str]:
    return [curly or straight for curly, straight in _QUOTED.findall(text)]


def normalise(text: str) -> str:
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    return " ".join(text.lower().split())


def without_query(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


@pytest.fixture(scope="module")
def feed() -> Any:
    return feedparser.parse(FEED.read_bytes())


@pytest.fixture(scope="module")
def entries(feed: Any) -> list[Any]:
    return list(feed.entries)


@pytest.fixture(scope="module")
def source_by_link(entries: list[Any]) -> dict[str, str]:
    return {e.link: html_to_text(e.content[0].value) for e in entries if e.get("link")}


@pytest.fixture(scope="module")
def replies() -> list[dict[str, str]]:
    return json.loads(REPLIES.read_text(encoding="utf-8"))["replies"]


def _entry_words(entry: Any) -> int:
    return words(html_to_text(entry.content[0].value))


def test_feed_parses_cleanly_as_rss(feed: Any) -> None:
    assert feed.bozo == 0, feed.get("bozo_exception")
    assert feed.version == "rss20"
    assert feed.feed.link == BASE
    assert feed.namespaces.get("content") == "http://purl.org/rss/1.0/modules/content/"
    assert feed.namespaces.get("dc") == "http://purl.org/dc/elements/1.1/"


def test_every_entry_is_complete(entries: list[Any]) -> None:
    assert len(entries) >= 14
    for entry in entries:
        assert entry.title.strip()
        assert entry.get("author", "").strip(), entry.title
        assert entry.get("summary", "").strip(), entry.title
        assert entry.get("content") and entry.content[0].value.lstrip().startswith("<p>")
        assert entry.id and entry.guidislink is False, entry.title
        published = entry.published_parsed
        assert (published.tm_year, published.tm_mon) == (2026, 11), entry.title
    guids = [entry.id for entry in entries]
    assert len(set(guids)) == len(guids)


def test_at_least_twelve_full_length_articles(entries: list[Any]) -> None:
    full = [e for e in entries if 200 <= _entry_words(e) <= 600]
    assert len(full) >= 12


def test_exactly_one_teaser_and_it_has_a_link(entries: list[Any]) -> None:
    teasers = [e for e in entries if _entry_words(e) < 100]
    assert len(teasers) == 1
    assert 30 <= _entry_words(teasers[0]) <= 60
    assert teasers[0].link.startswith(BASE)


def test_exactly_one_full_length_entry_without_a_link(entries: list[Any]) -> None:
    unlinked = [e for e in entries if not e.get("link")]
    assert len(unlinked) == 1
    assert not unlinked[0].get("links")
    assert _entry_words(unlinked[0]) >= 200


def test_links_are_on_the_outlet_and_distinct_but_for_the_newsletter_copy(
    entries: list[Any],
) -> None:
    links = [e.link for e in entries if e.get("link")]
    assert all(link.startswith(BASE) for link in links)
    assert len(set(links)) == len(links)
    by_page: dict[str, list[Any]] = defaultdict(list)
    for entry in entries:
        if entry.get("link"):
            by_page[without_query(entry.link)].append(entry)
    pairs = [group for group in by_page.values() if len(group) > 1]
    assert len(pairs) == 1 and len(pairs[0]) == 2
    first, second = sorted(pairs[0], key=lambda e: len(e.link))
    assert second.link == first.link + "?utm_source=newsletter&utm_medium=email#comments"
    assert first.id != second.id
    assert first.content[0].value == second.content[0].value


def test_replies_file_is_labelled_and_covers_every_kind(replies: list[dict[str, str]]) -> None:
    note = json.loads(REPLIES.read_text(encoding="utf-8"))["note"]
    assert "recorded" in note.lower()
    kinds = [reply["kind"] for reply in replies]
    assert set(kinds) == {
        "invented figure",
        "altered quote",
        "clean",
        "wrong fact",
        "dropped hedge",
    }
    assert kinds.count("clean") >= 2
    assert len(replies) >= 4


def test_every_reply_answers_a_full_article_in_the_feed(
    replies: list[dict[str, str]], source_by_link: dict[str, str]
) -> None:
    for reply in replies:
        assert reply["url"] in source_by_link, reply["url"]
        assert words(source_by_link[reply["url"]]) >= 200
        assert "utm_" not in reply["url"]
        assert 0 < len(reply["headline"]) < 90
        assert 40 <= words(reply["summary"]) <= 90, reply["url"]
        sentences = re.findall(r"[.!?][”\"]?(?=\s|$)", reply["summary"])
        assert 2 <= len(sentences) <= 4, reply["url"]


@pytest.mark.parametrize("field", ["headline", "summary"])
def test_replies_avoid_apostrophes_that_look_like_single_quotes(
    replies: list[dict[str, str]], field: str
) -> None:
    # A quote gate may read ‘...’ and '...' as quotations: keep drafts free of them
    # so the only quotation in each reply is the one it is meant to test.
    for reply in replies:
        assert not re.search(r"['‘’]", reply[field]), reply["url"]


def test_invented_figure_replies_break_only_the_numbers(
    replies: list[dict[str, str]], source_by_link: dict[str, str]
) -> None:
    invented = [r for r in replies if r["kind"] == "invented figure"]
    assert invented
    for reply in invented:
        source = source_by_link[reply["url"]]
        draft = reply["headline"] + " " + reply["summary"]
        assert numbers(draft) - numbers(source), reply["url"]
        assert all(normalise(q) in normalise(source) for q in quotations(draft))


def test_altered_quote_replies_break_only_the_quotes(
    replies: list[dict[str, str]], source_by_link: dict[str, str]
) -> None:
    altered = [r for r in replies if r["kind"] == "altered quote"]
    assert altered
    for reply in altered:
        source = source_by_link[reply["url"]]
        draft = reply["headline"] + " " + reply["summary"]
        quoted = quotations(draft)
        assert any(normalise(q) not in normalise(source) for q in quoted), reply["url"]
        assert numbers(draft) <= numbers(source)


def test_clean_replies_keep_every_number_and_quote(
    replies: list[dict[str, str]], source_by_link: dict[str, str]
) -> None:
    clean = [r for r in replies if r["kind"] == "clean"]
    for reply in clean:
        source = source_by_link[reply["url"]]
        draft = reply["headline"] + " " + reply["summary"]
        assert numbers(draft) <= numbers(source), reply["url"]
        quoted = quotations(draft)
        assert quoted, f"a clean reply should quote the source: {reply['url']}"
        assert all(normalise(q) in normalise(source) for q in quoted), reply["url"]


def test_number_helper_matches_whole_tokens_only() -> None:
    # The sample relies on these rules; pin the helper so the checks above mean something.
    assert numbers("4,080 households, £3.45m and 12%") == {"4080", "3.45", "12"}
    assert "31" not in numbers("2,310 patients")
    assert "1400" not in numbers("1,140 homes")


def test_wrong_fact_and_dropped_hedge_pass_every_deterministic_gate(
    replies: list[dict[str, str]], source_by_link: dict[str, str]
) -> None:
    # Only the model checks can catch these: that is what they are in the demo for.
    from guards.numbers import numbers_grounded
    from guards.quotes import quotes_verbatim

    subtle = [r for r in replies if r["kind"] in ("wrong fact", "dropped hedge")]
    assert len(subtle) == 2
    for reply in subtle:
        source = source_by_link[reply["url"]]
        draft = f"{reply['headline']}\n\n{reply['summary']}"
        assert numbers_grounded(source, reply["url"], draft).passed, reply["url"]
        assert quotes_verbatim(source, reply["url"], draft).passed, reply["url"]


def test_recorded_check_replies_parse_and_answer_a_recorded_summary(
    replies: list[dict[str, str]],
) -> None:
    from summarise.checks import parse_check_input

    checks = json.loads(REPLIES.read_text(encoding="utf-8"))["checks"]
    summaries = {r["url"]: r for r in replies}
    assert {c["kind"] for c in checks} == {"clean", "wrong fact", "dropped hedge"}
    for check in checks:
        parsed = parse_check_input(check["check"])
        reply = summaries[check["url"]]
        assert parsed.claims and parsed.sentences
        assert parsed.sentences[0].sentence == reply["headline"]
