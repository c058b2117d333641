"""Settings: built-in defaults, then `config.toml`, then environment variables.

Secrets (the Anthropic key, database passwords) come from the environment only;
`Settings` never holds the API key, and `describe()` masks the database password.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from guards.settings import GateMode, GateSettings
from ingest.settings import FeedSettings, IngestSettings
from publish.settings import PublishSettings
from review_ui.settings import ReviewAppSettings, ReviewSettings
from store.settings import DatabaseSettings
from summarise.checks import CheckSettings
from summarise.settings import SummariseSettings

# The stage types are re-exported: `from copydesk.config import IngestSettings` works.
__all__ = [
    "CheckSettings",
    "ConfigError",
    "DatabaseSettings",
    "FeedSettings",
    "GateMode",
    "GateSettings",
    "IngestSettings",
    "PublishSettings",
    "ReviewAppSettings",
    "ReviewSettings",
    "RunSettings",
    "Settings",
    "SummariseSettings",
    "find_config",
    "load_settings",
]


class ConfigError(ValueError):
    """The configuration cannot be used; the message says what and where."""


DEFAULT_ANCHOR = "audit.anchor"


class RunSettings(BaseModel):
    """How runs share the work (store/claims.py): claims last `lease_seconds` and a
    live run renews them every third of that; a killed run's claims are taken over
    once they pass. On SQLite one `copydesk run` works at a time: a second one
    waits up to `wait_seconds` for it, then exits 0 saying another run is in progress
    (a run whose process on this host is gone is taken over at once).
    The application's own section: runs are the application's business."""

    model_config = ConfigDict(extra="forbid")

    lease_seconds: float = Field(default=300, gt=0)
    wait_seconds: float = Field(default=0, ge=0)
    # The run's deadline, from its start: no re-check of earlier drafts starts after
    # it (the rest wait for the next run), so re-checks that hang cannot hold the
    # run, and SQLite's one run slot, for hours (issue 26).
    deadline_seconds: float = Field(default=1800, gt=0)
    # A file outside the database holding the audit log's head (ID:HASH), advanced
    # by every command that commits an audit event, for `audit --verify` to catch
    # events cut from the log's end. On by default; "" turns it off.
    audit_anchor: str = DEFAULT_ANCHOR


class Settings(BaseModel):
    """config.toml as a whole: one section per stage, each section's type owned by
    its stage (guards/settings.py, store/settings.py, ingest/settings.py,
    summarise/settings.py, publish/settings.py, review_ui/settings.py); `runs`
    is the application's own."""

    model_config = ConfigDict(extra="forbid")

    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    summarise: SummariseSettings = Field(default_factory=SummariseSettings)
    gates: GateSettings = Field(default_factory=GateSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    review: ReviewSettings = Field(default_factory=ReviewSettings)
    runs: RunSettings = Field(default_factory=RunSettings)
    checks: CheckSettings = Field(default_factory=CheckSettings)
    feeds: list[FeedSettings] = Field(default_factory=list)
    publish: PublishSettings = Field(default_factory=PublishSettings)
    source: str | None = None  # the file these settings came from, for messages
    # $COPYDESK_REVIEW_SECRET (review_ui/desk/session_tokens.py): from the environment
    # only, never config.toml, so not a field.
    _review_secret: str | None = PrivateAttr(default=None)
    # Set by `own_anchor` when the configured anchor file is another database's: what
    # `audit --verify` adds when this database's own anchor is missing.
    _anchor_elsewhere: str | None = PrivateAttr(default=None)

    @property
    def anchor_elsewhere(self) -> str | None:
        return self._anchor_elsewhere

    def for_review(self) -> ReviewAppSettings:
        """What the review app is handed at start-up (it never reads config.toml)."""
        return ReviewAppSettings(
            database_url=self.database.url,
            gates=self.gates,
            checks=self.checks,
            publish=self.publish,
            review=self.review,
            audit_anchor=self.runs.audit_anchor or None,
            session_secret=self._review_secret,
        )


REVIEW_SECRET_ENV = "COPYDESK_REVIEW_SECRET"  # noqa: S105 - a variable name
ENV_OVERRIDES = {
    "COPYDESK_DATABASE_URL": ("database", "url"),
    "COPYDESK_BACKEND": ("summarise", "backend"),
    "COPYDESK_MODEL": ("summarise", "model"),
    "COPYDESK_CHECK_MODEL": ("checks", "model"),
}


def find_config(explicit: str | Path | None = None) -> Path | None:
    """`--config`, else $COPYDESK_CONFIG, else ./config.toml if it exists."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("COPYDESK_CONFIG")
    if env:
        return Path(env)
    default = Path("config.toml")
    return default if default.exists() else None


def load_settings(
    path: str | Path | None = None,
    env: dict[str, str] | None = None,
    *,
    place_anchor: bool = True,
) -> Settings:
    """The settings from config.toml and the environment. `place_anchor=False` (a
    command that opens no database: `check`) leaves a relative audit anchor as
    written when there is no config.toml: placing it beside its database reads the
    database URL with SQLAlchemy, a fifth of a second of imports."""
    env = dict(os.environ if env is None else env)
    found = find_config(path)
    data: dict[str, Any] = {}
    if found is not None:
        try:
            data = tomllib.loads(found.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"config file {found} does not exist") from None
        except IsADirectoryError:
            raise ConfigError(f"config file {found} is a directory, not a file") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"config file {found} is not UTF-8 text (byte {exc.start}): save it as UTF-8"
            ) from None
        except OSError as exc:
            raise ConfigError(f"config file {found} cannot be read: {exc.strerror}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{found} is not valid TOML: {exc}") from None
    for var, (section, key) in ENV_OVERRIDES.items():
        if env.get(var):
            data.setdefault(section, {})[key] = env[var]
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{found or 'settings'}: {where}: {first['msg']}") from None
    settings.source = str(found) if found else None
    settings._review_secret = env.get(REVIEW_SECRET_ENV) or None
    if not settings.checks.prices:  # the same price table unless [checks.prices] says otherwise
        settings.checks.prices = settings.summarise.prices
    if found is not None:
        _anchor_relative_paths(settings, found.resolve().parent, data, env)
    elif place_anchor:
        _place_anchor_without_config(settings, env)
    secret_file = Path(settings.review.session_secret_file).expanduser()
    if not secret_file.is_absolute():  # beside config.toml, or in the state folder
        base = found.resolve().parent if found is not None else _state_folder(env)
        settings.review.session_secret_file = str(base / secret_file)
    return settings


def _place_anchor_without_config(settings: Settings, env: dict[str, str]) -> None:
    """With no config.toml a relative anchor goes beside its database (`database_anchor`)."""
    anchor = settings.runs.audit_anchor
    if anchor and not Path(anchor).is_absolute():
        settings.runs.audit_anchor = database_anchor(settings.database.url, anchor, env)


def database_anchor(database_url: str, name: str, env: dict[str, str]) -> str:
    """The anchor file named `name` that belongs to one database: beside the SQLite
    file, or (PostgreSQL) in the user's state folder under the server's and
    database's name; "" for an in-memory database. One anchor per database, never
    one shared by two (issue 22)."""
    # Here, not at the top: loading the settings must not import SQLAlchemy (`check`).
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        url = make_url(database_url)
    except ArgumentError:
        return name  # opening the database says what is wrong with its URL
    if url.get_backend_name() == "sqlite":
        database = (url.database or "").removeprefix("file:")
        if not database or database == ":memory:":
            return ""
        db_file = Path(database).expanduser().resolve()
        return str(db_file.with_name(f"{db_file.name}.{name}"))
    file = f"{url.host or 'local'}-{url.port or 'default'}-{url.database or 'db'}.{name}"
    return str(_state_folder(env) / file)


def own_anchor(settings: Settings, env: dict[str, str] | None = None) -> None:
    """The anchor belongs to its database (issue 22): when the configured anchor
    file names another database (config.toml's, while $COPYDESK_DATABASE_URL
    points a command at the demo's), this database keeps its own, where it would
    be without a config.toml (`database_anchor`: beside its SQLite file), so
    neither moves the other's nor is verified against it. Called once the
    database is chosen (a command's `connect`, the review app's start), not by
    `load_settings`: `check` never imports the store."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from store import audit_chain

    configured = settings.runs.audit_anchor
    if not configured:
        return
    try:
        owner = audit_chain.anchor_owner(Path(configured))
        database = audit_chain.database_of(make_url(settings.database.url))
    except (OSError, UnicodeDecodeError, ArgumentError):
        return  # `audit --verify`, or opening the database, says what is wrong
    if owner is None or owner == database:
        return
    environ = dict(os.environ if env is None else env)
    settings.runs.audit_anchor = database_anchor(
        settings.database.url, Path(configured).name, environ
    )
    settings._anchor_elsewhere = (
        f"the configured anchor {configured} belongs to {owner}: if this database was "
        "moved from there, move that file beside it and name this database on its "
        f"second line (database {database})"
    )


def _state_folder(env: dict[str, str]) -> Path:
    """The user's state folder for copydesk ($XDG_STATE_HOME/copydesk)."""
    return Path(env.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "copydesk"


def _anchor_relative_paths(
    settings: Settings, base: Path, data: dict[str, Any], env: dict[str, str]
) -> None:
    """Relative paths in config.toml mean "next to config.toml", not "wherever the
    command happens to run": a cron job with `-c /srv/desk/config.toml` must find
    the same database and feed files as a person in /srv/desk."""
    url = settings.database.url
    from_file = not env.get("COPYDESK_DATABASE_URL")
    prefix = "sqlite:///"
    if from_file and url.startswith(prefix) and not url.startswith(prefix + "/"):
        path = url[len(prefix) :]
        if path and path != ":memory:":
            settings.database.url = prefix + str(base / path)
    settings.publish.anchor(base)
    anchor = settings.runs.audit_anchor
    if anchor and not Path(anchor).is_absolute():
        settings.runs.audit_anchor = str((base / anchor).resolve())
    for feed in settings.feeds:
        if "://" not in feed.url and not Path(feed.url).is_absolute():
            feed.url = str(base / feed.url)
