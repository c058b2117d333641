"""Text for a terminal from untrusted values: titles, article text, model output
and reasons may come from a hostile feed or model, so everything printed goes
through here: a rich `Text` (never markup) with control and bidi characters made
visible instead of sent to the terminal. Shared by every renderer in this package."""

from __future__ import annotations

import json
import re
from typing import Any

from rich.console import Console
from rich.text import Text

# C0/C1 control characters (but tab and newline) and the bidi overrides that can
# make a terminal show something other than what the text says.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def safe(value: Any) -> str:
    """The text with control and bidi characters shown as escapes, so a hostile
    article cannot move the cursor, clear the screen or reverse a line."""
    text = "" if value is None else str(value)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def plain(value: Any, style: str = "") -> Text:
    """Untrusted text as a rich Text: never parsed as markup."""
    return Text(safe(value), style=style)


def heading(console: Console, title: str) -> None:
    """A section heading of `copydesk audit`'s text output (after a blank line),
    shared with copydesk/render/audit_edits.py. The title is the program's own wording,
    printed as Text (never markup); a count in it is the only data."""
    console.print()
    console.print(Text(title, style="bold underline"))


def render_evidence(console: Console, evidence: Any, *, indent: int = 2) -> None:
    """Evidence as readable lines. Gates shape their evidence freely, so this stays
    generic: a dict is `key: value` lines, a list is one line per element, and an
    element that says `"found": false` (a number or quote the source lacks) is
    marked NOT FOUND so it stands out among the ones that were found."""
    pad = " " * indent
    if isinstance(evidence, dict):
        for key, value in evidence.items():
            line = Text(f"{pad}{safe(key)}: ", style="dim")
            line.append(safe(compact(value)))
            console.print(line)
    elif isinstance(evidence, list):
        for element in evidence:
            missing = isinstance(element, dict) and element.get("found") is False
            line = Text(pad)
            line.append("NOT FOUND " if missing else "- ", style="bold red" if missing else "dim")
            line.append(safe(compact(element)))
            console.print(line)
    else:
        console.print(Text(pad + safe(compact(evidence))))


def compact(value: Any) -> str:
    """A value on one line: a string as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)
