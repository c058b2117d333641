"""The three publish targets. Each one is safe to send the same event to twice:

- the Atom feed is rebuilt whole from the database and swapped in by rename, and an
  entry's id is the item's, so a repeat changes nothing a reader sees;
- the JSON Lines file is read before appending: a line for the same (id, event)
  already there is not written again;
- the webhook carries an `Idempotency-Key` that is the same on every attempt.

A target answers with a `Sent`: delivered, worth retrying later, or refused for good.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import httpx
from feedgen.ext.base import BaseEntryExtension, BaseExtension
from feedgen.feed import FeedGenerator
from lxml import etree

from publish.payload import to_bytes
from publish.settings import (
    AtomTargetSettings,
    JsonlTargetSettings,
    TargetSettings,
    WebhookTargetSettings,
)
from store.files import write_atomically

__all__ = ["write_atomically"]  # the crash tests write the feed the way the target does

log = logging.getLogger("copydesk.publish")

NS = "tag:copydesk,2026:ns/evidence"  # the Atom extension's own namespace
SIGNATURE_HEADER = "X-Copydesk-Signature"  # "sha256=<hex HMAC of the body>"
DELIVERED, RETRY, FAILED = "delivered", "retry", "failed"


@dataclass(frozen=True)
class Sent:
    outcome: str  # DELIVERED, RETRY or FAILED
    detail: str = ""
    attempts: int = 1


@dataclass(frozen=True)
class Event:
    """One delivery to make: the payload and its key (the same on every attempt)."""

    item_id: int
    kind: str  # "publish" or "retract"
    key: str
    payload: dict[str, Any]
    attempt: int = 1  # 1: no earlier attempt can have reached the target
    claim: str | None = None  # the worker's claim token on the delivery row


class Target(Protocol):
    """`send` gets the event and, for a target rebuilt whole (one with a `window`:
    how many recent deliveries to read), every entry it should carry. Such a
    target may also have a `batch`: a publish run then sends up to that many items
    in one call (`event` is the last of them; `feed` carries them all), and is
    sent `event=None` to rebuild the file from the delivered rows alone."""

    name: str
    kind: str

    def send(self, event: Event, feed: list[dict[str, Any]]) -> Sent: ...


# --------------------------------------------------------------------------- Atom


class _FeedNamespace(BaseExtension):
    def extend_ns(self) -> dict[str, str]:
        return {"cd": NS}


class _Evidence(BaseEntryExtension):
    """`<cd:evidence>` on an entry: where each figure is grounded and what passed."""

    payload: dict[str, Any] = {}

    def extend_atom(self, entry: Any) -> Any:
        p = self.payload
        if p.get("event") == "retracted":
            etree.SubElement(
                entry,
                f"{{{NS}}}retracted",
                by=p["retracted_by"],
                at=p["retracted_at"],
                reason=p["reason"],
            )
            return entry
        approved = {
            k: v for k, v in (("by", p.get("approved_by")), ("at", p.get("approved_at"))) if v
        }
        etree.SubElement(entry, f"{{{NS}}}approved", **approved)
        if p.get("audit_head"):  # the audit log's head when this was prepared
            event_id, _, digest = p["audit_head"].partition(":")
            etree.SubElement(entry, f"{{{NS}}}audit-head", event=event_id, hash=digest)
        box = etree.SubElement(
            entry, f"{{{NS}}}evidence", source_sha256=p.get("source_sha256") or ""
        )
        for g in p.get("evidence", []):
            ground = etree.SubElement(
                box,
                f"{{{NS}}}ground",
                kind=g["kind"],
                field=g["field"],
                start=str(g["span"][0]),
                end=str(g["span"][1]),
                source_start=str(g["source_span"][0]),
                source_end=str(g["source_span"][1]),
            )
            ground.text = g["text"]
        for c in p.get("checks", []):
            etree.SubElement(
                box, f"{{{NS}}}check", gate=c["gate"], version=c["version"], mode=c["mode"]
            )
        return entry


def _time(value: str | None) -> datetime:
    if not value:
        return datetime.now(UTC)
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


class AtomTarget:
    kind = "atom"

    def __init__(self, settings: AtomTargetSettings):
        self.settings = settings
        self.name = settings.name
        # Deliveries read to rebuild the feed: its entries, their retractions, and room
        # for deliveries still pending.
        self.window = 2 * settings.max_entries + 20
        # Items written in one go by a publish run: the file is rebuilt once per batch,
        # not once per item, and every item is in the file at least once.
        self.batch = settings.max_entries

    def send(self, event: Event | None, feed: list[dict[str, Any]]) -> Sent:
        """`feed` is every entry this target carries, newest state of each item."""
        try:
            write_atomically(self.settings.path, self.render(feed), self.settings.mode)
        except OSError as exc:
            return Sent(RETRY, f"cannot write {self.settings.path}: {exc.strerror or exc}")
        return Sent(DELIVERED, str(self.settings.path))

    def render(self, feed: list[dict[str, Any]]) -> bytes:
        s = self.settings
        newest = sorted(feed, key=_entry_time, reverse=True)[: s.max_entries]
        fg = FeedGenerator()
        fg.register_extension("copydesk", _FeedNamespace, _Evidence)
        fg.id(s.feed_id)
        fg.title(s.title)
        fg.author({"name": "copydesk"})
        if s.link:
            fg.link(href=s.link, rel="self")
        fg.updated(max((_entry_time(p) for p in newest), default=datetime(2026, 1, 1, tzinfo=UTC)))
        for payload in reversed(newest):  # feedgen puts the last added first
            self._entry(fg, payload)
        return fg.atom_str(pretty=True)

    def _entry(self, fg: FeedGenerator, p: dict[str, Any]) -> None:
        fe = fg.add_entry()
        fe.id(p["id"])
        retracted = p.get("event") == "retracted"
        headline = p.get("headline") or "(no headline)"
        fe.title(f"Retracted: {headline}" if retracted else headline)
        if retracted:
            fe.summary(f"This summary was withdrawn: {p['reason']}")
        else:
            fe.summary(p["summary"])
        if p.get("source_url"):
            fe.link(href=p["source_url"], rel="alternate")
        if p.get("approved_by"):
            fe.contributor({"name": p["approved_by"]})
        if p.get("published_at"):
            fe.published(_time(p["published_at"]))
        fe.updated(_entry_time(p))
        fe.copydesk.payload = p


def _entry_time(payload: dict[str, Any]) -> datetime:
    return _time(payload.get("retracted_at") or payload.get("published_at"))


# --------------------------------------------------------------------------- JSON Lines


class JsonlTarget:
    kind = "jsonl"

    def __init__(self, settings: JsonlTargetSettings):
        self.settings = settings
        self.name = settings.name

    def send(self, event: Event, feed: list[dict[str, Any]]) -> Sent:
        path = self.settings.path
        try:
            # Only an earlier attempt can have written the line (then read the file).
            if event.attempt > 1 and self._already_there(path, event.payload):
                return Sent(DELIVERED, f"{path} already had it")
            path.parent.mkdir(parents=True, exist_ok=True)
            line = to_bytes(event.payload) + b"\n"
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, self.settings.mode)
            with os.fdopen(fd, "ab") as handle:
                if not os.fstat(fd).st_size:
                    os.fchmod(fd, self.settings.mode)  # a new file: file_mode, not the umask
                # A crash mid-write can leave a partial last line; start after it.
                if handle.tell() and not _ends_with_newline(path):
                    handle.write(b"\n")
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            return Sent(RETRY, f"cannot append to {path}: {exc.strerror or exc}")
        return Sent(DELIVERED, str(path))

    @staticmethod
    def _already_there(path: Path, payload: dict[str, Any]) -> bool:
        if not path.exists():
            return False
        wanted = (payload["id"], payload["event"])
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    seen = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a crash
                if isinstance(seen, dict) and (seen.get("id"), seen.get("event")) == wanted:
                    return True
        return False


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


# --------------------------------------------------------------------------- webhook


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


class WebhookTarget:
    kind = "webhook"

    def __init__(
        self,
        settings: WebhookTargetSettings,
        secret: str,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.settings = settings
        self.name = settings.name
        self.secret = secret
        self.sleep = sleep
        self.client = httpx.Client(
            timeout=settings.timeout_seconds, transport=transport, follow_redirects=False
        )

    def close(self) -> None:
        self.client.close()

    def send(self, event: Event, feed: list[dict[str, Any]]) -> Sent:
        body = to_bytes(event.payload)
        headers = {
            "Content-Type": "application/json",
            "Idempotency-Key": event.key,
            SIGNATURE_HEADER: sign(self.secret, body),
            "X-Copydesk-Event": event.payload["event"],
        }
        s = self.settings
        detail = ""
        for attempt in range(1, s.attempts + 1):
            if attempt > 1:
                self.sleep(s.backoff_seconds * 2 ** (attempt - 2))
            try:
                response = self.client.post(s.url, content=body, headers=headers)
            except httpx.HTTPError as exc:
                detail = f"{type(exc).__name__}: {exc}"[:300]
                continue
            code = response.status_code
            if 200 <= code < 300:
                return Sent(DELIVERED, f"HTTP {code}", attempt)
            detail = f"HTTP {code} {response.reason_phrase}".strip()
            if 400 <= code < 500 and code not in (408, 429):
                return Sent(FAILED, detail, attempt)
        return Sent(RETRY, detail, s.attempts)


def build_targets(
    configured: list[TargetSettings],
    env: Mapping[str, str],
    *,
    transport: httpx.BaseTransport | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Target]:
    """The targets of config.toml, in order. Raises ValueError (one line) when a
    webhook's secret is missing from the environment."""
    targets: list[Target] = []
    for t in configured:
        if isinstance(t, AtomTargetSettings):
            targets.append(AtomTarget(t))
        elif isinstance(t, JsonlTargetSettings):
            targets.append(JsonlTarget(t))
        else:
            secret = env.get(t.secret_env, "")
            if not secret:
                raise ValueError(
                    f"publish target {t.name!r}: the webhook secret is not set"
                    f" (environment variable {t.secret_env})"
                )
            targets.append(WebhookTarget(t, secret, transport=transport, sleep=sleep))
    return targets


# --------------------------------------------------------------------------- audit heads


def published_heads(data: bytes) -> list[str]:
    """The audit heads (ID:HASH) an Atom file or a JSON Lines file published: what
    `copydesk audit --verify --against-feed` checks the log against. ValueError
    when `data` is neither."""
    if data.lstrip().startswith(b"<"):
        try:
            root = etree.fromstring(data, parser=etree.XMLParser(resolve_entities=False))
        except etree.XMLSyntaxError as exc:
            raise ValueError(f"not an Atom feed: {exc}") from None
        return [f"{e.get('event')}:{e.get('hash')}" for e in root.iter(f"{{{NS}}}audit-head")]
    heads = []
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise ValueError(f"line {number} is neither Atom nor a JSON Lines record") from None
        if isinstance(record, dict) and record.get("audit_head"):
            heads.append(str(record["audit_head"]))
    return heads
