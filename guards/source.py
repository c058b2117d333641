"""Source gates: is there an article worth summarising at all?"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from guards.text import non_ascii
from guards.verdict import Verdict

# Hyphens, apostrophes and dots join a word (61-year-old, Ostbrook's, U.S.);
# a comma joins only digits, so 41,200 is one word but "aged 31, 45" is two.
# Possessive (`++`, `*+`): no word character is a joiner, so giving back never finds
# another match; not trying it makes the count ~12% faster (the same words:
# tests/test_gate_fast_paths.py).
_WORD = re.compile(r"\w++(?:[-'’.]\w++|(?<=[0-9]),[0-9]++)*+")


def count_words(text: str | None) -> int:
    """Words as a reader counts them: hyphenated, dotted and grouped runs count once.

    The words `_WORD` finds, counted without running it when the text allows (see
    `_count_in_view`): `findall` over a long source is most of this gate's cost."""
    text = text or ""
    if not text.isascii():
        chars = non_ascii(text)
        if any(c.isalnum() or c == "_" for c in chars):
            return len(_WORD.findall(text))  # a non-ASCII word character: \w reads it
        if "\u2019" in chars:
            text = text.replace("\u2019", "'")  # a joiner either way
    return _count_in_view(text.encode("ascii", "replace").translate(_COUNT_VIEW), text)


# A byte view of a text without non-ASCII word characters (one byte per character, the
# others "?"): a letter or "_" is "a", a digit "0", a joiner (- ' .) "-", a comma ",",
# anything else a space. `_WORD`'s matches are then the runs of "a" and "0" less the
# runs it joins: one joiner between two word characters, one comma between two digits.
# One exception: a letter straight after a comma-joined group ("1,000abc") starts a
# word of its own there, so such a text is counted by `_WORD` itself.
_COUNT_VIEW = bytes(
    0x61 if chr(b).isalpha() or b == 0x5F
    else 0x30 if chr(b).isdigit()
    else 0x2D if b in b"-'."
    else 0x2C if b == 0x2C
    else 0x20
    for b in range(128)
) + b" " * 128  # fmt: skip
# The view again with its word characters one byte ("x"): a run of them begins at each
# " x" (or at the start), counted by `bytes.count` in C without a list of the words.
_RUN_BYTES = bytes(0x78 if b in b"a0" else 0x20 for b in range(256))
_JOINED = re.compile(rb"-(?<=[a0]-)(?=[a0])")
_GROUPED = re.compile(rb",(?<=0,)(?=0)")
_LETTER_AFTER_GROUP = re.compile(rb",(?<=0,)0+a")


def _count_in_view(view: bytes, text: str) -> int:
    if b"," in view and _LETTER_AFTER_GROUP.search(view):
        return len(_WORD.findall(text))
    marked = view.translate(_RUN_BYTES)
    runs = marked.count(b" x") + marked.startswith(b"x")
    return runs - len(_JOINED.findall(view)) - len(_GROUPED.findall(view))


def source_url(source: str | None, url: str | None, draft: str | None = None) -> Verdict:
    """An item must point at its source: an absolute http(s) URL with a host."""
    gate = "source_url"
    if not url or not url.strip():
        return Verdict(gate, False, "no source URL", {"url": url})
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError as exc:
        return Verdict(gate, False, f"source URL cannot be parsed: {exc}", {"url": url})
    if parts.scheme.lower() not in ("http", "https"):
        scheme = parts.scheme or "none (relative URL)"
        return Verdict(gate, False, f"source URL scheme is {scheme}, not http(s)", {"url": url})
    if not host:
        return Verdict(gate, False, "source URL has no host", {"url": url})
    return Verdict(gate, True, "absolute http(s) URL with a host", {"url": url, "host": host})


def source_length(
    source: str | None, url: str | None = None, draft: str | None = None, *, min_words: int = 150
) -> Verdict:
    """A teaser is not an article: too little text cannot carry a faithful summary."""
    words = count_words(source)
    evidence = {"words": words, "min_words": min_words}
    if words < min_words:
        return Verdict(
            "source_length", False, f"source has {words} words, fewer than {min_words}", evidence
        )
    return Verdict("source_length", True, f"source has {words} words", evidence)
