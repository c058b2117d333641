"""Safe HTTP for feeds and pages.

All fetching goes through `Fetcher` (never feedparser's or trafilatura's own
downloaders), so every request obeys the same limits and leaves a record:

- only http and https; anything else is refused before a request is made;
- the address guard runs where the socket is opened: the host is resolved once,
  every resolved address is checked (loopback, private, link-local, multicast,
  unspecified, reserved; IPv4 inside IPv6 too), and the connection goes to the
  address that was checked. A DNS answer that changes between a check and the
  connect (rebinding) therefore gains nothing, and every redirect hop is a new
  connection that passes the same guard;
- a connect timeout, a read timeout and a total deadline per request;
- a size cap applied while streaming, after decompression (a 50 MB page or a
  gzip bomb is never held in memory: the body is cut off and marked truncated);
- gzip and deflate, and gzip that the server did not announce (bytes `1f 8b`);
- at most `per_host_concurrency` requests in flight per host, shared by threads;
- robots.txt for page fetches, fetched through this same fetcher, cached per run.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpcore
import httpx

from copydesk.config import IngestSettings

XML_SUFFIXES = frozenset({".xml", ".rss", ".atom", ".rdf"})
REDIRECTS = frozenset({301, 302, 303, 307, 308})
TRANSIENT_STATUSES = frozenset({408, 425, 429})  # and every 5xx
ROBOTS_MAX_BYTES = 512_000  # RFC 9309 asks parsers to read at least 500 KiB
NAT64 = ipaddress.ip_network("64:ff9b::/96")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]  # (host, port) -> IP addresses as text


class Refused(Exception):
    """The URL may not be fetched (scheme, private address): no request was sent."""


# --------------------------------------------------------------------------- results


@dataclass
class FetchResult:
    url: str  # as asked
    final_url: str  # after redirects
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    content: bytes = b""
    truncated: bool = False  # the body was larger than max_bytes and was cut off
    error: str | None = None  # why there is no usable body
    transient: bool = False  # worth retrying later (timeout, 5xx, 429)
    refused: bool = False  # refused by the guard: nothing was sent to that address
    disallowed: bool = False  # robots.txt disallows it: nothing was sent for the page
    retry_after: float | None = None  # seconds, from a 429/503 Retry-After header
    redirects: list[str] = field(default_factory=list)  # every hop after the first

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300

    @property
    def not_modified(self) -> bool:
        return self.status == 304 and self.error is None


# --------------------------------------------------------------------------- the address guard


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, NAT64, Teredo), if any:
    `::ffff:127.0.0.1` is loopback however it is written."""
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip.sixtofour:
        return ip.sixtofour
    if ip in NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.teredo:
        return ip.teredo[1]
    return None


