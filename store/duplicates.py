"""Near-duplicate stories: the same event from two feeds, or two versions of one.

The technique is MinHash over shingles with LSH banding (Broder 1997; Leskovec,
Rajaraman & Ullman, "Mining of Massive Datasets", ch. 3), computed here over
`hashlib` (see "The MinHash" below). Why MinHash rather than SimHash: MinHash
estimates the Jaccard similarity of the two shingle sets directly, and a threshold on
Jaccard is something an editor can reason about ("they share half their
words"); SimHash's Hamming distance on short texts is a coarser proxy.

- Shingles: the article's title and source text, lower-cased, cut into runs of
  letters and digits, without common function words; each remaining word is a
  shingle (1-shingles). Two outlets rewriting one event keep its names,
  places and figures but not its word order, so longer shingles miss them
  (measured on tests/dup_material.py: see tests/test_duplicates.py).
- Signature: 64 MinHash values, computed once when an item becomes a draft
  (`store.status.move` calls `record`), stored in `items.dup_signature`.
- Candidates: the signature cut into 32 bands of 2 values; each band's hash is
  a row of `item_dup_bands`, keyed by (band, bucket, item), so the drafts similar
  to a page of the queue are found by key look-ups of the page's own buckets
  (computed from their signatures), not by comparing every pair.
  (The bands are kept in the database, not in an in-memory LSH index, so that
  every server and run sees them.)
- Verdict: two drafts are near duplicates when their estimated Jaccard
  similarity is at least `THRESHOLD` **and** they tell the same facts: the
  Jaccard similarity of their fact sets (`facts`: the figures, and the
  capitalised words that do not start a sentence: names, places, days) is at
  least `FACT_THRESHOLD`. Briefs written from one house template (planning
  notices, match results) share most of their words, and the MinHash estimate
  of two different notices reaches 0.62; what differs is who, where and how
  many, so their facts overlap by 0.35 at most, while two outlets telling one
  event share 0.57 or more (tests/template_material.py, tests/dup_material.py).
  The fact sets are computed when a pair is compared, for the few pairs over
  `THRESHOLD` only, from the stored title and source text.

Calibration lives here, in one place (issue 25 for the desk, issue 22 for the
scheduled job). Measured by tests/test_duplicates.py and
tests/test_duplicates_templated.py through the database's band index.

The MinHash (ours, not a library's, on purpose). Stored signatures are only
comparable with signatures made by exactly the same hash functions, so the scheme
must never change under us. It did: datasketch 2.0 changed its MinHash's default
permutation scheme, so a text signed before the upgrade and the same text signed
after it scored 0.0 and near-duplicate detection silently stopped for everything
stored earlier; and datasketch pulled numpy and scipy (about 216 MB, and seconds
of imports at every process start) for 64 hash values per draft. The scheme here
is fixed by this file alone and pinned by tests/test_duplicates.py
(`test_signature_values_are_pinned`); changing it means a new migration that signs
every stored item again, as 0011_minhash_own did when it was introduced.

- Each shingle (UTF-8) is hashed once: BLAKE2b (RFC 7693) with an 8-byte digest
  (`digest_size=8`; the digest size is a parameter of BLAKE2b, not a truncation:
  https://docs.python.org/3/library/hashlib.html#blake2), read little-endian
  (`_shingle_hash`).
- Permutation i is the affine map h -> ((a_i * h + b_i) mod P) & 0xFFFFFFFF with
  P = 2**61 - 1 (a Mersenne prime), the classic universal family (Carter & Wegman
  1979) that MinHash implementations use; a_i in [1, P-1] and b_i in [0, P-1]
  come from BLAKE2b (16-byte digest) of "copydesk-minhash/<SEED>/<i>"
  (`_permutations`), not from a random generator whose algorithm a Python
  release could change.
- Value i of the signature is the least image of the shingles under permutation i;
  the share of values on which two signatures agree estimates the Jaccard
  similarity of their shingle sets.
- Stored as NUM_PERM unsigned 32-bit little-endian integers (`to_bytes`).
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import (
    BigInteger,
    Integer,
    LargeBinary,
    String,
    and_,
    column,
    delete,
    or_,
    select,
    text,
)
from sqlalchemy import table as sa_table
from sqlalchemy import update as sa_update

from guards.text import word_runs
from store.packing import PackedSourceText

NUM_PERM = 64
BANDS = 32
ROWS = NUM_PERM // BANDS
SEED = 20261201
KEYS_PER_QUERY = 400  # (band, bucket) pairs a look-up asks at once: 800 bound values
THRESHOLD = 0.25  # estimated Jaccard; precision and recall: tests/test_duplicates.py
FACT_THRESHOLD = 0.45  # Jaccard of the fact sets: tests/test_duplicates_templated.py
MIN_SHINGLES = 20  # fewer distinct words than this: too little text to compare

_PRIME = (1 << 61) - 1
_MASK = 0xFFFFFFFF
_PACKED = struct.Struct(f"<{NUM_PERM}I")

Signature = tuple[int, ...]

STOP_WORDS = frozenset(
    """a about after all also an and are as at be been before but by can could did do
    for from had has have he her his how i if in into is it its may more most new no
    not of on one or our out over said says she so than that the their them then there
    these they this to up was we were what when which while who will with would you""".split()
)

# Where a draft's story may already be: pending, or told already (issue 25: the same
# story approved three times).
KNOWN = ("draft", "approved", "published")

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_CAPITALISED = re.compile(r"\b[A-Z][^\W\d_]+")
_SENTENCE_END = frozenset(".!?:;\"'“‘(")

_items = sa_table(
    "items",
    column("id", Integer),
    column("status", String),
    column("dup_signature", LargeBinary),
    column("title", String),
    column("source_text", PackedSourceText),
)
_bands = sa_table(
    "item_dup_bands",
    column("item_id", Integer),
    column("band", Integer),
    column("bucket", BigInteger),
)


def shingles(title: str | None, text: str | None) -> set[str]:
    # The words made a set first: each distinct word is then tested once, not each
    # time it occurs (the same set either way).
    words = set(word_runs(f"{title or ''}\n{text or ''}".lower(), underscore=False))
    return {w for w in words if w not in STOP_WORDS and (len(w) > 2 or w.isdigit())}


def facts(title: str | None, text: str | None) -> set[str]:
    """What a story is about rather than how it is told: its figures ("4,500" and
    "4500" alike) and the capitalised words that do not start a sentence (names,
    places, days, lower-cased), without function words."""
    body = f"{title or ''}. {text or ''}"
    found = {n.replace(",", "") for n in _NUMBER.findall(body)}
    for match in _CAPITALISED.finditer(body):
        before = body[: match.start()].rstrip()
        if not before or before[-1] in _SENTENCE_END:
            continue  # a sentence's first word is capitalised whatever it is
        word = match.group().lower()
        if word not in STOP_WORDS:
            found.add(word)
    return found


def fact_similarity(first: set[str], second: set[str]) -> float:
    """Jaccard similarity of two fact sets (0 when both are empty)."""
    union = first | second
    return len(first & second) / len(union) if union else 0.0


def _permutations(seed: int, count: int) -> tuple[tuple[int, int], ...]:
    """The (a, b) of each affine permutation, derived from the seed by BLAKE2b."""
    out = []
    for i in range(count):
        digest = hashlib.blake2b(f"copydesk-minhash/{seed}/{i}".encode(), digest_size=16).digest()
        a = int.from_bytes(digest[:8], "little") % (_PRIME - 1) + 1
        b = int.from_bytes(digest[8:], "little") % _PRIME
        out.append((a, b))
    return tuple(out)


_PERMUTATIONS = _permutations(SEED, NUM_PERM)


def _shingle_hash(shingle: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(shingle.encode("utf-8"), digest_size=8).digest(), "little"
    )


def signature(title: str | None, text: str | None) -> Signature | None:
    """The NUM_PERM MinHash values (each below 2**32) of the article, or None when
    it is too short."""
    found = shingles(title, text)
    if len(found) < MIN_SHINGLES:
        return None
    return _least(_images_of(found))


# A shingle's images under every permutation (`_image` of its hash), kept for the
# shingles met lately: most of an article's words were in an earlier one ("council",
# "minister", the desk's own places and names), and a word's images are its hash
# (BLAKE2b) and five operations on 768-byte integers, where a word already seen is a
# dict look-up (issue 24, session 17). The least of them is taken again for every
# signature, so the values are the same (test_signature_values_are_pinned). At most
# IMAGES_KEPT words (about 0.92 kB each: 3.76 MB by tracemalloc), emptied when full; a race between
# threads costs a recomputation, never a wrong value (a dict's get and set are
# atomic in CPython).
IMAGES_KEPT = 4096
_IMAGES: dict[str, int] = {}


def _images_of(found: Iterable[str]) -> list[int]:
    """`_image(_shingle_hash(s))` of each shingle, from `_IMAGES` when kept there."""
    kept = _IMAGES
    out = []
    for shingle in found:
        image = kept.get(shingle)
        if image is None:
            if len(kept) >= IMAGES_KEPT:
                kept.clear()
            image = kept[shingle] = _image(_shingle_hash(shingle))
        out.append(image)
    return out


# The least images (issue 24). One permutation of one shingle at a time,
# ((a * h + b) % P) & MASK, was about 12 microseconds of CPU a shingle. Here the 64
# permutations sit side by side in one integer, _LANE bits each, and each shingle
# takes every permutation at once: each step below is one operation on Python's
# arbitrary-precision integers for all 64 lanes (session 15; session 12 laid the
# shingles side by side instead and read each permutation's images out as a tuple of
# Python integers: 2.3x the CPU for an article's 36 distinct words, 2.0x for 150).
# Exact, as test_signature_values_are_pinned and test_least_images_are_the_formula
# prove:
# - h is taken mod P (a * h + b is the same mod P) and cut at bit 32, so that
#   a * h = a * h0 + (a * 2**32 mod P) * h1 with h0 < 2**32, h1 < 2**29: with b + 1
#   added, a lane holds less than 2**93 + 2**90 + 2**61 + 1 < 2**94, in 96 bits.
# - The remainder mod P = 2**61 - 1 as a Mersenne prime allows (2**61 = 1 mod P, so
#   x = hi * 2**61 + lo = hi + lo mod P): one fold leaves z + 1 with z = a * h + b
#   mod P, or z + P, and z + 1 < 2**61 + 2**34, at least 1.
# - z mod P is z when z < P, else z - P = z + 1 - 2**61: its low 32 bits are those of
#   (z + 1) - 1 + [z + 1 >= 2**61], bit 61 of z + 1 saying which.
# - The least so far, lane by lane, without a borrow crossing lanes: bit 32 of
#   (2**32 + best) - y is set where best >= y; that bit spread over the lane's low
#   32 bits picks y there.
_LANE = 96
_LANE_BYTES = _LANE // 8


def _side_by_side(values: Iterable[int]) -> int:
    """The values in one integer, _LANE bits each, the first lowest."""
    return int.from_bytes(b"".join(v.to_bytes(_LANE_BYTES, "little") for v in values), "little")


_ONES = _side_by_side([1] * NUM_PERM)
_A = _side_by_side(a for a, _ in _PERMUTATIONS)
_A_SHIFTED = _side_by_side((a << 32) % _PRIME for a, _ in _PERMUTATIONS)
_B_PLUS_ONE = _side_by_side(b + 1 for _, b in _PERMUTATIONS)
_LOW61 = _ONES * _PRIME  # the low 61 bits of every lane
_ABOVE61 = _ONES * ((1 << (_LANE - 61)) - 1)  # what a lane holds above them, moved down
_LOW32 = _ONES * _MASK
_BIT32 = _ONES << 32
_READ_OUT = struct.Struct("<" + f"I{_LANE_BYTES - 4}x" * NUM_PERM)  # each lane's low 32 bits


def least_images(hashes: Sequence[int]) -> Signature:
    """For each permutation (a, b): min over the hashes h of ((a * h + b) % P) & MASK.
    (No hash: every value is MASK.)"""
    return _least([_image(h) for h in hashes])


def _image(h: int) -> int:
    """((a * h + b) % P) & MASK for every permutation (a, b), in its lane."""
    h %= _PRIME
    x = _A * (h & _MASK) + _A_SHIFTED * (h >> 32) + _B_PLUS_ONE
    x = ((x >> 61) & _ABOVE61) + (x & _LOW61)  # z + 1 (or z + P + 1)
    return (x + ((x >> 61) & _ONES) - _ONES) & _LOW32  # (z mod P) & MASK


def _least(images: Iterable[int]) -> Signature:
    """The least value of each lane over `images` (`_image`s), read out."""
    best = _LOW32
    for y in images:
        take = (((best | _BIT32) - y) >> 32) & _ONES  # 1 in the lanes where best >= y
        best ^= (best ^ y) & (take * _MASK)
    return _READ_OUT.unpack(best.to_bytes(NUM_PERM * _LANE_BYTES, "little"))


def similarity(first: Signature, second: Signature) -> float:
    """Estimated Jaccard similarity: the share of MinHash values the two agree on."""
    return sum(x == y for x, y in zip(first, second, strict=True)) / len(first)


BUCKET_BYTES = 4  # a signed 32-bit bucket: 4 bytes on SQLite (8 before migration 0025)


def buckets(values: Signature) -> list[int]:
    """One signed 32-bit bucket per band: two signatures that agree on every value
    of a band share its bucket; two that do not share it by chance about once in
    2**32 (a candidate only: the pair is then compared on its whole signature)."""
    raw = to_bytes(values)
    out = []
    for band in range(BANDS):
        chunk = raw[band * ROWS * 4 : (band + 1) * ROWS * 4]
        digest = hashlib.blake2b(
            band.to_bytes(2, "little") + chunk, digest_size=BUCKET_BYTES
        ).digest()
        out.append(int.from_bytes(digest, "little", signed=True))
    return out


def to_bytes(values: Signature) -> bytes:
    return _PACKED.pack(*values)


def from_bytes(raw: bytes | None) -> Signature | None:
    if not raw or len(raw) != _PACKED.size:
        return None
    return _PACKED.unpack(raw)


def write_signature(conn: Any, item_id: int, title: str | None, text: str | None) -> None:
    """Store the item's signature and band buckets (replacing any earlier ones).
    `conn` is a Connection or a Session's connection."""
    raw = signed(title, text)
    conn.execute(sa_update(_items).where(_items.c.id == item_id).values(dup_signature=raw))
    write_bands(conn, item_id, raw)


