"""The safe fetcher against a real loopback server: the address guard at connect
time (and on every redirect), schemes, the size cap while streaming, gzip and
deflate, timeouts, HTTP errors, per-host politeness and robots.txt."""

from __future__ import annotations

import gzip
import ipaddress
import re
import subprocess
import sys
import threading
import time
import tracemalloc
import zlib
from concurrent.futures import ThreadPoolExecutor

import pytest
from pytest_httpserver import HTTPServer
from werkzeug.wrappers import Request, Response

from ingest.fetch import (
    MAX_CRAWL_DELAY,
    AddressPolicy,
    CappedBody,
    Fetcher,
    HostLimiter,
    Refused,
    gunzip_capped,
    is_public_address,
    retry_after_seconds,
)
from tests.ingest_helpers import (
    InFlight,
    ingest_settings,
    install_loopback_only,
    resolver_for,
    serve_as_public,
    serve_threaded,
)


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch):
    return install_loopback_only(monkeypatch)


@pytest.fixture
def threaded_server():
    yield from serve_threaded()


def by_ip(httpserver, path: str) -> str:
    return f"http://127.0.0.1:{httpserver.port}{path}"


# --------------------------------------------------------------------------- the guard, pure


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.8.9.10",
        "10.1.2.3",
        "172.16.0.9",
        "192.168.1.1",
        "169.254.169.254",  # cloud metadata
        "100.64.0.1",  # carrier-grade NAT
        "0.0.0.0",  # noqa: S104 - an address to refuse, not to bind
        "224.0.0.1",
        "239.255.255.250",
        "255.255.255.255",
        "192.0.2.7",  # documentation
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "fd12:3456::1",
        "ff02::1",
        "ff0e::1",  # global-scope multicast is still multicast
        "::ffff:127.0.0.1",  # IPv4-mapped loopback
        "::ffff:169.254.169.254",
        "::ffff:10.0.0.1",
        "2002:7f00:1::1",  # 6to4 wrapping 127.0.0.1
        "2002:a9fe:a9fe::1",  # 6to4 wrapping 169.254.169.254
        "64:ff9b::a9fe:a9fe",  # NAT64 wrapping 169.254.169.254
        "2001:db8::1",
        "fec0::1",  # IPv6 site-local: deprecated, still routed inside some sites
        "feff::1",
    ],
)
def test_non_public_addresses_are_not_public(address):
    assert not is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address", ["93.184.215.14", "1.1.1.1", "2606:4700::1111", "::ffff:93.184.215.14"]
)
def test_public_addresses_are_public(address):
    assert is_public_address(ipaddress.ip_address(address))


def test_allow_list_takes_networks_and_host_names():
    policy = AddressPolicy(["10.20.0.0/16", "feeds.intranet", "::1/128"])
    assert policy.address_allowed(ipaddress.ip_address("10.20.3.4"))
    assert policy.address_allowed(ipaddress.ip_address("::ffff:10.20.3.4"))
    assert policy.address_allowed(ipaddress.ip_address("::1"))
    assert not policy.address_allowed(ipaddress.ip_address("10.21.0.1"))
    assert not policy.address_allowed(ipaddress.ip_address("127.0.0.1"))
    resolve = resolver_for({"feeds.intranet": "192.168.5.5", "other.intranet": "192.168.5.5"})
    assert policy.checked_addresses("FEEDS.intranet.", 80, resolve) == ["192.168.5.5"]
    with pytest.raises(Exception, match="non-public address 192.168.5.5"):
        policy.checked_addresses("other.intranet", 80, resolve)


def test_a_host_name_entry_allows_private_and_loopback_but_not_metadata_addresses():
    """A host name in the allow-list vouches for that host on the intranet (private
    or loopback), not for link-local, multicast or unspecified addresses: an
    intranet name repointed at the cloud metadata service is still refused."""
    policy = AddressPolicy(["feeds.intranet"])
    for address in ("10.1.2.3", "172.20.0.5", "192.168.5.5", "127.0.0.1", "fd00::5", "::1"):
        resolve = resolver_for({"feeds.intranet": address})
        assert policy.checked_addresses("feeds.intranet", 80, resolve) == [address]
    unspecified = "0.0.0.0"  # noqa: S104 - an address to refuse, not to bind
    for address in ("169.254.169.254", "fe80::1", "224.0.0.1", unspecified, "::ffff:169.254.1.1"):
        resolve = resolver_for({"feeds.intranet": address})
        with pytest.raises(Refused, match="non-public address"):
            policy.checked_addresses("feeds.intranet", 80, resolve)
    # a network entry is explicit about what it allows
    metadata = AddressPolicy(["feeds.intranet", "169.254.10.0/24"])
    resolve = resolver_for({"feeds.intranet": "169.254.10.9"})
    assert metadata.checked_addresses("feeds.intranet", 80, resolve) == ["169.254.10.9"]


