"""SQLModel tables. The schema itself is created by the Alembic migrations in
`store/migrations`; these classes must stay in step with them (a test compares).

Times are stored as timezone-aware UTC. JSON columns hold evidence and raw
payloads so that every decision can be explained later from the database alone.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import PrivateAttr
from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Index,
    Integer,
    LargeBinary,
    PrimaryKeyConstraint,
    String,
    Text,
    UniqueConstraint,
    event,
    false,
    inspect,
    select,
)
from sqlalchemy.ext.hybrid import hybrid_property
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, Relationship, SQLModel

from guards.checks import check_state as guard_check_state
from store.coded import GATES, MODES, REASONS, STAGES, Coded, CodedText
from store.packing import Digest, PackedEvidence, PackedJSON, PackedSourceText, PackedText

if TYPE_CHECKING:  # a type only: the store does not run gates
    from guards.registry import GateResult


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """DateTime(timezone=True) that always hands back aware UTC: SQLite stores no
    zone, and comparing naive with aware datetimes is an error waiting to happen."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _ts(**kw: Any) -> Any:
    return Field(sa_column=Column(UTCDateTime(), **kw))


class Feed(SQLModel, table=True):
    __tablename__ = "feeds"

    id: int | None = Field(default=None, primary_key=True)
    url: str = Field(unique=True)
    name: str
    enabled: bool = True
    origin: str = "cli"  # "config" or "cli": where the feed was declared; "sample": the demo
    etag: str | None = None
    last_modified: str | None = None
    last_fetched_at: datetime | None = _ts(nullable=True)
    last_success_at: datetime | None = _ts(nullable=True)
    last_error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    consecutive_errors: int = 0
    next_fetch_at: datetime | None = _ts(nullable=True)
    bozo_message: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    # The run polling the feed (store/claims.py); the token fences its write.
    claimed_by: int | None = None
    claim_until: datetime | None = _ts(nullable=True)
    claim_token: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )
    entries_read: int | None = None  # entries the last poll read
    truncated: bool = Field(  # the last poll's body was cut by max_feed_bytes
        default=False, sa_column=Column(Boolean, nullable=False, server_default=false())
    )


class Item(SQLModel, table=True):
    """One article. `dedup_key` is the canonical source URL, or `entry:<feed>:<id>`
    for an entry without a link; it is unique, so a second run cannot duplicate."""

    __tablename__ = "items"
    # The waiting items' ids (`store/claims.py` WAITING_INDEX, a partial index WHERE
    # status = 'new', migration 0041) live beside the model, as the story-order index
    # does: declared here, `postgresql_where` would import SQLAlchemy's PostgreSQL
    # dialect into every SQLite process to check its name (tests/test_cli_imports.py).

    id: int | None = Field(default=None, primary_key=True)
    dedup_key: str = Field(unique=True)
    feed_id: int | None = Field(default=None, foreign_key="feeds.id", index=True)
    entry_id: str | None = Field(default=None, index=True)
    source_url: str | None = None  # canonical URL, None when the entry had no link
    original_url: str | None = None  # the link as the feed or submitter gave it
    # 32 bytes on SQLite (store/packing.py `Digest`, migration 0030)
    content_hash: str | None = Field(default=None, sa_column=Column(Digest(), index=True))
    title: str | None = None
    author: str | None = None
    published_at: datetime | None = _ts(nullable=True)
    seen_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    text_origin: str | None = None  # "feed_content", "page" or None
    fetch_status: int | None = None  # HTTP status of the page fetch, when there was one
    fetch_bytes: int | None = None
    # The page was larger than max_page_bytes and cut off after this many bytes: the
    # draft tells only the story's beginning (issue 26; migration 0014). None: whole.
    page_cut_at: int | None = None
    # The language the feed or page declares for the article ("de"; ingest/language.py),
    # read by the gates instead of detecting it; None: nothing declared (migration 0016).
    language: str | None = None
    # Packed on SQLite (store/packing.py `PackedSourceText`, migration 0026).
    source_text: str | None = Field(default=None, sa_column=Column(PackedSourceText, nullable=True))
    word_count: int | None = None
    summariser: str | None = None  # backend name, e.g. "extractive", "anthropic:claude-..."
    recorded_reply: bool = False  # draft came from a recorded (scripted) model reply
    headline: str | None = None
    summary: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # No index of its own: ix_items_story_order starts with it (migration 0032).
    status: str = Field(default="new")
    # Why a discarded item was discarded (store/discard_kinds.py); set by the status
    # machine on the move to `discarded`, NULL for every other status.
    discard_kind: str | None = Field(default=None, index=True)
    version: int = 0  # bumped on every status move and edit: compare-and-set for editors
    attempts: int = 0
    next_attempt_at: datetime | None = _ts(nullable=True)
    last_error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    decided_by: str | None = None
    decided_at: datetime | None = _ts(nullable=True)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    updated_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    # The run working on a `new` item and until when (store/claims.py).
    claimed_by: int | None = None
    claim_until: datetime | None = _ts(nullable=True)
    # The editor a draft is assigned to (review_ui/desk/bulk.py; audited), or None.
    assigned_to: str | None = Field(default=None, index=True)
    # MinHash of the source's shingles (store/duplicates.py), set when it became a draft.
    dup_signature: bytes | None = Field(
        default=None, sa_column=Column(LargeBinary, nullable=True), repr=False
    )


