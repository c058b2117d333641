"""The evaluation pack: invented articles, summaries of them, and the answer key.

A pack is a folder with `manifest.toml` (the article files and the counts the
pack declares) and one TOML file per article: its text, its summaries (each
with its key: `clean`, or the kind of the one planted error, the gate designed
to catch it and the evidence strings a correct finding must mention) and a few
hard cases for calibrating the judge. `load_pack` validates all of it before
anything runs and raises `PackError` with the first reason it is broken.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guards.checks import ERROR_KINDS

# Every kind of planted error, and the gate designed to catch it.
KINDS: dict[str, str] = {
    "changed_number": "numbers_grounded",
    "hidden_number": "numbers_grounded",
    "decimal_shift": "numbers_grounded",
    "derived_figure": "numbers_grounded",
    "invented_quote": "quotes_verbatim",
    "altered_quote": "quotes_verbatim",
    "spliced_quote": "quotes_verbatim",
    "invented_name": "names_grounded",
    "first_name": "names_grounded",
    "changed_date": "dates_grounded",
    "reversed_claim": "faithfulness",
    "dropped_hedge": "faithfulness",
    "dropped_limiter": "faithfulness",
    "shifted_tense": "faithfulness",
    "wrong_speaker": "speakers_match",
    "invented_cause": "faithfulness",
    "reported_view_as_fact": "faithfulness",
}
CLEAN = "clean"
TRAPS = ("same_figure", "dense", "paraphrase")
VERDICTS = ("faithful", "unfaithful")
MIN_WORDS, MAX_WORDS = 250, 700


class PackError(ValueError):
    """The pack is broken; the message says where and why."""


@dataclass(frozen=True)
class Summary:
    id: str
    article: str
    text: str
    kind: str  # CLEAN or a key of KINDS
    gate: str | None  # the gate designed to catch the error; None when clean
    evidence: tuple[str, ...]
    trap: str | None
    note: str
    truth: str | None = None  # the source's figure that a numbers error gets wrong

    @property
    def clean(self) -> bool:
        return self.kind == CLEAN


@dataclass(frozen=True)
class HardCase:
    id: str
    article: str
    text: str
    verdict: str  # what a careful editor settled on
    kinds: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class Article:
    id: str
    title: str
    url: str
    text: str
    summaries: tuple[Summary, ...]
    hard_cases: tuple[HardCase, ...]


@dataclass(frozen=True)
class Pack:
    root: Path
    name: str
    version: int
    articles: tuple[Article, ...]
    digest: str  # sha256 of the manifest, every article file and every scripted file
    # Scripted model-check replies (the check tool's input JSON) by summary id:
    # what `copydesk eval` uses offline instead of a model. Not validated for
    # shape: broken replies are in the pack on purpose, to exercise failing closed.
    scripted: dict[str, Any] = field(default_factory=dict)

    @property
    def summaries(self) -> list[Summary]:
        return [s for a in self.articles for s in a.summaries]

    def article(self, article_id: str) -> Article:
        return next(a for a in self.articles if a.id == article_id)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise PackError(f"{path}: file not found") from None
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PackError(f"{path}: cannot read: {exc}") from None


def _text(data: dict[str, Any], field: str, where: str) -> str:
    value = data.get(field)
    if not isinstance(value, str) or not value.strip():
        raise PackError(f"{where}: `{field}` must be a non-empty string")
    return value.strip()


def _summary(data: dict[str, Any], article: str, where: str) -> Summary:
    sid = _text(data, "id", where)
    where = f"{where} summary {sid}"
    if not sid.startswith(f"{article}-"):
        raise PackError(f"{where}: id must start with the article id {article!r}")
    kind = _text(data, "key", where)
    gate = data.get("gate")
    evidence = data.get("evidence", [])
    if kind == CLEAN:
        if gate is not None or evidence:
            raise PackError(f"{where}: a clean summary has no gate and no evidence")
    elif kind not in KINDS:
        raise PackError(f"{where}: unknown kind {kind!r}; known: clean, {', '.join(KINDS)}")
    elif gate != KINDS[kind]:
        raise PackError(f"{where}: {kind} is designed for gate {KINDS[kind]}, not {gate!r}")
    elif not evidence or not all(isinstance(e, str) and e.strip() for e in evidence):
        raise PackError(f"{where}: an error needs evidence strings")
    trap = data.get("trap")
    if trap is not None and (kind != CLEAN or trap not in TRAPS):
        raise PackError(f"{where}: trap {trap!r} must be one of {TRAPS} on a clean summary")
    truth = data.get("truth")
    if truth is not None and (kind == CLEAN or not isinstance(truth, str)):
        raise PackError(f"{where}: `truth` is the source's figure an error gets wrong")
    text = _text(data, "text", where)
    note = data.get("note", "")
    return Summary(sid, article, text, kind, gate, tuple(evidence), trap, note, truth)


def _hard_case(data: dict[str, Any], article: str, where: str) -> HardCase:
    hid = _text(data, "id", where)
    where = f"{where} hard case {hid}"
    verdict = _text(data, "verdict", where)
    if verdict not in VERDICTS:
        raise PackError(f"{where}: verdict must be one of {VERDICTS}")
    kinds = tuple(data.get("kinds", []))
    unknown = sorted(set(kinds) - set(ERROR_KINDS))
    if unknown:
        raise PackError(f"{where}: unknown judge kind(s) {unknown}; known: {ERROR_KINDS}")
    return HardCase(
        hid, article, _text(data, "text", where), verdict, kinds, _text(data, "why", where)
    )


def _article(path: Path) -> Article:
    data = _read_toml(path)
    where = path.name
    aid = _text(data, "id", where)
    text = _text(data, "text", where)
    words = len(text.split())
    if not MIN_WORDS <= words <= MAX_WORDS:
        raise PackError(f"{where}: article has {words} words; {MIN_WORDS}-{MAX_WORDS} expected")
    summaries = tuple(_summary(s, aid, where) for s in data.get("summary", []))
    if not summaries:
        raise PackError(f"{where}: no summaries")
    hard = tuple(_hard_case(h, aid, where) for h in data.get("hard_case", []))
    url = _text(data, "url", where)
    return Article(aid, _text(data, "title", where), url, text, summaries, hard)


def load_pack(root: Path) -> Pack:
    """Read and validate the pack under `root`, or raise `PackError`."""
    manifest_path = root / "manifest.toml"
    manifest = _read_toml(manifest_path)
    files = manifest.get("articles")
    if not isinstance(files, list) or not files:
        raise PackError(f"{manifest_path}: `articles` must list the article files")
    digest = hashlib.sha256(manifest_path.read_bytes())
    articles = []
    for name in files:
        path = root / name
        articles.append(_article(path))
        digest.update(path.read_bytes())
    scripted = _scripted(root, manifest.get("scripted", []), digest)
    pack = Pack(
        root,
        str(manifest.get("name", root.name)),
        int(manifest.get("version", 0)),
        tuple(articles),
        digest.hexdigest(),
        scripted,
    )
    _check_unique(pack)
    unknown = sorted(set(scripted) - {s.id for s in pack.summaries})
    if unknown:
        raise PackError(f"scripted replies for summaries the pack does not have: {unknown}")
    if manifest.get("designed_gates") != KINDS:
        raise PackError(f"manifest: [designed_gates] must map each kind to its gate: {KINDS}")
    _check_counts(pack, manifest.get("counts", {}))
    return pack


def _scripted(root: Path, files: Any, digest: Any) -> dict[str, Any]:
    """Every scripted reply, by summary id, from the JSON files the manifest lists."""
    if not isinstance(files, list):
        raise PackError("manifest: `scripted` must list the scripted reply files")
    replies: dict[str, Any] = {}
    for name in files:
        path = root / name
        try:
            raw = path.read_bytes()
            data = json.loads(raw)
        except FileNotFoundError:
            raise PackError(f"{path}: file not found") from None
        except (OSError, ValueError) as exc:
            raise PackError(f"{path}: cannot read: {exc}") from None
        if not isinstance(data, dict):
            raise PackError(f"{path}: must map summary ids to scripted replies")
        for sid in data:
            if sid in replies:
                raise PackError(f"{path}: a second scripted reply for {sid}")
        replies.update(data)
        digest.update(raw)
    return replies


def _check_unique(pack: Pack) -> None:
    seen: set[str] = set()
    ids = [a.id for a in pack.articles]
    ids += [s.id for s in pack.summaries]
    ids += [h.id for a in pack.articles for h in a.hard_cases]
    for item in ids:
        if item in seen:
            raise PackError(f"id {item!r} is used twice")
        seen.add(item)


def counts(pack: Pack) -> dict[str, Any]:
    """What the pack holds, in the shape of the manifest's [counts]."""
    kinds = {kind: 0 for kind in KINDS}
    for s in pack.summaries:
        if not s.clean:
            kinds[s.kind] += 1
    return {
        "articles": len(pack.articles),
        "summaries": len(pack.summaries),
        "clean": sum(s.clean for s in pack.summaries),
        "hard_cases": sum(len(a.hard_cases) for a in pack.articles),
        "scripted": len(pack.scripted),
        "kinds": kinds,
    }


def _check_counts(pack: Pack, declared: dict[str, Any]) -> None:
    actual = counts(pack)
    for name in ("articles", "summaries", "clean", "hard_cases", "scripted"):
        if declared.get(name) != actual[name]:
            raise PackError(
                f"manifest declares {declared.get(name)} {name}, the pack holds {actual[name]}"
            )
    declared_kinds = declared.get("kinds", {})
    unknown = sorted(set(declared_kinds) - set(KINDS))
    if unknown:
        raise PackError(f"manifest declares unknown kind(s): {', '.join(unknown)}")
    for kind, n in actual["kinds"].items():
        if kind not in declared_kinds:
            raise PackError(f"manifest does not declare a count for {kind} (0 if none)")
        if declared_kinds[kind] != n:
            raise PackError(
                f"manifest declares {declared_kinds.get(kind, 0)} {kind}, the pack holds {n}"
            )


def default_pack_dir() -> Path:
    """evals/pack beside the package (a source checkout), else under the current folder."""
    beside = Path(__file__).resolve().parents[2] / "evals" / "pack"
    return beside if beside.is_dir() else Path("evals") / "pack"
