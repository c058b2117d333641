"""The review queue's settings: `[review]` in config.toml, and `ReviewAppSettings`,
everything the app needs, handed in by whoever starts it (`copydesk review`
through copydesk/review_app.py). The review UI never reads config.toml itself."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from guards.settings import GateSettings
from publish.settings import PublishSettings
from summarise.checks import CheckSettings

DEFAULT_REJECT_REASONS = (
    "Duplicate of an earlier story",
    "Not newsworthy for our readers",
    "Misleading headline",
    "Source is unreliable or not the original",
    "Too old: the story has moved on",
)
MAX_REASON_CHARS = 200


class ReviewSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    host: str = "127.0.0.1"
    port: int = 8501
    auth: Literal["password", "oidc"] = "password"
    # A decision applies only to a draft that has been on screen this long (seconds):
    # two quick presses of A never approve a draft nobody saw.
    dwell_seconds: float = Field(default=1.0, ge=0, le=30)
    # How long the Undo button stays after an approval or a rejection (seconds).
    undo_seconds: float = Field(default=10.0, ge=0, le=300)
    # A draft an editor opens is theirs (a soft claim) for this long, refreshed while
    # it stays on their screen: other editors' queues skip it meanwhile (seconds).
    claim_seconds: float = Field(default=300.0, ge=10, le=3600)
    # While the editor's browser stays connected, the server keeps that claim fresh
    # without any click, for at most this long after the page last ran (seconds):
    # a tab left open overnight does not hold a draft forever. 0: only page runs
    # refresh the claim. Otherwise at least claim_seconds.
    claim_idle_seconds: float = Field(default=3600.0, ge=0, le=86400)
    # A sign-in lasts this long (hours): a reload keeps the editor signed in until
    # then, unless they sign out or are disabled (review_ui/desk/session_tokens.py).
    session_hours: float = Field(default=12.0, gt=0, le=24 * 30)
    # The file holding the secret that signs session tokens, made with mode 0600 on
    # first use (relative: beside config.toml); $COPYDESK_REVIEW_SECRET wins.
    session_secret_file: str = "review_session.key"  # noqa: S105 - a file name
    # Reasons offered in the reject box; free text stays possible.
    reject_reasons: list[str] = Field(
        default_factory=lambda: list(DEFAULT_REJECT_REASONS), max_length=30
    )

    @model_validator(mode="after")
    def _idle_cap(self) -> ReviewSettings:
        if 0 < self.claim_idle_seconds < self.claim_seconds:
            raise ValueError(
                "claim_idle_seconds is 0 (no keeping) or at least claim_seconds "
                f"({self.claim_seconds:g})"
            )
        return self

    @field_validator("reject_reasons")
    @classmethod
    def _reasons(cls, reasons: list[str]) -> list[str]:
        cleaned = [" ".join(r.split()) for r in reasons]
        for reason in cleaned:
            if not reason:
                raise ValueError("an empty reject reason")
            if len(reason) > MAX_REASON_CHARS:
                raise ValueError(f"a reject reason is at most {MAX_REASON_CHARS} characters")
        if len(set(cleaned)) != len(cleaned):
            raise ValueError("a reject reason is listed twice")
        return cleaned


class ReviewAppSettings(BaseModel):
    """What the running app reads: where the store is, how the gates are set
    (an edit re-runs them), whether the model checks must have run before an
    approval, where "Publish now" delivers, and how editors sign in."""

    model_config = ConfigDict(extra="forbid")

    database_url: str
    gates: GateSettings = Field(default_factory=GateSettings)
    checks: CheckSettings = Field(default_factory=CheckSettings)
    publish: PublishSettings = Field(default_factory=PublishSettings)
    review: ReviewSettings = Field(default_factory=ReviewSettings)
    # The audit anchor file every decision advances (store/audit_chain.py); None: none.
    audit_anchor: str | None = None
    # $COPYDESK_REVIEW_SECRET, when set: signs session tokens instead of the file's.
    session_secret: SecretStr | None = None
