"""The model checks in a real headless Chromium: the claims table and a judged
sentence render, escaped; clicking a claim marks its passage in the source; the
"Checks did not run" filter narrows the queue to the drafts no model checked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from review_ui import streamlit_adapter as adapter
from tests.browser import Server, chromium, inert, serve, signed_in_page
from tests.review_checks_material import checked_desk
from tests.review_seed import (
    ARTICLES,
    SCRIPT,
)

pytestmark = pytest.mark.browser


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str) -> Iterator[Server]:
    with serve(tmp_path, sqlite_url, checked_desk) as running:
        yield running


def test_claims_table_and_judged_sentence_in_chromium(server: Server) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        page = signed_in_page(browser, server)

        claims = page.locator("table.cd-claims tr.cd-claim")
        expect(claims).to_have_count(3)
        expect(claims.nth(1)).to_contain_text("Corrosion was found in 38 steel hangers.")
        # The hostile claim is shown as text, not run.
        expect(claims.nth(2)).to_contain_text(SCRIPT)
        expect(claims.nth(2)).to_contain_text("passage not in the source")
        judged = page.locator(".cd-judged")
        expect(judged).to_have_count(3)
        expect(judged.nth(2)).to_contain_text("modality")
        expect(judged.nth(2)).to_contain_text("never shipped")
        expect(page.locator("mark.cd-selected")).to_have_count(0)

        page.locator("[data-testid=stButtonGroup]").get_by_text("claim 2", exact=True).click()
        picked = page.locator("mark.cd-selected")
        expect(picked).to_have_count(1)
        expect(picked).to_have_text("Engineers found corrosion in 38 of the bridge's steel hangers")
        assert inert(page) == {"scripts": 0, "bad_images": 0, "onerror": 0, "js_links": 0}


def test_filter_checks_did_not_run_in_chromium(server: Server) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        page = signed_in_page(browser, server)
        school = ARTICLES["school"].headline
        bridge = ARTICLES["bridge"].headline
        expect(page.locator("table.cd-claims")).to_have_count(1)  # the bridge, checked
        page.locator(adapter.SIDEBAR).get_by_text("Checks did not run").click()
        expect(page.get_by_text("Model checks did not run on this draft")).to_be_visible()
        expect(page.locator("table.cd-claims")).to_have_count(0)
        main = page.locator("[data-testid=stMain]")
        # The queue's list is a data grid whose cells may be off screen: read its text.
        expect(main).to_contain_text(school)
        expect(main).not_to_contain_text(bridge)
