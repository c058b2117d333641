"""Editor accounts: who may sign in to the review queue, and with which role.

Passwords are stored as argon2id hashes (argon2-cffi), never in config.toml or
logs. Repeated wrong passwords lock the name for a while that doubles with each
further failure, so guessing is slow even though argon2 itself is fast enough
for a sign-in form. For an account the counters live in its `editors` row; for a
name that is no account, in `sign_in_failures`, so spraying made-up names is
slowed down too. Both are in the database: the lock holds across app restarts
and across several Streamlit servers on one database.

An attempt is counted before its password is checked, by one atomic UPDATE that
also sets the lock this attempt would earn if it failed, and is committed before
the check. Parallel attempts therefore count one each, and those past the limit
find the lock already set and are refused without the account's hash being
looked at; a right password clears the count and the lock afterwards.

The form must not tell which names exist: every refusal, a lock included, gets
the same message, and every attempt costs one argon2 verification, against a
dummy hash when the name is unknown or the account is locked.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, or_, select, update
from sqlalchemy.engine import Engine
from sqlmodel import Session

from store.models import Editor, SignInFailure, utcnow
from store.sessions import revoke_all
from store.upsert import dialect_insert

ROLES = ("editor", "viewer")
DEMO_EDITOR = "demo"
MIN_PASSWORD_LENGTH = 8

# Throttling: the first FREE_FAILURES wrong passwords in a row cost nothing more
# than the hash; the next one (the third in a row, as review_ui/README.md says)
# locks the name for BASE seconds, and each further one doubles that, capped at
# MAX_LOCK. A correct password after the lock has run out resets it.
FREE_FAILURES = 2
BASE_LOCK_SECONDS = 30
MAX_LOCK_SECONDS = 15 * 60

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}$")
# argon2id with OWASP's recommended parameters (19 MiB, 2 passes, 1 lane): about
# 0.1 s per check on a small server. Hashes made with other parameters are
# upgraded at the next successful sign-in (`check_needs_rehash`).
_hasher = PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1)
# Verified against when the name is unknown, so an unknown name takes as long
# as a wrong password and the form does not reveal which names exist.
_DUMMY_HASH = _hasher.hash(secrets.token_urlsafe(16))

# The answer to a refused attempt: wrong name, wrong password, or a lock. It never
# says which: a "locked" message only accounts got would tell a guesser which
# names are accounts. Made-up names are counted and locked exactly like accounts,
# so the wait it names (`refused`) is the same for both after the same attempts.
REFUSED = "Wrong name or password."


def wait_text(seconds: int) -> str:
    """'45 s', '2 min', '1 min 30 s': how long to wait, for a person."""
    minutes, rest = divmod(max(0, int(seconds)), 60)
    if not minutes:
        return f"{rest} s"
    return f"{minutes} min" + (f" {rest} s" if rest else "")


def refused(wait: int) -> str:
    """The message of a refused attempt that must wait `wait` seconds (0: none)."""
    if wait <= 0:
        return REFUSED
    return f"Wrong name or password, or too many attempts: try again in {wait_text(wait)}."


class EditorError(ValueError):
    """An account cannot be created or changed as asked; the message says why."""


@dataclass(frozen=True)
class SignIn:
    """The outcome of one sign-in attempt. `message` is fit to show on the form."""

    ok: bool
    message: str
    name: str | None = None
    role: str | None = None
    # Seconds until this name may try again (0: at once). The message names it:
    # made-up names are locked like accounts, so it tells a guesser nothing more
    # than the lock itself (see review_ui/README.md for what it can tell).
    retry_after: int = 0


def _aware(value: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; they were stored as UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def check_name(name: str) -> str:
    name = name.strip()
    if not _NAME.match(name):
        raise EditorError(
            f"editor name {name!r} is not allowed: use letters, digits and . _ @ + - "
            "(up to 100 characters), starting with a letter or digit"
        )
    return name


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise EditorError(f"password too short: at least {MIN_PASSWORD_LENGTH} characters")
    if password != password.strip():
        raise EditorError("password must not start or end with white space")


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def get_editor(session: Session, name: str) -> Editor | None:
    return session.scalars(select(Editor).where(Editor.name == name)).first()


def add_editor(session: Session, name: str, password: str, role: str = "editor") -> Editor:
    """Create an account. The caller commits."""
    name = check_name(name)
    if role not in ROLES:
        raise EditorError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    check_password(password)
    if get_editor(session, name) is not None:
        raise EditorError(f"editor {name!r} already exists")
    editor = Editor(name=name, role=role, password_hash=hash_password(password))
    session.add(editor)
    session.flush()
    return editor


def list_editors(session: Session) -> list[Editor]:
    return list(session.scalars(select(Editor).order_by(Editor.name)))


def disable_editor(session: Session, name: str) -> Editor:
    """Disabled accounts cannot sign in, and a signed-in session of theirs ends on
    its next click (the app re-reads the account on every rerun); their session
    tokens are revoked, so enabling the account again brings none of them back."""
    editor = get_editor(session, name)
    if editor is None:
        raise EditorError(f"no editor named {name!r}")
    editor.enabled = False
    revoke_all(session, editor.name)
    session.add(editor)
    session.flush()
    return editor


def set_password(session: Session, name: str, password: str, *, enable: bool = False) -> Editor:
    """New password; clears any lock and revokes the account's session tokens (a
    password changed because it leaked must not leave a browser signed in). With
    `enable`, also re-enables the account."""
    check_password(password)
    editor = get_editor(session, name)
    if editor is None:
        raise EditorError(f"no editor named {name!r}")
    revoke_all(session, editor.name)
    editor.password_hash = hash_password(password)
    editor.failed_logins = 0
    editor.locked_until = None
    if enable:
        editor.enabled = True
    session.add(editor)
    session.flush()
    return editor


def lock_seconds(failures: int) -> int:
    """How long the account stays locked after `failures` wrong passwords in a row."""
    if failures <= FREE_FAILURES:
        return 0
    return min(BASE_LOCK_SECONDS * 2 ** (failures - FREE_FAILURES - 1), MAX_LOCK_SECONDS)


def _remaining(until: datetime | None, now: datetime) -> int:
    until = _aware(until)
    if until is None or until <= now:
        return 0
    return max(1, int((until - now).total_seconds() + 0.999))


def authenticate(
    session: Session, name: str, password: str, *, now: datetime | None = None
) -> SignIn:
    """Check a name and password, counting the attempt first and honouring the lock.

    Every refusal (unknown name, wrong password, locked name) gets the same
    message and costs one argon2 verification, so neither the answer nor its
    time tells which names are accounts. During a lock even the right password
    is refused (checked against the dummy hash only), or the lock would slow
    nobody down. Attempts during a lock are not counted, so hammering a name
    during its lock does not lengthen its owner's lock.

    Commits `session` twice: the counted attempt before the password check (so a
    parallel attempt sees it), and the outcome after it.
    """
    now = now or utcnow()
    name = name.strip() if isinstance(name, str) else ""
    password = password if isinstance(password, str) else ""
    editor = get_editor(session, name) if name else None
    if editor is None:
        _, wait = _count_unknown_name(session, name.lower(), now)
        session.commit()
        _verify(_DUMMY_HASH, password)
        return SignIn(False, refused(wait), retry_after=wait)
    attempt, wait = _count_attempt(session, editor, now)
    session.commit()
    if attempt is None:
        _verify(_DUMMY_HASH, password)
        return SignIn(False, refused(wait), retry_after=wait)
    if not _verify(editor.password_hash, password):
        return SignIn(False, refused(wait), retry_after=wait)
    if not editor.enabled:
        # Only someone who knows the password learns this: it tells them what to do.
        return SignIn(False, "This account is disabled. Ask an administrator.")
    values: dict[str, object] = {"failed_logins": 0, "locked_until": None, "last_login_at": now}
    if _hasher.check_needs_rehash(editor.password_hash):
        values["password_hash"] = hash_password(password)
    session.execute(
        update(Editor)
        .where(Editor.id == editor.id)  # type: ignore[arg-type]
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    session.commit()
    return SignIn(True, f"Signed in as {editor.name}.", name=editor.name, role=editor.role)


def _verify(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def _open(until: Any, now: datetime) -> Any:
    """SQL: the name is not locked at `now`."""
    return or_(until.is_(None), until <= now)


def _count_attempt(session: Session, editor: Editor, now: datetime) -> tuple[int | None, int]:
    """Count one attempt on an account unless it is locked, and set the lock this
    attempt earns if it fails. Returns (attempt number or None when locked, wait).

    One UPDATE ... WHERE not locked: on PostgreSQL a parallel attempt waits for
    this row lock, then re-reads the row and finds the lock; on SQLite the
    database's write lock serialises them the same way."""
    table = Editor.__table__
    counted = session.execute(
        update(table)
        .where(table.c.id == editor.id, _open(table.c.locked_until, now))
        .values(failed_logins=table.c.failed_logins + 1)
        .returning(table.c.failed_logins)
    ).scalar()
    if counted is None:
        until = session.execute(select(table.c.locked_until).where(table.c.id == editor.id))
        return None, _remaining(until.scalar(), now) or 1
    wait = lock_seconds(counted)
    if wait:
        session.execute(
            update(table)
            .where(table.c.id == editor.id)
            .values(locked_until=now + timedelta(seconds=wait))
        )
    return counted, wait