def signed(title: str | None, text: str | None) -> bytes | None:
    """The signature as stored in `items.dup_signature` (None: too little text).
    The status machine writes it with the move that makes the item a draft (one
    UPDATE, not two), then its bands (`write_bands`)."""
    values = signature(title, text)
    return None if values is None else to_bytes(values)


def write_bands(conn: Any, item_id: int, raw: bytes | None, *, replace: bool = True) -> None:
    """The band buckets of the stored signature `raw`, replacing any earlier ones
    (`replace=False`: the item has none). Replacing finds the item's rows by its id,
    which since migration 0027 no index holds: a walk of the table, done only when a
    migration signs items again (a draft is signed once, by the status machine)."""
    if replace:
        conn.execute(delete(_bands).where(_bands.c.item_id == item_id))
    write_new_bands(conn, [(item_id, raw)])


def write_new_bands(conn: Any, signed: Sequence[tuple[int, bytes | None]]) -> None:
    """The band buckets of several items' stored signatures, (item id, signature)
    each, for items that have none yet, in one statement (issue 24, session 12: the
    status machine's moves of a batch to draft wrote a statement an item)."""
    rows = [
        (item_id, band, bucket)
        for item_id, raw in signed
        if (values := from_bytes(raw)) is not None
        for band, bucket in enumerate(buckets(values))
    ]
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        # One statement, its text fixed whatever the count (the driver's many-rows
        # INSERT was built again for every item, the largest part of the PostgreSQL
        # writer's CPU): the rows as three arrays, which unnest in FROM lays side by
        # side as the rows' columns
        # (https://www.postgresql.org/docs/current/functions-array.html, unnest
        # "expands multiple arrays ... to a set of rows ... only allowed in the FROM
        # clause"). Each array is sent as its literal, "{1,2,3}"
        # (https://www.postgresql.org/docs/current/arrays.html#ARRAYS-IO), one
        # string the server parses: the driver dumped a list one element at a time
        # in Python, 0.04 ms of CPU an item (issue 24, session 15).
        item_ids, bands, found = (
            "{" + ",".join(map(str, column)) + "}" for column in zip(*rows, strict=True)
        )
        conn.execute(_PG_BANDS, {"item_ids": item_ids, "bands": bands, "buckets": found})
        return
    # SQLite: the rows as they are, to the driver's executemany (`exec_driver_sql`, "a
    # list containing either dictionaries or tuples for multiple-execute support":
    # https://docs.sqlalchemy.org/en/21/core/connections.html#sqlalchemy.engine.Connection.exec_driver_sql).
    # Through `insert()`, SQLAlchemy built each row's parameters again from a dict
    # (`construct_params`, 32 rows a draft): 0.05 ms of CPU a draft (issue 24, session
    # 16). The columns are integers, which it passed to the driver as they were.
    conn.exec_driver_sql(_SQLITE_BANDS, rows)


