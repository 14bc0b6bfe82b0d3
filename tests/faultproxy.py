"""A fault-injecting HTTP proxy in front of the real Triton, for the exporter's fault tests.

It forwards to the real server unchanged unless a fault is set for a path prefix: hang, answer
with garbage, truncate the real body, send a 50 MB body, answer with an HTTP error status, or
rewrite the real body with a function (`set_fault(prefix, lambda body: ...)`). Faults act on
real Triton output wherever there is one, so nothing imitates Triton's text. `requests` counts
the requests per path.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

HANG = "hang"
GARBAGE = "garbage"
TRUNCATE = "truncate"
HUGE = "huge"
STATUS_500 = "500"
HUGE_BYTES = 50 * 1024 * 1024
TRICKLE = "trickle"
"""The real, complete answer with its Content-Length, one byte every `TRICKLE_SECONDS`."""
TRICKLE_SECONDS = 0.4
CUT_CHUNKED = "cut-chunked"
"""The real answer sent chunked (HTTP/1.1), its first half in one chunk, then the connection closed: no
last chunk, as a server or proxy dying mid-answer."""
MISLABELLED = "mislabelled"
"""The real answer unchanged, sent with `Content-Encoding: gzip` (a proxy labelling what it did not
compress)."""
REDIRECT_PREFIX = "redirect:"
"""`REDIRECT_PREFIX + base_url`: answer 302 to the same path on another server."""


def reply(h: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str = "text/plain") -> None:
    """One whole answer: status, type, length and body (a client that gave up is no error)."""
    h.send_response(status)
    h.send_header("Content-Type", ctype)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    with contextlib.suppress(OSError):
        h.wfile.write(body)


class FaultProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.faults: dict[str, str | Callable[[bytes], bytes]] = {}
        self.requests: Counter[str] = Counter()
        self._release = threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                proxy._handle(self)

            def do_POST(self) -> None:
                proxy._handle(self)

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def set_fault(self, path_prefix: str, fault: str | Callable[[bytes], bytes] | None) -> None:
        if fault is None:
            self.faults.pop(path_prefix, None)
        else:
            self.faults[path_prefix] = fault

    def _fault_for(self, path: str) -> str | Callable[[bytes], bytes] | None:
        return next((f for prefix, f in self.faults.items() if path.startswith(prefix)), None)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else None
        fault = self._fault_for(h.path)
        self.requests[h.path] += 1
        if fault == HANG:
            self._release.wait(30)
            return
        if fault == STATUS_500:
            reply(h, 500, b'{"error":"injected failure"}')
            return
        if fault == GARBAGE:
            reply(h, 200, b"\x00\xff<html><body>502 Bad Gateway</body></html>\n{{{ not metrics\n")
            return
        if fault == HUGE:
            h.send_response(200)
            h.send_header("Content-Type", "text/plain")
            h.end_headers()  # no Content-Length: the client must cap the read itself
            line = b"# padding that never ends " + b"x" * 1000 + b"\n"
            sent = 0
            try:
                while sent < HUGE_BYTES:
                    h.wfile.write(line)
                    sent += len(line)
            except OSError:
                pass  # the client stopped reading, as it should
            return
        if isinstance(fault, str) and fault.startswith(REDIRECT_PREFIX):
            h.send_response(302)
            h.send_header("Location", fault[len(REDIRECT_PREFIX) :] + h.path)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        upstream = requests.request(h.command, self.upstream + h.path, data=body, timeout=10)
        if fault == TRICKLE:
            self._trickle(h, upstream.status_code, upstream.content)
            return
        if fault == CUT_CHUNKED:
            self._cut_chunked(h, upstream.status_code, upstream.content)
            return
        content = upstream.content
        if fault == MISLABELLED:
            h.send_response(upstream.status_code)
            h.send_header("Content-Type", upstream.headers.get("Content-Type", "text/plain"))
            h.send_header("Content-Encoding", "gzip")
            h.send_header("Content-Length", str(len(content)))
            h.end_headers()
            with contextlib.suppress(OSError):
                h.wfile.write(content)
            return
        if fault == TRUNCATE:
            content = content[: len(content) // 2]  # cut mid-line
        elif callable(fault):
            content = fault(content)
        reply(h, upstream.status_code, content, upstream.headers.get("Content-Type", "text/plain"))

    def _trickle(self, h: BaseHTTPRequestHandler, status: int, body: bytes) -> None:
        h.send_response(status)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.flush()
        with contextlib.suppress(OSError):  # the client gave up, as it should
            for i in range(len(body)):
                if self._release.wait(TRICKLE_SECONDS):
                    return
                h.wfile.write(body[i : i + 1])
                h.wfile.flush()

    @staticmethod
    def _cut_chunked(h: BaseHTTPRequestHandler, status: int, body: bytes) -> None:
        h.protocol_version = "HTTP/1.1"  # chunked needs it; the connection is closed after all
        h.send_response(status)
        h.send_header("Transfer-Encoding", "chunked")
        h.send_header("Content-Type", "application/json")
        h.end_headers()
        half = body[: max(1, len(body) // 2)]
        with contextlib.suppress(OSError):
            h.wfile.write(b"%x\r\n%s\r\n" % (len(half), half))
            h.wfile.flush()
        h.close_connection = True

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        time.sleep(0.05)
        self._httpd.shutdown()
        self._httpd.server_close()
