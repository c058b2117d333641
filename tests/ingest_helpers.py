"""Shared pieces for the ingestion tests: the loopback-only rule, the shared
corpora, invented host names that resolve to loopback, and a threaded loopback
server that counts requests in flight per host.

The loopback-only rule (`loopback_only`) refuses, inside a test, any socket
connection to an address that is not loopback and any name lookup other than
`localhost`: a test that tries to reach the internet fails at once instead of
depending on it.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug.wrappers import Request, Response

from ingest.settings import IngestSettings

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
LOOPBACK_ALLOW = ["127.0.0.0/8", "::1/128"]


# --------------------------------------------------------------------------- loopback only


class NetworkRefused(OSError):
    """A test tried to leave the machine."""


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    return True


def _is_loopback(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def install_loopback_only(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object]]:
    """Patch socket connect and name resolution; returns the list of refused attempts."""
    refused: list[tuple[str, object]] = []
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def check(sock: socket.socket, address: object) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0] if isinstance(address, tuple) else address
            if not _is_loopback(host):
                refused.append(("connect", address))
                raise NetworkRefused(f"tests may only connect to loopback, not {address!r}")

    def connect(self: socket.socket, address: object) -> None:
        check(self, address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: object) -> int:
        check(self, address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> list:  # type: ignore[type-arg]
        name = host.decode() if isinstance(host, bytes) else host
        if name is not None and not (_is_literal(name) or _is_loopback(name)):
            refused.append(("resolve", host))
            raise socket.gaierror(
                socket.EAI_NONAME, f"tests resolve no names but localhost: {host!r}"
            )
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return refused


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object]]:
    return install_loopback_only(monkeypatch)


@contextmanager
def logging_restored() -> Iterator[None]:
    """`copydesk`'s CLI points the root logger at the stderr of the moment, which
    CliRunner closes after each invoke; put the handlers back afterwards so later
    tests do not log into a closed stream."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


# --------------------------------------------------------------------------- corpora


def corpora() -> Path:
    """`../shared/corpora` beside the repository; skipped when absent, except in CI
    (env CI set), where its absence is a failure."""
    if CORPORA.is_dir():
        return CORPORA
    message = f"the shared corpora are not at {CORPORA} (a copy of shared/ beside the repo)"
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def feed_files(root: Path) -> list[Path]:
    """Every feed file of both feed corpora: XML, and JSON Feed (not feed-rs's
    `*.serde.json` expected outputs)."""
    feeds = root / "feeds"
    files = [
        p
        for p in feeds.rglob("*")
        if p.is_file()
        and (p.suffix == ".xml" or (p.suffix == ".json" and not p.name.endswith(".serde.json")))
    ]
    return sorted(files)


# --------------------------------------------------------------------------- settings and names


def ingest_settings(**overrides: object) -> IngestSettings:
    values: dict[str, object] = {"allow_private": LOOPBACK_ALLOW, "respect_robots": False}
    values.update(overrides)
    return IngestSettings.model_validate(values)


def resolver_for(
    mapping: dict[str, str], default: str | None = None
) -> Callable[[str, int], list[str]]:
    """A DNS stand-in: invented host names to addresses (usually 127.0.0.1)."""

    def resolve(host: str, port: int) -> list[str]:
        if host in mapping:
            return [mapping[host]]
        if default is not None:
            return [default]
        raise socket.gaierror(socket.EAI_NONAME, f"unknown test host {host}")

    return resolve


# --------------------------------------------------------------------------- a threaded server


class InFlight:
    """Counts requests in flight per Host header, and the most ever seen at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.total_peak = 0
        self.requests: Counter[str] = Counter()

    def wrap(
        self, handler: Callable[[Request], Response], hold: float = 0.0
    ) -> Callable[[Request], Response]:
        def counted(request: Request) -> Response:
            host = (request.host or "").split(":")[0]
            with self._lock:
                self.now[host] += 1
                self.requests[host] += 1
                self.peak[host] = max(self.peak[host], self.now[host])
                self.total_peak = max(self.total_peak, sum(self.now.values()))
            try:
                if hold:
                    time.sleep(hold)
                return handler(request)
            finally:
                with self._lock:
                    self.now[host] -= 1

        return counted


def serve_threaded() -> Iterator[HTTPServer]:
    """A loopback server answering requests in parallel (pytest-httpserver's own
    fixture answers one at a time); use it from a fixture with `yield from`."""
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    try:
        yield server
    finally:
        server.clear()
        if server.is_running():
            server.stop()


# --------------------------------------------------------------------------- a "public" server


PUBLIC_LOOKING = "127.0.0.5"


def serve_as_public(monkeypatch: pytest.MonkeyPatch) -> Iterator[HTTPServer]:
    """A loopback server on 127.0.0.5 that the address guard takes for a public
    address: the only way to have a public server in tests that reach loopback
    only. Use it from a fixture with `yield from`."""
    from ingest import fetch

    real = fetch.is_public_address
    public = ipaddress.ip_address(PUBLIC_LOOKING)
    monkeypatch.setattr(fetch, "is_public_address", lambda ip: ip == public or real(ip))
    try:
        server = HTTPServer(host=PUBLIC_LOOKING, port=0)
        server.start()
    except OSError as exc:
        pytest.skip(f"cannot listen on {PUBLIC_LOOKING} here: {exc}")
    try:
        yield server
    finally:
        server.clear()
        if server.is_running():
            server.stop()
