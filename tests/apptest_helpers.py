"""What the review app's AppTest tests share: the app, an editor's password, a
signed-in page on a chosen view, and what a page shows as text."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

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


def shown(at: AppTest, *, tables: bool = True) -> str:
    parts: list[str] = []
    for kind in ("html", "markdown", "error", "warning", "info", "success"):
        parts += [str(e.value) for e in getattr(at, kind)]
    if tables:
        parts += [e.value.to_csv() for e in at.dataframe]
    return "\n".join(parts)
