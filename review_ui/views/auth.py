"""Sign-in: nothing of the queue is drawn until someone has signed in.

Two ways in, chosen by `[review] auth` in config.toml:

- `password` (default): the editor accounts of `copydesk editor add`, checked
  with argon2 and throttled by `store.editors.authenticate`.
- `oidc`: Streamlit's `st.login` against the newsroom's identity provider. The
  identity is the `email` claim, and only when the provider also says
  `email_verified: true`: an unverified address can be anyone's (some providers
  let a user type any address), and `preferred_username` is neither unique nor
  stable. It must still match an enabled account in the editors table, which
  gives the role. See review_ui/README.md for the set-up.

Either way the account is re-read on every rerun, so disabling an editor ends
their session at their next click.

A reload keeps a password sign-in (issue 25): signing in opens a session
(store/sessions.py) and the browser keeps its signed token
(review_ui/desk/session_tokens.py) in a cookie, `copydesk_session`, set by a small
script of ours (Streamlit has no public way to set a cookie; it hands the server
the cookies a page was opened with as `st.context.cookies`). The cookie is
SameSite=Strict, Secure over HTTPS, and expires with the session. Script-made, it
cannot be HttpOnly: page scripts could read it, which is why untrusted text is
never drawn as HTML (review_ui/views/widgets.py). Every page run checks the
token's signature and its session row: signing out revokes it, and disabling the
editor or setting their password revokes all of theirs, at their next click.
Single sign-on keeps Streamlit's own identity cookie instead.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import streamlit as st
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui.desk import session_tokens
from review_ui.desk.decisions import Reviewer
from review_ui.settings import ReviewAppSettings
from review_ui.views.widgets import plain
from store import sessions
from store.db import session_scope
from store.editors import active_role, authenticate

SESSION_KEY = "reviewer"
TOKEN_KEY = "session_token"  # noqa: S105 - a session_state key: this browser's token
_FORGET = "forget_token"  # a token ended here: the sign-in page takes it out of the cookie
_MESSAGE = "sign_in_message"
COOKIE = "copydesk_session"
_DISABLED = "Your account is disabled or no longer exists. Signed out."
_ENDED = "Your session has ended (signed out elsewhere, or expired). Sign in again."


def session_secret(settings: ReviewAppSettings) -> bytes:
    """The key that signs session tokens (raises SessionSecretError: the app says
    it cannot start)."""
    from_env = settings.session_secret.get_secret_value() if settings.session_secret else None
    return session_tokens.load_secret(from_env, Path(settings.review.session_secret_file))


def _session_key(settings: ReviewAppSettings, token: object) -> str | None:
    """The session key of a token signed by us and not older than a session lasts."""
    return session_tokens.unsign(
        session_secret(settings),
        token,
        max_age=settings.review.session_hours * 3600,
        now=time.time(),
    )


def _from_cookie(engine: Engine, settings: ReviewAppSettings) -> Reviewer | None:
    """A reload: the editor of the live session whose token the browser sent."""
    token = st.context.cookies.get(COOKIE)
    if token is None or st.session_state.get(_FORGET) == token:
        return None
    key = _session_key(settings, token)
    found = None
    if key is not None:
        with Session(engine) as session:
            found = sessions.session_editor(session, key)
    if found is None:
        st.session_state[_FORGET] = token  # expired, revoked or forged: out of the cookie
        return None
    st.session_state[SESSION_KEY] = Reviewer(*found)
    st.session_state[TOKEN_KEY] = token
    return st.session_state[SESSION_KEY]


def current_reviewer(engine: Engine, settings: ReviewAppSettings) -> Reviewer | None:
    """The signed-in person with their role as the database says now, or None.
    With a password sign-in, its session must still be live (checked on every run)."""
    reviewer: Reviewer | None = st.session_state.get(SESSION_KEY)
    password = settings.review.auth == "password"
    if reviewer is None and password:
        reviewer = _from_cookie(engine, settings)
    if reviewer is None:
        return None
    if not password and not st.user.get("is_logged_in"):
        sign_out(message="Your single sign-on session ended. Sign in again.")
        return None
    key = _session_key(settings, st.session_state.get(TOKEN_KEY)) if password else None
    with Session(engine) as session:
        role = active_role(session, reviewer.name)
        live = sessions.session_editor(session, key) if key else None
    if role is None:
        sign_out(message=_DISABLED)
        return None
    if password and (live is None or live[0] != reviewer.name):
        sign_out(message=_ENDED)
        return None
    if role != reviewer.role:
        reviewer = Reviewer(reviewer.name, role)
        st.session_state[SESSION_KEY] = reviewer
    return reviewer


def sign_out(message: str | None = None) -> None:
    """Forget everything about this browser session, including the open item; the
    token it held is taken out of the browser's cookie on the sign-in page."""
    token = st.session_state.get(TOKEN_KEY)
    for key in list(st.session_state.keys()):
        del st.session_state[key]
    if token:
        st.session_state[_FORGET] = token
    if message:
        st.session_state[_MESSAGE] = message


