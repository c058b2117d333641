"""The model checks in a real headless Chromium: the claims table and a judged
sentence render, escaped; clicking a claim marks its passage in the source; the
"Checks did not run" filter narrows the queue to the drafts no model checked."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.db import open_store, session_scope
from tests.review_seed import (
    ARTICLES,
    PASSWORD,
    SCRIPT,
    seed_checks,
    seed_editor,
    seed_queue,
    write_config,
)
from tests.test_review_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    COPYDESK,
    WAIT_MS,
    Server,
    _free_port,
    _inert,
    _require_browser,
    _require_review_command,
    _stop,
    _wait_until_up,
)
from tests.test_review_checks import CHECK

pytestmark = pytest.mark.browser


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str) -> Iterator[Server]:
    _require_browser()
    _require_review_command()
    engine = open_store(sqlite_url)
    ids = seed_queue(engine, ("bridge", "school"))
    with session_scope(engine) as session:
        seed_checks(session, ids["bridge"], CHECK)
        seed_checks(session, ids["school"], None)  # the school's checks did not run
    seed_editor(engine, "alice")
    engine.dispose()
    config = write_config(tmp_path / "config.toml", sqlite_url)
    port = _free_port()
    env = dict(os.environ)
    env.update(COPYDESK_DATABASE_URL=sqlite_url, COPYDESK_CONFIG=str(config), HOME=str(tmp_path))
    log = tmp_path / "review.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*COPYDESK, "review", "--port", str(port)],
            cwd=tmp_path,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_until_up(base, process, log)
            yield Server(base, sqlite_url, ids)
        finally:
            _stop(process)


def test_claims_table_and_judged_sentence_in_chromium(server: Server) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 1400})
            page.set_default_timeout(WAIT_MS)
            page.route(
                "**/*",
                lambda route: (
                    route.continue_()
                    if route.request.url.startswith(server.base)
                    else route.abort()
                ),
            )
            page.goto(server.base)
            page.get_by_role("textbox", name="Name").fill("alice")
            page.get_by_role("textbox", name="Password").fill(PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            expect(page.get_by_text("Review queue")).to_be_visible()

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
            expect(picked).to_have_text(
                "Engineers found corrosion in 38 of the bridge's steel hangers"
            )
            assert _inert(page) == {"scripts": 0, "bad_images": 0, "onerror": 0, "js_links": 0}
        finally:
            browser.close()


def _signed_in(p, server: Server):  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    page = browser.new_page(viewport={"width": 1440, "height": 1400})
    page.set_default_timeout(WAIT_MS)
    page.route(
        "**/*",
        lambda route: (
            route.continue_() if route.request.url.startswith(server.base) else route.abort()
        ),
    )
    page.goto(server.base)
    page.get_by_role("textbox", name="Name").fill("alice")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("Review queue")).to_be_visible()
    return browser, page


def test_filter_checks_did_not_run_in_chromium(server: Server) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser, page = _signed_in(p, server)
        try:
            school = ARTICLES["school"].headline
            bridge = ARTICLES["bridge"].headline
            expect(page.locator("table.cd-claims")).to_have_count(1)  # the bridge, checked
            page.locator("[data-testid=stSidebar]").get_by_text("Checks did not run").click()
            expect(page.get_by_text("Model checks did not run on this draft")).to_be_visible()
            expect(page.locator("table.cd-claims")).to_have_count(0)
            main = page.locator("[data-testid=stMain]")
            # The queue's list is a data grid whose cells may be off screen: read its text.
            expect(main).to_contain_text(school)
            expect(main).not_to_contain_text(bridge)
        finally:
            browser.close()
