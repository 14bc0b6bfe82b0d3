"""A Prometheus HTTP API stand-in on loopback for answers a real Prometheus cannot be made to give
(a vector to a range query, a non-numeric sample) and for the report bench's 1,000-series ranges.

`answer(query, timestamps)` returns the API's `data` (JSON-encoded here) or the whole body as
bytes; timestamps are the range query's start + k × step. The configuration says a 10 s scrape
interval; instant queries are empty vectors unless given.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

Answer = Callable[[str, list[float]], Any]


def serve(
    answer: Answer,
    thread: bool = True,
    *,
    delay: float = 0.0,
    instant: list[dict[str, Any]] | Callable[[str], list[dict[str, Any]]] | None = None,
    seen: list[str] | None = None,
    warn: Callable[[str], dict[str, Any]] | None = None,
) -> ThreadingHTTPServer:
    """A server on 127.0.0.1 (a free port), serving in a daemon thread unless `thread` is False; each
    answer after `delay` seconds (a slow Prometheus); instant queries answer the vector `instant`
    (a callable: its answer to the query);
    every query's PromQL is appended to `seen` when given (what a client asked, in order); `warn` gives
    the keys added to an answer's body after `data` (`warnings`, `infos`: a partial answer)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            params = {k: v[0] for k, v in parse_qs(url.query).items()}
            data: Any
            if seen is not None and "query" in params:
                seen.append(params["query"])
            time.sleep(delay)
            if url.path == "/api/v1/query_range":
                start, end, step = (float(params[k]) for k in ("start", "end", "step"))
                stamps = [start + i * step for i in range(int((end - start) // step) + 1)]
                data = answer(params["query"], stamps)
            elif url.path == "/api/v1/status/config":
                data = {"yaml": "global:\n  scrape_interval: 10s\n"}
            else:
                vector = instant(params.get("query", "")) if callable(instant) else instant
                data = {"resultType": "vector", "result": vector or []}
            extra = warn(params.get("query", "")) if warn is not None else {}
            whole = {"status": "success", "data": data, **extra}
            body = data if isinstance(data, bytes) else json.dumps(whole).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            # the client may give up first (a slow stand-in under a client's --timeout): no traceback
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if thread:
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


@contextlib.contextmanager
def served(answer: Answer, **options: Any) -> Iterator[str]:
    """`serve(answer, **options)` for the block: its URL, the server stopped after."""
    httpd = serve(answer, **options)
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