def test_which_hosts_the_allow_list_vouches_for():
    policy = AddressPolicy(["10.20.0.0/16", "feeds.intranet"])
    resolve = resolver_for({"wire.intranet": "10.20.1.1", "mixed.test": "10.21.0.1"})
    assert policy.vouches_for("FEEDS.intranet.", resolve)
    assert policy.vouches_for("wire.intranet", resolve)
    assert policy.vouches_for("10.20.3.4", resolve)
    assert not policy.vouches_for("mixed.test", resolve)
    assert not policy.vouches_for("unknown.test", resolve)  # cannot resolve: no
    assert not policy.vouches_for("93.184.215.14", resolve)  # public: nothing to vouch
    assert not AddressPolicy([]).vouches_for("127.0.0.1", resolve)


# --------------------------------------------------------------------------- the guard, live


def test_the_allow_list_applies_only_to_trusted_fetches(httpserver):
    """An entry link of a public feed is fetched untrusted: loopback is refused
    though the allow-list names it, and nothing reaches the server."""
    httpserver.expect_request("/intranet").respond_with_data("internal")
    with Fetcher(ingest_settings()) as fetcher:
        untrusted = fetcher.get(by_ip(httpserver, "/intranet"))
        page = fetcher.get_page(httpserver.url_for("/intranet"))  # localhost
        trusted = fetcher.get(by_ip(httpserver, "/intranet"), trusted=True)
        again = fetcher.get(by_ip(httpserver, "/intranet"))  # not through the kept-alive one
    assert untrusted.refused and untrusted.error == "refused: address 127.0.0.1 is not public"
    assert page.refused and "localhost resolves to non-public address" in page.error
    assert trusted.ok and trusted.content == b"internal"
    assert again.refused
    assert len(httpserver.log) == 1