def end_session(engine: Engine, settings: ReviewAppSettings) -> None:
    """Sign out: revoke this browser's session token, then forget the session."""
    key = _session_key(settings, st.session_state.get(TOKEN_KEY))
    if key is not None:
        with session_scope(engine) as session:
            sessions.revoke(session, key)
    sign_out()


# The cookie scripts. Only a token (checked against its fixed shape:
# letters, digits, - _ and two dots) and a number of seconds are put in.
_KEEP = """<script>(() => {
  const want = "%(cookie)s=%(token)s";
  if (document.cookie.split("; ").includes(want)) return;
  document.cookie = want + "; Path=/; Max-Age=%(seconds)d; SameSite=Strict" +
    (location.protocol === "https:" ? "; Secure" : "");
})();</script>"""
_DROP = """<script>(() => {
  if (!document.cookie.split("; ").includes("%(cookie)s=%(token)s")) return;
  document.cookie = "%(cookie)s=; Path=/; Max-Age=0; SameSite=Strict" +
    (location.protocol === "https:" ? "; Secure" : "");
})();</script>"""


def _shape(template: str) -> re.Pattern[str]:
    slot, seconds = "TOKENSLOT", 987654321
    escaped = re.escape(template % {"cookie": COOKIE, "token": slot, "seconds": seconds})
    return re.compile(
        escaped.replace(slot, session_tokens.TOKEN_PATTERN).replace(str(seconds), r"[0-9]+")
    )


_SCRIPTS = (_shape(_KEEP), _shape(_DROP))


def own_script(body: str) -> bool:
    """True for the cookie scripts this module draws (tests tell them from article text)."""
    return any(shape.fullmatch(body) for shape in _SCRIPTS)


def keep_cookie(settings: ReviewAppSettings) -> None:
    """Drawn on every signed-in page run: the browser keeps this session's token
    (set once; a run cut short before drawing it is made good by the next)."""
    token = st.session_state.get(TOKEN_KEY)
    if settings.review.auth != "password" or not session_tokens.looks_like_token(token):
        return
    seconds = max(1, int(settings.review.session_hours * 3600))
    script = _KEEP % {"cookie": COOKIE, "token": token, "seconds": seconds}
    st.html(script, unsafe_allow_javascript=True, width="content")


def _drop_cookie() -> None:
    """On the sign-in page: an ended token leaves the cookie, unless the browser
    has since been given another (a sign-in in another tab)."""
    token = st.session_state.get(_FORGET)
    if session_tokens.looks_like_token(token):
        script = _DROP % {"cookie": COOKIE, "token": token}
        st.html(script, unsafe_allow_javascript=True, width="content")


def sign_out_oidc() -> None:
    """Sign out of the app and of Streamlit's identity-provider session."""
    sign_out()
    st.logout()


