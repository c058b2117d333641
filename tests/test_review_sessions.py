"""Review sessions (issue 25): the token a browser keeps so a reload stays signed in.

The token is signed (a changed byte, another server's secret or too great an age
refuses it), its session row decides whether it still works (revoked on sign-out,
on disabling the editor, on a new password; expired), and the database keeps only
a hash of its key. The secret comes from the environment or a 0600 file. Store
functions run on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import stat
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from copydesk.config import load_settings
from review_ui.desk import session_tokens as tokens
from store import sessions
from store.db import session_scope
from store.editors import add_editor, disable_editor, set_password
from store.models import ReviewSession, utcnow

PASSWORD = "lantern-harbour-42"
SECRET = b"k" * 48
HOUR = 3600.0


def _editor(engine: Engine, name: str = "alice") -> None:
    with session_scope(engine) as session:
        add_editor(session, name, PASSWORD)


def _open(engine: Engine, name: str = "alice", hours: float = 12) -> str:
    with session_scope(engine) as session:
        return sessions.open_session(session, name, timedelta(hours=hours))


def _who(engine: Engine, key: str) -> tuple[str, str] | None:
    with Session(engine) as session:
        return sessions.session_editor(session, key)


def test_a_session_names_its_editor_until_it_is_revoked(engine: Engine) -> None:
    _editor(engine)
    key = _open(engine)
    assert _who(engine, key) == ("alice", "editor")
    with session_scope(engine) as session:
        assert sessions.revoke(session, key) is True
        assert sessions.revoke(session, key) is False  # once
    assert _who(engine, key) is None


def test_the_database_keeps_only_a_hash_of_the_key(engine: Engine) -> None:
    _editor(engine)
    key = _open(engine)
    with Session(engine) as session:
        rows = session.exec(select(ReviewSession)).all()
    assert [r.key_hash for r in rows] == [sessions.key_hash(key)]
    assert key not in rows[0].key_hash
    assert _who(engine, rows[0].key_hash) is None  # the hash is no key


def test_an_expired_session_names_nobody(engine: Engine) -> None:
    _editor(engine)
    key = _open(engine, hours=1)
    with Session(engine) as session:
        later = utcnow() + timedelta(hours=1, seconds=1)
        assert sessions.session_editor(session, key, now=later) is None
        assert sessions.session_editor(session, key) == ("alice", "editor")


def test_disabling_or_a_new_password_revokes_every_session_of_that_editor(
    engine: Engine,
) -> None:
    _editor(engine)
    _editor(engine, "bruno")
    first, second, others = _open(engine), _open(engine), _open(engine, "bruno")
    with session_scope(engine) as session:
        disable_editor(session, "alice")
    with session_scope(engine) as session:  # enabled again: the old tokens stay dead
        set_password(session, "alice", PASSWORD + "x", enable=True)
    assert _who(engine, first) is None and _who(engine, second) is None
    assert _who(engine, others) == ("bruno", "editor")
    third = _open(engine)
    assert _who(engine, third) == ("alice", "editor")
    with session_scope(engine) as session:
        set_password(session, "alice", PASSWORD + "y")
    assert _who(engine, third) is None


def test_a_disabled_editor_is_refused_even_with_a_live_row(engine: Engine) -> None:
    """The row is revoked by disable_editor; this checks the join on `enabled` too
    (an account disabled by hand in SQL)."""
    _editor(engine)
    key = _open(engine)
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE editors SET enabled = false WHERE name = 'alice'")
    assert _who(engine, key) is None


def test_ended_sessions_are_forgotten_a_day_later(engine: Engine) -> None:
    _editor(engine)
    old = _open(engine, hours=1)
    with session_scope(engine) as session:
        sessions.revoke(session, old, now=utcnow() - timedelta(days=2))
        sessions.open_session(session, "alice", timedelta(hours=1))
    with Session(engine) as session:
        hashes = session.exec(select(ReviewSession.key_hash)).all()
    assert sessions.key_hash(old) not in hashes and len(hashes) == 1


# --------------------------------------------------------------------------- tokens


def test_a_signed_token_gives_its_key_back_until_it_is_too_old() -> None:
    key = "A" * 43
    token = tokens.sign(SECRET, key, 1_000_000)
    assert tokens.looks_like_token(token)
    assert tokens.unsign(SECRET, token, max_age=HOUR, now=1_000_000 + HOUR - 1) == key
    assert tokens.unsign(SECRET, token, max_age=HOUR, now=1_000_000 + HOUR) is None
    assert tokens.unsign(SECRET, token, max_age=HOUR, now=1_000_000 - 120) is None  # future


@pytest.mark.parametrize(
    "change",
    [
        lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"),  # the signature
        lambda t: ("B" if t[0] != "B" else "C") + t[1:],  # the key
        lambda t: t.replace(".1000000.", ".1000001."),  # the issue time: made younger
        lambda t: t + "=",
        lambda t: t.replace(".", "", 1),
        lambda t: None,
        lambda t: 42,
        lambda t: "",
        lambda t: t + "<script>",
    ],
)
def test_an_altered_or_malformed_token_is_refused(change) -> None:  # type: ignore[no-untyped-def]
    token = tokens.sign(SECRET, "A" * 43, 1_000_000)
    assert tokens.unsign(SECRET, change(token), max_age=HOUR, now=1_000_010) is None


def test_another_servers_secret_refuses_the_token() -> None:
    token = tokens.sign(SECRET, "A" * 43, 1_000_000)
    assert tokens.unsign(b"z" * 48, token, max_age=HOUR, now=1_000_010) is None


def test_the_secret_file_is_made_once_with_mode_0600(tmp_path: Path) -> None:
    file = tmp_path / "keys" / "review_session.key"
    results: list[bytes] = []
    threads = [
        threading.Thread(target=lambda: results.append(tokens.load_secret(None, file)))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(results)) == 1 and len(results[0]) >= tokens.MIN_SECRET_CHARS
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert [p.name for p in file.parent.iterdir()] == [file.name]  # nothing left aside


def test_a_secret_file_others_may_read_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "review_session.key"
    file.write_text("s" * 60)
    os.chmod(file, 0o644)
    with pytest.raises(tokens.SessionSecretError, match="chmod 600"):
        tokens.load_secret(None, file)


def test_the_environment_secret_wins_and_must_be_long(tmp_path: Path) -> None:
    file = tmp_path / "review_session.key"
    assert tokens.load_secret("e" * 40, file) == b"e" * 40
    assert not file.exists()
    with pytest.raises(tokens.SessionSecretError, match="too short"):
        tokens.load_secret("short", file)


def test_settings_place_the_file_beside_config_and_take_the_secret_from_env(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[database]\nurl = "sqlite:///desk.db"\n')
    review = load_settings(config, env={"COPYDESK_REVIEW_SECRET": "e" * 40}).for_review()
    assert review.review.session_secret_file == str(tmp_path / "review_session.key")
    assert review.session_secret is not None
    assert review.session_secret.get_secret_value() == "e" * 40
    assert "e" * 40 not in repr(review)
    assert load_settings(config, env={}).for_review().session_secret is None