class DupBand(SQLModel, table=True):
    """One LSH band bucket of an item's near-duplicate signature (store/duplicates.py)."""

    __tablename__ = "item_dup_bands"
    # Keyed by what the look-up asks, (band, bucket), and the item: the key is the
    # only index (migration 0027; an item's own bands are found from its stored
    # signature, store/duplicates.py). SQLite: the table is a B-tree on its key, no
    # rowid (migration 0021), so each band is stored once.
    __table_args__ = (
        PrimaryKeyConstraint("band", "bucket", "item_id"),
        {"sqlite_with_rowid": False},
    )

    item_id: int = Field(foreign_key="items.id", primary_key=True)
    band: int = Field(primary_key=True)
    bucket: int = Field(sa_column=Column(BigInteger, nullable=False, primary_key=True))


class StatusNotAssignable(AttributeError):
    """`item.status = ...` on a stored item: only `store.status` moves an item."""


@event.listens_for(Item.status, "set")
def _status_is_moved_not_assigned(target: Item, value: Any, old: Any, initiator: Any) -> None:
    """A stored item's status changes only through `store.status.move`, which writes
    it with a compare-and-set (and mirrors it with `set_committed_value`, which
    fires no event). An assignment would be flushed by the next move and let, say,
    a draft be published with no editor's approval; it fails here instead. A new
    item (not yet stored) may be built with its status; `status.create` checks it."""
    if inspect(target).has_identity:
        raise StatusNotAssignable(
            f"item {target.id}: status is changed by store.status.move, not by assignment"
        )


