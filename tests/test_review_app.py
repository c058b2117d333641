"""The review app through Streamlit's AppTest: sign-in first, roles, decisions,
edits re-checked by the gates, compare-and-set conflicts, hostile text."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session
from streamlit.testing.v1 import AppTest

from review_ui.desk import decisions
from review_ui.desk.decisions import Blocked, NotAllowed, ReasonRequired, Reviewer
from review_ui.desk.queries import QueueFilter, discards_per_day, item_view, queue_count, since_days
from review_ui.views import queue as queue_view
from review_ui.views.stats import feed_chart
from store import verdicts as stored_verdicts
from store.db import open_store, session_scope
from store.editors import REFUSED, disable_editor
from store.models import Item, Run
from store.status import Conflict
from tests.apptest_helpers import list_rows, page_html
from tests.conftest import Seeded
from tests.language_material import HEADLINE, SOURCE, SUMMARY, TITLE
from tests.review_app_helpers import (
    APP,
    DESK_KEYS,
    DESK_MODES,
    Desk,
    events,
    make_desk,
    open_item,
    sign_in,
    texts,
)
from tests.review_seed import (
    ARTICLES,
    IMG,
    JS_LINK,
    MD_IMAGE,
    MIN_WORDS,
    PASSWORD,
    SCRIPT,
    Article,
    decision_button,
    item_state,
    seed_article,
    seed_copies,
    seed_discard,
    seed_editor,
    seed_model_verdict,
    seed_queue,
    write_config,
)

MODES = DESK_MODES
KEYS = DESK_KEYS
MW = MIN_WORDS
DECISION_KEYS = {"approve", "reject_submit", "edit_save", "edit_save_approve", "edit_check_btn"}


def decision_buttons(at: AppTest) -> set[str]:
    """The decision buttons on screen, their keys without the draft's id and version."""
    return {re.sub(r"_\d+_\d+$", "", b.key) for b in at.button if b.key} & DECISION_KEYS


@pytest.fixture
def desk(
    sqlite_url: str, migrated: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seeded: Seeded
) -> Desk:
    return make_desk(sqlite_url, tmp_path, monkeypatch, seeded)


@pytest.fixture
def any_desk(
    db_url: str, migrated: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seeded: Seeded
) -> Desk:
    return make_desk(db_url, tmp_path, monkeypatch, seeded)


# --------------------------------------------------------------------------- what the pipeline made


def test_the_queue_shows_what_the_pipeline_produced(desk: Desk) -> None:
    """The seed is the real pipeline: its statuses, reasons and verdicts are the
    ones the queue shows, word for word."""
    with Session(desk.engine) as session:
        statuses = {key: session.get(Item, i).status for key, i in desk.ids.items()}
        (quote,) = [
            v
            for v in stored_verdicts.of_item(session, desk.ids["misquote"])
            if v.gate == "quotes_verbatim"
        ]
        (discard,) = [
            e for e in events(desk.engine, desk.ids["wrong_number"]) if e.to_status == "discarded"
        ]
        labels = {session.get(Item, i).summariser for i in desk.ids.values()}
    assert statuses == dict.fromkeys(KEYS, "draft") | {"wrong_number": "discarded"}
    assert discard.reason == "numbers_grounded: 1 of 2 numbers not in the source: 40"
    assert discard.actor.startswith("run:")
    assert (quote.passed, quote.mode) == (False, "flag")  # flagged, so still a draft
    assert labels == {"recorded reply (demo)"}
    at = desk.signed_in("alice")
    open_item(at, desk.ids["misquote"])
    assert quote.reason in texts(at)
    at.sidebar.radio(key="view").set_value("Discarded")
    at.run()
    assert discard.reason in texts(at)


# --------------------------------------------------------------------------- sign-in


def test_nothing_but_the_sign_in_form_before_sign_in(desk: Desk) -> None:
    at = desk.app()
    assert {w.key for w in at.text_input} == {"login_name", "login_password"}
    assert [b.key for b in at.button] == ["login_submit"]
    assert len(at.sidebar.children) == 0
    assert len(at.dataframe) == 0 and len(at.json) == 0
    shown = texts(at)
    for article in ARTICLES.values():
        assert article.headline not in shown and article.title not in shown
    assert "Review queue" not in shown


def test_wrong_password_is_refused(desk: Desk) -> None:
    at = desk.app()
    sign_in(at, "alice", "not my password")
    assert _errors(at) == [REFUSED]
    assert "reviewer" not in at.session_state
    assert {w.key for w in at.text_input} == {"login_name", "login_password"}
    assert at.text_input(key="login_password").value == ""  # wiped after the attempt
    with Session(desk.engine) as session:
        from store.editors import get_editor

        assert get_editor(session, "alice").failed_logins == 1  # type: ignore[union-attr]


def _errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def _wait(at: AppTest) -> int:
    """The seconds the refusal on the form says to wait (0: it names none)."""
    (message,) = _errors(at)
    found = re.search(r"try again in (?:(\d+) min)? ?(?:(\d+) s)?\.$", message)
    if found is None:
        assert message == REFUSED
        return 0
    return int(found.group(1) or 0) * 60 + int(found.group(2) or 0)


def test_repeated_wrong_passwords_lock_the_form(desk: Desk) -> None:
    at = desk.app()
    waits = []
    for _ in range(3):
        sign_in(at, "alice", "guessing")
        waits.append(_wait(at))
    assert waits[:2] == [0, 0] and 28 <= waits[2] <= 30  # the third locks, and says for how long
    sign_in(at, "alice", PASSWORD)  # right password, but locked
    assert "reviewer" not in at.session_state
    assert 0 < _wait(at) <= 30
    with Session(desk.engine) as session:
        from store.editors import get_editor

        assert get_editor(session, "alice").locked_until is not None  # type: ignore[union-attr]


def test_the_form_does_not_tell_real_names_from_made_up_ones(desk: Desk) -> None:
    """Same attempts, same answers: a locked account and a name that is no account."""
    answers = {}
    for name in ("bob", "nobody"):
        at = desk.app()
        seen = []
        for _ in range(5):
            sign_in(at, name, "guessing")
            seen.append(_wait(at))
        answers[name] = seen
    # The same answers: nothing, nothing, then a lock with (a second or so apart) the
    # same wait, for a real name and a made-up one.
    assert answers["bob"][:2] == answers["nobody"][:2] == [0, 0]
    for bob, nobody in zip(answers["bob"][2:], answers["nobody"][2:], strict=True):
        assert 0 < bob <= 30 and abs(bob - nobody) <= 2


def test_editor_signs_in_and_sees_the_oldest_draft_with_its_count(desk: Desk) -> None:
    at = desk.signed_in("alice")
    shown = texts(at)
    assert "5 pending drafts" in shown  # wrong_number was discarded
    assert ARTICLES["bridge"].headline in shown  # the oldest opens first
    assert "claims check: not run (not configured)" in shown
    assert "faithfulness judge: not run (not configured)" in shown
    assert "numbers_grounded" in shown and "all 4 numbers found in the source" in shown  # 14 twice
    assert decision_buttons(at) >= {"approve", "reject_submit", "edit_save"}
    assert at.session_state["open_id"] == desk.ids["bridge"]


def test_disabling_an_account_ends_its_session(desk: Desk) -> None:
    at = desk.signed_in("alice")
    with session_scope(desk.engine) as session:
        disable_editor(session, "alice")
    at.run()
    assert "reviewer" not in at.session_state
    assert {w.key for w in at.text_input} == {"login_name", "login_password"}


# --------------------------------------------------------------------------- roles


def test_viewer_sees_everything_but_cannot_decide(desk: Desk) -> None:
    at = desk.signed_in("vera")
    shown = texts(at)
    assert ARTICLES["bridge"].headline in shown
    assert "signed in as a viewer" in shown
    assert decision_buttons(at) == set()
    item = item_state(desk.engine, desk.ids["bridge"])
    with session_scope(desk.engine) as session:
        with pytest.raises(NotAllowed):
            decisions.approve(session, Reviewer("vera", "viewer"), item.id, item.version)  # type: ignore[arg-type]
        # A forged role in the browser session does not help: the database says viewer.
        with pytest.raises(NotAllowed):
            decisions.reject(session, Reviewer("vera", "editor"), item.id, item.version, "x")  # type: ignore[arg-type]
        with pytest.raises(NotAllowed):
            decisions.approve(session, Reviewer("mallory", "editor"), item.id, item.version)  # type: ignore[arg-type]
    assert item_state(desk.engine, desk.ids["bridge"]).status == "draft"


# --------------------------------------------------------------------------- decisions


def test_approve_records_status_editor_and_audit_event_then_opens_the_next(desk: Desk) -> None:
    at = desk.signed_in("alice")
    decision_button(at, "approve").click()
    at.run()
    assert not at.exception
    bridge = item_state(desk.engine, desk.ids["bridge"])
    assert bridge.status == "approved" and bridge.decided_by == "alice"
    assert bridge.decided_at is not None
    last = events(desk.engine, bridge.id)[-1]  # type: ignore[arg-type]
    assert (last.actor, last.from_status, last.to_status) == ("editor:alice", "draft", "approved")
    assert at.session_state["open_id"] == desk.ids["school"]
    shown = texts(at)
    assert f"Approved #{bridge.id}" in shown and "4 pending drafts" in shown


def test_reject_needs_a_reason(desk: Desk) -> None:
    at = desk.signed_in("alice")
    decision_button(at, "reject_submit").click()
    at.run()
    assert any("needs a reason" in h for h in [e.value for e in at.html])
    assert item_state(desk.engine, desk.ids["bridge"]).status == "draft"
    with session_scope(desk.engine) as session, pytest.raises(ReasonRequired):
        version = item_state(desk.engine, desk.ids["bridge"]).version
        decisions.reject(session, Reviewer("alice", "editor"), desk.ids["bridge"], version, "   ")

    reason = next(w for w in at.text_input if w.label == "Reason for rejecting")
    reason.input("Duplicate of an earlier story")
    decision_button(at, "reject_submit").click()
    at.run()
    bridge = item_state(desk.engine, desk.ids["bridge"])
    assert bridge.status == "rejected" and bridge.decided_by == "alice"
    last = events(desk.engine, bridge.id)[-1]  # type: ignore[arg-type]
    assert last.reason == "Duplicate of an earlier story" and last.actor == "editor:alice"
    assert at.session_state["open_id"] == desk.ids["school"]


def _edit(at: AppTest, item_id: int, version: int, summary: str) -> None:
    at.text_area(key=f"edit_summary_{item_id}_{version}").input(summary)


def test_edit_with_an_ungrounded_number_cannot_be_approved(desk: Desk) -> None:
    at = desk.signed_in("alice")
    item_id = desk.ids["bridge"]
    original = item_state(desk.engine, item_id)
    bad = original.summary.replace("38 steel hangers", "3,400 steel hangers")  # type: ignore[union-attr]
    _edit(at, item_id, original.version, bad)
    at.button(key="edit_save_approve").click()
    at.run()
    assert not at.exception
    item = item_state(desk.engine, item_id)
    assert item.status == "draft"  # not approved
    assert item.summary == bad and item.version == original.version + 1
    assert "cannot be approved while a hard gate fails" in texts(at)
    assert decision_button(at, "approve").disabled
    # The audit keeps both texts, and the verdicts of the edit are stored.
    edit_event = [e for e in events(desk.engine, item_id) if e.reason == "edited"][-1]
    assert edit_event.actor == "editor:alice"
    assert edit_event.details["before"]["summary"] == original.summary
    assert edit_event.details["after"]["summary"] == bad
    with Session(desk.engine) as session:
        edits = [v for v in stored_verdicts.of_item(session, item_id) if v.stage == "edit"]
    failed = [v for v in edits if not v.passed]
    assert [v.gate for v in failed] == ["numbers_grounded"] and "3,400" in failed[0].reason
    # The decision function refuses too, whatever the page shows.
    with session_scope(desk.engine) as session, pytest.raises(Blocked):
        decisions.approve(session, Reviewer("alice", "editor"), item_id, item.version)
    assert item_state(desk.engine, item_id).status == "draft"

    # A corrected edit passes every gate and can be approved in the same click.
    _edit(at, item_id, item.version, original.summary.replace("38 steel", "38 corroded steel"))  # type: ignore[union-attr]
    at.button(key="edit_save_approve").click()
    at.run()
    final = item_state(desk.engine, item_id)
    assert final.status == "approved" and final.decided_by == "alice"
    assert "38 corroded steel" in final.summary  # type: ignore[operator]


def test_check_runs_the_gates_without_saving(desk: Desk) -> None:
    at = desk.signed_in("alice")
    item_id = desk.ids["bridge"]
    version = item_state(desk.engine, item_id).version  # as the pipeline left it
    _edit(at, item_id, version, "The ferry will run every 25 minutes.")
    at.button(key="edit_check_btn").click()
    at.run()
    assert "this text cannot be approved" in texts(at)
    assert item_state(desk.engine, item_id).version == version


def test_check_reads_the_edit_in_the_items_language(desk: Desk) -> None:
    """The preview of an unsaved edit gives the gates the item's declared language, as
    saving does: the Saint-Aulne report looks French to the detector (its 4,500 would
    read 4.5), its feed says English."""
    article = Article("saint-aulne", TITLE, SOURCE, HEADLINE, SUMMARY, language="en-GB")
    item_id = seed_article(desk.engine, article, modes=MODES)
    item = item_state(desk.engine, item_id)
    assert (item.language, item.status) == ("en", "draft")
    at = desk.signed_in("alice")
    open_item(at, item_id)
    edited = SUMMARY.replace("protested", "marched")
    _edit(at, item_id, item.version, edited)
    at.button(key="edit_check_btn").click()
    at.run()
    assert not at.exception
    check = at.session_state["edit_check"]
    assert check["key"] == (item_id, item.version)
    numbers = next(r for r in check["results"] if r["gate"] == "numbers_grounded")
    assert numbers["passed"], numbers["reason"]
    assert "this text cannot be approved" not in texts(at)
    assert item_state(desk.engine, item_id).version == item.version  # nothing saved


def test_conflict_names_who_decided_and_when(any_desk: Desk) -> None:
    desk = any_desk
    at = desk.signed_in("alice")  # alice is looking at the bridge draft, version 1
    item_id = desk.ids["bridge"]
    version = item_state(desk.engine, item_id).version
    with session_scope(desk.engine) as session:  # bob approves it first
        decisions.approve(session, Reviewer("bob", "editor"), item_id, version)
    decision_button(at, "approve").click()
    at.run()
    assert not at.exception
    shown = texts(at)
    decided = item_state(desk.engine, item_id)
    when = decided.decided_at.strftime("%Y-%m-%d %H:%M")  # type: ignore[union-attr]
    # The message names the item: number and headline.
    headline = ARTICLES["bridge"].headline
    assert f"Not saved: #{item_id} {headline}: already approved by bob at {when}" in shown
    assert decided.decided_by == "bob"
    approvals = [e for e in events(desk.engine, item_id) if e.to_status == "approved"]
    assert [e.actor for e in approvals] == ["editor:bob"]
    assert at.session_state["open_id"] == desk.ids["school"]  # moved on