def test_a_fetcher_reads_the_trusted_certificates_once(monkeypatch):
    """Both of a fetcher's pools verify TLS against one context, read once (issue 24:
    httpx built a context for each transport and the guard's pool another, four
    readings of the certificate bundle at about 18 ms of CPU each for every run)."""
    import ssl

    read = []
    inner = ssl.SSLContext.load_verify_locations

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        read.append(self)
        return inner(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    with Fetcher(ingest_settings()) as fetcher:
        pools = [fetcher.public._transport._pool, fetcher.trusted._transport._pool]  # type: ignore[attr-defined]
    assert len(read) == 1
    assert all(pool._ssl_context is read[0] for pool in pools)
    assert read[0].verify_mode == ssl.CERT_REQUIRED and read[0].check_hostname


@pytest.fixture
def public_looking_server(monkeypatch):
    yield from serve_as_public(monkeypatch)


def test_a_public_page_cannot_redirect_a_trusted_fetch_into_the_allow_list(
    httpserver, public_looking_server
):
    httpserver.expect_request("/secret").respond_with_data("internal")
    httpserver.expect_request("/moved").respond_with_data(
        "", status=301, headers={"Location": by_ip(httpserver, "/secret")}
    )
    public_looking_server.expect_request("/go").respond_with_data(
        "", status=302, headers={"Location": by_ip(httpserver, "/secret")}
    )
    public_url = f"http://127.0.0.5:{public_looking_server.port}/go"
    with Fetcher(ingest_settings(allow_private=["127.0.0.1/32"])) as fetcher:
        via_public = fetcher.get(public_url, trusted=True)
        via_intranet = fetcher.get(by_ip(httpserver, "/moved"), trusted=True)
    assert via_public.refused and "127.0.0.1 is not public" in via_public.error
    assert via_public.redirects == [by_ip(httpserver, "/secret")]
    assert via_intranet.ok and via_intranet.content == b"internal"  # intranet to intranet
    assert [entry[0].path for entry in httpserver.log] == ["/moved", "/secret"]


def test_loopback_is_refused_without_the_allow_list_and_nothing_reaches_it(httpserver):
    httpserver.expect_request("/secret").respond_with_data("internal")
    with Fetcher(ingest_settings(allow_private=[])) as fetcher:
        result = fetcher.get(by_ip(httpserver, "/secret"), trusted=True)
        named = fetcher.get(httpserver.url_for("/secret"), trusted=True)  # localhost
    assert result.refused and not result.ok
    assert result.error == (
        "refused: address 127.0.0.1 is not public (to fetch it, add the host or its network"
        " to [ingest] allow_private in config.toml)"
    )
    assert named.refused and "localhost resolves to non-public address" in named.error
    assert "[ingest] allow_private" in named.error
    assert httpserver.log == []


def test_a_name_resolving_to_a_private_address_is_refused_at_connect(httpserver):
    httpserver.expect_request("/").respond_with_data("internal")
    resolve = resolver_for({"news.test": "127.0.0.1", "meta.test": "169.254.169.254"})
    with Fetcher(ingest_settings(allow_private=[]), resolver=resolve) as fetcher:
        local = fetcher.get(f"http://news.test:{httpserver.port}/", trusted=True)
        metadata = fetcher.get("http://meta.test/latest/meta-data/", trusted=True)
    assert local.refused and "resolves to non-public address 127.0.0.1" in local.error
    assert metadata.refused and "169.254.169.254" in metadata.error
    # The operator is told how to vouch for an intranet host, never for a metadata service.
    assert "[ingest] allow_private" in local.error
    assert "allow_private" not in metadata.error
    assert httpserver.log == []


def test_a_name_with_one_public_and_one_private_address_is_refused(httpserver):
    def resolve(host, port):
        return ["93.184.215.14", "127.0.0.1"]

    with Fetcher(ingest_settings(allow_private=["10.0.0.0/8"]), resolver=resolve) as fetcher:
        result = fetcher.get(f"http://mixed.test:{httpserver.port}/", trusted=True)
    assert result.refused and "127.0.0.1" in result.error
    assert httpserver.log == []


def test_dns_rebinding_gains_nothing_the_checked_address_is_the_one_connected(httpserver):
    """The resolver answers an allowed address once, then the metadata address. A
    guard that checked one answer and let the client resolve again would connect
    to the second (and the loopback-only rule would fail the test); this one
    resolves once per connection and connects to what it checked."""
    httpserver.expect_request("/feed").respond_with_data("<rss/>", content_type="text/xml")
    answers = iter(["127.0.0.1"])
    calls = []

    def rebinding(host, port):
        calls.append(host)
        return [next(answers, "169.254.169.254")]

    with Fetcher(ingest_settings(), resolver=rebinding) as fetcher:
        result = fetcher.get(f"http://rebind.test:{httpserver.port}/feed", trusted=True)
    assert result.ok and result.content == b"<rss/>"
    assert calls == ["rebind.test"]
    assert len(httpserver.log) == 1


def test_ipv6_loopback_is_refused_unless_allowed():
    try:
        server = HTTPServer(host="::1", port=0)
        server.start()
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    try:
        server.expect_request("/feed").respond_with_data("over IPv6")
        url = f"http://[::1]:{server.port}/feed"
        with Fetcher(ingest_settings(allow_private=[])) as fetcher:
            refused = fetcher.get(url, trusted=True)
        with Fetcher(ingest_settings(allow_private=["::1/128"])) as fetcher:
            allowed = fetcher.get(url, trusted=True)
    finally:
        server.clear()
        server.stop()
    assert refused.refused and refused.error.startswith("refused: address ::1 is not public (")
    assert "[ingest] allow_private" in refused.error
    assert allowed.ok and allowed.content == b"over IPv6"


def test_allow_list_by_host_name(httpserver):
    httpserver.expect_request("/feed").respond_with_data("ok")
    resolve = resolver_for({"feeds.intranet": "127.0.0.1"})
    with Fetcher(ingest_settings(allow_private=["feeds.intranet"]), resolver=resolve) as fetcher:
        allowed = fetcher.get(f"http://feeds.intranet:{httpserver.port}/feed", trusted=True)
        by_address = fetcher.get(by_ip(httpserver, "/feed"), trusted=True)
    assert allowed.ok and allowed.content == b"ok"
    assert by_address.refused  # the name is allowed, not the address
    assert len(httpserver.log) == 1


def test_every_redirect_hop_passes_the_guard(httpserver):
    port = httpserver.port
    httpserver.expect_request("/go").respond_with_data(
        "", status=302, headers={"Location": f"http://127.0.0.1:{port}/secret"}
    )
    httpserver.expect_request("/secret").respond_with_data("internal")
    resolve = resolver_for({"public.test": "127.0.0.1"})
    with Fetcher(ingest_settings(allow_private=["public.test"]), resolver=resolve) as fetcher:
        result = fetcher.get(f"http://public.test:{port}/go", trusted=True)
    assert result.refused and "127.0.0.1 is not public" in result.error
    assert [entry[0].path for entry in httpserver.log] == ["/go"]


@pytest.mark.parametrize(
    "link",
    [
        "file:///etc/passwd",
        "ftp://files.example.org/a.txt",
        "javascript:alert(1)",
        "data:text/html,<p>hi</p>",
        "gopher://old.example.org/",
        "//no-scheme.example.org/a",
    ],
)
def test_other_schemes_are_refused_before_any_request(link, _loopback_only):
    with Fetcher(ingest_settings()) as fetcher:
        result = fetcher.get(link, trusted=True)
    assert result.refused and result.error.startswith("refused: scheme")
    assert _loopback_only == []  # not even a name lookup


def test_a_redirect_to_a_file_url_is_refused(httpserver):
    httpserver.expect_request("/go").respond_with_data(
        "", status=301, headers={"Location": "file:///etc/passwd"}
    )
    with Fetcher(ingest_settings()) as fetcher:
        result = fetcher.get(httpserver.url_for("/go"), trusted=True)
    assert result.refused and "scheme 'file'" in result.error


def test_redirects_are_followed_relative_and_limited(httpserver):
    httpserver.expect_request("/a").respond_with_data("", status=301, headers={"Location": "b"})
    httpserver.expect_request("/b").respond_with_data("", status=307, headers={"Location": "/c"})
    httpserver.expect_request("/c").respond_with_data("arrived")
    httpserver.expect_request("/loop").respond_with_data(
        "", status=302, headers={"Location": "/loop"}
    )
    with Fetcher(ingest_settings(max_redirects=3)) as fetcher:
        result = fetcher.get(httpserver.url_for("/a"), trusted=True)
        loop = fetcher.get(httpserver.url_for("/loop"), trusted=True)
    assert result.ok and result.content == b"arrived"
    assert result.final_url == httpserver.url_for("/c")
    assert result.redirects == [httpserver.url_for("/b"), httpserver.url_for("/c")]
    assert loop.error == "more than 3 redirects" and not loop.transient


def test_requests_carry_a_clear_user_agent(httpserver):
    httpserver.expect_request("/ua").respond_with_data("ok")
    settings = ingest_settings(user_agent="copydesk-test/9 (+https://newsroom.example.org/bot)")
    with Fetcher(settings) as fetcher:
        fetcher.get(httpserver.url_for("/ua"), trusted=True)
    request = httpserver.log[0][0]
    assert request.headers["User-Agent"] == "copydesk-test/9 (+https://newsroom.example.org/bot)"
    assert "gzip" in request.headers["Accept-Encoding"]


# --------------------------------------------------------------------------- bodies


BIG_SERVER = """
import gzip, socket, sys
kind = sys.argv[1]
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(4)
print(server.getsockname()[1], flush=True)
if kind == "huge":  # 50 MB of HTML, streamed
    chunks, extra, length = [b"<p>" + b"x" * 65530 + b"</p>"] * 800, b"", 800 * 65536
else:  # a gzip bomb: 40 MB of zeros in about 40 kB
    body = gzip.compress(b"\\0" * 40_000_000)
    chunks, extra, length = [body], b"Content-Encoding: gzip\\r\\n", len(body)
head = (b"HTTP/1.1 200 OK\\r\\nContent-Type: text/html\\r\\n" + extra
        + b"Content-Length: " + str(length).encode() + b"\\r\\nConnection: close\\r\\n\\r\\n")
while True:
    conn, _ = server.accept()
    conn.recv(65536)
    try:
        conn.sendall(head)
        for chunk in chunks:
            conn.sendall(chunk)
    except OSError:
        pass
    conn.close()
"""


@pytest.fixture
def big_server(tmp_path):
    """Big responses from another process, so that measuring this process's memory
    measures the fetcher alone (an in-process server's buffers would count)."""
    script = tmp_path / "big_server.py"
    script.write_text(BIG_SERVER)
    procs = []

    def start(kind: str) -> str:
        proc = subprocess.Popen(
            [sys.executable, str(script), kind], stdout=subprocess.PIPE, text=True
        )
        procs.append(proc)
        return f"http://127.0.0.1:{int(proc.stdout.readline())}/{kind}"

    try:
        yield start
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def peak_memory_of(call):
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_50_mb_body_is_cut_off_at_the_cap_and_never_held_in_memory(big_server):
    limit, url = 1_000_000, big_server("huge")
    with Fetcher(ingest_settings(max_bytes=limit)) as fetcher:
        result, peak = peak_memory_of(lambda: fetcher.get(url, trusted=True))
    assert result.ok and result.truncated
    assert len(result.content) == limit
    assert peak < 4 * limit, f"peak {peak} bytes while reading a body capped at {limit}"


def test_a_gzip_bomb_stops_at_the_cap(big_server):
    limit, url = 500_000, big_server("bomb")
    with Fetcher(ingest_settings(max_bytes=limit)) as fetcher:
        result, peak = peak_memory_of(lambda: fetcher.get(url, trusted=True))
    assert result.ok and result.truncated
    assert result.content == b"\0" * limit
    assert peak < 5 * limit, f"peak {peak} bytes while inflating a body capped at {limit}"


def test_gzip_and_deflate_encodings_and_unannounced_gzip(httpserver):
    body = b"<rss><channel><title>Harbour news</title></channel></rss>" * 20
    httpserver.expect_request("/gzip").respond_with_data(
        gzip.compress(body), headers={"Content-Encoding": "gzip"}
    )
    httpserver.expect_request("/deflate").respond_with_data(
        zlib.compress(body), headers={"Content-Encoding": "deflate"}
    )
    raw = zlib.compressobj(wbits=-15)
    raw_deflate = raw.compress(body) + raw.flush()
    httpserver.expect_request("/raw-deflate").respond_with_data(
        raw_deflate, headers={"Content-Encoding": "deflate"}
    )
    httpserver.expect_request("/unannounced").respond_with_data(
        gzip.compress(body), content_type="application/rss+xml"
    )
    with Fetcher(ingest_settings()) as fetcher:
        for path in ("/gzip", "/deflate", "/raw-deflate", "/unannounced"):
            result = fetcher.get(httpserver.url_for(path), trusted=True)
            assert result.ok, (path, result.error)
            assert result.content == body, path


def test_an_unknown_content_encoding_is_an_error_not_garbage(httpserver):
    httpserver.expect_request("/br").respond_with_data(
        b"\x8b\x02", headers={"Content-Encoding": "br"}
    )
    with Fetcher(ingest_settings()) as fetcher:
        result = fetcher.get(httpserver.url_for("/br"), trusted=True)
    assert not result.ok and "unsupported content-encoding 'br'" in result.error


def test_capped_body_and_gunzip_helpers():
    body = CappedBody("", 10)
    assert body.feed(b"12345") and not body.feed(b"67890abc")
    assert bytes(body.buffer) == b"1234567890" and body.truncated
    assert gunzip_capped(b"plain text", 100) == (b"plain text", False)
    assert gunzip_capped(b"\x1f\x8bnot really gzip", 100) == (b"\x1f\x8bnot really gzip", False)
    assert gunzip_capped(gzip.compress(b"a" * 50), 20) == (b"a" * 20, True)


# --------------------------------------------------------------------------- failures


def test_http_errors_transient_and_permanent(httpserver):
    httpserver.expect_request("/gone").respond_with_data("gone", status=404)
    httpserver.expect_request("/busy").respond_with_data(
        "busy", status=503, headers={"Retry-After": "120"}
    )
    httpserver.expect_request("/slow-down").respond_with_data("", status=429)
    httpserver.expect_request("/boom").respond_with_data("", status=500)
    with Fetcher(ingest_settings()) as fetcher:
        gone = fetcher.get(httpserver.url_for("/gone"), trusted=True)
        busy = fetcher.get(httpserver.url_for("/busy"), trusted=True)
        slow = fetcher.get(httpserver.url_for("/slow-down"), trusted=True)
        boom = fetcher.get(httpserver.url_for("/boom"), trusted=True)
    assert gone.error == "HTTP 404" and not gone.transient
    assert busy.error == "HTTP 503" and busy.transient and busy.retry_after == 120
    assert slow.transient and boom.transient


def test_retry_after_forms():
    assert retry_after_seconds("30") == 30
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past


def test_a_server_that_does_not_answer_times_out_as_transient(threaded_server):
    def slow(request: Request) -> Response:
        time.sleep(1.0)
        return Response("late")

    threaded_server.expect_request("/slow").respond_with_handler(slow)
    with Fetcher(ingest_settings(timeout_seconds=0.3, connect_timeout=0.3)) as fetcher:
        result = fetcher.get(threaded_server.url_for("/slow"), trusted=True)
    assert result.transient and result.error.startswith("timeout")


def test_a_body_that_drips_past_the_total_deadline_is_cut(threaded_server):
    def drip(request: Request) -> Response:
        def generate():
            for _ in range(40):
                time.sleep(0.05)
                yield b"<p>word</p>"

        return Response(generate(), content_type="text/html")

    threaded_server.expect_request("/drip").respond_with_handler(drip)
    with Fetcher(ingest_settings(timeout_seconds=0.5)) as fetcher:
        result = fetcher.get(threaded_server.url_for("/drip"), trusted=True)
    assert result.transient and result.error == "timeout: over 0.5s"


TRICKLE_SERVER = """
import socket, sys, time
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(4)
print(server.getsockname()[1], flush=True)
while True:
    conn, _ = server.accept()
    conn.recv(65536)
    try:
        conn.sendall(b"HTTP/1.1 200 OK\\r\\n")
        for i in range(40):  # a header line every 0.3 s: 12 s of headers
            time.sleep(0.3)
            conn.sendall(b"X-Line-%d: x\\r\\n" % i)
        conn.sendall(b"Content-Length: 2\\r\\n\\r\\nok")
    except OSError:
        pass
    conn.close()
"""


@pytest.fixture
def trickle_server(tmp_path):
    """A server that sends its response headers one line every 0.3 s, so that no
    single read ever waits long enough for a read timeout."""
    script = tmp_path / "trickle.py"
    script.write_text(TRICKLE_SERVER)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        yield f"http://127.0.0.1:{int(proc.stdout.readline())}"
    finally:
        proc.kill()
        proc.wait()


def test_headers_trickled_a_line_at_a_time_cannot_outlast_the_total(trickle_server):
    total = 1.0
    settings = ingest_settings(timeout_seconds=total, connect_timeout=total)
    with Fetcher(settings) as fetcher:
        result = fetcher.get(f"{trickle_server}/feed.xml", trusted=True)
    # Without a total, the 12 s of headers would end in a 200: the outcome says it all.
    assert result.transient and result.error == "timeout: over 1s"
    assert result.status is None and result.content == b""


def test_redirect_hops_share_one_total(threaded_server):
    """Each hop answers within the read timeout; together they exceed the total.

    Per-hop timeouts alone would follow all 15 redirects (15 x 0.5 s) and fail on the
    redirect limit. With one total of 3 s at most 6 hops fit, however fast the machine;
    a loaded machine fits fewer, but the first hop (0.5 s of a 3 s total) always
    answers: at least one redirect is followed before the total cuts the fetch."""

    def slow_hop(request: Request) -> Response:
        time.sleep(0.5)
        n = int(request.path.rsplit("/", 1)[1])
        return Response("", status=302, headers={"Location": f"/hop/{n + 1}"})

    for n in range(20):
        threaded_server.expect_request(f"/hop/{n}").respond_with_handler(slow_hop)
    total = 3.0
    with Fetcher(ingest_settings(timeout_seconds=total, max_redirects=15)) as fetcher:
        result = fetcher.get(threaded_server.url_for("/hop/0"), trusted=True)
    assert result.transient and result.error == "timeout: over 3s"
    assert 1 <= len(result.redirects) <= 6, result.redirects


def test_a_name_lookup_that_hangs_is_cut_at_the_total(httpserver):
    release = threading.Event()

    def hanging(host, port):
        release.wait(10)  # like getaddrinfo against a dead DNS server
        return ["127.0.0.1"]

    total = 0.5
    settings = ingest_settings(timeout_seconds=total, connect_timeout=5)
    try:
        with Fetcher(settings, resolver=hanging) as fetcher:
            result = fetcher.get(f"http://slow-dns.test:{httpserver.port}/", trusted=True)
    finally:
        release.set()
    # A lookup that was waited out would have reached the server in the end.
    assert result.transient and result.error == "timeout: over 0.5s"
    assert httpserver.log == []


def test_waiting_for_a_host_slot_is_not_the_servers_time(threaded_server):
    """With one request per host at a time, the second fetch queues behind the
    first; the queue is ours, so it does not eat into the second fetch's total.
    Counted, the queue would make it at least 2 x 1.0 s, over the 1.9 s total; not
    counted, each fetch has 0.9 s to spare for a loaded machine."""
    threaded_server.expect_request("/page").respond_with_handler(
        lambda r: (time.sleep(1.0), Response("ok"))[1]
    )
    settings = ingest_settings(timeout_seconds=1.9, per_host_concurrency=1)
    url = threaded_server.url_for("/page")
    with Fetcher(settings) as fetcher:
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda u: fetcher.get(u, trusted=True), [url, url]))
    assert [r.ok for r in results] == [True, True], [r.error for r in results]