class GateVerdict(SQLModel, table=True):
    """A gate's verdict on one version of an item's draft (or on its source)."""

    __tablename__ = "gate_verdicts"

    id: int | None = Field(default=None, primary_key=True)
    item_id: int = Field(foreign_key="items.id", index=True)
    run_id: int | None = Field(default=None, foreign_key="runs.id")
    # Stored as short codes (store/coded.py, migration 0035), read as names.
    stage: str = Field(sa_column=Column(Coded(STAGES), nullable=False))  # "source", "draft", ...
    gate: str = Field(sa_column=Column(Coded(GATES), nullable=False))
    passed: bool
    mode: str = Field(sa_column=Column(Coded(MODES), nullable=False))  # "discard", "flag" or "off"
    reason: str = Field(sa_column=Column(CodedText(REASONS), nullable=False))  # fixed ones coded
    # JSON; a large evidence packed inside it (store/packing.py `PackedEvidence`).
    evidence: Any = Field(default=None, sa_column=Column(PackedEvidence, nullable=True))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )

    @classmethod
    def from_result(
        cls,
        result: GateResult,
        *,
        item_id: int,
        stage: str,
        run_id: int | None = None,
        created_at: datetime | None = None,
    ) -> GateVerdict:
        """The one way a gate's result becomes a stored verdict (pipeline, edit,
        replay): the mode stored is what the result did (`GateResult.stored_mode`)."""
        return cls(
            **cls.row_of(result, item_id=item_id, stage=stage, run_id=run_id, created_at=created_at)
        )

    @staticmethod
    def row_of(
        result: GateResult,
        *,
        item_id: int,
        stage: str,
        run_id: int | None = None,
        created_at: datetime | None = None,
    ) -> dict[str, Any]:
        """`from_result`'s columns as a plain row, for a Core INSERT of many verdicts
        at once (the run's writer: no ORM object per verdict)."""
        row = result.to_dict()
        return {
            "item_id": item_id,
            "run_id": run_id,
            "stage": stage,
            "gate": row["gate"],
            "passed": row["passed"],
            "mode": row["mode"],
            "reason": row["reason"],
            "evidence": row["evidence"],
            "created_at": created_at or utcnow(),
        }

    @property
    def check_state(self) -> str:
        """ "ran", "not run" or "failed" (`guards.checks.check_state`): for a gate
        that is not a model check, always "ran"."""
        return guard_check_state(self.passed, self.evidence)


class VerdictSet(SQLModel, table=True):
    """One attempt's verdicts on an item (a pipeline run's, an edit's, a replay's, a
    re-check's) as one packed row (issue 19 §4, migration 0037). Only
    store/verdicts.py reads or writes it; it gives back `GateVerdict` objects."""

    __tablename__ = "verdict_sets"

    id: int | None = Field(default=None, primary_key=True)
    item_id: int = Field(foreign_key="items.id", index=True)
    run_id: int | None = Field(default=None, foreign_key="runs.id")
    # For the SQL filters, never unpacked: the gates that failed in this set
    # (comma-separated, in the set's order) and the stages present; and the item's
    # state after it (store/verdicts.py `summary`, migration 0039): the newest verdict
    # of each model check ("gate:ran[:problems]", "gate:not run", "gate:failed
    # [:transient]"), the gates failing in `discard` and the ones that ran and failed
    # in `flag` on the current text, the start of the oldest failed-check streak.
    failed_gates: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    checks_state: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    stages: str = Field(sa_column=Column(Text, nullable=False))
    blocking: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    flagging: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    checks_since: datetime | None = Field(
        default=None, sa_column=Column(UTCDateTime(), nullable=True)
    )
    # zlib'd compact JSON `[[stage, gate, passed, mode, reason, evidence], ...]`
    # against store/packing.py's preset dictionary.
    verdicts: bytes = Field(sa_column=Column(LargeBinary, nullable=False), repr=False)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class AuditEvent(SQLModel, table=True):
    """Append-only: database triggers refuse UPDATE and DELETE on this table."""

    __tablename__ = "audit_events"

    id: int | None = Field(default=None, primary_key=True)
    # None for a feed's change (migration 0024): the feeds commands and the config sync.
    item_id: int | None = Field(default=None, foreign_key="items.id", index=True)
    at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False))
    actor: str  # "editor:<name>", "run:<id>", "cli", ...
    from_status: str | None = None
    to_status: str
    reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    details: Any = Field(default=None, sa_column=Column(JSON, nullable=True))
    # The hash chain (store/audit_chain.py): set by `audit_chain.append`, never by hand.
    # 32 bytes each on SQLite (store/packing.py `Digest`, migration 0031), read as hex.
    prev_hash: str = Field(default=None, sa_column=Column(Digest(length=64), nullable=False))
    hash: str = Field(default=None, sa_column=Column(Digest(length=64), nullable=False))

    # One event per previous hash: two writers linking to the same head (a forked
    # chain) fail at the second insert instead of leaving a fork behind.
    __table_args__ = (Index("ux_audit_events_prev_hash", "prev_hash", unique=True),)