def test_only_one_of_two_racing_decisions_lands(engine: Engine) -> None:
    """Alice's approval is written but not committed while Bob's rejection, which
    read the same version, tries to write: exactly one lands, on both backends."""
    ids = seed_queue(engine, ("bridge",))
    seed_editor(engine, "alice")
    seed_editor(engine, "bob")
    item_id = ids["bridge"]
    version = item_state(engine, item_id).version
    outcome: dict[str, BaseException | None] = {}

    def bob() -> None:
        try:
            decisions.decide(
                engine,
                lambda s: decisions.reject(
                    s, Reviewer("bob", "editor"), item_id, version, "too late"
                ),
            )
            outcome["bob"] = None
        except BaseException as exc:  # noqa: BLE001 - inspected below
            outcome["bob"] = exc

    with Session(engine) as first:
        decisions.approve(first, Reviewer("alice", "editor"), item_id, version)  # holds it
        racer = threading.Thread(target=bob)
        racer.start()
        time.sleep(0.5)  # let Bob reach his write; the outcome must not depend on it
        first.commit()
    racer.join(timeout=120)
    assert not racer.is_alive()
    assert isinstance(outcome["bob"], Conflict), outcome
    assert "alice" in decisions.conflict_message(outcome["bob"])
    item = item_state(engine, item_id)
    assert item.status == "approved" and item.decided_by == "alice"
    decided = [e for e in events(engine, item_id) if e.actor.startswith("editor:")]
    assert [(e.actor, e.to_status) for e in decided] == [("editor:alice", "approved")]


# --------------------------------------------------------------------------- navigation


def test_next_previous_and_filters(desk: Desk) -> None:
    at = desk.signed_in("alice")
    at.button(key="nav_next").click()
    at.run()
    assert at.session_state["open_id"] == desk.ids["school"]
    at.button(key="nav_prev").click()
    at.run()
    assert at.session_state["open_id"] == desk.ids["bridge"]
    assert at.button(key="nav_prev").disabled

    at.sidebar.toggle(key="f_flagged").set_value(True)
    at.run()
    assert "1 pending draft (filtered)" in texts(at)
    assert at.session_state["open_id"] == desk.ids["misquote"]
    assert "quotes_verbatim" in texts(at) and "failed (flag)" in texts(at)

    at.sidebar.toggle(key="f_flagged").set_value(False)
    at.sidebar.text_input(key="f_search").input("school")
    at.run()
    assert "1 pending draft (filtered)" in texts(at)
    assert at.session_state["open_id"] == desk.ids["school"]


# --------------------------------------------------------------------------- other views


def test_discarded_published_and_stats_views(desk: Desk) -> None:
    at = desk.signed_in("alice")
    decision_button(at, "approve").click()
    at.run()
    at.sidebar.radio(key="view").set_value("Discarded")
    at.run()
    assert not at.exception
    listing = list_rows(at)
    assert [r["#"] for r in listing] == [str(desk.ids["wrong_number"])]
    why = listing[0]["why discarded"]
    assert "numbers_grounded" in why and "40" in why
    # Why it was discarded is what this view is read for: the gate leads (issue 25).
    assert list(listing[0]) == ["gate", "why discarded", "#", "title", "feed", "discarded"]
    assert listing[0]["gate"] == "numbers_grounded"

    at.sidebar.radio(key="view").set_value("Approved")
    at.run()
    assert [r["by"] for r in list_rows(at)] == ["alice"]

    at.sidebar.radio(key="view").set_value("Stats")
    at.run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["draft"] == "4" and metrics["approved"] == "1" and metrics["discarded"] == "1"


# --------------------------------------------------------------------------- hostile text


PAYLOADS = (SCRIPT, IMG, MD_IMAGE, JS_LINK)


def _assert_inert(at: AppTest) -> None:
    # No markdown-rendering element carries any part of the article.
    for kind in ("markdown", "caption", "error", "warning", "info", "success", "title"):
        for element in getattr(at, kind):
            for needle in ("alert(1)", "tracker.example.net", "onerror"):
                assert needle not in str(element.value), (kind, element.value)
    # Widget labels and options parse markdown too.
    for widget in [*at.button, *at.text_input, *at.text_area, *at.selectbox, *at.radio]:
        assert "alert(1)" not in str(getattr(widget, "label", ""))
    # Our own keyboard script (review_ui/views/shortcuts.py, a fixed string) and the
    # session cookie's (review_ui/views/auth.py: a token, checked) are the only scripts.
    bodies = "\n".join(page_html(at))
    assert (
        "<script" not in bodies
        and "<img" not in bodies
        and "javascript:" not in bodies.replace("[click](javascript:", "")
    )
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in bodies
    assert "&lt;img src=x onerror=alert(1)&gt;" in bodies
    assert MD_IMAGE in bodies and JS_LINK in bodies  # shown literally, as text
    for link in at.get("link_button"):
        assert str(link.proto.url).startswith("https://news.example.org/")


