"""A base for the loopback HTTP servers of tests and benchmarks (a helper module, not a
test file): `QuietHandler.send_body` answers with a body of a content type and its
length, and the handler writes no access log to stderr."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler


class QuietHandler(BaseHTTPRequestHandler):
    def send_body(self, data: bytes, kind: str, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass
