"""Safe HTTP for feeds and pages: timeouts, a size cap, a redirect limit, and a
refusal to reach private or loopback addresses unless configured.

All fetching goes through here (never feedparser's or trafilatura's own
downloaders), so every request obeys the same limits and leaves a record.
"""

from __future__ import annotations

import gzip
import ipaddress
import socket
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx

from copydesk.config import IngestSettings

XML_SUFFIXES = frozenset({".xml", ".rss", ".atom", ".rdf"})
TRANSIENT_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524})


class Refused(Exception):
    """The URL may not be fetched (scheme, private address): no request was made."""


@dataclass
class FetchResult:
    url: str  # as asked
    final_url: str  # after redirects
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    content: bytes = b""
    truncated: bool = False  # the body was larger than max_bytes and was cut off
    error: str | None = None  # why there is no usable body
    transient: bool = False  # worth retrying later (timeout, 5xx, 429)
    refused: bool = False  # refused before any request

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300

    @property
    def not_modified(self) -> bool:
        return self.status == 304


def _networks(entries: list[str]) -> tuple[list[ipaddress._BaseNetwork], set[str]]:
    nets, hosts = [], set()
    for entry in entries:
        try:
            nets.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            hosts.add(entry.lower())
    return nets, hosts


def is_public_address(ip: ipaddress._BaseAddress) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_unspecified
        or ip.is_reserved
        or getattr(ip, "is_site_local", False)
    )


def check_url(url: str, settings: IngestSettings) -> None:
    """Raise Refused unless `url` is http(s) and resolves only to allowed addresses."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise Refused(f"scheme {parts.scheme or 'none'!r} is not fetched (http and https only)")
    host = (parts.hostname or "").lower()
    if not host:
        raise Refused("URL has no host")
    nets, hosts = _networks(settings.allow_private)
    if host in hosts:
        return
    try:
        infos = socket.getaddrinfo(host, parts.port or 443, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise Refused(f"host {host} cannot be resolved: {exc.strerror}") from None
    for info in infos:
        ip = ipaddress.ip_address(info[4][0].split("%")[0])
        if is_public_address(ip) or any(ip in net for net in nets):
            continue
        raise Refused(f"host {host} resolves to non-public address {ip}")


def maybe_gunzip(content: bytes) -> bytes:
    """Some servers send gzip without saying so: the bytes tell."""
    if content[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(content)
        except (OSError, EOFError, zlib.error):
            return content
    return content


class Fetcher:
    """One shared httpx client with the newsroom's limits. Thread-safe."""

    def __init__(self, settings: IngestSettings, transport: httpx.BaseTransport | None = None):
        self.settings = settings
        self.client = httpx.Client(
            follow_redirects=False,
            timeout=httpx.Timeout(settings.timeout_seconds, connect=settings.connect_timeout),
            headers={"User-Agent": settings.user_agent, "Accept-Encoding": "gzip, deflate"},
            transport=transport,
        )

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, url: str, headers: dict[str, str] | None = None) -> FetchResult:
        """GET with manual redirects so each hop is checked against the guard."""
        current = url
        for _hop in range(self.settings.max_redirects + 1):
            try:
                check_url(current, self.settings)
            except Refused as exc:
                return FetchResult(url, current, error=f"refused: {exc}", refused=True)
            try:
                result = self._get_once(url, current, headers or {})
            except httpx.TimeoutException as exc:
                return FetchResult(
                    url, current, error=f"timeout: {type(exc).__name__}", transient=True
                )
            except httpx.HTTPError as exc:
                return FetchResult(url, current, error=f"network error: {exc}", transient=True)
            if result.status in (301, 302, 303, 307, 308) and "location" in result.headers:
                current = urljoin(current, result.headers["location"])
                continue
            return result
        return FetchResult(url, current, error=f"more than {self.settings.max_redirects} redirects")

    def _get_once(self, url: str, current: str, headers: dict[str, str]) -> FetchResult:
        limit = self.settings.max_bytes
        with self.client.stream("GET", current, headers=headers) as response:
            result = FetchResult(
                url, current, status=response.status_code, headers=dict(response.headers)
            )
            if response.is_redirect or response.status_code == 304:
                return result
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > limit:
                    result.truncated = True
                    chunks.append(chunk[: len(chunk) - (size - limit)])
                    break
                chunks.append(chunk)
            result.content = maybe_gunzip(b"".join(chunks))
        if result.truncated:
            result.error = f"body larger than {limit} bytes: cut off"
        elif result.status >= 400:
            result.error = f"HTTP {result.status}"
            result.transient = result.status in TRANSIENT_STATUSES
        return result


def read_local(path: str) -> FetchResult:
    """A feed given as a local file (or file: URL): read it, no network."""
    p = Path(path.removeprefix("file://"))
    try:
        content = maybe_gunzip(p.read_bytes())
    except OSError as exc:
        return FetchResult(path, path, error=f"cannot read {p}: {exc.strerror}")
    headers = {"content-type": "application/xml"} if p.suffix.lower() in XML_SUFFIXES else {}
    return FetchResult(path, p.resolve().as_uri(), status=200, headers=headers, content=content)


def is_local(url: str) -> bool:
    scheme = urlsplit(url).scheme.lower()
    return scheme == "file" or scheme == "" or (len(scheme) == 1 and url[1:3] in (":\\", ":/"))