def test_an_unresolvable_host_is_a_transient_network_error():
    with Fetcher(ingest_settings()) as fetcher:
        result = fetcher.get("http://nowhere.invalid/feed.xml", trusted=True)
    assert result.transient and "cannot be resolved" in result.error


# --------------------------------------------------------------------------- politeness


def test_at_most_n_requests_in_flight_per_host(threaded_server):
    flight = InFlight()
    threaded_server.expect_request("/page").respond_with_handler(
        flight.wrap(lambda r: Response("ok"), hold=0.05)
    )
    hosts = ["a.test", "b.test", "c.test"]
    resolve = resolver_for({}, default="127.0.0.1")
    urls = [f"http://{hosts[i % 3]}:{threaded_server.port}/page" for i in range(36)]
    with Fetcher(ingest_settings(per_host_concurrency=2), resolver=resolve) as fetcher:
        with ThreadPoolExecutor(max_workers=12) as pool:
            results = list(pool.map(lambda u: fetcher.get(u, trusted=True), urls))
    assert all(r.ok for r in results)
    assert flight.requests == {h: 12 for h in hosts}
    assert max(flight.peak.values()) == 2, flight.peak  # the limit, and reached
    assert flight.total_peak > 2  # different hosts do run side by side


def test_host_limiter_counts_threads():
    limiter = HostLimiter(1)
    inside, peak, lock = [0], [0], threading.Lock()

    def work() -> None:
        with limiter.slot("x.test"):
            with lock:
                inside[0] += 1
                peak[0] = max(peak[0], inside[0])
            time.sleep(0.01)
            with lock:
                inside[0] -= 1

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda _: work(), range(8)))
    assert peak[0] == 1


