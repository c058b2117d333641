"""A gate verdict's gate, stage, mode and fixed reasons stored as short codes
(issue 19 §4).

Every draft stores about nine verdicts, and each row spelled out its gate
("claims_supported"), stage ("check") and mode ("discard"): about 200 bytes an
article on bench/bench_ledger.py's 320-article run, a tenth of the verdicts' bytes.
Since migration 0035 the row holds a name's position in its list below ("3"), and
`Coded` gives the name back on every read; a query compares or lists names as
before (`GateVerdict.gate == "faithfulness"`, `.in_(CHECK_GATES)`: SQLAlchemy puts
each value through the type's `process_bind_param`,
https://sqlalchemy.org/docs/20/core/custom_types.html, "Augmenting Existing Types").

A passing gate that found nothing to check gives the same reason every time ("no
quotations in the draft"); since migration 0036 such a reason is stored as a code
too (`REASONS`, about 100 bytes an article). Every other reason is stored as it is.

A name not in its list (a gate added later, a reason with figures in it) is stored
as it is and read back as it is. The lists only grow: a code, once written, names
the same thing for good, and a name added later needs a migration that codes the
rows already holding it.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import String, Text
from sqlalchemy.types import TypeDecorator

# A name's position is its code: append a new name, never reorder or remove one.
GATES = (
    *("source_url", "source_length", "numbers_grounded", "quotes_verbatim", "speakers_match"),
    *("names_grounded", "dates_grounded", "claims_supported", "faithfulness"),
)
STAGES = ("source", "draft", "check", "edit", "replay")
MODES = ("discard", "flag", "off")
REASONS = (  # the passing reasons that never vary (guards/quotes.py, speakers.py, ...)
    *("no quotations in the draft", "no attributed quotation the source also quotes"),
    *("absolute http(s) URL with a host", "no proper names in the draft"),
    *("no numbers of two or more digits in the draft", "no dates in the draft"),
)


class Coded(TypeDecorator[str]):
    """A name from a fixed list, stored as its position ("0", "1", ...)."""

    impl = String
    cache_ok = True

    def __init__(self, names: tuple[str, ...]) -> None:
        super().__init__()
        self.names = names

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return code_of(self.names, value)

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        return name_of(self.names, value)


class CodedText(Coded):
    """`Coded` over a TEXT column (a verdict's reason)."""

    impl = Text


def recode(table: str, columns: dict[str, tuple[str, ...]], to_code: bool) -> list[Any]:
    """The UPDATEs a migration runs to store `columns`' names as codes (or, not
    `to_code`, to write the names back): one a column, rows without one untouched."""
    target = sa.table(table, *(sa.column(name, sa.String) for name in columns))
    statements = []
    for name, names in columns.items():
        column = target.c[name]
        pairs = {n: code_of(names, n) for n in names}
        mapping = pairs if to_code else {code: n for n, code in pairs.items()}
        statements.append(
            sa.update(target)
            .where(column.in_(list(mapping)))
            .values({name: sa.case(mapping, value=column)})
        )
    return statements


def code_of(names: tuple[str, ...], name: Any) -> Any:
    return str(names.index(name)) if name in names else name


def name_of(names: tuple[str, ...], code: Any) -> Any:
    if isinstance(code, str) and code.isdigit() and int(code) < len(names):
        return names[int(code)]
    return code


__all__ = [
    "GATES",
    "MODES",
    "REASONS",
    "STAGES",
    "Coded",
    "CodedText",
    "code_of",
    "name_of",
    "recode",
]
