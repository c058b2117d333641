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
- a connect timeout, and a wall-clock total per fetch that no phase can outrun:
  name resolution (in a thread the fetch stops waiting for), connect, sending,
  every header and body read, on every redirect hop and the robots.txt fetch,
  each gets at most the time that is left (waiting for a per-host slot is our
  own queue, not the server's time, and does not count);
- private addresses only for fetches the operator vouches for (`trusted`: a
  configured feed, an editor's `submit`, a page linked from an allow-listed
  intranet feed), through a separate connection pool, and never after a hop that
  a public address served: a public page cannot redirect into the intranet;
- a size cap applied while streaming, after decompression (a 50 MB page or a
  gzip bomb is never held in memory: the body is cut off and marked truncated);
- gzip and deflate, and gzip that the server did not announce (bytes `1f 8b`);
- at most `per_host_concurrency` requests in flight per host, shared by threads,
  and no two requests to a host closer together than its robots.txt `Crawl-delay`;
- robots.txt for page fetches (read by `protego`, the parser Scrapy uses: the
  standard library's `urllib.robotparser` ignores `*` and `$` in rules and cannot
  apply `Crawl-delay`), fetched through this same fetcher, cached per run.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx
from protego import Protego

from ingest.settings import IngestSettings

XML_SUFFIXES = frozenset({".xml", ".rss", ".atom", ".rdf"})
REDIRECTS = frozenset({301, 302, 303, 307, 308})
TRANSIENT_STATUSES = frozenset({408, 425, 429})  # and every 5xx
ROBOTS_MAX_BYTES = 512_000  # RFC 9309 asks parsers to read at least 500 KiB
# The longest Crawl-delay honoured: a robots.txt asking for more gets this much, so
# one site cannot hold a worker for an hour (the wait is not counted in a fetch's time).
MAX_CRAWL_DELAY = 30.0
NAT64 = ipaddress.ip_network("64:ff9b::/96")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]  # (host, port) -> IP addresses as text


class Refused(Exception):
    """The URL may not be fetched (scheme, private address): no request was sent.
    `private`: refused for its address, which the allow-list could let through."""

    def __init__(self, message: str, *, private: bool = False):
        super().__init__(message)
        self.private = private


# Said after a fetch the operator vouches for (a configured feed, `copydesk submit`)
# was refused for its address: the one setting that lets it through.
ALLOW_PRIVATE_HINT = (
    "to fetch it, add the host or its network to [ingest] allow_private in config.toml"
)


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
    served_privately: bool = False  # by an allow-listed, non-public address

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
        if ip.is_site_local:  # fec0::/10: deprecated, but still routed inside some sites
            return False
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified)


# What a host-name entry of the allow-list vouches for: that host at a private or
# loopback address. Link-local (169.254/16, fe80::/10: cloud metadata services),
# multicast, unspecified and reserved addresses need a network entry of their own.
NAMED_HOST_NETWORKS = tuple(
    ipaddress.ip_network(n)
    for n in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "::1/128",
        "fc00::/7",
    )
)


def _forms(ip: Address) -> list[Address]:
    """The address, and the IPv4 address it carries if it is an IPv6 wrapping."""
    inner = _embedded_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) else None
    return [ip] if inner is None else [ip, inner]