_SQLITE_BANDS = "INSERT INTO item_dup_bands (item_id, band, bucket) VALUES (?, ?, ?)"
_PG_BANDS = text(
    "INSERT INTO item_dup_bands (item_id, band, bucket) SELECT t.item_id, t.band, t.bucket"
    " FROM unnest(CAST(:item_ids AS bigint[]), CAST(:bands AS integer[]),"
    " CAST(:buckets AS bigint[])) AS t(item_id, band, bucket)"
)


def sign_again(conn: Any, batch: int = 500) -> int:
    """Sign again every item that has a stored signature, with this file's scheme
    (a migration's work when the scheme changes); returns how many. Items without
    one (never a draft, or too short) keep none."""
    done, after = 0, 0
    while True:
        rows = conn.execute(
            select(_items.c.id, _items.c.title, _items.c.source_text)
            .where(_items.c.dup_signature.is_not(None), _items.c.id > after)
            .order_by(_items.c.id)
            .limit(batch)
        ).all()
        if not rows:
            return done
        for item_id, title, body in rows:
            write_signature(conn, item_id, title, body)
        done += len(rows)
        after = rows[-1][0]


def similar_drafts(
    session: Any, item_ids: Sequence[int], statuses: Iterable[str] = ("draft",)
) -> dict[int, list[tuple[int, float]]]:
    """For each of `item_ids`, the other items (in `statuses`) that are near
    duplicates of it, most similar first: {id: [(other id, similarity)]}."""
    if not item_ids:
        return {}
    # The items' own bands come from their stored signatures (the table's key is
    # (band, bucket, item): migration 0027), the others' from the key.
    asked: dict[tuple[int, int], set[int]] = {}
    for item_id, raw in session.execute(
        select(_items.c.id, _items.c.dup_signature).where(_items.c.id.in_(list(item_ids)))
    ):
        values = from_bytes(raw)
        for band, bucket in enumerate(buckets(values) if values is not None else ()):
            asked.setdefault((band, bucket), set()).add(item_id)
    keys = sorted(asked)
    other = _items.alias("other")
    pairs: set[tuple[int, int]] = set()
    for start in range(0, len(keys), KEYS_PER_QUERY):
        by_band: dict[int, list[int]] = {}
        for band, bucket in keys[start : start + KEYS_PER_QUERY]:
            by_band.setdefault(band, []).append(bucket)
        # One "band = ? AND bucket IN (...)" per band, ORed: SQLite searches the key
        # for each (its MULTI-INDEX OR plan); a row value "(band, bucket) IN" list
        # would walk the whole table (SQLite 3.40's plan: SCAN item_dup_bands).
        for band, bucket, their_id in session.execute(
            select(_bands.c.band, _bands.c.bucket, _bands.c.item_id)
            .join(other, other.c.id == _bands.c.item_id)
            .where(
                or_(
                    *(and_(_bands.c.band == b, _bands.c.bucket.in_(k)) for b, k in by_band.items())
                ),
                other.c.status.in_(list(statuses)),
            )
        ):
            pairs.update((mine_id, their_id) for mine_id in asked[(band, bucket)])
    pairs = {(mine_id, their_id) for mine_id, their_id in pairs if mine_id != their_id}
    if not pairs:
        return {}
    wanted = {i for pair in pairs for i in pair}
    signatures = {
        i: from_bytes(raw)
        for i, raw in session.execute(
            select(_items.c.id, _items.c.dup_signature).where(_items.c.id.in_(sorted(wanted)))
        )
    }
    close: list[tuple[int, int, float]] = []
    for mine_id, their_id in pairs:
        a, b = signatures.get(mine_id), signatures.get(their_id)
        if a is None or b is None:
            continue
        score = similarity(a, b)
        if score >= THRESHOLD:
            close.append((mine_id, their_id, score))
    if not close:
        return {}
    involved = sorted({i for pair in close for i in pair[:2]})
    fact_sets = {
        i: facts(title, text)
        for i, title, text in session.execute(
            select(_items.c.id, _items.c.title, _items.c.source_text).where(
                _items.c.id.in_(involved)
            )
        )
    }
    found: dict[int, list[tuple[int, float]]] = {}
    for mine_id, their_id, score in close:
        same_facts = fact_similarity(fact_sets.get(mine_id, set()), fact_sets.get(their_id, set()))
        if same_facts >= FACT_THRESHOLD:
            found.setdefault(mine_id, []).append((their_id, score))
    for rows in found.values():
        rows.sort(key=lambda r: (-r[1], r[0]))
    return found
