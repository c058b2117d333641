"""A base for the loopback HTTP servers of tests and benchmarks (a helper module, not a
test file): `QuietHandler.send_body` answers with a body of a content type and its
length, and the handler writes no access log to stderr."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler


class QuietHandler(BaseHTTPRequestHandler):
    # TCP_NODELAY (socketserver's StreamRequestHandler sets it when this is true). The
    # handler sends a response's headers and its body in two writes; with Nagle's
    # algorithm on, the second waits for the acknowledgement of the first, which a
    # keep-alive client delays by up to 40 ms (Linux's delayed ACK): every page after the
    # first on a connection would wait that long.
    disable_nagle_algorithm = True

    def send_body(self, data: bytes, kind: str, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass
