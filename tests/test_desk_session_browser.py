"""Issue 25 point 7, in a real headless Chromium at 1280x720: a reload keeps the
editor signed in (a signed, expiring session token in a cookie; never the
password), signing out revokes it (the old token, sent again from another browser,
signs nobody in), and disabling the editor in another process signs the open page
out at its next run. SQLite and PostgreSQL (the disabling races the page)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.browser import (
    chromium,
    idle,
    new_page,
    queue_of,
    serve,
    server_log,
    shows,
    sign_in,
)
from tests.review_seed import PASSWORD

pytestmark = pytest.mark.browser

COOKIE = "copydesk_session"


def _session_cookie(page: Any) -> dict[str, Any] | None:
    found = [c for c in page.context.cookies() if c["name"] == COOKIE]
    return found[0] if found else None


def _cookie_set(page: Any) -> None:
    page.wait_for_function(
        f"() => document.cookie.split('; ').some(c => c.startsWith('{COOKIE}='))"
    )


def _signed_in_as(page: Any, name: str) -> None:
    from playwright.sync_api import expect

    expect(page.locator(".cd-who b")).to_have_text(name)
    expect(page.locator(".cd-count").first).to_contain_text("Review queue")


def _sign_in_form(page: Any) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    assert "Review queue" not in page.inner_text("body")


def _copydesk(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command line in a process of its own, on the test's config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COPYDESK_")}
    env["COPYDESK_CONFIG"] = str(config)
    script = Path(sys.executable).with_name("copydesk")
    return subprocess.run(
        [str(script), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_a_reload_keeps_the_editor_signed_in_until_sign_out_or_disabling(
    tmp_path: Path, sqlite_url: str
) -> None:
    """On SQLite only (issue 23: 20 s a backend): the session rows' rules (a revoked,
    expired or disabled editor's key names nobody) are tests/test_review_sessions.py's,
    on both backends; this is the browser's side of them."""
    from playwright.sync_api import expect

    seed = queue_of("bridge", "school", editors=("alice",))
    with serve(tmp_path, sqlite_url, seed) as server, chromium() as browser:
        page = new_page(browser, server, width=1280, height=720)
        page.goto(server.base)
        sign_in(page, "alice")
        shows(page, "bridge")
        _cookie_set(page)
        cookie = _session_cookie(page)
        assert cookie is not None
        token = cookie["value"]
        assert PASSWORD not in token and "alice" not in token
        assert cookie["sameSite"] == "Strict" and cookie["expires"] > 0

        # A reload: still signed in, on the same draft.
        page.reload()
        _signed_in_as(page, "alice")
        shows(page, "bridge")

        # Sign out: the form; a reload stays signed out, and the old token sent again
        # from another browser (a copy of the cookie) signs nobody in.
        idle(page)
        page.get_by_role("button", name="Sign out").click()
        _sign_in_form(page)
        page.reload()
        _sign_in_form(page)
        thief = new_page(browser, server, width=1280, height=720)
        thief.context.add_cookies([{**cookie, "value": token}])
        thief.goto(server.base)
        _sign_in_form(thief)

        # Signed in again; the editor is disabled from the command line in another
        # process: the page's next run signs them out, and a reload does not bring
        # them back.
        sign_in(page, "alice")
        shows(page, "bridge")
        page.reload()
        _signed_in_as(page, "alice")
        shows(page, "bridge")
        config = tmp_path / "config.toml"
        done = _copydesk(config, "editor", "disable", "alice")
        assert done.returncode == 0, done.stderr
        idle(page)
        page.get_by_role("button", name="Shortcuts (?)").click()  # the next run
        expect(page.get_by_text("Your account is disabled")).to_be_visible()
        _sign_in_form(page)
        page.reload()
        _sign_in_form(page)

        # Never in the server's log.
        log = server_log()
        assert token not in log and PASSWORD not in log


def test_a_token_revoked_elsewhere_stops_the_open_tab_at_its_next_run(
    tmp_path: Path, sqlite_url: str
) -> None:
    """Two tabs of one browser share the cookie: signing out in one ends the other
    at its next click, not at its next reload."""
    from playwright.sync_api import expect

    with serve(tmp_path, sqlite_url, queue_of("bridge", "school")) as server, chromium() as browser:
        first = new_page(browser, server, width=1280, height=720)
        first.goto(server.base)
        sign_in(first, "alice")
        shows(first, "bridge")
        _cookie_set(first)
        second = first.context.new_page()
        second.bring_to_front()  # a tab in the background may not be painted
        second.goto(server.base)  # the same browser: the cookie signs it in
        _signed_in_as(second, "alice")
        first.bring_to_front()
        idle(first)
        first.get_by_role("button", name="Sign out").click()
        _sign_in_form(first)
        second.bring_to_front()
        idle(second)
        second.get_by_role("button", name="Shortcuts (?)").click()
        expect(second.get_by_text("Your session has ended")).to_be_visible()
        _sign_in_form(second)
