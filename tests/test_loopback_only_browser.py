"""The browser tests' Chromium reaches the loopback review server and nothing else
(tests/browser.py: Chromium sends every other request to a proxy that refuses it).
The page is asked to fetch from a server of this test on the machine's own network
address, which it could reach if anything but loopback were allowed."""

from __future__ import annotations

import fcntl
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.browser import chromium, new_page, queue_of, serve

pytestmark = pytest.mark.browser

# fetch() settles with the page's verdict: "reached" (any answer, opaque or not) or
# "refused" (a network error), never an exception in the test.
_FETCH = """async (url) => {
  try { await fetch(url, {mode: "no-cors", cache: "no-store"}); return "reached"; }
  catch (error) { return "refused"; }
}"""


def _own_address() -> str:
    """The machine's IPv4 address on a network interface that is not loopback (read
    with the SIOCGIFADDR ioctl, netdevice(7): nothing is sent)."""
    siocgifaddr = 0x8915
    for _, name in socket.if_nameindex():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                request = struct.pack("256s", name[:15].encode())
                packed = fcntl.ioctl(probe.fileno(), siocgifaddr, request)
            except OSError:  # no IPv4 address on this interface
                continue
        address = socket.inet_ntoa(packed[20:24])
        if not address.startswith("127."):
            return address
    pytest.skip("this machine has no network address but loopback")


class _Counted(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        self.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@contextmanager
def _server_on(address: str) -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []
    handler = type("Handler", (_Counted,), {"hits": hits})
    server = ThreadingHTTPServer((address, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{address}:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_reaches_the_review_server_and_nothing_else(tmp_path: Path, sqlite_url: str) -> None:
    from playwright.sync_api import expect

    with (
        serve(tmp_path, sqlite_url, queue_of("bridge")) as server,
        _server_on(_own_address()) as (elsewhere, hits),
        chromium() as browser,
    ):
        page = new_page(browser, server)
        page.goto(server.base)
        expect(page.get_by_role("button", name="Sign in")).to_be_visible()
        assert page.evaluate(_FETCH, f"{server.base}/_stcore/health") == "reached"
        assert page.evaluate(_FETCH, f"{elsewhere}/tracker.gif") == "refused"
        assert page.evaluate(_FETCH, "http://news.example.org/tracker.gif") == "refused"
    assert hits == []
