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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui.desk.decisions import Reviewer
from review_ui.settings import ReviewAppSettings
from review_ui.views.widgets import plain
from store.db import session_scope
from store.editors import active_role, authenticate

SESSION_KEY = "reviewer"
_MESSAGE = "sign_in_message"


def current_reviewer(engine: Engine, settings: ReviewAppSettings) -> Reviewer | None:
    """The signed-in person with their role as the database says now, or None."""
    reviewer: Reviewer | None = st.session_state.get(SESSION_KEY)
    if reviewer is None:
        return None
    if settings.review.auth == "oidc" and not st.user.get("is_logged_in"):
        sign_out(message="Your single sign-on session ended. Sign in again.")
        return None
    with Session(engine) as session:
        role = active_role(session, reviewer.name)
    if role is None:
        sign_out(message="Your account is disabled or no longer exists. Signed out.")
        return None
    if role != reviewer.role:
        reviewer = Reviewer(reviewer.name, role)
        st.session_state[SESSION_KEY] = reviewer
    return reviewer


def sign_out(message: str | None = None) -> None:
    """Forget everything about this browser session, including the open item."""
    for key in list(st.session_state.keys()):
        del st.session_state[key]
    if message:
        st.session_state[_MESSAGE] = message


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
        _password_form(engine)
    st.stop()
    raise AssertionError("unreachable")  # st.stop() raises  # pragma: no cover


def _text(value: object) -> str:
    """A form value as text. The browser sends what it likes: a crafted websocket
    message can put a number, a list or None where the text box's string goes."""
    return value if isinstance(value, str) else ""


def _try_password(engine: Engine) -> None:
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
        st.session_state[SESSION_KEY] = Reviewer(result.name, result.role)
        st.session_state.pop(_MESSAGE, None)
    else:
        st.session_state[_MESSAGE] = result.message


def _password_form(engine: Engine) -> None:
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
            "Sign in", type="primary", key="login_submit", on_click=_try_password, args=(engine,)
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