# --------------------------------------------------------------------------- robots.txt


def test_robots_txt_is_respected_for_pages_and_fetched_once_per_host(httpserver):
    httpserver.expect_request("/robots.txt").respond_with_data(
        "User-agent: copydesk\nDisallow: /members/\n\nUser-agent: *\nDisallow: /\n",
        content_type="text/plain",
    )
    httpserver.expect_request("/news/ferry").respond_with_data("<p>ferry</p>")
    httpserver.expect_request("/news/bridge").respond_with_data("<p>bridge</p>")
    with Fetcher(ingest_settings(respect_robots=True)) as fetcher:
        first = fetcher.get_page(httpserver.url_for("/news/ferry"), trusted=True)
        second = fetcher.get_page(httpserver.url_for("/news/bridge"), trusted=True)
        blocked = fetcher.get_page(httpserver.url_for("/members/only"), trusted=True)
        feed = fetcher.get(
            httpserver.url_for("/news/ferry"), trusted=True
        )  # feeds do not ask robots
    assert first.ok and second.ok and feed.ok
    assert blocked.disallowed and not blocked.transient
    assert blocked.error == f"robots.txt disallows {httpserver.url_for('/members/only')}"
    paths = [entry[0].path for entry in httpserver.log]
    assert paths.count("/robots.txt") == 1
    assert "/members/only" not in paths


