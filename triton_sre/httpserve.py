"""What the exporter's, the bot's and the Slack stand-in's HTTP servers share: bounded connections,
read timeouts, 405 for any method an endpoint does not serve, and log lines that never carry a secret.

`BoundedHTTPServer` accepts on the `serve_forever` thread and gives a connection a worker thread
only once its first bytes arrive (and, with keep-alive, takes it back between requests): idle
sockets cost a file descriptor, not a thread, and are closed after `idle_timeout`; at most
`max_connections` wait (the oldest is closed for a new one), and at most `workers` requests are
handled at once. A client that starts a request and stalls
holds a worker for at most the handler's read `timeout`. So hundreds of silent sockets neither
exhaust threads nor keep a scrape from being answered.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import selectors
import socket
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import urlsplit

from triton_sre.redact import RedactingFilter, install_redaction, redact

__all__ = [
    "BoundedHTTPServer",
    "RedactingFilter",
    "SafeHandler",
    "install_redaction",
    "redact",
]

READ_TIMEOUT_SECONDS = 10.0
"""A request must arrive, and a started one must continue, within this many seconds."""
IDLE_TIMEOUT_SECONDS = 10.0
"""A connection that sends nothing for this long is closed without using a thread."""
WORKERS = 16
MAX_CONNECTIONS = 1024


class SafeHandler(BaseHTTPRequestHandler):
    """A request handler whose subclasses define `do_<METHOD>` for what they serve.

    Any other method, including ones `http.server` does not know (PROPFIND, made-up names), is
    answered 405 with an `Allow` header instead of 501. Reads time out after
    `READ_TIMEOUT_SECONDS`. Log lines carry the method, the path without its query and the status,
    and pass through `redact`.
    """

    timeout = READ_TIMEOUT_SECONDS
    logger = logging.getLogger(__name__)

    def handle(self) -> None:
        """Requests until the connection closes; between keep-alive requests with nothing sent yet,
        the connection goes back to the server's idle watcher instead of holding this thread."""
        self.close_connection = True
        self.handle_one_request()
        while not self.close_connection:
            if not self._pipelined() and isinstance(self.server, BoundedHTTPServer):
                self.server.keep_alive()
                return
            self.handle_one_request()

    def _pipelined(self) -> bool:
        """Whether bytes of a next request are already here (read without waiting)."""
        self.connection.setblocking(False)
        try:
            return bool(self.rfile.peek(1))
        except OSError:
            return False
        finally:
            self.connection.settimeout(self.timeout)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):
            return self.method_not_allowed
        raise AttributeError(name)

    def allowed_methods(self) -> list[str]:
        """The methods this handler serves (from its `do_` methods), for the Allow header."""
        return sorted(n[3:] for n in dir(type(self)) if n.startswith("do_"))

    def method_not_allowed(self) -> None:
        body = b"method not allowed\n"
        self.send_response(HTTPStatus.METHOD_NOT_ALLOWED)
        self.send_header("Allow", ", ".join(self.allowed_methods()))
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")  # any request body is left unread
        self.end_headers()
        self.close_connection = True
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_json(
        self,
        status: int,
        body: Any,
        headers: dict[str, str] | None = None,
        *,
        close: bool = False,
        content_type: str = "application/json",
    ) -> None:
        """A JSON response with its length (no body for HEAD); `close` ends the connection after it."""
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    @property
    def bare_path(self) -> str:
        return urlsplit(self.path).path

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        status = code.value if isinstance(code, HTTPStatus) else code
        method = getattr(self, "command", None) or "-"
        path = redact(self.bare_path) if getattr(self, "path", None) else "-"
        self.logger.debug("http %s %s %s %s", self.address_string(), method, path, status)

    def log_message(self, format: str, *args: Any) -> None:
        self.logger.debug("http %s %s", self.address_string(), redact(format % args))


