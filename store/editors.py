"""Editor accounts: who may sign in to the review queue, and with which role.

Passwords are stored as argon2id hashes (argon2-cffi), never in config.toml or
logs. Repeated wrong passwords lock the name for a while that doubles with each
further failure, so guessing is slow even though argon2 itself is fast enough
for a sign-in form. For an account the counters live in its `editors` row, so
the lock holds across app restarts and across several Streamlit servers on one
database; for a name that is no account they live in this process (see
`_UnknownNames`), so spraying made-up names is slowed down too.

The form must not tell which names exist: every refusal, a lock included, gets
the same message, and every attempt costs one argon2 verification, against a
dummy hash when the name is unknown or the account is locked.
"""

from __future__ import annotations

import re
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select, update
from sqlalchemy.engine import Engine
from sqlmodel import Session

from store.models import Editor, utcnow

ROLES = ("editor", "viewer")
DEMO_EDITOR = "demo"
MIN_PASSWORD_LENGTH = 8

# Throttling: the first FREE_FAILURES wrong passwords in a row cost nothing more
# than the hash; after that each one locks the account for BASE * 2^(n-1) seconds,
# capped at MAX_LOCK. A correct password after the lock has run out resets it.
FREE_FAILURES = 3
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

# The one answer to every refused attempt: wrong name, wrong password, or a lock.
# A distinct "locked" message would tell a guesser which names are accounts.
REFUSED = "Wrong name or password, or too many attempts: wait a moment and try again."


class EditorError(ValueError):
    """An account cannot be created or changed as asked; the message says why."""


@dataclass(frozen=True)
class SignIn:
    """The outcome of one sign-in attempt. `message` is fit to show on the form."""

    ok: bool
    message: str
    name: str | None = None
    role: str | None = None
    # Seconds until this name may try again. For logs and tests only: showing it
    # would tell an account (locked) from a made-up name as soon as their
    # counters drift apart (e.g. after a restart forgets the made-up ones).
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
    its next click (the app re-reads the account on every rerun)."""
    editor = get_editor(session, name)
    if editor is None:
        raise EditorError(f"no editor named {name!r}")
    editor.enabled = False
    session.add(editor)
    session.flush()
    return editor


def set_password(session: Session, name: str, password: str, *, enable: bool = False) -> Editor:
    """New password; clears any lock. With `enable`, also re-enables the account."""
    check_password(password)
    editor = get_editor(session, name)
    if editor is None:
        raise EditorError(f"no editor named {name!r}")
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


class _UnknownNames:
    """Failure counters for names that are no account, kept in this process.

    Without them a made-up name would never be throttled while each attempt
    still costs an argon2 check, and it would answer differently from a real,
    locked account. Keyed by the lower-cased name; bounded, forgetting the
    oldest names first, so a spray of random names cannot fill the memory. Each
    Streamlit server keeps its own, and a restart forgets them (accounts keep
    theirs in the database)."""

    def __init__(self, limit: int = 10_000):
        self._limit = limit
        self._lock = threading.Lock()
        self._seen: OrderedDict[str, tuple[int, datetime | None]] = OrderedDict()

    def locked_for(self, name: str, now: datetime) -> int:
        with self._lock:
            _, until = self._seen.get(name.lower(), (0, None))
        return _remaining(until, now)

    def fail(self, name: str, now: datetime) -> int:
        """Count one failure; returns the seconds of the lock it starts (0: none)."""
        key = name.lower()
        with self._lock:
            failures = self._seen.pop(key, (0, None))[0] + 1
            wait = lock_seconds(failures)
            self._seen[key] = (failures, now + timedelta(seconds=wait) if wait else None)
            while len(self._seen) > self._limit:
                self._seen.popitem(last=False)
        return wait

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()


_unknown_names = _UnknownNames()


def forget_unknown_names() -> None:
    """Drop the in-process counters of made-up names (tests; an operator's reset)."""
    _unknown_names.clear()


def _remaining(until: datetime | None, now: datetime) -> int:
    until = _aware(until)
    if until is None or until <= now:
        return 0
    return max(1, int((until - now).total_seconds() + 0.999))


def authenticate(
    session: Session, name: str, password: str, *, now: datetime | None = None
) -> SignIn:
    """Check a name and password, counting failures and honouring the lock.

    Every refusal (unknown name, wrong password, locked name) gets the same
    message and costs one argon2 verification, so neither the answer nor its
    time tells which names are accounts. During a lock even the right password
    is refused (against the dummy hash, so it is not even looked at), or the
    lock would slow nobody down. Attempts during a lock are not counted, so
    hammering a name during its lock does not lengthen its owner's lock; only
    checked failures double it. The caller commits (the failure counter must be
    saved even when the sign-in is refused).
    """
    now = now or utcnow()
    name = name.strip()
    editor = get_editor(session, name) if name else None
    if editor is None:
        _verify(_DUMMY_HASH, password)
        wait = _unknown_names.locked_for(name, now)
        return SignIn(False, REFUSED, retry_after=wait or _unknown_names.fail(name, now))
    wait = _remaining(editor.locked_until, now)
    if wait:
        _verify(_DUMMY_HASH, password)
        return SignIn(False, REFUSED, retry_after=wait)
    if not _verify(editor.password_hash, password):
        failures = _count_failure(session, editor, now)
        return SignIn(False, REFUSED, retry_after=lock_seconds(failures))
    if not editor.enabled:
        # Only someone who knows the password learns this: it tells them what to do.
        return SignIn(False, "This account is disabled. Ask an administrator.")
    if _hasher.check_needs_rehash(editor.password_hash):
        editor.password_hash = hash_password(password)
    editor.failed_logins = 0
    editor.locked_until = None
    editor.last_login_at = now
    session.add(editor)
    session.flush()
    return SignIn(True, f"Signed in as {editor.name}.", name=editor.name, role=editor.role)


def _verify(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def _count_failure(session: Session, editor: Editor, now: datetime) -> int:
    """Increment in the database itself, so two servers racing cannot lose a failure."""
    session.execute(
        update(Editor)
        .where(Editor.id == editor.id)
        .values(failed_logins=Editor.failed_logins + 1)
        .execution_options(synchronize_session=False)
    )
    session.refresh(editor)
    wait = lock_seconds(editor.failed_logins)
    if wait:
        editor.locked_until = now + timedelta(seconds=wait)
        session.add(editor)
    session.flush()
    return editor.failed_logins


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