def test_hostile_article_is_shown_as_text(desk: Desk) -> None:
    at = desk.signed_in("alice")
    open_item(at, desk.ids["hostile"])
    _assert_inert(at)
    at.sidebar.radio(key="view").set_value("Stats")
    at.run()
    assert not at.exception


def test_untrusted_feed_name_in_filters_is_plain(desk: Desk) -> None:
    at = desk.signed_in("alice")
    feed_box = at.sidebar.selectbox(key="f_feed")
    assert any(IMG in str(o) for o in feed_box.options)  # an option label: plain text
    assert "alert(1)" not in feed_box.label


@pytest.mark.parametrize("view", ["Discarded", "Approved", "Rejected", "Published"])
def test_every_view_renders(desk: Desk, view: str) -> None:
    at = desk.signed_in("vera")
    at.sidebar.radio(key="view").set_value(view)
    at.run()
    assert not at.exception


# --------------------------------------------------------------------------- single sign-on


@pytest.fixture
def sso_desk(
    sqlite_url: str, migrated: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seeded: Seeded
) -> Desk:
    desk = make_desk(sqlite_url, tmp_path, monkeypatch, seeded)
    seed_editor(desk.engine, "alice@example.org")
    config = write_config(tmp_path / "sso.toml", sqlite_url, modes=MODES, auth="oidc")
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    return desk


def _sso_app(user: dict[str, object]) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.user = user
    at.run()
    assert not at.exception, at.exception
    return at


def test_sso_shows_only_its_sign_in_button(sso_desk: Desk) -> None:
    at = _sso_app({"is_logged_in": False})
    assert [b.label for b in at.button] == ["Sign in with single sign-on"]
    assert len(at.text_input) == 0 and len(at.sidebar.children) == 0
    assert ARTICLES["bridge"].headline not in texts(at)


def test_sso_identity_must_be_an_enabled_account(sso_desk: Desk) -> None:
    at = _sso_app({"is_logged_in": True, "email": "mallory@example.org", "email_verified": True})
    assert "is not an enabled copydesk account" in texts(at)
    assert "reviewer" not in at.session_state
    assert ARTICLES["bridge"].headline not in texts(at)


@pytest.mark.parametrize(
    "claims",
    [
        {"email": "alice@example.org"},  # the provider says nothing about verification
        {"email": "alice@example.org", "email_verified": False},
        {"email": "alice@example.org", "email_verified": "false"},
        {"preferred_username": "alice@example.org"},  # neither unique nor verified
    ],
)
def test_sso_refuses_an_unverified_email(sso_desk: Desk, claims: dict[str, object]) -> None:
    """An address the provider does not vouch for could be anyone's."""
    at = _sso_app({"is_logged_in": True, **claims})
    assert "reviewer" not in at.session_state
    assert "did not confirm a verified e-mail address" in texts(at)
    assert ARTICLES["bridge"].headline not in texts(at)
    assert decision_buttons(at) == set()


def test_sso_signs_in_a_known_account_with_its_role(sso_desk: Desk) -> None:
    at = _sso_app({"is_logged_in": True, "email": "alice@example.org", "email_verified": True})
    assert at.session_state["reviewer"] == Reviewer("alice@example.org", "editor")
    assert ARTICLES["bridge"].headline in texts(at)
    decision_button(at, "approve").click()
    at.run()
    assert item_state(sso_desk.engine, sso_desk.ids["bridge"]).decided_by == "alice@example.org"


def test_sso_without_streamlit_auth_settings_says_what_is_missing(sso_desk: Desk) -> None:
    at = _sso_app({"email": "alice@example.org"})  # no [auth] section: no is_logged_in
    assert "[auth] section is missing" in texts(at)
    assert len(at.button) == 0