class BoundedHTTPServer(HTTPServer):
    """An HTTP server with bounded threads and idle-connection timeouts (see the module doc)."""

    request_queue_size = socket.SOMAXCONN  # listen backlog: bursts of connections wait in the kernel

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        *,
        workers: int | None = None,
        max_connections: int | None = None,
        idle_timeout: float | None = None,
    ) -> None:
        super().__init__(address, handler)
        self.max_connections = max_connections or MAX_CONNECTIONS
        self.idle_timeout = idle_timeout or IDLE_TIMEOUT_SECONDS
        # Daemon workers: like ThreadingHTTPServer's daemon_threads, a connection still open at
        # shutdown (a keep-alive client) never delays the process's exit.
        self._jobs: queue.SimpleQueue[tuple[socket.socket, Any] | None] = queue.SimpleQueue()
        self._local = threading.local()  # per worker: hand the connection back after this request
        self._workers = [
            threading.Thread(target=self._work, name=f"http-worker-{i}", daemon=True)
            for i in range(workers or WORKERS)
        ]
        for worker in self._workers:
            worker.start()
        self._incoming: queue.SimpleQueue[tuple[socket.socket, Any]] = queue.SimpleQueue()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._closing = False
        self._waiting_count = 0
        self._watcher = threading.Thread(target=self._watch, name="http-idle-watch", daemon=True)
        self._watcher.start()

    def process_request(self, request: Any, client_address: Any) -> None:
        """Called on the accept thread: hand the connection to the watcher, never block."""
        self._incoming.put((request, client_address))
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # buffer full (a wake-up is pending already) or closed
            self._wake_w.send(b"\0")

    @property
    def waiting(self) -> int:
        """Connections accepted but not yet sending (for tests and debugging)."""
        return self._waiting_count

    def _watch(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._wake_r, selectors.EVENT_READ)
        waiting: dict[socket.socket, tuple[Any, float]] = {}  # insertion order = oldest first
        try:
            while not self._closing:
                timeout = 1.0
                if waiting:
                    oldest = next(iter(waiting.values()))[1]
                    timeout = max(0.0, min(timeout, oldest - time.monotonic()))
                for key, _ in selector.select(timeout):
                    if key.fileobj is self._wake_r:
                        with contextlib.suppress(OSError):
                            while self._wake_r.recv(4096):
                                pass
                        continue
                    sock = key.fileobj
                    selector.unregister(sock)
                    address, _deadline = waiting.pop(sock)  # type: ignore[call-overload]
                    self._jobs.put((sock, address))
                while True:
                    try:
                        sock, address = self._incoming.get_nowait()
                    except queue.Empty:
                        break
                    if len(waiting) >= self.max_connections:
                        old = next(iter(waiting))
                        del waiting[old]
                        selector.unregister(old)
                        self.shutdown_request(old)
                    try:
                        selector.register(sock, selectors.EVENT_READ)
                    except (OSError, ValueError):  # closed meanwhile: nothing to wait for
                        self.shutdown_request(sock)
                        continue
                    waiting[sock] = (address, time.monotonic() + self.idle_timeout)
                now = time.monotonic()
                for sock in [s for s, (_, deadline) in waiting.items() if deadline <= now]:
                    del waiting[sock]
                    selector.unregister(sock)
                    self.shutdown_request(sock)
                self._waiting_count = len(waiting)
        finally:
            for sock in waiting:
                self.shutdown_request(sock)
            selector.close()

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            self._serve(*job)

    def keep_alive(self) -> None:
        """Called by the handler on a worker thread: wait for the connection's next request
        without a thread (it is handed back once the handler has finished)."""
        self._local.keep = True

    def _serve(self, request: Any, client_address: Any) -> None:
        self._local.keep = False
        try:
            self.finish_request(request, client_address)
        except Exception:
            self._local.keep = False
            self.handle_error(request, client_address)
        if self._local.keep and not self._closing:
            self.process_request(request, client_address)  # back to the idle watcher
        else:
            self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        logging.getLogger(__name__).debug("http connection from %s failed", client_address, exc_info=True)

    def server_close(self) -> None:
        if not hasattr(self, "_watcher"):  # bind or listen failed inside HTTPServer.__init__
            super().server_close()
            return
        self._closing = True
        self._wake()
        super().server_close()
        self._watcher.join(timeout=5)
        for _ in self._workers:
            self._jobs.put(None)
        self._wake_r.close()
        self._wake_w.close()
