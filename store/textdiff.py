"""Word-level differences between two texts: what an editor changed in the pipeline's
draft. The read model behind the diffs in `copydesk audit` and in the review queue.

The comparison is difflib's `SequenceMatcher` over word tokens (words, runs of
punctuation and runs of white space), so "40" -> "45" is one word deleted and
one inserted, not a character shuffle. Rendering is the caller's; `as_text`
gives the git `--word-diff` form for terminals and JSON readers.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

Op = Literal["same", "del", "ins"]

# A word (letters, digits, underscore in any script), a run of other visible
# characters, or a run of white space: joined back together they are the text.
_TOKEN = re.compile(r"\w+|[^\w\s]+|\s+")
_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class Segment:
    op: Op
    text: str


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def word_diff(before: str, after: str) -> list[Segment]:
    """Segments that read `before` when the "ins" ones are dropped and `after` when
    the "del" ones are; a replacement is its deletion then its insertion."""
    old, new = tokens(before), tokens(after)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    out: list[Segment] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            _add(out, "same", "".join(old[i1:i2]))
            continue
        if i2 > i1:
            _add(out, "del", "".join(old[i1:i2]))
        if j2 > j1:
            _add(out, "ins", "".join(new[j1:j2]))
    return out


def _add(out: list[Segment], op: Op, text: str) -> None:
    if out and out[-1].op == op:
        out[-1] = Segment(op, out[-1].text + text)
    else:
        out.append(Segment(op, text))


def changed(segments: list[Segment]) -> bool:
    return any(s.op != "same" for s in segments)


def counts(segments: list[Segment]) -> tuple[int, int]:
    """(words deleted, words inserted): white space and punctuation runs not counted."""
    deleted = sum(_words(s.text) for s in segments if s.op == "del")
    inserted = sum(_words(s.text) for s in segments if s.op == "ins")
    return deleted, inserted


def _words(text: str) -> int:
    return sum(1 for t in tokens(text) if _WORD.match(t))


def as_text(segments: list[Segment]) -> str:
    """`[-deleted-]{+inserted+}` around the changes, as `git diff --word-diff` prints."""
    marks = {"same": ("", ""), "del": ("[-", "-]"), "ins": ("{+", "+}")}
    return "".join(f"{marks[s.op][0]}{s.text}{marks[s.op][1]}" for s in segments)


def as_json(segments: list[Segment]) -> list[list[str]]:
    return [[s.op, s.text] for s in segments]


def draft_text(headline: str | None, summary: str | None) -> str:
    """The headline and summary as one text, the way the gates read a draft."""
    return f"{headline or ''}\n\n{summary or ''}"
