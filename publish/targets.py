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
from importlib import metadata
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
SIGNATURE_HEADER = "X-Copydesk-Signature"  # "t=<unix time>,v1=<hex HMAC>": see sign()
DELIVERED, RETRY, FAILED = "delivered", "retry", "failed"


@dataclass(frozen=True)
class Sent:
    outcome: str  # DELIVERED, RETRY or FAILED
    detail: str = ""
    attempts: int = 1
    warning: str | None = None  # delivered, but someone should act (a moved target)


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


def _audit_head(entry: Any, payload: dict[str, Any]) -> None:
    """`<cd:audit-head>`: the audit log's head when the event was prepared."""
    if payload.get("audit_head"):
        event_id, _, digest = payload["audit_head"].partition(":")
        etree.SubElement(entry, f"{{{NS}}}audit-head", event=event_id, hash=digest)


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
            _audit_head(entry, p)
            return entry
        approved = {
            k: v for k, v in (("by", p.get("approved_by")), ("at", p.get("approved_at"))) if v
        }
        etree.SubElement(entry, f"{{{NS}}}approved", **approved)
        fixed = p.get("correction") if p.get("event") == "corrected" else None
        if fixed:
            etree.SubElement(
                entry,
                f"{{{NS}}}correction",
                revision=str(fixed["revision"]),
                note=fixed["note"],
                at=p.get("published_at") or "",
            )
        # Whose story it is: the outlet, its byline and date (attributes, so the text
        # is escaped by the XML writer, never markup).
        source = {
            k: v
            for k, v in (
                ("outlet", p.get("source_outlet")),
                ("byline", p.get("source_byline")),
                ("published", p.get("source_published_at")),
            )
            if v
        }
        if source:
            etree.SubElement(entry, f"{{{NS}}}source", **source)
        _audit_head(entry, p)
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
        fg.language(s.language)  # xml:lang on the feed (RFC 4287 2: atomCommonAttributes)
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
        fixed = p.get("correction") if p.get("event") == "corrected" else None
        if retracted:
            fe.summary(f"This summary was withdrawn: {p['reason']}")
        elif fixed:
            # The note is part of the text a reader sees (and <cd:correction> below).
            fe.summary(f"{p['summary']}\n\nCorrection: {fixed['note']}")
        else:
            fe.summary(p["summary"])
        if p.get("source_url"):
            fe.link(href=p["source_url"], rel="alternate")
        if p.get("approved_by"):
            fe.contributor({"name": p["approved_by"]})
        # https://validator.w3.org/feed/docs/rfc4287.html#element.updated (4.2.15) and
        # #element.published (4.2.9): `published` is the entry's first availability, so a
        # correction keeps the first publication's; `updated` (4.2.15) is the
        # correction's own publication time (_entry_time).
        first = p.get("first_published_at") if fixed else p.get("published_at")
        if first:
            fe.published(_time(first))
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
        wanted = (payload["id"], payload["event"], _revision(payload))
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    seen = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a crash
                if not isinstance(seen, dict):
                    continue
                if (seen.get("id"), seen.get("event"), _revision(seen)) == wanted:
                    return True
        return False


def _revision(payload: dict[str, Any]) -> Any:
    """Which correction a line carries (None: the first publication)."""
    fixed = payload.get("correction")
    return fixed.get("revision") if isinstance(fixed, dict) else None


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


# --------------------------------------------------------------------------- webhook


# The signature covers a timestamp, so a captured request cannot be replayed later:
# "t=<unix seconds>,v1=<hex HMAC-SHA256 of '<t>.' + body>", the scheme Stripe documents
# for its own webhooks (https://docs.stripe.com/webhooks#verify-manually: signed
# payload "timestamp.body", a tolerance of 5 minutes by default). A receiver
# recomputes it over the raw body and refuses a timestamp older than its tolerance.
SIGNATURE_TOLERANCE = 300  # seconds; README's receiver example uses the same