def _within(ip: Address, networks: Iterable[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> bool:
    return any(c in net for c in _forms(ip) for net in networks if c.version == net.version)


def _intranet(ip: Address) -> bool:
    """A loopback or private-network address: one an operator may vouch for with the
    allow-list. Link-local (cloud metadata services) and the rest never get the hint."""
    return (ip.is_loopback or ip.is_private) and not ip.is_link_local


class AddressPolicy:
    """Which hosts may be connected to: public addresses, plus the allow-list
    (`ingest.allow_private`): networks in CIDR notation (any address inside them),
    and host names (that host at a private or loopback address; see
    NAMED_HOST_NETWORKS)."""

    def __init__(self, allow: list[str]):
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self.hosts: set[str] = set()
        for entry in allow:
            try:
                self.networks.append(ipaddress.ip_network(entry.strip(), strict=False))
            except ValueError:
                self.hosts.add(entry.strip().lower().rstrip("."))

    def address_allowed(self, ip: Address, host: str | None = None) -> bool:
        if is_public_address(ip) or _within(ip, self.networks):
            return True
        return host in self.hosts and _within(ip, NAMED_HOST_NETWORKS)

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
                raise Refused(f"address {literal} is not public", private=_intranet(literal))
            return [name]
        try:
            addresses = resolver(name, port)
        except (OSError, UnicodeError) as exc:
            raise httpcore.ConnectError(f"host {name} cannot be resolved: {exc}") from None
        if not addresses:
            raise httpcore.ConnectError(f"host {name} has no address")
        for text in addresses:
            ip = ipaddress.ip_address(text.split("%")[0])
            if not self.address_allowed(ip, name):
                raise Refused(
                    f"host {name} resolves to non-public address {ip}", private=_intranet(ip)
                )
        return addresses

    def vouches_for(self, host: str, resolver: Resolver) -> bool:
        """Whether the allow-list covers `host` itself (a feed on the intranet):
        listed by name, or every address it resolves to inside a listed network."""
        name = host.lower().rstrip(".").strip("[]")
        if name in self.hosts:
            return True
        if not self.networks:
            return False
        try:
            literal = ipaddress.ip_address(name.split("%")[0])
            addresses = [literal]
        except ValueError:
            try:
                addresses = [ipaddress.ip_address(a.split("%")[0]) for a in resolver(name, 0)]
            except (OSError, UnicodeError, ValueError, httpcore.TimeoutException):
                return False
        return bool(addresses) and all(_within(ip, self.networks) for ip in addresses)


def system_resolver(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for `host`, in its order, once each."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: dict[str, None] = {}
    for info in infos:
        seen.setdefault(str(info[4][0]), None)
    return list(seen)


def resolve_within(resolver: Resolver, host: str, port: int, timeout: float) -> list[str]:
    """`resolver(host, port)`, waiting at most `timeout` seconds. getaddrinfo takes
    no timeout and cannot be interrupted, so it runs in a daemon thread that the
    fetch stops waiting for; the lookup ends in the background on its own."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def lookup() -> None:
        try:
            box["addresses"] = resolver(host, port)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=lookup, name=f"resolve {host}", daemon=True).start()
    if not done.wait(max(0.0, timeout)):
        raise httpcore.ConnectTimeout(f"resolving {host} took over {timeout:.2g}s")
    if "error" in box:
        raise box["error"]
    return box["addresses"]


# --------------------------------------------------------------------------- the time budget


class _Budget:
    """The wall-clock time one fetch may still take, robots.txt and redirects
    included. Held per thread while a fetch runs (httpx's sync client does all its
    I/O on the calling thread), so the network layer below httpx can clamp every
    resolution, connect, read and write to what is left."""

    def __init__(self, seconds: float):
        self.total = seconds
        self.deadline = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0

    def clamp(self, timeout: float | None, out_of_time: type[Exception]) -> float:
        """`timeout`, or less if the fetch has less left; raises when none is left."""
        left = self.remaining()
        if left <= 0:
            raise out_of_time(f"total time of {self.total:g}s used up")
        return left if timeout is None else min(timeout, left)


_local = threading.local()


def _budget() -> _Budget | None:
    return getattr(_local, "budget", None)


def _clamp(timeout: float | None, out_of_time: type[Exception]) -> float | None:
    budget = _budget()
    return timeout if budget is None else budget.clamp(timeout, out_of_time)


@contextmanager
def _not_counted() -> Iterator[None]:
    """Time spent waiting in our own queues (a host's politeness slot, another
    thread's robots.txt fetch) is not the server's: the fetch gets it back."""
    start = time.monotonic()
    try:
        yield
    finally:
        budget = _budget()
        if budget is not None:
            budget.deadline += time.monotonic() - start


class BudgetedStream(httpcore.NetworkStream):
    """A connection whose every read and write waits at most the time the current
    fetch has left: a server that trickles its headers a byte at a time cannot hold
    a fetch past its total."""

    def __init__(self, inner: httpcore.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _clamp(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        timeout = _clamp(timeout, httpcore.ConnectTimeout)
        return BudgetedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


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
        def resolve(name: str, number: int) -> list[str]:
            wait = _clamp(timeout, httpcore.ConnectTimeout)
            if wait is None:
                return self.resolver(name, number)
            return resolve_within(self.resolver, name, number, wait)

        addresses = self.policy.checked_addresses(host, port, resolve)
        last: Exception | None = None
        for address in addresses:  # connect to the checked address, never re-resolve
            try:
                stream = self._inner.connect_tcp(
                    address,
                    port,
                    _clamp(timeout, httpcore.ConnectTimeout),
                    local_address,
                    socket_options or [],
                )
                return BudgetedStream(stream)
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
    after construction; tests/test_fetch.py proves the guard is in force.

    `ssl_context` verifies TLS for both pools, httpx's and the guard's: a context
    given as `verify` is used as it is (https://www.python-httpx.org/advanced/ssl/:
    "you can pass an SSL Context instance", `httpx.Client(verify=ctx)`), so the
    certificate bundle is read once, not once a pool (issue 24: about 18 ms of CPU
    each)."""

    def __init__(self, policy: AddressPolicy, resolver: Resolver, ssl_context: ssl.SSLContext):
        super().__init__(verify=ssl_context, trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context,
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
    """At most `limit` requests in flight per host, across all worker threads, and,
    for a host whose robots.txt asks for it, at least `Crawl-delay` seconds between
    the starts of two requests to it (a start time is reserved under the lock, so
    threads queue up at the interval instead of all waking at once)."""

    def __init__(self, limit: int):
        self.limit = limit
        self._lock = threading.Lock()
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._delays: dict[str, float] = {}
        self._last_start: dict[str, float] = {}

    def set_delay(self, host: str, seconds: float) -> None:
        """The host's Crawl-delay, capped at MAX_CRAWL_DELAY."""
        with self._lock:
            self._delays[host] = min(max(0.0, seconds), MAX_CRAWL_DELAY)

    def _reserve_start(self, host: str) -> float:
        """Seconds to wait before this request may start."""
        with self._lock:
            now = time.monotonic()
            start = max(now, self._last_start.get(host, -1e9) + self._delays.get(host, 0.0))
            self._last_start[host] = start
            return start - now

    @contextmanager
    def slot(self, host: str) -> Iterator[None]:
        with self._lock:
            semaphore = self._slots.setdefault(host, threading.BoundedSemaphore(self.limit))
        with _not_counted():
            semaphore.acquire()
        try:
            with _not_counted():
                wait = self._reserve_start(host)
                if wait > 0:
                    time.sleep(wait)
            yield
        finally:
            semaphore.release()


@dataclass
class RobotsVerdict:
    allowed: bool
    reason: str | None = None  # why not
    transient: bool = False  # robots.txt was unreachable: try the page later
    refused: bool = False


class RobotsCache:
    """robots.txt per origin, fetched once per run through the safe fetcher, with
    the trust of the page that asks (an untrusted page never learns, nor spoils,
    what a trusted fetch of the same origin found).

    RFC 9309: a 4xx robots.txt means no rules; an unreachable one (5xx, network
    error) means the whole site is disallowed for now, which here is a transient
    failure, so the page is tried again on a later run."""

    def __init__(self, fetcher: Fetcher):
        self.fetcher = fetcher
        self._lock = threading.Lock()
        self._locks: dict[tuple[str, bool], threading.Lock] = {}
        self._cache: dict[tuple[str, bool], Protego | RobotsVerdict] = {}

    def verdict(self, url: str, *, trusted: bool = False) -> RobotsVerdict:
        parts = urlsplit(url)
        key = (f"{parts.scheme.lower()}://{parts.netloc.lower()}", trusted)
        with self._lock:
            origin_lock = self._locks.setdefault(key, threading.Lock())
        with _not_counted():  # one fetch per origin; other threads wait for it
            origin_lock.acquire()
        try:
            if key not in self._cache:
                self._cache[key] = self._load(*key)
        finally:
            origin_lock.release()
        rules = self._cache[key]
        if isinstance(rules, RobotsVerdict):
            return rules
        if rules.can_fetch(url, self.fetcher.settings.user_agent):
            return RobotsVerdict(True)
        return RobotsVerdict(False, f"robots.txt disallows {url}")

    def _load(self, origin: str, trusted: bool) -> Protego | RobotsVerdict:
        result = self.fetcher.get(f"{origin}/robots.txt", limit=ROBOTS_MAX_BYTES, trusted=trusted)
        if result.refused:
            return RobotsVerdict(False, result.error, refused=True)
        if result.status is not None and 400 <= result.status < 500 and not result.transient:
            return Protego.parse("")  # no robots.txt: everything is allowed
        if not result.ok:
            return RobotsVerdict(
                False, f"robots.txt unreachable ({result.error}): retry later", transient=True
            )
        rules = Protego.parse(result.content.decode("utf-8", errors="replace"))
        delay = rules.crawl_delay(self.fetcher.settings.user_agent)
        if delay:
            self.fetcher.hosts.set_delay((urlsplit(origin).hostname or "").lower(), float(delay))
        return rules


# --------------------------------------------------------------------------- the fetcher


class Fetcher:
    """Shared httpx clients with the newsroom's limits. Thread-safe.

    Two connection pools: one that reaches public addresses only, for everything
    by default, and one that may also reach the allow-list (`ingest.allow_private`),
    for fetches the operator vouches for (`trusted=True`). Separate pools, so that
    a kept-alive connection to an intranet host can never serve an untrusted fetch.

    `resolver` replaces DNS (tests map invented host names to loopback with it);
    the address guard still checks whatever it returns."""

    def __init__(self, settings: IngestSettings, *, resolver: Resolver | None = None):
        self.settings = settings
        self.resolver = resolver or system_resolver
        self.policy = AddressPolicy(settings.allow_private)
        # One TLS context for both pools: read once, it verifies as httpx's default
        # does (certifi's bundle; trust_env=False: no SSL_CERT_FILE from the environment).
        context = httpx.create_ssl_context(trust_env=False)
        self.public = self._client(AddressPolicy([]), context)
        self.trusted = self._client(self.policy, context)
        self.hosts = HostLimiter(settings.per_host_concurrency)
        self.robots = RobotsCache(self)
        self._vouched: dict[str, bool] = {}
        self._vouched_lock = threading.Lock()

    def _client(self, policy: AddressPolicy, ssl_context: ssl.SSLContext) -> httpx.Client:
        return httpx.Client(
            transport=GuardedTransport(policy, self.resolver, ssl_context),
            follow_redirects=False,
            trust_env=False,  # a proxy from the environment would bypass the guard
            timeout=httpx.Timeout(
                self.settings.timeout_seconds, connect=self.settings.connect_timeout
            ),
            headers={
                "User-Agent": self.settings.user_agent,
                "Accept-Encoding": "gzip, deflate",
            },
        )

    def close(self) -> None:
        self.public.close()
        self.trusted.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def vouches_for(self, url: str) -> bool:
        """Whether the allow-list covers the host of `url` itself (an intranet
        feed): then the pages it links may be fetched `trusted`. Cached per host;
        a host that cannot be resolved in time is not vouched for."""
        try:
            host = (urlsplit(url).hostname or "").lower()
        except ValueError:
            return False
        if not host:
            return False
        with self._vouched_lock:
            known = self._vouched.get(host)
        if known is None:

            def resolve(name: str, port: int) -> list[str]:
                return resolve_within(self.resolver, name, port, self.settings.connect_timeout)

            known = self.policy.vouches_for(host, resolve)
            with self._vouched_lock:
                self._vouched[host] = known
        return known

    def get_page(self, url: str, *, trusted: bool = False) -> FetchResult:
        """A page for an article: like `get`, and robots.txt decides first when
        `ingest.respect_robots` is on."""
        return self.get(
            url,
            robots=self.settings.respect_robots,
            trusted=trusted,
            limit=self.settings.max_page_bytes,
        )

    def get(
        self,
        url: str,
        headers: dict[str, str] | None = None,
        *,
        robots: bool = False,
        limit: int | None = None,
        trusted: bool = False,
    ) -> FetchResult:
        """GET with manual redirects so every hop is checked, within one total time
        (`ingest.timeout_seconds`) for everything. Never raises for a network or
        HTTP problem: the result says what happened.

        `trusted`: the operator vouches for this URL (a configured feed, an editor's
        tip, a page of an allow-listed intranet feed), so the allow-list applies.
        The trust ends at the first hop a public address served: what a public
        page redirects to is fetched as untrusted."""
        outer = _budget()
        budget = outer or _Budget(self.settings.timeout_seconds)  # robots.txt shares it
        _local.budget = budget
        try:
            return self._follow(url, headers or {}, robots, limit, trusted, budget)
        finally:
            _local.budget = outer

    def _follow(
        self,
        url: str,
        headers: dict[str, str],
        robots: bool,
        limit: int | None,
        trusted: bool,
        budget: _Budget,
    ) -> FetchResult:
        current = url
        redirects: list[str] = []
        for _hop in range(self.settings.max_redirects + 1):
            if budget.expired:
                return _timed_out(url, current, budget, redirects)
            early = self._precheck(url, current, robots, trusted)
            if early is not None:
                early.redirects = redirects
                return early
            result = self._get_once(url, current, headers, budget, limit, trusted)
            result.redirects = redirects
            location = result.headers.get("location")
            if result.status in REDIRECTS and location and result.error is None:
                try:
                    current = urljoin(current, location.strip())
                except ValueError:
                    result.error = f"invalid redirect location {location!r}"
                    return result
                redirects.append(current)
                trusted = trusted and result.served_privately
                continue
            return result
        return FetchResult(
            url,
            current,
            error=f"more than {self.settings.max_redirects} redirects",
            redirects=redirects,
        )

    def _precheck(self, url: str, current: str, robots: bool, trusted: bool) -> FetchResult | None:
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
            verdict = self.robots.verdict(current, trusted=trusted)
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
        budget: _Budget,
        limit: int | None,
        trusted: bool,
    ) -> FetchResult:
        host = (urlsplit(current).hostname or "").lower()
        client = self.trusted if trusted else self.public
        try:
            with self.hosts.slot(host):
                return self._stream(
                    client, url, current, headers, budget, limit or self.settings.max_bytes
                )
        except Refused as exc:
            why = f"refused: {exc}"
            if trusted and exc.private:
                why += f" ({ALLOW_PRIVATE_HINT})"
            return FetchResult(url, current, error=why, refused=True)
        except (httpx.TimeoutException, httpcore.TimeoutException, _Deadline) as exc:
            if budget.expired:
                return _timed_out(url, current, budget)
            return FetchResult(url, current, error=f"timeout: {type(exc).__name__}", transient=True)
        except (httpx.InvalidURL, httpx.UnsupportedProtocol, httpx.LocalProtocolError) as exc:
            return FetchResult(url, current, error=f"invalid request: {exc}")
        except httpx.TransportError as exc:
            return FetchResult(url, current, error=f"network error: {exc}", transient=True)
        except (ValueError, UnicodeError, zlib.error) as exc:
            return FetchResult(url, current, error=f"unreadable response: {exc}")

    def _stream(
        self,
        client: httpx.Client,
        url: str,
        current: str,
        headers: dict[str, str],
        budget: _Budget,
        limit: int,
    ) -> FetchResult:
        left = budget.clamp(None, _Deadline)
        timeout = httpx.Timeout(left, connect=min(self.settings.connect_timeout, left))
        with client.stream("GET", current, headers=headers, timeout=timeout) as response:
            result = FetchResult(
                url,
                current,
                status=response.status_code,
                headers={k.lower(): v for k, v in response.headers.items()},
                served_privately=_served_privately(response),
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
                if budget.expired:
                    raise _Deadline
                if not body.feed(chunk):
                    break
        content, truncated = gunzip_capped(bytes(body.buffer), limit)
        result.content = content
        result.truncated = body.truncated or truncated
        return result


class _Deadline(Exception):
    """The total time for one fetch ran out."""


def _timed_out(
    url: str, current: str, budget: _Budget, redirects: list[str] | None = None
) -> FetchResult:
    return FetchResult(
        url,
        current,
        error=f"timeout: over {budget.total:g}s",
        transient=True,
        redirects=redirects or [],
    )


def _served_privately(response: httpx.Response) -> bool:
    """Whether the connection that served `response` went to a non-public address
    (one the allow-list let through). Unknown counts as public: trust ends."""
    stream = response.extensions.get("network_stream")
    try:
        peer = stream.get_extra_info("server_addr") if stream is not None else None
        return peer is not None and not is_public_address(ipaddress.ip_address(peer[0]))
    except (ValueError, TypeError, IndexError, OSError):
        return False


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