class SignInFailure(SQLModel, table=True):
    """Failed sign-ins under a name that is no account (store/editors.py), so that
    made-up names are throttled like real ones, across restarts and servers."""

    __tablename__ = "sign_in_failures"

    name_key: str = Field(primary_key=True)  # the name as typed, lower-cased
    failures: int = 0
    locked_until: datetime | None = _ts(nullable=True)
    last_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False, index=True)
    )


class CallSettings(SQLModel):
    """What a model call was made with that is the same for thousands of calls: the
    purpose, the backend and model, the API version, the temperature sent and the
    prompt's version and hash. A ledger row keeps them once, in a `call_settings` row
    it references (`CallSetting`, migration 0038; store/call_settings.py)."""

    purpose: str = "summary"  # "summary", "checks"
    backend: str
    model: str | None = None
    api_version: str | None = None
    temperature: float | None = None  # the temperature sent, None when none was
    prompt_version: str | None = None
    prompt_hash: str | None = Field(default=None, sa_column=Column(Digest("sha256:")))


class CallOutcome(SQLModel):
    """What is particular to one model call: what was sent and what came back."""

    temperature_in_force: bool = False
    request_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_tokens: int | None = None
    cache_read_tokens: int | None = None
    latency_ms: int | None = None
    stop_reason: str | None = None
    cost_usd: float | None = None
    ok: bool = True
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # Packed (zlib over the JSON text: store/packing.py, migration 0019); read whole.
    request_json: Any = Field(default=None, sa_column=Column(PackedJSON, nullable=True))
    response_json: Any = Field(default=None, sa_column=Column(PackedJSON, nullable=True))
    # "done": the attempt's outcome is recorded. "in_flight": the row was written
    # before the request went out and its outcome is not recorded yet; once its run is
    # gone it is "unknown" (the process died with the request in flight; see
    # store/ledger.py). Such a row's cost is unknown; `cost_estimate_usd` is its
    # upper estimate (the prompt's length and the whole output budget).
    state: str = Field(
        default="done",
        sa_column=Column(String, nullable=False, server_default="done", index=True),
    )
    cost_estimate_usd: float | None = None


class CallRecord(CallOutcome, CallSettings):
    """One model call, as the ledger keeps it: the one definition of its fields
    (its settings, then its outcome).

    A summariser or checker fills one in per HTTP attempt and hands it back (it
    never touches the database); the pipeline stores it as a `ModelCall` row,
    which adds the item, the run and the time; `copydesk audit` prints these
    fields. `vars(record)` is exactly the fields."""

    # The ledger row written before the request (in flight), completed by this
    # record; not a column.
    _row_id: int | None = PrivateAttr(default=None)


class CallSetting(CallSettings, table=True):
    """One set of call settings, stored once (migration 0038): `key` is their
    canonical JSON text (store/call_settings.py), unique, so equal settings are one
    row even where a value is NULL (a unique index over the columns would keep
    NULLs apart)."""

    __tablename__ = "call_settings"

    id: int | None = Field(default=None, primary_key=True)
    key: str = Field(sa_column=Column(Text, nullable=False, unique=True))


def _setting(name: str) -> hybrid_property[Any]:
    """A call setting read through the row's `settings`: on a loaded row, its value;
    in a query (`ModelCall.purpose == "checks"`), the setting of the row's settings
    row (a correlated subquery, the same SQL on both backends). A hybrid with its own
    expression: https://docs.sqlalchemy.org/en/21/orm/extensions/hybrid.html
    ("Defining Expression Behavior Distinct from Attribute Behavior")."""

    def value(row: ModelCall) -> Any:
        return getattr(row.settings, name)

    def expression(cls: type[ModelCall]) -> Any:
        column = getattr(CallSetting, name)
        return select(column).where(CallSetting.id == cls.settings_id).scalar_subquery()

    return hybrid_property(value, expr=expression)


