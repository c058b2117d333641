"""Editor accounts: argon2 hashes, roles, disabling, throttled sign-in, the demo
editor, and the `copydesk editor` commands. Core functions run on SQLite and
PostgreSQL."""

from __future__ import annotations

import os
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest
import typer
from sqlalchemy.engine import Engine
from sqlmodel import Session, select
from typer.testing import CliRunner

import store.editors
from copydesk.cli import review as review_commands
from store.db import open_store, session_scope
from store.editors import (
    FREE_FAILURES,
    MAX_LOCK_SECONDS,
    REFUSED,
    EditorError,
    SignIn,
    add_editor,
    authenticate,
    disable_editor,
    ensure_demo_editor,
    get_editor,
    list_editors,
    lock_seconds,
    refused,
    wait_text,
)
from store.models import SignInFailure, utcnow

PASSWORD = "lantern-harbour-42"
STDIN = PASSWORD + "\n"


def _add(engine: Engine, name: str = "alice", role: str = "editor") -> None:
    with session_scope(engine) as session:
        add_editor(session, name, PASSWORD, role=role)


def _sign_in(engine: Engine, name: str, password: str, **kw):  # type: ignore[no-untyped-def]
    with session_scope(engine) as session:
        return authenticate(session, name, password, **kw)


def test_password_is_stored_as_an_argon2_hash(engine: Engine) -> None:
    _add(engine)
    with Session(engine) as session:
        editor = get_editor(session, "alice")
    assert editor is not None
    assert editor.password_hash.startswith("$argon2id$")
    assert PASSWORD not in editor.password_hash
    assert editor.role == "editor" and editor.enabled


def test_add_refuses_duplicates_bad_roles_names_and_short_passwords(engine: Engine) -> None:
    _add(engine)
    with session_scope(engine) as session:
        with pytest.raises(EditorError, match="already exists"):
            add_editor(session, "alice", PASSWORD)
        with pytest.raises(EditorError, match="role"):
            add_editor(session, "carol", PASSWORD, role="admin")
        with pytest.raises(EditorError, match="not allowed"):
            add_editor(session, "<b>x</b>", PASSWORD)
        with pytest.raises(EditorError, match="too short"):
            add_editor(session, "carol", "short")
    with Session(engine) as session:
        assert [e.name for e in list_editors(session)] == ["alice"]


def test_right_password_signs_in_with_the_role(engine: Engine) -> None:
    _add(engine, "vera", role="viewer")
    result = _sign_in(engine, "vera", PASSWORD)
    assert result.ok and result.name == "vera" and result.role == "viewer"
    with Session(engine) as session:
        assert get_editor(session, "vera").last_login_at is not None  # type: ignore[union-attr]


def test_wrong_password_and_unknown_name_get_the_same_answer(engine: Engine) -> None:
    _add(engine)
    wrong = _sign_in(engine, "alice", "not-the-password")
    unknown = _sign_in(engine, "nobody", PASSWORD)
    assert not wrong.ok and not unknown.ok
    assert wrong.message == unknown.message == REFUSED
    with Session(engine) as session:
        assert get_editor(session, "alice").failed_logins == 1  # type: ignore[union-attr]


def test_repeated_wrong_passwords_lock_the_account_even_for_the_right_one(engine: Engine) -> None:
    _add(engine)
    now = utcnow()
    for _ in range(FREE_FAILURES):
        assert _sign_in(engine, "alice", "guess", now=now).retry_after == 0
    locked = _sign_in(engine, "alice", "guess", now=now)
    assert not locked.ok and locked.retry_after == lock_seconds(FREE_FAILURES + 1) > 0
    assert (
        locked.message
        == refused(30)
        == ("Wrong name or password, or too many attempts: try again in 30 s.")
    )
    # During the lock even the right password is refused, with the same answer and
    # the time left.
    during = _sign_in(engine, "alice", PASSWORD, now=now + timedelta(seconds=5))
    assert not during.ok and during.retry_after == 25
    assert during.message == refused(25) and during.message.endswith("try again in 25 s.")
    # After it, the right password works and the counter starts again.
    after = now + timedelta(seconds=locked.retry_after + 1)
    assert _sign_in(engine, "alice", PASSWORD, now=after).ok
    with Session(engine) as session:
        editor = get_editor(session, "alice")
        assert editor is not None and editor.failed_logins == 0 and editor.locked_until is None