def test_missing_robots_txt_allows_and_an_unreachable_one_defers(httpserver):
    httpserver.expect_request("/robots.txt").respond_with_data("", status=404)
    httpserver.expect_request("/a").respond_with_data("<p>a</p>")
    resolve = resolver_for({"down.test": "127.0.0.1"})
    with Fetcher(ingest_settings(respect_robots=True), resolver=resolve) as fetcher:
        allowed = fetcher.get_page(by_ip(httpserver, "/a"), trusted=True)
    assert allowed.ok
    httpserver.clear()
    httpserver.expect_request("/robots.txt").respond_with_data("", status=503)
    with Fetcher(ingest_settings(respect_robots=True), resolver=resolve) as fetcher:
        deferred = fetcher.get_page(f"http://down.test:{httpserver.port}/a", trusted=True)
    assert deferred.transient and "robots.txt unreachable" in deferred.error
    assert [entry[0].path for entry in httpserver.log] == ["/robots.txt"]


def test_robots_wildcards_and_end_anchors_are_read_as_rfc_9309_says(httpserver):
    """`*` and `$` in rules: the standard library's parser takes them literally and
    would fetch every one of these pages."""
    httpserver.expect_request("/robots.txt").respond_with_data(
        "User-agent: *\nDisallow: /*?preview=\nDisallow: /*.pdf$\nDisallow: /news/*/draft\n",
        content_type="text/plain",
    )
    for path in ("/news/ferry", "/files/report.pdf.html", "/news/2026/final"):
        httpserver.expect_request(path).respond_with_data("<p>page</p>")
    with Fetcher(ingest_settings(respect_robots=True)) as fetcher:
        got = {
            path: fetcher.get_page(httpserver.url_for(path), trusted=True)
            for path in (
                "/news/ferry",
                "/news/ferry?preview=1",
                "/files/report.pdf",
                "/files/report.pdf.html",
                "/news/2026/draft",
                "/news/2026/final",
            )
        }
    assert {path for path, r in got.items() if r.ok} == {
        "/news/ferry",
        "/files/report.pdf.html",
        "/news/2026/final",
    }
    assert all(r.disallowed for path, r in got.items() if not r.ok)
    asked = [entry[0].path for entry in httpserver.log]
    assert "/files/report.pdf" not in asked and "/news/2026/draft" not in asked
    assert asked.count("/news/ferry") == 1  # the ?preview=1 one was never requested


