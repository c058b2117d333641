"""What the review app's AppTest tests share: the app, an editor's password, a
signed-in page on a chosen view, and what a page shows as text."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from streamlit.testing.v1 import AppTest

from review_ui.views import auth, shortcuts, widgets

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
    return shortcuts.own_script(body) or auth.own_script(body) or widgets.own_script(body)


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


class _ListTable(HTMLParser):
    """The rows of a list's `table.cd-list` (review_ui/views/widgets.py `html_table`),
    as the text of each cell."""

    def __init__(self) -> None:
        super().__init__()
        self.head: list[str] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            (self.head if tag == "th" else self.rows[-1]).append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def list_rows(at: AppTest) -> list[dict[str, str]]:
    """The rows of the first list table on the page, by column."""
    body = next(str(e.value) for e in at.html if 'class="cd-list"' in str(e.value))
    table = _ListTable()
    table.feed(body)
    return [dict(zip(table.head, row, strict=True)) for row in table.rows if row]


def pick_item(at: AppTest, item_id: int) -> None:
    """Open item `item_id` of a list with its picker, and run the page."""
    (picker,) = [s for s in at.selectbox if s.label == "Open item"]
    picker.set_value(item_id)
    at.run()