def test_a_locked_account_and_a_made_up_name_answer_alike(engine: Engine) -> None:
    """Enumeration: after the same attempts, a real locked account and a name that
    is no account get the same message, and both are throttled."""
    _add(engine)
    now = utcnow()
    answers: dict[str, list[str]] = {"alice": [], "nobody": []}
    waits: dict[str, list[int]] = {"alice": [], "nobody": []}
    for name in answers:
        for n in range(FREE_FAILURES + 2):
            result = _sign_in(engine, name, "guess", now=now + timedelta(seconds=n))
            answers[name].append(result.message)
            waits[name].append(result.retry_after)
    first_lock = lock_seconds(FREE_FAILURES + 1)
    assert (
        answers["alice"]
        == answers["nobody"]
        == [REFUSED] * FREE_FAILURES
        + [
            refused(first_lock),
            refused(first_lock - 1),
        ]
    )
    assert waits["alice"][FREE_FAILURES:] == [first_lock, first_lock - 1]  # 1 s later
    assert waits["nobody"] == waits["alice"]  # made-up names are throttled as well
    # The counter of a made-up name ignores case and surrounding spaces.
    assert _sign_in(engine, "  NoBody ", "guess", now=now).retry_after > 0
    assert _sign_in(engine, "somebody-else", "guess", now=now).retry_after == 0


