"""The review session token a browser keeps, so a reload stays signed in (issue 25).

A token is `KEY.ISSUED.MAC`: the session's random key (store/sessions.py, whose
row decides whether it still works), the second it was issued, and an HMAC-SHA256
of both under the server's secret. The signature is checked before the database
is asked, so a made-up or altered token costs no query; the issue time caps its
age even if a row outlived it. The token never holds the password or the name.

Signed with the standard library's `hmac` (HMAC-SHA256 and `compare_digest`, a
constant-time comparison: https://docs.python.org/3/library/hmac.html) rather
than itsdangerous: the token is one fixed-format string, so what itsdangerous
adds (serialisation, key rotation, salts by name) would be a dependency for
nothing this needs.

The secret comes from $COPYDESK_REVIEW_SECRET, or from a file (`[review]
session_secret_file`) made on first use with mode 0600 and refused if anyone but
its owner may read it. It is never stored in the database.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets
import stat
from pathlib import Path

MIN_SECRET_CHARS = 32
_DOMAIN = b"copydesk review session v1\x00"
TOKEN_PATTERN = r"[A-Za-z0-9_-]{43}\.[0-9]{1,12}\.[A-Za-z0-9_-]{43}"  # noqa: S105 - a pattern
_TOKEN = re.compile(r"^([A-Za-z0-9_-]{43})\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})$")
# A clock a little behind the one that issued the token must not refuse it.
_SKEW_SECONDS = 60


class SessionSecretError(ValueError):
    """The secret cannot be used; the message says what to do."""


def _mac(secret: bytes, key: str, issued: int) -> str:
    digest = hmac.new(secret, _DOMAIN + f"{key}.{issued}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def sign(secret: bytes, key: str, issued: int) -> str:
    """The token for session `key`, issued at `issued` (seconds since the epoch)."""
    return f"{key}.{int(issued)}.{_mac(secret, key, int(issued))}"


def unsign(secret: bytes, token: object, *, max_age: float, now: float) -> str | None:
    """The session key inside `token` when its signature is ours and it is younger
    than `max_age` seconds; None for anything else (never an exception: a cookie
    is whatever the browser sends)."""
    if not isinstance(token, str):
        return None
    found = _TOKEN.match(token)
    if found is None:
        return None
    key, issued_text, mac = found.groups()
    issued = int(issued_text)
    if not hmac.compare_digest(mac, _mac(secret, key, issued)):
        return None
    if issued > now + _SKEW_SECONDS or now - issued >= max_age:
        return None
    return key


def looks_like_token(value: object) -> bool:
    """Whether `value` has a token's shape (letters, digits, - _ and two dots): the
    only kind of value the page's cookie script is given."""
    return isinstance(value, str) and _TOKEN.match(value) is not None


def load_secret(from_env: str | None, file: Path) -> bytes:
    """The signing secret: `from_env` when set (at least 32 characters), else the
    file's, made with mode 0600 if it does not exist. Two servers starting at once
    make one file: it is written aside and linked into place, and the loser reads
    the winner's."""
    if from_env:
        if len(from_env.strip()) < MIN_SECRET_CHARS:
            raise SessionSecretError(
                f"COPYDESK_REVIEW_SECRET is too short: at least {MIN_SECRET_CHARS} characters"
            )
        return from_env.strip().encode("utf-8")
    try:
        return _read_secret(file)
    except FileNotFoundError:
        pass
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        aside = file.with_name(f".{file.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(secrets.token_urlsafe(48) + "\n")
        try:
            os.link(aside, file)
        except FileExistsError:
            pass  # another server made it first: use theirs
        finally:
            aside.unlink(missing_ok=True)
    except OSError as exc:
        raise SessionSecretError(
            f"cannot create the session secret file {file}: {exc.strerror or exc}"
        ) from None
    return _read_secret(file)


def _read_secret(file: Path) -> bytes:
    mode = file.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SessionSecretError(
            f"the session secret file {file} may be read by others "
            f"(mode {stat.S_IMODE(mode):04o}): run chmod 600 {file}"
        )
    try:
        secret = file.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise SessionSecretError(f"cannot read the session secret file {file}: {exc}") from None
    if len(secret) < MIN_SECRET_CHARS:
        raise SessionSecretError(
            f"the session secret file {file} holds fewer than {MIN_SECRET_CHARS} characters"
        )
    return secret.encode("utf-8")