def test_database_url_alone_is_enough(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = open_store(sqlite_url)
    seed_queue(engine, ("bridge",))
    seed_editor(engine, "alice")
    monkeypatch.chdir(tmp_path)  # no config.toml here, no $COPYDESK_CONFIG
    monkeypatch.setenv("COPYDESK_DATABASE_URL", sqlite_url)
    at = Desk(engine, {}).signed_in("alice")
    assert ARTICLES["bridge"].headline in texts(at)


def test_the_list_is_paged_oldest_first(
    sqlite_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from streamlit.elements.lib import policies

    monkeypatch.setattr(policies, "_shown_default_value_warning", False)  # once per process
    engine = open_store(sqlite_url)
    ids = seed_copies(engine, "bridge", 30)
    assert ids == list(range(1, 31))  # one new item per entry, in the feed's order
    seed_editor(engine, "alice")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COPYDESK_DATABASE_URL", sqlite_url)
    at = Desk(engine, {}).signed_in("alice")
    assert list(at.dataframe[0].value["#"]) == list(range(1, 26))
    at.get("pagination")[0].set_value(2)
    at.run()
    assert list(at.dataframe[0].value["#"]) == list(range(26, 31))
    # A filter change goes back to page 1 without Streamlit's warning about a
    # widget default also set through Session State (issue 12).
    at.toggle(key="f_flagged").set_value(True).run()
    at.toggle(key="f_flagged").set_value(False).run()
    assert not at.exception, at.exception
    assert "Session State API" not in caplog.text
    assert list(at.dataframe[0].value["#"]) == list(range(1, 26))
    # The view radio keeps fixed labels, so a decision never leaves it unselected.
    radio = at.sidebar.radio(key="view")
    assert (radio.value, radio.options[0]) == ("Queue", "Queue")


# --------------------------------------------------------------------------- editors in a hurry


def test_pending_list_folds_to_a_strip_once_an_item_is_open(desk: Desk) -> None:
    """Issue 12: the draft and its buttons come first; the list is one line until
    the editor unfolds it, and it still holds the page with the open item."""
    at = desk.signed_in("alice")
    (listing,) = [e for e in at.expander if e.label == "List of pending drafts"]
    assert not listing.proto.expanded
    assert "Draft 1 of 5 in the queue" in texts(at)
    assert list(at.dataframe[0].value["#"])[:2] == [desk.ids["bridge"], desk.ids["school"]]


def test_revert_to_the_pipeline_draft_after_a_failed_edit(desk: Desk) -> None:
    at = desk.signed_in("alice")
    item_id = desk.ids["bridge"]
    original = item_state(desk.engine, item_id)
    assert "edit_revert" not in {b.key for b in at.button}  # nothing to revert yet
    bad = original.summary.replace("38 steel hangers", "3,400 steel hangers")  # type: ignore[union-attr]
    _edit(at, item_id, original.version, bad)
    at.button(key="edit_save").click()
    at.run()
    assert decision_button(at, "approve").disabled  # the edit fails numbers_grounded

    at.button(key="edit_revert").click()
    at.run()
    assert not at.exception
    item = item_state(desk.engine, item_id)
    assert (item.headline, item.summary) == (original.headline, original.summary)
    assert item.status == "draft" and item.version == original.version + 2
    assert "Reverted to the pipeline&#x27;s draft; every hard gate passes" in texts(at)
    assert not decision_button(at, "approve").disabled
    assert "edit_revert" not in {b.key for b in at.button}  # back where it started
    # The audit keeps every text: the failed edit and the revert, both by alice.
    edits = [e for e in events(desk.engine, item_id) if e.from_status == e.to_status]
    assert [(e.actor, e.reason) for e in edits] == [
        ("editor:alice", "edited"),
        ("editor:alice", "reverted"),  # issue 12: a revert is not logged as an edit
    ]
    assert edits[0].details["after"]["summary"] == bad
    assert edits[1].details["before"]["summary"] == bad
    assert edits[1].details["after"]["summary"] == original.summary
    assert edits[1].details["reverted_to"] == "pipeline draft"
    # The gates ran again on the reverted text, and it can be approved.
    decision_button(at, "approve").click()
    at.run()
    assert item_state(desk.engine, item_id).status == "approved"


def test_revert_without_an_edit_is_refused(desk: Desk) -> None:
    with session_scope(desk.engine) as session, pytest.raises(Exception, match="never edited"):
        decisions.revert(
            session,
            Reviewer("alice", "editor"),
            desk.ids["bridge"],
            1,
            gate_modes={},
            min_source_words=40,
        )


def test_model_checks_of_the_pipeline_draft_do_not_count_after_an_edit(any_desk: Desk) -> None:
    desk = any_desk
    """The claims check failed (flag) on the pipeline's text; after an edit that
    verdict is history: not a current flag, and the page says it did not run."""
    item_id = desk.ids["bridge"]
    with session_scope(desk.engine) as session:
        seed_model_verdict(
            session,
            item_id,
            "claims_supported",
            passed=False,
            mode="flag",
            reason="claim 2 has no supporting sentence",
        )
    flagged = QueueFilter(flagged_only=True)
    with Session(desk.engine) as session:
        assert queue_count(session, flagged) == 2  # bridge (claims) and misquote (quotes)
    at = desk.signed_in("alice")
    assert "claims check: failed (flag): claim 2 has no supporting sentence" in texts(at)

    original = item_state(desk.engine, item_id)
    _edit(at, item_id, original.version, original.summary.replace("38 steel", "38 corroded steel"))  # type: ignore[union-attr]
    at.button(key="edit_save").click()
    at.run()
    shown = texts(at)
    assert "claims check: not run on the edited text" in shown
    assert "which no longer applies: claim 2 has no supporting sentence" in shown
    with Session(desk.engine) as session:
        view = item_view(session, item_id)
        assert view is not None and view.edited
        assert view.model_verdict("claims_supported") is None
        assert {v.stage for v in view.draft_verdicts} == {"edit"}
        assert view.flags == [] and view.hard_failures == []
        assert queue_count(session, flagged) == 1  # only misquote is still flagged


def edit_as_alice(
    desk: Desk,
    item_id: int,
    version: int,
    headline: str | None,
    summary: str,
    modes: dict[str, str],
    min_words: int,
) -> None:
    """An edit saved straight through `decisions`, as the queue's Edit does."""
    with session_scope(desk.engine) as session:
        decisions.edit(
            session,
            Reviewer("alice", "editor"),
            item_id,
            version,
            headline,
            summary,
            gate_modes=modes,
            min_source_words=min_words,
        )


def test_a_second_edit_replaces_the_first_edits_verdicts(desk: Desk) -> None:
    item_id = desk.ids["bridge"]
    original = item_state(desk.engine, item_id)
    bad = original.summary.replace("38 steel hangers", "3,400 steel hangers")  # type: ignore[union-attr]
    modes = {"numbers_grounded": "discard", "quotes_verbatim": "flag"}
    edit_as_alice(desk, item_id, original.version, original.headline, bad, modes, 40)
    # numbers_grounded switched off before the second edit: it does not run again,
    # and the first edit's failure of it no longer applies.
    edit_as_alice(
        desk,
        item_id,
        original.version + 1,
        original.headline,
        bad + " Work starts soon.",
        {**modes, "numbers_grounded": "off"},
        MW,
    )
    with Session(desk.engine) as session:
        view = item_view(session, item_id)
        assert view is not None
        assert [v.gate for v in view.draft_verdicts] == [
            "quotes_verbatim",
            "speakers_match",
            "names_grounded",
            "dates_grounded",
        ]
        assert view.hard_failures == []


def test_a_gate_switched_off_is_shown_as_off_and_neither_blocks_nor_flags(
    desk: Desk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    item_id = desk.ids["bridge"]
    alice = Reviewer("alice", "editor")
    original = item_state(desk.engine, item_id)
    bad = original.summary.replace("38 steel hangers", "3,400 steel hangers")  # type: ignore[union-attr]
    edit_as_alice(desk, item_id, original.version, original.headline, bad, MODES, 40)
    edited = original.version + 1
    with session_scope(desk.engine) as session, pytest.raises(Blocked):
        decisions.approve(session, alice, item_id, edited)
    # The newsroom switches numbers_grounded and quotes_verbatim off.
    off = {"numbers_grounded": "off", "quotes_verbatim": "off"}
    url = str(desk.engine.url.render_as_string(hide_password=False))
    monkeypatch.setenv("COPYDESK_CONFIG", str(write_config(tmp_path / "off.toml", url, modes=off)))
    at = desk.signed_in("alice")
    rows = {
        r["check"]: r
        for d in at.dataframe
        if "check" in d.value.columns
        for r in d.value.to_dict("records")
    }
    assert rows["numbers_grounded"]["result"] == "failed (gate now off: not counted)"
    assert rows["numbers_grounded"]["mode"] == "off now (was discard)"
    assert not decision_button(at, "approve").disabled
    assert "Approval blocked" not in texts(at)
    at.sidebar.toggle(key="f_flagged").set_value(True)
    at.run()
    assert "No pending draft matches the filters." in texts(at)  # misquote's flag is off too
    with session_scope(desk.engine) as session:
        decisions.approve(session, alice, item_id, edited, off=decisions.gates_off(off))
    assert item_state(desk.engine, item_id).status == "approved"


def test_stats_count_every_discard_not_only_gate_failures(any_desk: Desk) -> None:
    desk = any_desk
    with session_scope(desk.engine) as session:
        run = Run(command="seed")
        session.add(run)
        session.flush()
        for n, (reason, kind) in enumerate(
            [
                ("link refused: scheme 'ftp' is not fetched (http and https only)", "refused"),
                ("robots.txt disallows https://news.example.org/private", "robots"),
                (f"duplicate of item {desk.ids['bridge']} (same text)", "duplicate"),
                ("model failed 5 times: summariser failed: HTTP 529 overloaded", "model"),
                ("page fetch failed: HTTP 404", "fetch"),
                ("processing failed 5 times: KeyError", "internal"),
                ("fetch failed: but the item says otherwise", "duplicate"),  # the column wins
                ("something nobody planned for", None),
            ]
        ):
            seed_discard(session, run, f"https://news.example.org/gone-{n}", reason, kind)
    with Session(desk.engine) as session:
        rows = discards_per_day(session, since_days(2))
    kinds = {kind: n for _, kind, n in rows}
    assert kinds == {
        "numbers_grounded": 1,  # the pipeline's own discard of wrong_number
        "refused": 1,
        "robots": 1,
        "duplicate": 2,
        "model": 1,
        "fetch": 1,
        "internal": 1,
        "other": 1,
    }
    at = desk.signed_in("vera")
    at.sidebar.radio(key="view").set_value("Stats")
    at.run()
    assert not at.exception
    assert "9 discarded in this period" in texts(at)
    assert "refused link 1" in texts(at) and "internal failure 1" in texts(at)


def test_feed_names_are_drawn_whole_in_the_stats() -> None:
    long_name = "Brinmoor Courier - Harlow Vale and the northern villages"
    spec = feed_chart([(long_name, "draft", 3), ("Short", "approved", 1)]).to_dict()
    y = spec["encoding"]["y"]
    assert y["field"] == "feed" and y["axis"]["labelLimit"] == 0  # no cut-off
    assert spec["encoding"]["x"]["field"] == "items"  # horizontal bars
    assert y["sort"] == [long_name, "Short"]


# --------------------------------------------------------------------------- issue 12: seen, undo


def _with_dwell(
    desk: Desk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **review: float
) -> None:
    config = write_config(
        tmp_path / "dwell.toml", str(desk.engine.url), modes=MODES, dwell_seconds=None
    )
    extra = "".join(f"{key} = {value}\n" for key, value in review.items())
    config.write_text(config.read_text() + extra)
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))


class Clock:
    """The review page's clock (review_ui/views/queue.py `clock`), moved by the test
    alone: a dwell or undo window then means the same on any machine."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """Every test of this module: the dwell and undo windows move only when the test
    moves this clock (an undo offered for 10 s does not lapse because a loaded machine
    took 10 s over a page run)."""
    fake = Clock()
    monkeypatch.setattr(queue_view, "clock", fake)
    return fake


def test_a_draft_on_screen_for_less_than_the_dwell_time_is_not_approved(
    desk: Desk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: Clock
) -> None:
    _with_dwell(desk, tmp_path, monkeypatch)  # the default: 1 s
    at = desk.signed_in("alice")
    first = desk.ids["bridge"]
    clock.now += 0.9  # however long drawing and clicking took
    decision_button(at, "approve").click().run()
    assert f"Not approved: #{first} " in texts(at)
    assert "on screen for only 0.9 s" in texts(at)
    assert item_state(desk.engine, first).status == "draft"
    clock.now += 0.1
    decision_button(at, "approve").click().run()
    assert f"Approved #{first} " in texts(at)
    assert item_state(desk.engine, first).status == "approved"


def test_undo_puts_a_decision_back_and_is_audited(
    desk: Desk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = desk.signed_in("alice")
    first = desk.ids["bridge"]
    decision_button(at, "approve").click().run()
    assert item_state(desk.engine, first).status == "approved"
    at.button(key="undo").click().run()
    assert f"Undone: #{first} " in texts(at)
    assert item_state(desk.engine, first).status == "draft"
    assert at.session_state["open_id"] == first
    last = events(desk.engine, first)[-1]
    assert (last.from_status, last.to_status, last.reason, last.actor) == (
        "approved",
        "draft",
        "undone",
        "editor:alice",
    )
    assert last.details == {"undo": "approved"}
    # A rejection can be undone too; after the undo time, the button is gone.
    at.text_input(key=f"reason_{first}_{item_state(desk.engine, first).version}").input("dup")
    decision_button(at, "reject_submit").click().run()
    assert item_state(desk.engine, first).status == "rejected"
    at.session_state["undo_offer"] = (*at.session_state["undo_offer"][:3], 0.0)
    at.run()
    assert "undo" not in {b.key for b in at.button}
    assert item_state(desk.engine, first).status == "rejected"


def test_undo_after_the_time_has_passed_is_refused(
    desk: Desk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = desk.signed_in("alice")
    first = desk.ids["bridge"]
    decision_button(at, "approve").click().run()
    undo = at.button(key="undo")
    at.session_state["undo_offer"] = (*at.session_state["undo_offer"][:3], 0.0)
    undo.click().run()
    assert f"Not undone: #{first} " in texts(at)
    assert item_state(desk.engine, first).status == "approved"


def test_an_editor_reopens_a_rejected_item_with_a_reason(desk: Desk) -> None:
    first = desk.ids["bridge"]
    version = item_state(desk.engine, first).version
    with session_scope(desk.engine) as session:
        decisions.reject(session, Reviewer("bob", "editor"), first, version, "too thin")
    at = desk.signed_in("alice")
    at.sidebar.radio(key="view").set_value("Rejected").run()
    at.selectbox(key="reopen_item").set_value(first)
    at.text_input(key="reopen_reason").input("new facts arrived")
    at.button[[b.label for b in at.button].index("Reopen as a draft")].click().run()
    assert not at.exception, at.exception
    assert f"Reopened #{first} " in texts(at)
    assert item_state(desk.engine, first).status == "draft"
    last = events(desk.engine, first)[-1]
    assert (last.from_status, last.to_status, last.reason) == (
        "rejected",
        "draft",
        "new facts arrived",
    )
    # A viewer is not offered the form.
    viewer = desk.signed_in("vera")
    viewer.sidebar.radio(key="view").set_value("Rejected").run()
    assert "reopen_item" not in {s.key for s in viewer.selectbox}


def test_a_reject_that_lost_the_race_keeps_the_typed_reason_on_screen(desk: Desk) -> None:
    at = desk.signed_in("alice")
    first = desk.ids["bridge"]
    version = item_state(desk.engine, first).version
    at.text_input(key=f"reason_{first}_{version}").input("council figures unconfirmed")
    with session_scope(desk.engine) as session:  # bob approves it first
        decisions.approve(session, Reviewer("bob", "editor"), first, version)
    decision_button(at, "reject_submit").click().run()
    shown = texts(at)
    assert f"Not saved: #{first} " in shown and "already approved by bob" in shown
    assert f"Your reason for #{first} " in shown
    assert "not saved: council figures unconfirmed" in shown
    assert item_state(desk.engine, first).status == "approved"