def test_crawl_delay_spaces_out_the_requests_to_a_host(httpserver):
    """Crawl-delay: 0.4 for our agent: robots.txt and four pages fetched by four
    threads start at least 0.4 s apart, so the whole takes at least 4 x 0.4 s
    (a lower bound the delay guarantees whatever the machine's load; the server's
    clock sees the spacing too, less the jitter of sending)."""
    starts: list[float] = []
    lock = threading.Lock()

    def page(request: Request) -> Response:
        with lock:
            starts.append(time.monotonic())
        return Response("<p>page</p>")

    httpserver.expect_request("/robots.txt").respond_with_data(
        "User-agent: copydesk\nCrawl-delay: 0.4\n\nUser-agent: *\nCrawl-delay: 0\n",
        content_type="text/plain",
    )
    httpserver.expect_request(re.compile(r"/p/\d")).respond_with_handler(page)
    urls = [httpserver.url_for(f"/p/{n}") for n in range(4)]
    settings = ingest_settings(respect_robots=True, per_host_concurrency=4)
    began = time.monotonic()
    with Fetcher(settings) as fetcher:
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(lambda u: fetcher.get_page(u, trusted=True), urls))
    took = time.monotonic() - began
    assert all(r.ok for r in results), [r.error for r in results]
    assert len(starts) == 4 and took >= 4 * 0.4, took
    assert starts[-1] - starts[0] >= 3 * 0.4 - 0.2, starts  # 0.2 s for sending jitter


def test_crawl_delay_is_capped_and_applies_to_its_own_host_only():
    limiter = HostLimiter(4)
    limiter.set_delay("slow.test", 3600)  # an hour between requests: capped
    assert limiter._reserve_start("slow.test") == 0  # the first request does not wait
    assert MAX_CRAWL_DELAY - 1 < limiter._reserve_start("slow.test") <= MAX_CRAWL_DELAY
    assert limiter._reserve_start("other.test") == 0
    assert limiter._reserve_start("other.test") == 0


def test_robots_switch_off_makes_no_robots_request(httpserver):
    httpserver.expect_request("/a").respond_with_data("<p>a</p>")
    with Fetcher(ingest_settings(respect_robots=False)) as fetcher:
        assert fetcher.get_page(httpserver.url_for("/a"), trusted=True).ok
    assert [entry[0].path for entry in httpserver.log] == ["/a"]


# --------------------------------------------------------------------------- the rule itself


def test_the_loopback_only_rule_refuses_the_internet(_loopback_only):
    import socket

    with pytest.raises(OSError, match="only connect to loopback"):
        socket.create_connection(("93.184.215.14", 80), timeout=1)
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("example.org", 443)
    assert [kind for kind, _ in _loopback_only] == ["connect", "resolve"]