class ModelCall(CallOutcome, table=True):
    """The ledger: one row per model call, with what was sent and what came back.
    Written through store/ledger.py, which keeps the request's repeated parts once
    (`LedgerPart`) and puts them back for the audit, and the call's settings once
    (`CallSetting`, read here as if they were the row's own: `call.model`)."""

    __tablename__ = "model_calls"
    # Pydantic leaves the hybrids alone, not fields (`ignored_types`:
    # https://docs.pydantic.dev/latest/api/config/).
    model_config = {"ignored_types": (hybrid_property,)}  # type: ignore[assignment]

    id: int | None = Field(default=None, primary_key=True)
    item_id: int | None = Field(default=None, foreign_key="items.id", index=True)
    run_id: int | None = Field(default=None, foreign_key="runs.id", index=True)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    settings_id: int = Field(foreign_key="call_settings.id")
    # Loaded with the row (one join), so a row read and let go still has them.
    settings: CallSetting = Relationship(
        sa_relationship_kwargs={"lazy": "joined", "innerjoin": True}
    )

    purpose = _setting("purpose")
    backend = _setting("backend")
    model = _setting("model")
    api_version = _setting("api_version")
    temperature = _setting("temperature")
    prompt_version = _setting("prompt_version")
    prompt_hash = _setting("prompt_hash")


class LedgerPart(SQLModel, table=True):
    """A part of model requests that repeats across calls (the tool list, the system
    prompt, an instruction, an article's block), stored once: `content` is its
    canonical JSON text (stored packed) and `hash` that text's SHA-256. A `ModelCall.request_json`
    names it as {"$part": hash}; store/ledger.py writes and reassembles them."""

    __tablename__ = "ledger_parts"
    # SQLite: a B-tree on the hash, no rowid, no second copy of it (migration 0023).
    __table_args__ = {"sqlite_with_rowid": False}

    hash: str = Field(sa_column=Column(Digest("sha256:"), primary_key=True))  # 32 bytes: 0030
    content: str = Field(sa_column=Column(PackedText, nullable=False))  # store/packing.py


class Run(SQLModel, table=True):
    """One pipeline run (a `copydesk run`, `demo` or `submit`)."""

    __tablename__ = "runs"

    id: int | None = Field(default=None, primary_key=True)
    command: str
    started_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    ended_at: datetime | None = _ts(nullable=True)
    backend: str | None = None
    counts: Any = Field(default=None, sa_column=Column(JSON, nullable=True))
    exit_status: int | None = None
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    heartbeat_at: datetime | None = _ts(nullable=True)  # written as the run goes
    worker: str | None = None  # host and process id of the run


class Editor(SQLModel, table=True):
    """A person who may sign in to the review queue. Passwords are argon2 hashes."""

    __tablename__ = "editors"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True)
    role: str = "editor"  # "editor" decides; "viewer" only looks
    password_hash: str
    enabled: bool = True
    failed_logins: int = 0
    locked_until: datetime | None = _ts(nullable=True)
    last_login_at: datetime | None = _ts(nullable=True)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class ReviewSession(SQLModel, table=True):
    """A browser signed in to the review queue (store/sessions.py, migration 0020):
    a reload finds its editor again through the session token the browser keeps.
    Only the SHA-256 of the token's random key is stored, so reading this table
    signs nobody in. A row stops working when it expires, when it is revoked
    (sign-out; disabling the editor or setting their password revokes all of
    theirs), or when its editor is disabled: every page run checks it."""

    __tablename__ = "review_sessions"

    id: int | None = Field(default=None, primary_key=True)
    key_hash: str = Field(unique=True)  # hex SHA-256 of the token's random key
    editor: str = Field(index=True)  # the account name
    created_at: datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))
    expires_at: datetime = Field(sa_column=Column(UTCDateTime(), nullable=False, index=True))
    revoked_at: datetime | None = _ts(nullable=True)


