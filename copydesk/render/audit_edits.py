"""The edits and notes parts of `copydesk audit`: each edit as a word diff against
the pipeline's draft, and editors' notes, printed as rich Text (never markup) with
control characters made visible (`copydesk.render.text.safe`)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from copydesk.render.text import heading, plain, safe
from store.history import ItemHistory, edit_diffs, note_dict

# Deletions struck through in red, insertions underlined in green; the git
# `--word-diff` brackets stay too, so the diff reads without colour.
_STYLES = {
    "same": ("", "", ""),
    "del": ("[-", "-]", "red strike"),
    "ins": ("{+", "+}", "green underline"),
}


def diff_text(diff: list[list[str]]) -> Text:
    text = Text()
    for op, chunk in diff:
        opening, closing, style = _STYLES[op]
        text.append(opening + safe(chunk) + closing, style=style)
    return text


def render_edits(console: Console, history: ItemHistory) -> None:
    edits = edit_diffs(history.events)
    if not edits:
        return
    heading(console, f"Edits, as word diffs against the pipeline's draft ({len(edits)})")
    for n, edit in enumerate(edits, 1):
        console.print(_edit_line(n, edit))
        if edit["words_deleted"] or edit["words_inserted"]:
            console.print(Text("    ") + diff_text(edit["diff"]))
        else:
            console.print(Text("    (the pipeline's draft, unchanged)", style="dim"))


def _edit_line(n: int, edit: dict[str, Any]) -> Text:
    counts = f"-{edit['words_deleted']} +{edit['words_inserted']} words"
    return Text.assemble(
        (f"  {n}. {edit['reason']}", "bold"),
        " by ",
        plain(edit["actor"]),
        f" at {edit['at']} ({counts})",
    )


def render_notes(console: Console, history: ItemHistory) -> None:
    if not history.notes:
        return
    heading(console, f"Notes ({len(history.notes)})")
    for note in map(note_dict, history.notes):
        console.print(Text.assemble("  ", plain(note["author"], "bold"), f" at {note['at']}: "))
        console.print(Text("    ") + plain(note["note"]))
