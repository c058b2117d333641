"""Pure checks on (source text, source URL, draft): no I/O, no database, no model."""

from guards.verdict import Verdict

__all__ = ["Verdict"]
