"""Issue 21: the Delivery failed view and its Retry, in a real headless Chromium.

Publish now runs in the background: while the loopback webhook holds its answer,
the page shows the progress and offers no second publish. The webhook then refuses
the item (HTTP 422): it stays approved, live in the JSON Lines file. The Delivery
failed view lists it with the webhook's answer and its tries; once the receiver
accepts again, the editor's Retry sends it, the item is published, and the Retry
is in its audit trail under the editor's name."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from store.db import open_store
from store.deliveries import RETRIED
from store.models import AuditEvent
from tests.browser import chromium, said, serve, signed_in_page
from tests.desk_kit import approved_long_ago, decide_as, item_status, open_view
from tests.publish_helpers import Webhook, webhook_server
from tests.review_seed import seed_editor, seed_queue

pytestmark = pytest.mark.browser


def _desk(engine: Engine) -> dict[str, int]:
    ids = seed_queue(engine, ("bridge", "school"))
    seed_editor(engine, "alice")
    seed_editor(engine, "bob")
    return ids


def _targets(url: str) -> str:
    return (
        '[[publish.targets]]\nkind = "jsonl"\npath = "out/items.jsonl"\n'
        f'[[publish.targets]]\nkind = "webhook"\nurl = "{url}"\nattempts = 1\n'
        # Longer than the test's hold of the first answer (120 s): a publish that timed
        # out before go.set() would not be the refusal this test is about (issue 23).
        "timeout_seconds = 240\n"
    )


def _retries(db_url: str, item_id: int) -> list[str]:
    engine = open_store(db_url)
    try:
        with Session(engine) as session:
            return list(
                session.scalars(
                    select(AuditEvent.actor).where(
                        AuditEvent.item_id == item_id, AuditEvent.reason == RETRIED
                    )
                )
            )
    finally:
        engine.dispose()


def test_a_refused_delivery_is_listed_and_retried_from_the_desk(
    tmp_path: Path, sqlite_url: str
) -> None:
    from playwright.sync_api import expect

    go = threading.Event()  # the receiver holds its first answer until the page showed progress
    with (
        webhook_server(Webhook(then=422, on_request=lambda _: go.wait(120))) as hook,
        serve(tmp_path, sqlite_url, _desk, undo_seconds=300, extra=_targets(hook.url)) as server,
        chromium() as browser,
    ):
        bridge = server.ids["bridge"]
        decide_as(server, "bob", bridge, "approve")
        approved_long_ago(server.db_url, bridge)
        page = signed_in_page(browser, server)
        open_view(page, "Approved")
        page.get_by_role("button", name=re.compile(r"^Publish now")).click()
        page.get_by_role("button", name="Confirm: publish 1").click()
        # Publish now runs in the background: the page answers, shows the progress,
        # and offers no second publish until it ends (then draws what it did).
        progress = said(page, "Publishing 1 item(s)")
        expect(progress).to_contain_text(re.compile(r"[01] of 2 deliveries made"))
        expect(page.get_by_role("button", name=re.compile(r"^Publish now"))).to_be_disabled()
        go.set()
        expect(said(page, "webhook refused it for good")).to_be_visible()
        expect(page.get_by_role("button", name=re.compile(r"^Publish now"))).to_be_enabled()
        assert item_status(server, bridge) == "approved"

        open_view(page, "Delivery failed")
        main = page.locator("[data-testid=stMain]")
        expect(main).to_contain_text(f"#{bridge}")
        expect(main).to_contain_text("did not reach webhook")
        listed = main.locator("table.cd-list").first
        expect(listed).to_be_visible()
        expect(listed).to_contain_text("webhook")
        # The time cell shows the editor's zone; its hover (title) is the UTC time.
        expect(listed.locator("time.cd-time").first).to_have_attribute("title", re.compile(r"UTC$"))
        assert not _retries(server.db_url, bridge)

        hook.then = 200
        page.get_by_role("button", name=f"Retry #{bridge}").click()
        expect(said(page, f"Retried #{bridge}")).to_contain_text("it is published")
        expect(said(page, "Every delivery went out")).to_be_visible()
        assert item_status(server, bridge) == "published"
        assert _retries(server.db_url, bridge) == ["editor:alice"]
        assert [r.status for r in hook.received] == [422, 200]
