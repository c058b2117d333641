"""One time-zone rule for the whole desk (issue 25).

Every time the desk shows is in the editor's time zone, with the zone's name, and
the same moment in UTC goes on hover (a `title` attribute, see
review_ui/views/widgets.py `time_html`). The editor's zone is the browser's
(`Intl.DateTimeFormat().resolvedOptions().timeZone`, which Streamlit hands the
server as `st.context.timezone`), not a per-editor setting: the browser already
knows where the editor is (and follows them when they travel), an account needs no
migration, and an editor who wants another zone sets it in the browser or the
operating system. A browser that names no zone, or one Python does not know, reads
UTC.

Stored times are UTC (SQLite hands back naive values, which are UTC). This module
imports no Streamlit: the views register how to find the editor's zone
(`use_zone_of`), and `stamp` (review_ui/desk/queries.py) and the desk's messages
read it through `editor_zone`, so a message written in a button's callback follows
the rule as the page does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

UTC_ZONE = ZoneInfo("UTC")
LOCAL_FORMAT = "%Y-%m-%d %H:%M %Z"
LOCAL_SECONDS_FORMAT = "%Y-%m-%d %H:%M:%S %Z"
UTC_FORMAT = "%Y-%m-%d %H:%M:%S UTC"

_zone_name: Callable[[], str | None] = lambda: None  # noqa: E731 - replaced by the views


def use_zone_of(name: Callable[[], str | None]) -> None:
    """Register how to learn the editor's zone name (the views: the browser's)."""
    global _zone_name
    _zone_name = name


def zone_named(name: object) -> ZoneInfo:
    """The zone called `name`; UTC for none, or for a name Python does not know."""
    if not isinstance(name, str) or not name.strip():
        return UTC_ZONE
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        return UTC_ZONE


def editor_zone() -> ZoneInfo:
    """The zone of the editor looking (UTC outside a page, or when it is unknown)."""
    try:
        name = _zone_name()
    except Exception:  # noqa: BLE001 - no page around this call (CLI, tests): UTC
        name = None
    return zone_named(name)


def as_utc(value: object) -> datetime | None:
    """A stored time (aware, naive UTC, or ISO text) as an aware UTC datetime."""
    if isinstance(value, str) and value:
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@dataclass(frozen=True)
class Moment:
    local: str  # "2026-12-03 15:05 CET": what the page shows
    utc: str  # "2026-12-03 14:05:00 UTC": what the hover shows
    iso: str  # machine-readable, for <time datetime=...>


def moment(value: object, zone: ZoneInfo | None = None, *, seconds: bool = False) -> Moment | None:
    """`value` in `zone` (default: the editor's) and in UTC; None for no time.
    `seconds`: the local time to the second (the audit trail)."""
    at = as_utc(value)
    if at is None:
        return None
    local = at.astimezone(zone or editor_zone())
    shown = local.strftime(LOCAL_SECONDS_FORMAT if seconds else LOCAL_FORMAT)
    return Moment(shown, at.strftime(UTC_FORMAT), at.isoformat())


def local_text(value: object, zone: ZoneInfo | None = None, *, empty: str = "-") -> str:
    """The time as text in the editor's zone, with its name ("-" for no time)."""
    shown = moment(value, zone)
    return shown.local if shown else empty
