"""What every gate returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

MODES = ("discard", "flag", "off")


@dataclass(frozen=True)
class Verdict:
    """A gate's answer. `evidence` is JSON-serialisable and shows the editor and
    the auditor exactly what was compared (e.g. each number and where it was found)."""

    gate: str
    passed: bool
    reason: str
    evidence: Any = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
