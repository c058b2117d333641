"""The gates' settings type: `[gates]` in config.toml (composed by copydesk/config.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from guards.registry import ALL_GATES, DEFAULT_MODES

GateMode = Literal["discard", "flag", "off"]


class GateSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_source_words: int = Field(default=150, ge=0)
    modes: dict[str, GateMode] = Field(default_factory=dict)

    @field_validator("modes")
    @classmethod
    def _known_gates(cls, modes: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(modes) - set(ALL_GATES))
        if unknown:
            raise ValueError(f"unknown gate(s) {unknown}; known: {sorted(ALL_GATES)}")
        return modes

    def mode(self, gate: str) -> str:
        return self.modes.get(gate, DEFAULT_MODES.get(gate, "discard"))

    def all_modes(self) -> dict[str, str]:
        """The mode of every known gate, defaults filled in."""
        return {gate: self.mode(gate) for gate in ALL_GATES}
