"""`ItemChanges`: the columns a status move may set besides the status, typed.

A worker fills one in while it works on an item (`changes.headline = ...`); the
status machine writes it in the same compare-and-set as the move. A misspelt
column is an AttributeError on the worker's own item (the class has slots),
never an unknown column in the UPDATE on the run's main thread. Columns the
status machine owns (status, version, decided_by, decided_at, updated_at,
discard_kind) are not here: no caller sets them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Final


class _Unset:
    """Not set: the column keeps its value (None would write NULL)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset()


@dataclass(slots=True)
class ItemChanges:
    # From the page fetch and extraction.
    title: str | None | _Unset = UNSET
    source_text: str | None | _Unset = UNSET
    word_count: int | None | _Unset = UNSET
    text_origin: str | None | _Unset = UNSET
    fetch_status: int | None | _Unset = UNSET
    fetch_bytes: int | None | _Unset = UNSET
    page_cut_at: int | None | _Unset = UNSET
    language: str | None | _Unset = UNSET
    content_hash: str | None | _Unset = UNSET
    # From the summariser.
    summariser: str | None | _Unset = UNSET
    headline: str | None | _Unset = UNSET
    summary: str | None | _Unset = UNSET
    recorded_reply: bool | _Unset = UNSET
    # Retries and the run's claim on the item.
    attempts: int | _Unset = UNSET
    last_error: str | None | _Unset = UNSET
    next_attempt_at: datetime | None | _Unset = UNSET
    claimed_by: int | None | _Unset = UNSET
    claim_until: datetime | None | _Unset = UNSET

    @classmethod
    def of(cls, values: ItemChanges | Mapping[str, Any] | None) -> ItemChanges:
        """An ItemChanges from keyword-like values; an unknown name is a ValueError
        raised before anything is written."""
        if isinstance(values, ItemChanges):
            return values
        unknown = sorted(set(values or {}) - set(cls.names()))
        if unknown:
            raise ValueError(f"not a column a move may change: {', '.join(unknown)}")
        return cls(**dict(values or {}))

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def get(self, name: str, default: Any = None) -> Any:
        value = getattr(self, name)
        return default if value is UNSET else value

    def unset(self, *names: str) -> None:
        """Forget values set earlier (a duplicate drops the draft it had)."""
        for name in names:
            setattr(self, name, UNSET)

    def update(self, **values: Any) -> None:
        """Set several columns; a misspelt name is an AttributeError."""
        for name, value in values.items():
            setattr(self, name, value)

    def values(self) -> dict[str, Any]:
        """The columns that were set, for the UPDATE."""
        return {
            name: getattr(self, name) for name in self.names() if getattr(self, name) is not UNSET
        }
