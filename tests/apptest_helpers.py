"""What the review app's AppTest tests share: the app, an editor's password, a
signed-in page on a chosen view, and what a page shows as text."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from review_ui.views import auth, shortcuts

APP = Path(__file__).resolve().parents[1] / "copydesk" / "review_app.py"
PASSWORD = "correct horse battery"


def signed_in(name: str, view: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.text_input(key="login_name").input(name)
    at.text_input(key="login_password").input(PASSWORD)
    at.button(key="login_submit").click()
    at.run()
    at.radio(key="view").set_value(view)
    at.run()
    assert not at.exception, at.exception
    return at


def own_script(body: str) -> bool:
    """A script of the app's own (the keyboard's, the session cookie's): fixed text,
    checked by the modules that draw them, never anything an article carried."""
    return shortcuts.own_script(body) or auth.own_script(body)


def page_html(at: AppTest) -> list[str]:
    """The page's HTML elements, but for the app's own scripts."""
    return [str(e.value) for e in at.html if not own_script(str(e.value))]


def shown(at: AppTest, *, tables: bool = True) -> str:
    parts: list[str] = page_html(at)
    for kind in ("markdown", "error", "warning", "info", "success"):
        parts += [str(e.value) for e in getattr(at, kind)]
    if tables:
        parts += [e.value.to_csv() for e in at.dataframe]
    return "\n".join(parts)
