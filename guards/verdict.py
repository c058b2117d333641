"""What every gate returns."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields, is_dataclass
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
        """`dataclasses.asdict`, without the two fields at their defaults. Built by
        hand (`plain`): asdict deep-copied every string and number of the evidence,
        a fifth of the run writer's CPU per item (issue 24)."""
        data = {
            "gate": self.gate,
            "passed": self.passed,
            "reason": self.reason,
            "evidence": plain(self.evidence),
        }
        if self.ran is not True:
            data["ran"] = self.ran
        if self.flag_only is not False:
            data["flag_only"] = self.flag_only
        return data


_ATOMIC = (str, int, float, bool, type(None))  # immutable: what deepcopy hands back as it is


_ATOMIC_TYPES = frozenset(_ATOMIC)


def plain(value: Any) -> Any:
    """What `dataclasses.asdict` makes of a field's value: dataclasses as dicts,
    lists, tuples and dicts copied (their own types kept), anything else deep-copied;
    immutable atoms as they are (deepcopy returns them unchanged). The shapes
    evidence takes most (atoms, plain lists and dicts of them) are asked first by
    their exact type: each `isinstance` and `is_dataclass` below cost more than the
    copy (issue 24, session 13: the model path's verdicts, about 30 us each)."""
    kind = type(value)
    if kind in _ATOMIC_TYPES:
        return value
    if kind is list:
        return [plain(v) for v in value]
    if kind is dict:
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, _ATOMIC):
        return value
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return type(value)((plain(k), plain(v)) for k, v in value.items())
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*[plain(v) for v in value])
    if isinstance(value, list | tuple):
        return type(value)(plain(v) for v in value)
    return copy.deepcopy(value)
