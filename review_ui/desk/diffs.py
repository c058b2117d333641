"""An edit as a word diff against the pipeline's draft, as escaped HTML.

Pure functions, no Streamlit: the segments come from `store.textdiff` (difflib
over word tokens); every token goes through `highlight.escape_text`, so a draft
holding `<script>` or `<img onerror=...>` stays text. The only tags are the
`<del>`/`<ins>` built here. Show the result with `st.html`, never `st.markdown`.
"""

from __future__ import annotations

from review_ui.desk.highlight import block, escape_text
from store import textdiff

DEL_STYLE = "background:#ffd7d5;color:#5c0000;text-decoration:line-through"
INS_STYLE = "background:#c9f2d0;color:#0b3d17;text-decoration:underline"


def diff_html(segments: list[textdiff.Segment]) -> str:
    """Escaped HTML: deletions struck through (red), insertions underlined (green);
    each change also carries a title for screen readers and tooltips."""
    parts = []
    for s in segments:
        text = escape_text(s.text)
        if s.op == "del":
            parts.append(f'<del class="cd-del" title="deleted" style="{DEL_STYLE}">{text}</del>')
        elif s.op == "ins":
            parts.append(f'<ins class="cd-ins" title="inserted" style="{INS_STYLE}">{text}</ins>')
        else:
            parts.append(text)
    return block("".join(parts), style="font-size:0.9rem")


def draft_diff_html(original: tuple[str, str], current: tuple[str, str]) -> tuple[str, str]:
    """(a one-line summary, the diff block) of the current text against the pipeline's."""
    segments = textdiff.word_diff(textdiff.draft_text(*original), textdiff.draft_text(*current))
    deleted, inserted = textdiff.counts(segments)
    if not textdiff.changed(segments):
        return "The current text is the pipeline's draft (edits reverted).", diff_html(segments)
    summary = (
        f"Changed from the pipeline's draft: {deleted} word{'s' * (deleted != 1)} deleted, "
        f"{inserted} inserted."
    )
    return summary, diff_html(segments)


def json_diff_html(diff: list[list[str]]) -> str:
    """The same block from a diff stored in the audit document (`[[op, text], ...]`)."""
    segments = [
        textdiff.Segment(op, text)  # type: ignore[arg-type]
        for op, text in diff
        if op in ("same", "del", "ins") and isinstance(text, str)
    ]
    return diff_html(segments)
