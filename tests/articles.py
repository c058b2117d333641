"""Invented articles for the pipeline tests (places, people and figures are made up)."""

from __future__ import annotations

from html import escape
from pathlib import Path

FERRY = """\
The Kestrel Sound ferry service will run a reduced timetable for 11 weeks from January while \
its only vessel, the MV Annora Vale, goes into dry dock at Pellow Quay, the operator said on \
Tuesday.

Brackwater Ferries said the refit, which will cost £2.35m, was required to renew the ship's \
certificate and replace two engines fitted in the 1990s. During the works a chartered \
passenger boat will carry up to 96 people a crossing, but no vehicles.

The harbour master, Ilse Marrow, said the company had been warned twice that the Annora Vale \
could not keep sailing without the work. “We would rather lose a winter of convenience than \
lose the ship,” she said. “The crossing is the island's road, and a road has to be kept.”

Islanders on Tarrow Holm, population 1,840, depend on the service for deliveries, hospital \
appointments and school transport. The island council estimated that about 310 vehicle \
journeys a week would have to be rearranged, and it has asked the mainland grocers' \
cooperative to consolidate its deliveries into a single weekly barge.

Councillor Dafydd Orrin, who represents the island ward, said residents accepted the need for \
the refit but wanted a guarantee on the return date. “Eleven weeks is what we were promised \
in 2019 as well, and it became nineteen,” he said. The company said the contract with the \
shipyard carries a penalty of £14,500 for each day of delay.

Brackwater Ferries carried 412,000 passengers last year, an increase of 6% on the year \
before, and reported an operating profit of £890,000. The firm said fares would not change \
during the reduced service, and that holders of vehicle season tickets would be offered a \
refund for the weeks they cannot use.

The chartered boat will run six return crossings a day, against the usual nine, and the last \
sailing from Pellow Quay will leave at 18:40 rather than 21:15. Medical appointments on the \
mainland will be given priority booking, the island's health board said.
"""

LIBRARY = """\
A library that has stood on the corner of Fenwick Row in Ossery since 1887 will close its \
doors for two years while the building is made safe, after surveyors found that 40% of its \
roof timbers had rotted.

Ossery District Council approved a restoration budget of £3.1 million on Thursday evening, \
by 23 votes to 8. The plan keeps the reading room's plaster ceiling, which was painted in \
the 1920s by a local decorator, and adds a lift and a new entrance at street level.

The council's head of culture, Ruth Abernal, told the meeting that the alternative was to \
sell the building. “We were offered a figure by a developer, and we said no,” she said. \
“A town that sells its library to pay for its roads has decided what it thinks of itself.”

During the closure a temporary library will open in the former post office on Cattle Street, \
with about 12,000 of the building's 61,500 books on open shelves and the rest available to \
order. Computer access, which the council said was used by 260 people a week, will move \
there too.

Opponents on the council argued that the money should be spent on the district's care homes. \
Councillor Peter Hallam said the cost had risen from an estimate of £2.4 million in March \
and could rise again. “Every old building hides a second bill,” he said.

The library's friends' group, which has 540 members, has promised to raise £150,000 towards \
the work through events and a sponsored walk along the Ossery canal. Its chair, Mabel Tunney, \
61, said she had borrowed her first book there in 1971. The building is expected to reopen in \
the spring of 2029, the council said.
"""

ARTICLES = {"ferry": FERRY, "library": LIBRARY}
TITLES = {
    "ferry": "Kestrel Sound ferry to run reduced service during £2.35m refit",
    "library": "Ossery library to close for two years for roof repairs",
}


def paragraphs_html(text: str) -> str:
    return "".join(f"<p>{escape(p)}</p>" for p in text.split("\n\n") if p.strip())


def page_html(title: str, text: str, *, canonical: str | None = None) -> str:
    """A plausible news page: navigation, the article, a comment section, a footer."""
    link = f'<link rel="canonical" href="{escape(canonical)}">' if canonical else ""
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>{escape(title)}</title>
{link}</head><body>
<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav>
<article><h1>{escape(title)}</h1><p class="byline">By Staff Reporter</p>
{paragraphs_html(text)}</article>
<section class="comments"><h2>Comments</h2><p>First! Great article, 999 stars.</p></section>
<footer>Copyright The Example Gazette. All rights reserved.</footer></body></html>"""


def rss(items: list[dict[str, str | None]], *, title: str = "Example Gazette") -> str:
    """An RSS 2.0 document; each item dict may carry guid, link, title, content."""
    parts = []
    for it in items:
        fields = [f"<title>{escape(it.get('title') or '')}</title>"]
        if it.get("link"):
            fields.append(f"<link>{escape(it['link'])}</link>")
        if it.get("guid"):
            fields.append(f'<guid isPermaLink="false">{escape(it["guid"])}</guid>')
        fields.append("<pubDate>Mon, 30 Nov 2026 09:00:00 GMT</pubDate>")
        if it.get("content"):
            fields.append(f"<content:encoded><![CDATA[{it['content']}]]></content:encoded>")
        parts.append("<item>" + "".join(fields) + "</item>")
    return f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel><title>{escape(title)}</title><link>https://gazette.example.org/</link>
<description>Test feed</description>{"".join(parts)}</channel></rss>"""


def long_articles(n: int) -> list[dict[str, str]]:
    """n distinct full-text entries (the body varies so no two are the same story)."""
    bodies = [FERRY, LIBRARY]
    return [
        {
            "guid": f"g-{i}",
            "title": f"Story number {i}",
            "link": f"https://gazette.example.org/news/{i}",
            "content": paragraphs_html(f"Report {i} from the council desk.\n\n" + bodies[i % 2]),
        }
        for i in range(n)
    ]


def local_feed(folder: Path, stories: int = 2) -> Path:
    """feed.xml in the folder, as RSS with full text: the ferry story, then the
    library one (the first `stories` of the two)."""
    entries = [
        {
            "guid": "g1",
            "title": TITLES["ferry"],
            "link": "https://x.example.org/ferry",
            "content": paragraphs_html(FERRY),
        },
        {
            "guid": "g2",
            "title": TITLES["library"],
            "link": "https://x.example.org/lib",
            "content": paragraphs_html(LIBRARY),
        },
    ]
    feed = folder / "feed.xml"
    feed.write_text(rss(entries[:stories]))
    return feed