def test_every_attempt_costs_one_argon2_check(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Timing: a locked account and an unknown name still run one verification
    (against the dummy hash), so a quick answer does not tell them apart."""
    _add(engine)
    checked: list[str] = []
    real = store.editors._verify

    def counting(password_hash: str, password: str) -> bool:
        checked.append("dummy" if password_hash == store.editors._DUMMY_HASH else "account")
        return real(password_hash, password)

    monkeypatch.setattr(store.editors, "_verify", counting)
    now = utcnow()
    for _ in range(FREE_FAILURES + 1):
        _sign_in(engine, "alice", "guess", now=now)
    assert checked == ["account"] * (FREE_FAILURES + 1)
    checked.clear()
    assert not _sign_in(engine, "alice", PASSWORD, now=now).ok  # locked
    assert not _sign_in(engine, "nobody", PASSWORD, now=now).ok  # unknown
    assert checked == ["dummy", "dummy"]


def test_attempts_during_a_lock_do_not_lengthen_it(engine: Engine) -> None:
    _add(engine)
    now = utcnow()
    for _ in range(FREE_FAILURES + 1):
        _sign_in(engine, "alice", "guess", now=now)
    for n in range(20):  # a script hammering the locked name
        _sign_in(engine, "alice", "guess", now=now + timedelta(seconds=n))
    with Session(engine) as session:
        editor = get_editor(session, "alice")
        assert editor is not None and editor.failed_logins == FREE_FAILURES + 1
    later = now + timedelta(seconds=lock_seconds(FREE_FAILURES + 1) + 1)
    assert _sign_in(engine, "alice", PASSWORD, now=later).ok


def test_made_up_names_are_throttled_across_restarts_and_forgotten_later(
    db_url: str,
) -> None:
    """The counters of made-up names live in the database: a second server (or a
    restart) sees them; a day after the last attempt they are dropped."""
    first = open_store(db_url)
    now = utcnow()
    try:
        for _ in range(FREE_FAILURES + 1):
            _sign_in(first, "mallory", "guess", now=now)
    finally:
        first.dispose()
    second = open_store(db_url)
    try:
        assert _sign_in(second, "MALLORY", "guess", now=now).retry_after > 0
        for n in range(5):  # a spray of other names
            _sign_in(second, f"sprayed-{n}", "guess", now=now)
        assert _failure_rows(second) == 6
        tomorrow = now + store.editors.FORGET_UNKNOWN_AFTER + timedelta(seconds=1)
        assert _sign_in(second, "someone", "guess", now=tomorrow).retry_after == 0
        assert _failure_rows(second) == 1
    finally:
        second.dispose()


def _failure_rows(engine: Engine) -> int:
    with Session(engine) as session:
        return len(list(session.exec(select(SignInFailure))))


PARALLEL = 20


def _parallel_sign_ins(
    engine: Engine, name: str, passwords: list[str]
) -> list[store.editors.SignIn]:
    """Every attempt in its own thread and session, released together."""
    start = threading.Barrier(len(passwords))
    results: list[store.editors.SignIn | BaseException] = [None] * len(passwords)  # type: ignore[list-item]

    def attempt(n: int) -> None:
        try:
            start.wait(timeout=30)
            results[n] = _sign_in(engine, name, passwords[n])
        except BaseException as exc:  # noqa: BLE001 - asserted below
            results[n] = exc

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(len(passwords))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not [r for r in results if isinstance(r, BaseException)], results
    return results  # type: ignore[return-value]


@pytest.mark.parametrize("right_at", [0, FREE_FAILURES, PARALLEL - 1])
def test_parallel_attempts_count_one_each_and_the_limit_holds(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, right_at: int
) -> None:
    """20 threads at once, one of them with the right password: at most
    FREE_FAILURES + 1 attempts are checked against the account's hash, and every
    attempt is counted (none is lost to a race)."""
    _add(engine)
    checked: list[str] = []
    real = store.editors._verify

    def counting(password_hash: str, password: str) -> bool:
        checked.append("dummy" if password_hash == store.editors._DUMMY_HASH else "account")
        return real(password_hash, password)

    monkeypatch.setattr(store.editors, "_verify", counting)
    passwords = ["guess-" + str(n) for n in range(PARALLEL)]
    passwords[right_at] = PASSWORD
    results = _parallel_sign_ins(engine, "alice", passwords)

    assert len(checked) == PARALLEL  # every attempt costs one argon2 check...
    limit = FREE_FAILURES + 1
    signed_in = [r for r in results if r.ok]
    assert len(signed_in) <= 1
    with Session(engine) as session:
        editor = get_editor(session, "alice")
        assert editor is not None
        after, locked = editor.failed_logins, editor.locked_until is not None
    if signed_in:
        # A right password resets the count, as for any editor who signs in: the
        # attempts counted after that reset (at most `limit`) get a window of their
        # own, and each of them was counted before its check.
        assert after <= limit
        assert checked.count("account") <= limit + after  # ...few against the account
        assert locked == (after == limit)
    else:
        # Every checked attempt was counted and the account is locked.
        assert checked.count("account") <= limit  # ...few against the account
        assert after == limit and locked


def test_parallel_attempts_on_a_made_up_name_count_one_each(engine: Engine) -> None:
    results = _parallel_sign_ins(engine, "mallory", ["guess"] * PARALLEL)
    assert not any(r.ok for r in results)
    with Session(engine) as session:
        row = session.get(SignInFailure, "mallory")
        assert row is not None
        assert row.failures == FREE_FAILURES + 1 and row.locked_until is not None
    assert sum(1 for r in results if r.retry_after > 0) == PARALLEL - FREE_FAILURES


def test_the_third_wrong_password_in_a_row_locks_as_the_readme_says(engine: Engine) -> None:
    """review_ui/README.md: "After three wrong passwords in a row a name is locked for
    30 s"; the first two cost nothing but the hash."""
    _add(engine)
    now = utcnow()
    waits = [_sign_in(engine, "alice", "guess", now=now).retry_after for _ in range(3)]
    assert waits == [0, 0, 30]
    readme = (Path(__file__).resolve().parents[1] / "review_ui" / "README.md").read_text()
    assert "After three wrong passwords in a row a name is locked for 30 s" in " ".join(
        readme.split()
    )


def test_the_wait_reads_in_minutes_and_seconds() -> None:
    assert [wait_text(s) for s in (1, 45, 60, 90, 900)] == [
        "1 s",
        "45 s",
        "1 min",
        "1 min 30 s",
        "15 min",
    ]
    assert refused(0) == REFUSED == "Wrong name or password."


def test_a_sign_in_name_that_is_not_text_is_refused_not_a_crash(engine: Engine) -> None:
    _add(engine)
    for name in (None, 42, ["alice"], {"name": "alice"}):
        result = authenticate_in(engine, name, PASSWORD)
        assert not result.ok and result.message.startswith(REFUSED[:-1])
    assert not authenticate_in(engine, "alice", None).ok  # type: ignore[arg-type]


def authenticate_in(engine: Engine, name: object, password: object) -> SignIn:
    with Session(engine) as session:
        return authenticate(session, name, password)  # type: ignore[arg-type]


def test_lock_doubles_and_is_capped() -> None:
    waits = [lock_seconds(n) for n in range(1, FREE_FAILURES + 8)]
    assert waits[:FREE_FAILURES] == [0] * FREE_FAILURES
    growing = waits[FREE_FAILURES:]
    assert all(
        b == min(2 * a, MAX_LOCK_SECONDS) for a, b in zip(growing, growing[1:], strict=False)
    )
    assert lock_seconds(100) == MAX_LOCK_SECONDS


def test_disabled_account_cannot_sign_in(engine: Engine) -> None:
    _add(engine)
    with session_scope(engine) as session:
        disable_editor(session, "alice")
    result = _sign_in(engine, "alice", PASSWORD)
    assert not result.ok and "disabled" in result.message


def test_demo_editor_is_created_then_reset(engine: Engine) -> None:
    name, first = ensure_demo_editor(engine)
    assert name == "demo" and len(first) >= 12
    assert _sign_in(engine, name, first).ok
    with session_scope(engine) as session:
        disable_editor(session, "demo")
    again_name, second = ensure_demo_editor(engine)
    assert again_name == "demo" and second != first
    assert not _sign_in(engine, "demo", first).ok
    assert _sign_in(engine, "demo", second).ok  # re-enabled, new password


# --------------------------------------------------------------------------- the commands


@pytest.fixture
def cli(tmp_path: Path, sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> typer.Typer:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COPYDESK_DATABASE_URL", sqlite_url)
    app = typer.Typer()

    @app.callback()
    def _root() -> None:  # a group, as in copydesk.cli
        pass

    review_commands.register(app)
    return app


@pytest.mark.usefixtures("migrated")  # only `copydesk init` creates a database
def test_editor_commands_add_list_disable(cli: typer.Typer, sqlite_url: str) -> None:
    runner = CliRunner()
    added = runner.invoke(cli, ["editor", "add", "alice", "--password-stdin"], input=STDIN)
    assert added.exit_code == 0, added.output
    viewer = runner.invoke(
        cli,
        ["editor", "add", "vera", "--role", "viewer", "--password-stdin"],
        input=STDIN,
    )
    assert viewer.exit_code == 0, viewer.output
    listed = runner.invoke(cli, ["editor", "list"])
    assert listed.exit_code == 0
    assert "alice" in listed.output and "vera" in listed.output and "viewer" in listed.output
    assert PASSWORD not in added.output + viewer.output + listed.output
    disabled = runner.invoke(cli, ["editor", "disable", "vera"])
    assert disabled.exit_code == 0
    engine = open_store(sqlite_url)
    try:
        assert _sign_in(engine, "alice", PASSWORD).ok
        assert not _sign_in(engine, "vera", PASSWORD).ok
    finally:
        engine.dispose()


# Prompting on a terminal: tests/test_desk_cli.py (a real pseudo-terminal).


@pytest.mark.usefixtures("migrated")  # a short password is refused by the store
def test_editor_add_refusals_exit_2(cli: typer.Typer) -> None:
    runner = CliRunner()
    bad_role = runner.invoke(cli, ["editor", "add", "x", "--role", "boss", "--password-stdin"])
    assert bad_role.exit_code == 2
    short = runner.invoke(cli, ["editor", "add", "alice", "--password-stdin"], input="abc\n")
    assert short.exit_code == 2
    ok = runner.invoke(cli, ["editor", "add", "alice", "--password-stdin"], input=STDIN)
    assert ok.exit_code == 0
    again = runner.invoke(cli, ["editor", "add", "alice", "--password-stdin"], input=STDIN)
    assert again.exit_code == 2
    missing = runner.invoke(cli, ["editor", "disable", "nobody"])
    assert missing.exit_code == 2


def test_review_command_line_and_environment(tmp_path: Path, sqlite_url: str) -> None:
    from copydesk.config import load_settings

    config = tmp_path / "review.toml"
    config.write_text("[review]\nport = 8612\n", encoding="utf-8")
    settings = load_settings(config, env={"COPYDESK_DATABASE_URL": sqlite_url})
    command = review_commands.streamlit_command("127.0.0.1", 8612)
    assert command[1:4] == ["-m", "streamlit", "run"]
    assert Path(command[4]).name == "review_app.py" and Path(command[4]).exists()
    for flag, value in [
        ("--server.address", "127.0.0.1"),
        ("--server.port", "8612"),
        ("--server.headless", "true"),
        ("--browser.gatherUsageStats", "false"),
    ]:
        assert command[command.index(flag) + 1] == value
    env = review_commands.review_env(settings)
    assert env["COPYDESK_DATABASE_URL"] == sqlite_url
    assert env["COPYDESK_CONFIG"] == str(config.resolve())
    assert review_commands.launch_review(settings, port=0) == 2  # refused before starting


def test_review_app_does_not_inherit_the_model_key_or_other_secrets(
    tmp_path: Path, sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app never calls the model: the child process gets no ANTHROPIC_* and no
    stray credentials, but keeps what Streamlit and the database need."""
    from copydesk.config import load_settings

    secrets = {
        "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key",
        "ANTHROPIC_AUTH_TOKEN": "token-not-real",
        "AWS_SECRET_ACCESS_KEY": "aws-not-real",
        "GITHUB_TOKEN": "gh-not-real",
    }
    kept = {"PGPASSWORD": "pg-pass", "LC_ALL": "C.UTF-8", "COPYDESK_LOG_FORMAT": "json"}
    for name, value in {**secrets, **kept}.items():
        monkeypatch.setenv(name, value)
    config = tmp_path / "review.toml"
    config.write_text("[review]\nport = 8613\n", encoding="utf-8")
    settings = load_settings(config, env={"COPYDESK_DATABASE_URL": sqlite_url})
    env = review_commands.review_env(settings)
    assert not set(secrets) & set(env)
    assert not [name for name in env if name.startswith("ANTHROPIC")]
    assert {name: env[name] for name in kept} == kept
    assert env["PATH"] == os.environ["PATH"]

    # The real child process, started the way `copydesk review` starts Streamlit,
    # writes down which of the secrets it can see.
    report = tmp_path / "child_env.txt"
    probe = (
        "import os, pathlib\n"
        "seen = sorted(n for n in os.environ if n.startswith(('ANTHROPIC', 'AWS', 'GITHUB')))\n"
        f"pathlib.Path({str(report)!r}).write_text(','.join(seen) + '|' + "
        "os.environ.get('COPYDESK_DATABASE_URL', ''))\n"
    )
    monkeypatch.setattr(
        review_commands, "streamlit_command", lambda host, port: [sys.executable, "-c", probe]
    )
    engine = open_store(sqlite_url)
    try:
        with session_scope(engine) as session:
            add_editor(session, "alice", PASSWORD)
    finally:
        engine.dispose()
    assert review_commands.launch_review(settings) == 0
    assert report.read_text() == "|" + sqlite_url