def is_public_address(ip: Address) -> bool:
    """True for an address on the public internet; False for loopback, private,
    link-local (169.254/16: cloud metadata), carrier-grade NAT, multicast,
    unspecified, reserved and documentation ranges, in IPv4 and IPv6."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None:
            return is_public_address(inner)
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified)


class AddressPolicy:
    """Which hosts may be connected to: public addresses, plus the allow-list
    (`ingest.allow_private`: host names, or networks in CIDR notation)."""

    def __init__(self, allow: list[str]):
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self.hosts: set[str] = set()
        for entry in allow:
            try:
                self.networks.append(ipaddress.ip_network(entry.strip(), strict=False))
            except ValueError:
                self.hosts.add(entry.strip().lower().rstrip("."))

    def address_allowed(self, ip: Address) -> bool:
        if is_public_address(ip):
            return True
        candidates = [ip]
        if isinstance(ip, ipaddress.IPv6Address) and _embedded_ipv4(ip) is not None:
            candidates.append(_embedded_ipv4(ip))
        return any(
            c in net for c in candidates for net in self.networks if c.version == net.version
        )

    def checked_addresses(self, host: str, port: int, resolver: Resolver) -> list[str]:
        """The addresses to connect to, all checked; raises Refused if any is not
        allowed (a host that resolves to one public and one private address is
        refused: which one a client picks is up to chance)."""
        name = host.lower().rstrip(".").strip("[]")
        try:
            literal = ipaddress.ip_address(name.split("%")[0])
        except ValueError:
            literal = None
        if literal is not None:
            if not self.address_allowed(literal):
                raise Refused(f"address {literal} is not public")
            return [name]
        try:
            addresses = resolver(name, port)
        except (OSError, UnicodeError) as exc:
            raise httpcore.ConnectError(f"host {name} cannot be resolved: {exc}") from None
        if not addresses:
            raise httpcore.ConnectError(f"host {name} has no address")
        if name in self.hosts:
            return addresses
        for text in addresses:
            ip = ipaddress.ip_address(text.split("%")[0])
            if not self.address_allowed(ip):
                raise Refused(f"host {name} resolves to non-public address {ip}")
        return addresses


def system_resolver(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for `host`, in its order, once each."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: dict[str, None] = {}
    for info in infos:
        seen.setdefault(str(info[4][0]), None)
    return list(seen)


class GuardedBackend(httpcore.NetworkBackend):
    """httpcore's network backend with the address guard in `connect_tcp`: the only
    place a TCP connection is opened, so no code path can skip the check."""

    def __init__(self, policy: AddressPolicy, resolver: Resolver):
        self.policy = policy
        self.resolver = resolver
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: object = None,
    ) -> httpcore.NetworkStream:
        addresses = self.policy.checked_addresses(host, port, self.resolver)
        last: Exception | None = None
        for address in addresses:  # connect to the checked address, never re-resolve
            try:
                return self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options or []
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: object = None
    ) -> httpcore.NetworkStream:
        raise Refused("unix sockets are not fetched")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class GuardedTransport(httpx.HTTPTransport):
    """httpx's own transport, with its connection pool built on `GuardedBackend`.

    httpx does not take a network backend as an argument, so the pool is replaced
    after construction; tests/test_fetch.py proves the guard is in force."""

    def __init__(self, policy: AddressPolicy, resolver: Resolver):
        super().__init__(trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=GuardedBackend(policy, resolver),
        )


# --------------------------------------------------------------------------- bodies


class CappedBody:
    """Collects a response body, decompressing as it streams, and stops at `limit`
    bytes of decoded content: a small gzip bomb cannot grow past the cap."""

    def __init__(self, encoding: str, limit: int):
        self.limit = limit
        self.buffer = bytearray()
        self.truncated = False
        self._raw_deflate_tried = False
        encoding = encoding.strip().lower()
        if encoding in ("", "identity"):
            self._decoder = None
        elif encoding in ("gzip", "x-gzip"):
            self._decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._decoder = zlib.decompressobj(zlib.MAX_WBITS)
        else:
            raise ValueError(f"unsupported content-encoding {encoding!r}")
        self._deflate = encoding == "deflate"

    def feed(self, chunk: bytes) -> bool:
        """Add raw bytes; False once the cap is reached (stop reading)."""
        if self._decoder is None:
            return self._append(chunk)
        room = self.limit - len(self.buffer) + 1
        try:
            out = self._decoder.decompress(chunk, room)
        except zlib.error:
            if not (self._deflate and not self._raw_deflate_tried and not self.buffer):
                raise
            # "deflate" is often sent as a raw deflate stream without the zlib header.
            self._raw_deflate_tried = True
            self._decoder = zlib.decompressobj(-zlib.MAX_WBITS)
            out = self._decoder.decompress(chunk, room)
        return self._append(out)  # `room` is one past the cap: a full `out` is over it

    def _append(self, data: bytes) -> bool:
        room = self.limit - len(self.buffer)
        if len(data) > room:
            self.buffer += data[:room]
            self.truncated = True
            return False
        self.buffer += data
        return True


def gunzip_capped(content: bytes, limit: int) -> tuple[bytes, bool]:
    """Decompress a gzip body the server did not announce; (bytes, truncated).
    Not gzip, or corrupt gzip: the bytes come back unchanged."""
    if content[:2] != b"\x1f\x8b":
        return content, False
    body = CappedBody("gzip", limit)
    try:
        body.feed(content)
    except zlib.error:
        return content, False
    return bytes(body.buffer), body.truncated


def maybe_gunzip(content: bytes, limit: int = 15_000_000) -> bytes:
    """Some servers send gzip without saying so: the bytes tell."""
    return gunzip_capped(content, limit)[0]


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds from now: a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


# --------------------------------------------------------------------------- politeness


class HostLimiter:
    """At most `limit` requests in flight per host, across all worker threads."""

    def __init__(self, limit: int):
        self.limit = limit
        self._lock = threading.Lock()
        self._slots: dict[str, threading.BoundedSemaphore] = {}

    @contextmanager
    def slot(self, host: str) -> Iterator[None]:
        with self._lock:
            semaphore = self._slots.setdefault(host, threading.BoundedSemaphore(self.limit))
        with semaphore:
            yield


@dataclass
class RobotsVerdict:
    allowed: bool
    reason: str | None = None  # why not
    transient: bool = False  # robots.txt was unreachable: try the page later
    refused: bool = False


class RobotsCache:
    """robots.txt per origin, fetched once per run through the safe fetcher.

    RFC 9309: a 4xx robots.txt means no rules; an unreachable one (5xx, network
    error) means the whole site is disallowed for now, which here is a transient
    failure, so the page is tried again on a later run."""

    def __init__(self, fetcher: Fetcher):
        self.fetcher = fetcher
        self._lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._cache: dict[str, RobotFileParser | RobotsVerdict] = {}

    def verdict(self, url: str) -> RobotsVerdict:
        parts = urlsplit(url)
        origin = f"{parts.scheme.lower()}://{parts.netloc.lower()}"
        with self._lock:
            origin_lock = self._locks.setdefault(origin, threading.Lock())
        with origin_lock:  # one fetch per origin; other threads wait for it
            if origin not in self._cache:
                self._cache[origin] = self._load(origin)
        rules = self._cache[origin]
        if isinstance(rules, RobotsVerdict):
            return rules
        if rules.can_fetch(self.fetcher.settings.user_agent, url):
            return RobotsVerdict(True)
        return RobotsVerdict(False, f"robots.txt disallows {url}")

    def _load(self, origin: str) -> RobotFileParser | RobotsVerdict:
        result = self.fetcher.get(f"{origin}/robots.txt", limit=ROBOTS_MAX_BYTES)
        parser = RobotFileParser()
        if result.refused:
            return RobotsVerdict(False, result.error, refused=True)
        if result.status is not None and 400 <= result.status < 500 and not result.transient:
            parser.parse([])  # no robots.txt: everything is allowed
            return parser
        if not result.ok:
            return RobotsVerdict(
                False, f"robots.txt unreachable ({result.error}): retry later", transient=True
            )
        parser.parse(result.content.decode("utf-8", errors="replace").splitlines())
        return parser


# --------------------------------------------------------------------------- the fetcher


class Fetcher:
    """One shared httpx client with the newsroom's limits. Thread-safe.

    `resolver` replaces DNS (tests map invented host names to loopback with it);
    the address guard still checks whatever it returns."""

    def __init__(self, settings: IngestSettings, *, resolver: Resolver | None = None):
        self.settings = settings
        self.policy = AddressPolicy(settings.allow_private)
        self.client = httpx.Client(
            transport=GuardedTransport(self.policy, resolver or system_resolver),
            follow_redirects=False,
            trust_env=False,  # a proxy from the environment would bypass the guard
            timeout=httpx.Timeout(settings.timeout_seconds, connect=settings.connect_timeout),
            headers={"User-Agent": settings.user_agent, "Accept-Encoding": "gzip, deflate"},
        )
        self.hosts = HostLimiter(settings.per_host_concurrency)
        self.robots = RobotsCache(self)

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_page(self, url: str) -> FetchResult:
        """A page for an article: like `get`, and robots.txt decides first when
        `ingest.respect_robots` is on."""
        return self.get(url, robots=self.settings.respect_robots)

    def get(
        self,
        url: str,
        headers: dict[str, str] | None = None,
        *,
        robots: bool = False,
        limit: int | None = None,
    ) -> FetchResult:
        """GET with manual redirects so every hop is checked. Never raises for a
        network or HTTP problem: the result says what happened."""
        current = url
        redirects: list[str] = []
        deadline = time.monotonic() + self.settings.timeout_seconds
        for _hop in range(self.settings.max_redirects + 1):
            early = self._precheck(url, current, robots)
            if early is not None:
                early.redirects = redirects
                return early
            result = self._get_once(url, current, headers or {}, deadline, limit)
            result.redirects = redirects
            location = result.headers.get("location")
            if result.status in REDIRECTS and location and result.error is None:
                try:
                    current = urljoin(current, location.strip())
                except ValueError:
                    result.error = f"invalid redirect location {location!r}"
                    return result
                redirects.append(current)
                continue
            return result
        return FetchResult(
            url,
            current,
            error=f"more than {self.settings.max_redirects} redirects",
            redirects=redirects,
        )

    def _precheck(self, url: str, current: str, robots: bool) -> FetchResult | None:
        """Refusals that need no request to the page: scheme, then robots.txt."""
        try:
            parts = urlsplit(current)
            host = parts.hostname
        except ValueError as exc:
            return FetchResult(url, current, error=f"invalid URL: {exc}")
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            why = f"scheme {scheme or 'none'!r} is not fetched (http and https only)"
            return FetchResult(url, current, error=f"refused: {why}", refused=True)
        if not host:
            return FetchResult(url, current, error="refused: URL has no host", refused=True)
        if robots:
            verdict = self.robots.verdict(current)
            if not verdict.allowed:
                return FetchResult(
                    url,
                    current,
                    error=verdict.reason,
                    transient=verdict.transient,
                    refused=verdict.refused,
                    disallowed=not (verdict.transient or verdict.refused),
                )
        return None

    def _get_once(
        self,
        url: str,
        current: str,
        headers: dict[str, str],
        deadline: float,
        limit: int | None,
    ) -> FetchResult:
        host = (urlsplit(current).hostname or "").lower()
        try:
            with self.hosts.slot(host):
                return self._stream(
                    url, current, headers, deadline, limit or self.settings.max_bytes
                )
        except Refused as exc:
            return FetchResult(url, current, error=f"refused: {exc}", refused=True)
        except httpx.TimeoutException as exc:
            return FetchResult(url, current, error=f"timeout: {type(exc).__name__}", transient=True)
        except _Deadline:
            took = self.settings.timeout_seconds
            return FetchResult(url, current, error=f"timeout: over {took:g}s", transient=True)
        except (httpx.InvalidURL, httpx.UnsupportedProtocol, httpx.LocalProtocolError) as exc:
            return FetchResult(url, current, error=f"invalid request: {exc}")
        except httpx.TransportError as exc:
            return FetchResult(url, current, error=f"network error: {exc}", transient=True)
        except (ValueError, UnicodeError, zlib.error) as exc:
            return FetchResult(url, current, error=f"unreadable response: {exc}")

    def _stream(
        self, url: str, current: str, headers: dict[str, str], deadline: float, limit: int
    ) -> FetchResult:
        with self.client.stream("GET", current, headers=headers) as response:
            result = FetchResult(
                url,
                current,
                status=response.status_code,
                headers={k.lower(): v for k, v in response.headers.items()},
            )
            status = response.status_code
            if (status in REDIRECTS and "location" in result.headers) or status == 304:
                return result
            if status >= 300:
                result.error = f"HTTP {status}"
                result.transient = status in TRANSIENT_STATUSES or status >= 500
                result.retry_after = retry_after_seconds(result.headers.get("retry-after"))
                return result  # the body of an error page is not read
            body = CappedBody(result.headers.get("content-encoding", ""), limit)
            for chunk in response.iter_raw():
                if time.monotonic() > deadline:
                    raise _Deadline
                if not body.feed(chunk):
                    break
        content, truncated = gunzip_capped(bytes(body.buffer), limit)
        result.content = content
        result.truncated = body.truncated or truncated
        return result


class _Deadline(Exception):
    """The total time for one request ran out while the body was still arriving."""


# --------------------------------------------------------------------------- local files


def read_local(path: str) -> FetchResult:
    """A feed given as a local file (or file: URL) in config: read it, no network.
    Only for feeds the operator declared; entry links are never read this way."""
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
