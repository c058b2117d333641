"""Text search over items, by the database's own full-text index.

What an editor types into a search box becomes a WHERE clause on `items`:

- SQLite: the FTS5 table `items_fts` (external content: it indexes `items`'
  headline, title, summary, source text and both URLs, kept in step by
  triggers; migration 0008_search). The source text is stored packed (migration
  0026): the triggers hand the index the text unpacked (`copydesk_text`), and
  nothing here asks FTS5 for a column's value (snippet, highlight), which would
  read the packed bytes. Since migration 0028 the index keeps no word positions
  (`detail=none`: 0.46x -> 0.12x the articles' text on bench/bench_ledger.py),
  so FTS5 answers single words only: a phrase is asked of FTS5 as its words
  (AND), and the rows it finds are then checked for the words in order, within
  one field, by `copydesk_terms` (`terms_match`, registered by store/db.py).
- PostgreSQL: the generated `tsvector` column `items.search_doc` with a GIN
  index (same migration), over the same text cut into runs of letters and
  digits by `regexp_replace(..., '[^[:alnum:]]+', ' ')` and read with the
  `simple` configuration (no stemming, no stop words: a newsroom searches
  names and figures). The typed text is cut by the same expression in the
  same database, so both sides agree whatever the database's locale (under
  the C locale a non-ASCII letter separates, "Zürich" is "z rich" on both
  sides). The source text counts up to its first 100,000 characters (a
  tsvector has a size limit; an article is shorter).

Either way a piece of a link ("example.test/news/kellan-bridge") is a phrase
of its runs of letters and digits, and "3.1" finds "£3.1m"... as "3 1".

The typed text is never handed to either query language as syntax. It is cut
into terms: a "quoted part" is one phrase, every other word is a term of its
own, all terms must match (AND). Each term's words go to FTS5 as double-quoted
strings of letters and digits only (its phrase order is checked after, above)
and to PostgreSQL through `phraseto_tsquery`, which reads no operators; so
`NEAR(`, `*`, `col:`, `&`, `!`, `:*` and an unbalanced quote are only
characters. The last word of a query of at least three letters also matches as
a prefix ("counc" finds council), which is built from letters and digits only.

`#42` finds item 42 only; a bare number also finds the item of that number, as
well as any text containing it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Integer, and_, bindparam, func, literal_column, or_, select, text
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.sqltypes import NullType

from store.models import Item
from store.packing import SQL_UNPACK, sql_unpack

# What migration 0008_search adds beside the models (tests compare models and schema).
SQLITE_FTS_TABLE = "items_fts"
SQLITE_TABLES = frozenset(
    {
        SQLITE_FTS_TABLE,
        *(f"{SQLITE_FTS_TABLE}_{part}" for part in ("data", "idx", "docsize", "config")),
    }
)
PG_COLUMN = "search_doc"
PG_INDEX = "ix_items_search_doc"
# Migration 0010_story_order: an expression index (the queue's story order), also
# kept beside the models (review_ui/desk/queries.py `_story_time` writes the expression).
STORY_ORDER_INDEX = "ix_items_story_order"
SOURCE_CHARS = 100_000  # PostgreSQL indexes this much of the source text
# FTS5 keeps its index as segments: every commit of the writer adds one, and an
# item's change (its summary as a draft) leaves its old entries in the older ones
# until they are merged. A run ends with a merge of at most MERGE_PAGES leaf pages
# of work, merging any level that holds two segments or more ("usermerge" 2, FTS5's
# default is 4; https://www.sqlite.org/fts5.html#the_merge_command and
# #the_usermerge_configuration_option). Levels are kept (a positive page budget), so
# a large index is not rewritten whole at every run: a segment is merged again each
# time its level doubles. Measured on bench/bench_ledger.py (320 drafts): the index
# went from 0.89x to 0.46x the text, as small as an "optimize" leaves it.
MERGE_PAGES = 500
USERMERGE = 2


SQLITE_FTS_COLUMNS = "headline, title, summary, source_text, source_url, original_url"


def remake_sqlite_index(execute: Callable[[str], Any], options: str) -> None:
    """SQLite: drop `items_fts` and make it again with these FTS5 `options`, filled from
    `items` (a migration changing the index's options: 0032). The source text is stored
    packed (0026), so FTS5's 'rebuild', which reads the column, cannot fill it: it is
    read through SQL_UNPACK. The triggers name the table, not its options: they stay."""
    execute(f"DROP TABLE {SQLITE_FTS_TABLE}")
    execute(f"CREATE VIRTUAL TABLE {SQLITE_FTS_TABLE} USING fts5({SQLITE_FTS_COLUMNS}, {options})")
    execute(
        f"INSERT INTO {SQLITE_FTS_TABLE}(rowid, {SQLITE_FTS_COLUMNS}) "  # noqa: S608 - constants
        f"SELECT id, headline, title, summary, {SQL_UNPACK}(source_text), source_url, "
        "original_url FROM items"
    )


def merge_index(engine: Any) -> None:
    """SQLite: merge the full-text index's segments (see MERGE_PAGES). PostgreSQL's
    GIN index needs no such step (its pending list is merged by VACUUM)."""
    if engine.dialect.name != "sqlite":
        return
    with engine.begin() as conn:
        setting = conn.execute(
            text("SELECT v FROM items_fts_config WHERE k = 'usermerge'")
        ).scalar()
        if setting != USERMERGE:
            conn.execute(
                text("INSERT INTO items_fts(items_fts, rank) VALUES ('usermerge', :n)"),
                {"n": USERMERGE},
            )
        conn.execute(
            text("INSERT INTO items_fts(items_fts, rank) VALUES ('merge', :n)"),
            {"n": MERGE_PAGES},
        )


_WORD = re.compile(r"[^\W_]+")  # a run of letters and digits, as both indexes cut text
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_PREFIXABLE = re.compile(r"[A-Za-z0-9]{3,}")  # a prefix is cut alike by both databases
_ITEM_NUMBER = re.compile(r"#?\s*(\d{1,9})")
_LOOKS_LIKE_URL = re.compile(r"/|:|[^\W\d_]\.[^\W\d_]")


@dataclass(frozen=True)
class Term:
    text: str  # what the editor typed for this term (a word, a phrase, a URL part)
    url: bool = False  # looks like (a piece of) a link
    prefix: bool = False  # the query's last word: also matches as a prefix


@dataclass(frozen=True)
class Query:
    terms: tuple[Term, ...]
    item_id: int | None = None  # "#42" or "42"
    only_item: bool = False  # "#42": the item number, not text

    @property
    def empty(self) -> bool:
        return not self.terms and self.item_id is None


def parse(typed: str) -> Query:
    """Cut what the editor typed into terms (see the module's docstring)."""
    typed = _CONTROL.sub(" ", typed or "").strip()  # NUL and the like end nothing
    number = _ITEM_NUMBER.fullmatch(typed)
    if number:
        item_id = int(number.group(1))
        if typed.startswith("#"):
            return Query((), item_id, only_item=True)
        return Query((Term(number.group(1)),), item_id)
    terms: list[Term] = []
    # Quotes pair up left to right; an unbalanced last quote is just a character.
    pieces = typed.split('"')
    if len(pieces) % 2 == 0:
        pieces[-2:] = ['"'.join(pieces[-2:])]
    for index, piece in enumerate(pieces):
        if index % 2 == 1:  # inside quotes: one phrase
            if _WORD.search(piece):
                terms.append(Term(piece))
            continue
        for word in piece.split():
            if _WORD.search(word):
                terms.append(Term(word, url=bool(_LOOKS_LIKE_URL.search(word))))
    if terms and not typed.endswith('"'):
        last = terms[-1]
        words = _WORD.findall(last.text)
        if len(words) == 1 and _PREFIXABLE.fullmatch(words[0]):
            terms[-1] = Term(words[0], prefix=True)
    return Query(tuple(terms))


# --------------------------------------------------------------------------- SQLite


# The index keeps no positions (migration 0028, FTS5 `detail=none`), and FTS5 then
# refuses any quoted string it cuts into more than one token ("phrase queries are
# not supported (detail!=full)"; https://www.sqlite.org/fts5.html#the_detail_option).
# So FTS5 is sent single words only, each a run of letters and digits that its
# unicode61 tokenizer (Unicode 6.1's letters and digits are token characters,
# https://www.sqlite.org/fts5.html#unicode61_tokenizer) cannot cut further: only
# words of characters below U+0530 (Latin, Greek, Cyrillic), whose categories have
# not changed since 6.1. Every term FTS5 cannot answer alone (a phrase, a link's
# piece, a word in another script) is checked on the rows FTS5 found, or on every
# row when FTS5 was sent no word, by `terms_match`.
SQL_TERMS = "copydesk_terms"
_FTS_SAFE = re.compile(r"[^\W_\u0530-\U0010ffff]+")
SEARCHED_COLUMNS = ("headline", "title", "summary", "source_text", "source_url", "original_url")


def words(value: str) -> list[str]:
    """A text's words as the phrase check compares them: runs of letters and digits,
    diacritics removed and case folded (as FTS5's `remove_diacritics 2` and PostgreSQL's
    `simple` configuration compare them)."""
    decomposed = unicodedata.normalize("NFD", value)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _WORD.findall(bare.casefold())


def _fts_words(term: Term) -> list[str]:
    return [w for w in _WORD.findall(term.text) if _FTS_SAFE.fullmatch(w)]


def _answered_by_fts(term: Term) -> bool:
    """True when FTS5 alone finds exactly this term: one word it cuts as we do."""
    found = _WORD.findall(term.text)
    return len(found) == 1 and _FTS_SAFE.fullmatch(found[0]) is not None


def fts5_expression(query: Query) -> str:
    """The FTS5 MATCH string: every word FTS5 can answer, a quoted string, ANDed
    ("" when there is none)."""
    parts = []
    for term in query.terms:
        if term.prefix:  # one ASCII word (see `parse`)
            parts.append(f'"{term.text}" *')
            continue
        parts.extend(f'"{word}"' for word in _fts_words(term))
    return " AND ".join(dict.fromkeys(parts))


def checked_terms(query: Query) -> list[list[str]]:
    """The terms FTS5 cannot answer alone, each as its words in order (`terms_match`)."""
    return [
        words(term.text)
        for term in query.terms
        if not term.prefix and not _answered_by_fts(term) and words(term.text)
    ]


def terms_match(terms_json: str, *fields: Any) -> int:
    """SQL_TERMS (SQLite): 1 when each term (a JSON list of lists of words) appears,
    its words in order and next to each other, in one of the fields (a packed source
    text is unpacked), else 0."""
    terms = json.loads(terms_json)
    texts = [words(value) for value in map(sql_unpack, fields) if isinstance(value, str)]
    for term in terms:
        size = len(term)
        if not any(cut[i : i + size] == term for cut in texts for i in range(len(cut) - size + 1)):
            return 0
    return 1


def _sqlite_clause(query: Query) -> ColumnElement[bool]:
    clauses: list[ColumnElement[bool]] = []
    expression = fts5_expression(query)
    if expression:
        matched = (
            select(literal_column("rowid", Integer))
            .select_from(text(SQLITE_FTS_TABLE))
            .where(text(f"{SQLITE_FTS_TABLE} MATCH :fts").bindparams(fts=expression))
        )
        clauses.append(Item.id.in_(matched))  # type: ignore[union-attr]
    checked = checked_terms(query)
    if checked:
        fields = [literal_column(f"items.{name}") for name in SEARCHED_COLUMNS]
        terms = bindparam("terms", json.dumps(checked, ensure_ascii=False))
        clauses.append(getattr(func, SQL_TERMS)(terms, *fields))
    return and_(*clauses)


# --------------------------------------------------------------------------- PostgreSQL


_SEPARATORS = literal_column("'[^[:alnum:]]+'")  # as in migration 0008_search


def _pg_term(term: Term, n: int) -> Any:
    if term.prefix:  # an ASCII word (see `parse`): quoted, nothing in it is syntax
        word = term.text.lower()
        return func.to_tsquery(literal_column("'simple'"), bindparam(f"ts{n}", f"'{word}':*"))
    # The database cuts the typed text exactly as it cut the stored text.
    words = func.regexp_replace(bindparam(f"ts{n}", term.text), _SEPARATORS, " ", "g")
    return func.phraseto_tsquery(literal_column("'simple'"), words)


def _pg_clause(query: Query) -> ColumnElement[bool]:
    document = literal_column(f"items.{PG_COLUMN}")
    return and_(*(document.op("@@")(_pg_term(term, n)) for n, term in enumerate(query.terms)))


# --------------------------------------------------------------------------- both


class TextMatch(ColumnElement[bool]):
    """SQL: the item's text matches `query`, written for whichever database the
    statement is compiled for (so callers need not know the dialect)."""

    # No Boolean type: SQLite would get `(... IN (...)) = 1`, which its planner
    # cannot drive from the index's row ids.
    type = NullType()
    inherit_cache = False  # holds its own bound values: never a cached statement

    def __init__(self, query: Query) -> None:
        self.query = query


@compiles(TextMatch)
def _compile_text_match(element: TextMatch, compiler: Any, **kw: Any) -> str:
    if compiler.dialect.name == "sqlite":
        clause = _sqlite_clause(element.query)
    else:
        clause = _pg_clause(element.query)
    return str(compiler.process(clause, **kw))


def search_clause(typed: str) -> ColumnElement[bool] | None:
    """SQL: the items the typed text finds; None when it asks for nothing."""
    query = parse(typed)
    if query.empty:
        return None
    if query.only_item:
        return Item.id == query.item_id  # type: ignore[return-value]
    if query.item_id is not None:
        return or_(Item.id == query.item_id, TextMatch(query))  # type: ignore[return-value]
    return TextMatch(query)
