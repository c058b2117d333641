"""One reading of a source text, shared by every gate that checks a draft against it.

The draft gates each need the source in a form of their own: normalised and case
folded (quotes, names, dates, speakers), read in NFKC (numbers), its language (the
numbers' separators and scale words), its names, its clauses. `source_text(source)`
returns one `SourceText` per source (cached, keyed by the text itself, so an edited
source is read again): each form is computed the first time a gate asks for it and
then reused by the other gates and by the next draft of the same source (the review
desk re-runs the gates on every edit; `copydesk replay` and the model checks read the
same source again). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property, lru_cache
from typing import Any, TypeVar

from guards.text import Folded, Normalised, compat_fold, normalise

T = TypeVar("T")


class SourceText:
    """A source and the forms of it the gates read (see the module)."""

    def __init__(self, text: str):
        self.text = text
        self._derived: dict[str, Any] = {}

    @cached_property
    def norm(self) -> Normalised:
        """NFC, invisible characters dropped, case folded, with the way back to offsets."""
        return normalise(self.text)

    @cached_property
    def folded(self) -> Folded:
        """NFKC without invisible characters (the numbers gate's reading)."""
        return compat_fold(self.text)

    def derived(self, key: str, build: Callable[[SourceText], T]) -> T:
        """What one gate builds from the source (its names, its clauses), built once."""
        if key not in self._derived:
            self._derived[key] = build(self)
        return self._derived[key]


@lru_cache(maxsize=256)  # a review desk's worth of sources (a 2,000-word one: ~60 kB read)
def source_text(text: str) -> SourceText:
    """The shared reading of `text` (a string hashes once; a hit costs a dict lookup)."""
    return SourceText(text)
