"""What every gate returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

MODES = ("discard", "flag", "off")


def all_found(written: list[str], noun: str) -> str:
    """The reason of a passed grounding gate, counting what the reader sees: "40"
    written twice is one number, as the failure message counts it too."""
    n = len(set(written))
    return f"all {n} {noun}s found in the source" if n != 1 else f"the 1 {noun} found in the source"


@dataclass(frozen=True)
class Verdict:
    """A gate's answer. `evidence` is JSON-serialisable and shows the editor and
    the auditor exactly what was compared (e.g. each number and where it was found).

    Two fields only the model checks use:
    `ran` is False when the check could not run (no model, the model failed, its
    reply did not parse): such a verdict is never a pass (`passed` is False) and
    never discards by itself. `flag_only` marks a failure that shows the editor a
    warning but does not discard, whatever the gate's mode (a material error of a
    kind other than a wrong fact)."""

    gate: str
    passed: bool
    reason: str
    evidence: Any = field(default=None)
    ran: bool = True
    flag_only: bool = False

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key, default in (("ran", True), ("flag_only", False)):
            if data[key] == default:
                del data[key]
        return data