def require_sign_in(engine: Engine, settings: ReviewAppSettings) -> Reviewer:
    """The signed-in reviewer; otherwise draws the sign-in form and stops the run."""
    reviewer = current_reviewer(engine, settings)
    if reviewer is not None:
        return reviewer
    st.title("copydesk review")
    if settings.review.auth == "oidc":
        _oidc(engine)
    else:
        _drop_cookie()
        _password_form(engine, settings)
    st.stop()
    raise AssertionError("unreachable")  # st.stop() raises  # pragma: no cover


def _text(value: object) -> str:
    """A form value as text. The browser sends what it likes: a crafted websocket
    message can put a number, a list or None where the text box's string goes."""
    return value if isinstance(value, str) else ""


def _try_password(engine: Engine, settings: ReviewAppSettings) -> None:
    """Form callback: runs before the next script run, so the password can be
    wiped from the session before anything else sees it."""
    name = _text(st.session_state.get("login_name")).strip()
    password = _text(st.session_state.get("login_password"))
    st.session_state["login_password"] = ""
    if not name or not password:
        st.session_state[_MESSAGE] = "Enter your name and password."
        return
    with session_scope(engine) as session:
        result = authenticate(session, name, password)
    if result.ok and result.name and result.role:
        lifetime = timedelta(hours=settings.review.session_hours)
        with session_scope(engine) as session:
            key = sessions.open_session(session, result.name, lifetime)
        secret = session_secret(settings)
        st.session_state[TOKEN_KEY] = session_tokens.sign(secret, key, int(time.time()))
        st.session_state[SESSION_KEY] = Reviewer(result.name, result.role)
        st.session_state.pop(_MESSAGE, None)
    else:
        st.session_state[_MESSAGE] = result.message


def _password_form(engine: Engine, settings: ReviewAppSettings) -> None:
    st.caption("Drafts are unpublished material: sign in with your editor account.")
    message = st.session_state.get(_MESSAGE)
    if message:
        st.error(message)
    with st.form("sign_in", enter_to_submit=True, border=True, width=420):
        st.text_input("Name", key="login_name", autocomplete="username")
        st.text_input(
            "Password", key="login_password", type="password", autocomplete="current-password"
        )
        st.form_submit_button(
            "Sign in",
            type="primary",
            key="login_submit",
            on_click=_try_password,
            args=(engine, settings),
        )
    st.caption("No account? An administrator creates one with `copydesk editor add NAME`.")


def verified_email(user: Mapping[str, Any]) -> str | None:
    """The `email` claim when the provider vouches for it (`email_verified` true,
    as a boolean or, from some providers, the string "true"); otherwise None."""
    email = str(user.get("email") or "").strip()
    verified = user.get("email_verified")
    if isinstance(verified, str):
        verified = verified.strip().lower() == "true"
    return email if email and verified is True else None


def _oidc(engine: Engine) -> None:
    message = st.session_state.get(_MESSAGE)
    if message:
        st.error(message)
    logged_in = st.user.get("is_logged_in")
    if logged_in is None:
        st.error(
            'Single sign-on is selected ([review] auth = "oidc") but Streamlit\'s [auth] '
            "section is missing from .streamlit/secrets.toml. See review_ui/README.md."
        )
        return
    if not logged_in:
        st.caption("Drafts are unpublished material: sign in with your newsroom account.")
        st.button("Sign in with single sign-on", type="primary", on_click=st.login)
        return
    identity = verified_email(st.user)
    if identity is None:
        plain(
            "Your identity provider did not confirm a verified e-mail address "
            "(email_verified is missing or false), so copydesk cannot tell who you are. "
            "Ask an administrator: see review_ui/README.md, single sign-on.",
            kind="error",
        )
        st.button("Sign out", on_click=st.logout)
        return
    with Session(engine) as session:
        role = active_role(session, identity)
    if role is None:
        plain(
            f"{identity} is not an enabled copydesk account. "
            "An administrator can add it with: copydesk editor add NAME --role editor|viewer",
            kind="error",
        )
        st.button("Sign out", on_click=st.logout)
        return
    st.session_state[SESSION_KEY] = Reviewer(identity, role)
    st.rerun()
