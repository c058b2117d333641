"""The claim keeper: an editor's soft claim on the draft they have open
(store/presence.py) stays fresh while their browser is connected, even when they
read for longer than `[review] claim_seconds` without a click.

The page takes or refreshes the claim on each of its runs (review_ui/views/queue.py
`_presence`), and that alone let a claim lapse under an editor who was reading.
A Streamlit fragment with `run_every` cannot refresh it: any fragment on the page
changes how a key press during a rerun is handled, and the dwell rule broke (see
`_presence`). So the refresh is done on the server, off the page: one daemon
thread per Streamlit session (not per run) calls `store.presence.hold` every
`claim_seconds / 3`, in a database session of its own. It never touches `st.*`
and never makes the page run, so nothing on screen changes because of it.

The thread stops, for good, at its next tick after any of these:

- the browser session is no longer connected (Streamlit's runtime says so: a
  closed tab, a lost network, a crash of the browser; the page hands the keeper
  `is_connected`, from review_ui/streamlit_adapter.py, so this module imports
  no Streamlit);
- the page runs with another draft open (the keeper is replaced, synchronously,
  before the new claim is taken), or the session stops it: a decision, leaving
  the queue view, signing out (`review_ui.views.queue.release_claim`);
- the draft left the queue (decided, by this editor or another);
- the account is disabled or no longer an editor;
- the editor's claim no longer names this draft (released or moved on in another
  tab of the same account: the keeper refreshes a claim, it never moves one back);
- `[review] claim_idle_seconds` have passed since the page last ran with this
  draft open, so a tab left open overnight does not hold a draft forever.

Stopping releases nothing: the claim simply stops being refreshed and lapses at
its expiry, which is what a crash of the server does too. (A decision, a move or
signing out release it explicitly, as before, through `presence.release`.)
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy.engine import Engine
from sqlmodel import Session

from store import presence
from store.db import session_scope
from store.editors import active_role
from store.models import DeskPresence, Item
from store.status import DRAFT

__all__ = [
    "THREAD_PREFIX",
    "ClaimKeeper",
    "keep",
    "keeper_of",
    "stop",
    "stop_if_other",
]

log = logging.getLogger(__name__)

THREAD_PREFIX = "copydesk-claim-keeper"

# Why a keeper stopped (ClaimKeeper.stopped_because).
DISCONNECTED = "disconnected"
IDLE = "idle"
LEFT_QUEUE = "left the queue"
NOT_AN_EDITOR = "not an editor"
CLAIM_GONE = "claim released or moved"
STOPPED = "stopped"  # by the session: another draft, a decision, a view, signing out


@dataclass(eq=False)
class ClaimKeeper:
    """Refreshes `editor`'s claim on `item_id` every `interval` seconds (default
    `ttl / 3`) until one of the stop conditions of the module's docstring.
    `is_connected` is asked at every tick (it must be thread-safe);
    `clock` counts the idle cap (seconds since the last `touch`)."""

    engine: Engine
    editor: str
    item_id: int
    ttl: float
    idle_seconds: float
    is_connected: Callable[[], bool]
    interval: float | None = None
    clock: Callable[[], float] = time.monotonic
    stopped_because: str | None = field(default=None, init=False)
    refreshes: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.interval is None:
            self.interval = self.ttl / 3
        self._last_run = self.clock()
        self._wake = threading.Event()
        # Held while a refresh is being written: once `stop` returns, no refresh
        # can follow (a release right after it is never undone by this thread).
        self._lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._run, name=f"{THREAD_PREFIX}-{self.editor}-{self.item_id}", daemon=True
        )

    def start(self) -> ClaimKeeper:
        self._thread.start()
        return self

    def touch(self) -> None:
        """The page ran with this draft open: the idle cap counts from now."""
        self._last_run = self.clock()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self, reason: str = STOPPED) -> None:
        """Stop refreshing (releases nothing). Waits for a refresh being written."""
        with self._lock:
            if self.stopped_because is None:
                self.stopped_because = reason
        self._wake.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        assert self.interval is not None
        while not self._wake.wait(self.interval):
            with self._lock:
                if self.stopped_because is not None:
                    return
                reason = self._refresh()
                if reason is not None:
                    self.stopped_because = reason
                    log.info(
                        "claim keeper for %s on item %s stopped: %s",
                        self.editor,
                        self.item_id,
                        reason,
                    )
                    return

    def _refresh(self) -> str | None:
        """One tick: why to stop, or None after refreshing the claim."""
        try:
            if not self.is_connected():
                return DISCONNECTED
        except Exception:  # noqa: BLE001 - a runtime that cannot answer: not connected
            log.exception("claim keeper: cannot tell whether the session is connected")
            return DISCONNECTED
        if self.clock() - self._last_run > self.idle_seconds:
            return IDLE
        try:
            with session_scope(self.engine) as session:
                reason = self._why_not(session)
                if reason is None:
                    presence.hold(session, self.editor, self.item_id, self.ttl)
        except Exception:  # noqa: BLE001 - the database is away: try again next tick
            log.exception("claim keeper: refreshing %s's claim failed", self.editor)
            return None
        if reason is None:
            self.refreshes += 1
        return reason

    def _why_not(self, session: Session) -> str | None:
        item = session.get(Item, self.item_id)
        if item is None or item.status != DRAFT:
            return LEFT_QUEUE
        if active_role(session, self.editor) != "editor":
            return NOT_AN_EDITOR
        claim = session.get(DeskPresence, self.editor)
        if claim is None or claim.item_id != self.item_id:
            return CLAIM_GONE
        return None


# --------------------------------------------------------------------------- one per session

_KEEPERS: dict[str, ClaimKeeper] = {}
_KEEPERS_LOCK = threading.Lock()


def keeper_of(session_key: str) -> ClaimKeeper | None:
    with _KEEPERS_LOCK:
        return _KEEPERS.get(session_key)


def stop_if_other(session_key: str, editor: str, item_id: int) -> None:
    """Stop this session's keeper unless it keeps `editor`'s claim on `item_id`.

    Called before the page moves the claim to another draft: the old keeper must
    be gone first, or a refresh of its own could move the claim back."""
    with _KEEPERS_LOCK:
        keeper = _KEEPERS.get(session_key)
        if keeper is None or (keeper.editor, keeper.item_id) == (editor, item_id):
            return
        del _KEEPERS[session_key]
    keeper.stop()


def keep(
    session_key: str,
    engine: Engine,
    editor: str,
    item_id: int,
    *,
    ttl: float,
    idle_seconds: float,
    is_connected: Callable[[], bool],
    interval: float | None = None,
) -> ClaimKeeper:
    """The page ran with `item_id` open (after taking the claim): keep it fresh.

    The session's running keeper on this draft is touched (the idle cap restarts);
    a keeper on another draft, or one that has stopped, is replaced by a new one.
    One keeper, so one thread, per session at any time."""
    stop_if_other(session_key, editor, item_id)
    with _KEEPERS_LOCK:
        for key in [k for k, kept in _KEEPERS.items() if k != session_key and not kept.alive]:
            del _KEEPERS[key]  # sessions that went away: their keepers stopped by themselves
        keeper = _KEEPERS.get(session_key)
        if keeper is not None and keeper.alive and keeper.stopped_because is None:
            keeper.touch()
            return keeper
        keeper = ClaimKeeper(
            engine, editor, item_id, ttl, idle_seconds, is_connected, interval
        ).start()
        _KEEPERS[session_key] = keeper
        return keeper


def stop(session_key: str | None) -> None:
    """The session decided, left the queue or signed out: its keeper stops."""
    if session_key is None:
        return
    with _KEEPERS_LOCK:
        keeper = _KEEPERS.pop(session_key, None)
    if keeper is not None:
        keeper.stop()
