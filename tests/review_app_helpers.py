"""Shared pieces for the review app's AppTest tests: the app's script, a seeded
desk with three accounts (`make_desk`), signing in, opening an item, everything
the page shows as text, and an item's audit events.

The desk is seeded by the real pipeline (tests/review_seed.py); each test module
that needs one wraps `make_desk` in its own `desk` / `any_desk` fixture.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session
from streamlit.testing.v1 import AppTest

from store.db import open_store
from store.models import AuditEvent
from tests.review_seed import PASSWORD, seed_editor, seed_queue, write_config

if TYPE_CHECKING:
    from tests.conftest import Seeded

APP = Path(__file__).resolve().parents[1] / "copydesk" / "review_app.py"
DESK_MODES = {"quotes_verbatim": "flag"}
DESK_KEYS = ("bridge", "school", "market", "hostile", "wrong_number", "misquote")


class Desk:
    """A seeded database with three accounts, and AppTests pointed at it."""

    def __init__(self, engine: Engine, ids: dict[str, int]):
        self.engine = engine
        self.ids = ids

    def app(self) -> AppTest:
        at = AppTest.from_file(str(APP), default_timeout=60)
        at.run()
        assert not at.exception, at.exception
        return at

    def signed_in(self, name: str, password: str = PASSWORD) -> AppTest:
        at = self.app()
        sign_in(at, name, password)
        assert not at.exception, at.exception
        return at


def sign_in(at: AppTest, name: str, password: str) -> None:
    at.text_input(key="login_name").input(name)
    at.text_input(key="login_password").input(password)
    at.button(key="login_submit").click()
    at.run()


def texts(at: AppTest) -> str:
    """Everything the page shows as text, joined (html bodies, markdown, alerts, tables)."""
    parts: list[str] = []
    for kind in ("html", "markdown", "caption", "error", "warning", "info", "success", "text"):
        parts += [str(e.value) for e in getattr(at, kind)]
    parts += [e.value.to_csv() for e in at.dataframe]
    return "\n".join(parts)


def open_item(at: AppTest, item_id: int) -> None:
    at.session_state["open_id"] = item_id
    at.run()
    assert not at.exception, at.exception


def events(engine: Engine, item_id: int) -> list[AuditEvent]:
    with Session(engine) as session:
        return list(
            session.scalars(
                select(AuditEvent).where(AuditEvent.item_id == item_id).order_by(AuditEvent.id)
            )
        )


def make_desk(url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seeded: Seeded) -> Desk:
    """The items of DESK_KEYS through the real pipeline (quotes_verbatim flags),
    editors alice and bob and viewer vera, the config and database in the
    environment, and tmp_path the working directory. `url` is a migrated test
    database; the desk is seeded once per test process and backend and copied into
    it (conftest's `seeded`)."""
    ids = seeded(url, "review desk", _seed_desk)
    engine = open_store(url)
    monkeypatch.chdir(tmp_path)
    config = write_config(tmp_path / "c.toml", url, modes=DESK_MODES)
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    monkeypatch.setenv("COPYDESK_DATABASE_URL", url)
    return Desk(engine, ids)


def _seed_desk(engine: Engine) -> dict[str, int]:
    ids = seed_queue(engine, DESK_KEYS, modes=DESK_MODES)
    seed_editor(engine, "alice")
    seed_editor(engine, "bob")
    seed_editor(engine, "vera", role="viewer")
    return ids