def sign(secret: str, body: bytes, timestamp: int) -> str:
    mac = hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def verify_signature(
    body: bytes,
    header: str,
    secret: str,
    *,
    now: float | None = None,
    tolerance: float = SIGNATURE_TOLERANCE,
) -> bool:
    """What a receiver checks (README has the same code to copy): the HMAC over the
    timestamp and the raw body, and a timestamp within `tolerance` of now."""
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(fields["t"])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - timestamp) > tolerance:
        return False
    expected = sign(secret, body, timestamp).split(",v1=")[1]
    return hmac.compare_digest(expected, fields.get("v1", ""))


def user_agent() -> str:
    try:
        return f"copydesk/{metadata.version('copydesk')}"
    except metadata.PackageNotFoundError:
        return "copydesk"


# Redirects (RFC 9110 section 15.4): a 307 or 308 keeps the method and the body, so
# the POST is made again at the new address (308 says the move is permanent: the
# config should name the new URL). A 301, 302 or 303 lets (303: makes) a client
# turn the POST into a GET, so it is not followed: the delivery fails for good,
# naming the new address, and `copydesk publish --retry-failed` sends it once the
# config is fixed.
FOLLOWED = (307, 308)
REFUSED = (301, 302, 303)
MAX_HOPS = 3


class WebhookTarget:
    kind = "webhook"

    def __init__(
        self,
        settings: WebhookTargetSettings,
        secret: str,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ):
        self.settings = settings
        self.name = settings.name
        self.secret = secret
        self.sleep = sleep
        self.clock = clock
        self.client = httpx.Client(
            timeout=settings.timeout_seconds,
            transport=transport,
            follow_redirects=False,
            headers={"User-Agent": user_agent()},
        )

    def close(self) -> None:
        self.client.close()

    def send(self, event: Event, feed: list[dict[str, Any]]) -> Sent:
        s = self.settings
        sent = Sent(RETRY, "")
        for attempt in range(1, s.attempts + 1):
            if attempt > 1:
                self.sleep(min(s.backoff_seconds * 2 ** (attempt - 2), s.max_backoff_seconds))
            sent = self._post(event, attempt)
            if sent.outcome != RETRY:
                return sent
        return Sent(RETRY, sent.detail, s.attempts)

    def _post(self, event: Event, attempt: int) -> Sent:
        """One try, following up to MAX_HOPS 307/308 redirects."""
        body = to_bytes(event.payload)
        headers = {
            "Content-Type": "application/json",
            "Idempotency-Key": event.key,
            SIGNATURE_HEADER: sign(self.secret, body, int(self.clock())),
            "X-Copydesk-Event": event.payload["event"],
        }
        url, moved = httpx.URL(self.settings.url), None
        for _ in range(MAX_HOPS + 1):
            try:
                response = self.client.post(url, content=body, headers=headers)
            except httpx.HTTPError as exc:
                return Sent(RETRY, f"{type(exc).__name__}: {exc}"[:300], attempt)
            code = response.status_code
            detail = f"HTTP {code} {response.reason_phrase}".strip()
            location = response.headers.get("Location")
            if code in FOLLOWED and location:
                url = url.join(location)
                if code == 308:
                    moved = f'the target moved permanently to {url}: set url = "{url}"'
                continue
            if 200 <= code < 300:
                return Sent(DELIVERED, detail, attempt, warning=moved)
            if code in REFUSED and location:
                new = url.join(location)
                why = (
                    f"{detail} to {new}: a POST is not sent again through a {code}, which"
                    f' lets it become a GET (RFC 9110 15.4); set url = "{new}" in config.toml'
                    " if that is the new address, then run publish --retry-failed"
                )
                return Sent(FAILED, why, attempt)
            if 300 <= code < 400:
                return Sent(FAILED, f"{detail}: a redirect copydesk does not follow", attempt)
            if 400 <= code < 500 and code not in (408, 429):
                return Sent(FAILED, detail, attempt)
            return Sent(RETRY, detail, attempt)
        return Sent(FAILED, f"more than {MAX_HOPS} redirects from {self.settings.url}", attempt)


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