class Delivery(SQLModel, table=True):
    """One item's delivery to one publish target: exactly once per (item, target, kind).

    `kind` is "publish" or "retract". `state` is "pending" (not yet delivered, retried
    by the next publish), "delivered" or "failed" (refused for good, shown to the
    editor). `payload` is what was sent, so a retry sends the same bytes and the
    Atom feed can be rebuilt from the database alone.
    """

    __tablename__ = "deliveries"
    __table_args__ = (UniqueConstraint("item_id", "target", "kind"),)

    id: int | None = Field(default=None, primary_key=True)
    item_id: int = Field(foreign_key="items.id", index=True)
    target: str
    kind: str = "publish"
    state: str = Field(default="pending", index=True)
    idempotency_key: str
    attempts: int = 0
    last_error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    payload: Any = Field(default=None, sa_column=Column(JSON, nullable=True))
    claimed_until: datetime | None = _ts(nullable=True)
    # The worker's claim: its outcome is recorded only while the row still holds it.
    claim_token: str | None = None
    # When a delivery that failed for a passing reason is tried again (None: now).
    next_attempt_at: datetime | None = _ts(nullable=True)
    delivered_at: datetime | None = _ts(nullable=True)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    updated_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class Installation(SQLModel, table=True):
    """One row: this database's id, made with its schema (migration 0012). Published
    ids and webhook keys carry it, so they are unique across installations."""

    __tablename__ = "installation"

    id: int | None = Field(default=1, primary_key=True)
    installation_id: str
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class SourceCheck(SQLModel, table=True):
    """`copydesk watch` re-read a published item's source and its text had changed.

    `failing` lists the gates the stored summary no longer passes against the new
    text; non-empty means an editor must look (state "open" until one resolves it).
    The item itself is never changed by watch.
    """

    __tablename__ = "source_checks"

    id: int | None = Field(default=None, primary_key=True)
    item_id: int = Field(foreign_key="items.id", index=True)
    checked_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    state: str = Field(default="open", index=True)  # "open", "resolved" or "ok"
    old_hash: str | None = None
    new_hash: str | None = None
    new_text: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    failing: Any = Field(default=None, sa_column=Column(JSON, nullable=True))
    passages: Any = Field(default=None, sa_column=Column(JSON, nullable=True))
    etag: str | None = None
    last_modified: str | None = None
    resolved_by: str | None = None


class Note(SQLModel, table=True):
    """An editor's note on an item: who wrote what, when. Notes never change the
    item (its status and version stay as they are); they are only ever added
    (the runtime role may not change or delete them on PostgreSQL)."""

    __tablename__ = "notes"

    id: int | None = Field(default=None, primary_key=True)
    item_id: int = Field(foreign_key="items.id", index=True)
    author: str  # the editor's account name
    body: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class DeskPresence(SQLModel, table=True):
    """Which draft an editor has open in the review queue, as a soft claim
    (store/presence.py): one row per editor, refreshed while the item stays on
    their screen, gone when they decide or move on, ignored once `expires_at`
    has passed. Other editors' queues skip a held draft unless they ask to see
    it; nothing is locked by it (the decisions' compare-and-set still decides)."""

    __tablename__ = "desk_presence"

    editor: str = Field(primary_key=True)  # the account name
    item_id: int = Field(foreign_key="items.id", index=True)
    opened_at: datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))
    refreshed_at: datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))
    expires_at: datetime = Field(sa_column=Column(UTCDateTime(), nullable=False, index=True))


class RuntimeRole(SQLModel, table=True):
    """A PostgreSQL role copydesk runs as, and what it is (migration 0013): "worker"
    (ingestion, publishing: the database refuses its decisions and its changes to
    approved text) or "review" (the review server: may decide). Written by
    `copydesk migrate` as the owner; the runtime roles may only read it."""

    __tablename__ = "runtime_roles"
    __table_args__ = (
        CheckConstraint("kind IN ('worker', 'review')", name="ck_runtime_roles_kind"),
    )

    role_name: str = Field(primary_key=True)
    kind: str