# Counters of made-up names are forgotten a day after their last attempt (once any
# lock has run out), so spraying random names cannot grow the table for ever.
FORGET_UNKNOWN_AFTER = timedelta(days=1)


def _count_unknown_name(session: Session, key: str, now: datetime) -> tuple[int | None, int]:
    """Like `_count_attempt`, for a name that is no account: an atomic upsert."""
    table = SignInFailure.__table__
    session.execute(
        delete(table).where(
            table.c.last_at < now - FORGET_UNKNOWN_AFTER, _open(table.c.locked_until, now)
        )
    )
    insert = dialect_insert(session.connection().dialect.name)
    statement = insert(table).values(name_key=key, failures=1, locked_until=None, last_at=now)
    statement = statement.on_conflict_do_update(
        index_elements=[table.c.name_key],
        set_={"failures": table.c.failures + 1, "last_at": now},
        where=_open(table.c.locked_until, now),
    ).returning(table.c.failures)
    counted = session.execute(statement).scalar()
    if counted is None:
        until = session.execute(select(table.c.locked_until).where(table.c.name_key == key))
        return None, _remaining(until.scalar(), now) or 1
    wait = lock_seconds(counted)
    if wait:
        session.execute(
            update(table)
            .where(table.c.name_key == key)
            .values(locked_until=now + timedelta(seconds=wait))
        )
    return counted, wait


def active_role(session: Session, name: str) -> str | None:
    """The role of an enabled account, or None: the app asks on every rerun, so a
    disabled account loses its session at once."""
    editor = get_editor(session, name)
    if editor is None or not editor.enabled:
        return None
    return editor.role


def ensure_demo_editor(engine: Engine) -> tuple[str, str]:
    """Create, or reset and re-enable, the `demo` editor with a fresh random password.

    Returns (name, password) for `copydesk demo` to print once; the password is
    stored only as its hash."""
    password = secrets.token_urlsafe(12)
    with Session(engine, expire_on_commit=False) as session:
        if get_editor(session, DEMO_EDITOR) is None:
            add_editor(session, DEMO_EDITOR, password, role="editor")
        else:
            editor = set_password(session, DEMO_EDITOR, password, enable=True)
            editor.role = "editor"
            session.add(editor)
        session.commit()
    return DEMO_EDITOR, password
