"""What the exporter's, the bot's and the Slack stand-in's HTTP servers share: bounded connections,
request deadlines, 405 for any method an endpoint does not serve, and log lines that never carry a
secret.

`BoundedHTTPServer` accepts on the `serve_forever` thread and reads every request on one selector
thread (the watcher) until it is complete (its header block and, up to `max_body_buffer` bytes, its
Content-Length body); only then does a worker thread take it. So a worker waits on no client (but
for a body over the buffer, read with the handler's `timeout`): a client that trickles its headers
or body (one byte every few seconds: each read arrives in time) costs a file descriptor and a
buffer, not a thread, and is closed when its request is not complete `request_timeout` after its
first byte. Idle sockets are closed after `idle_timeout`; at most
`max_connections` connections wait and at most `max_pending_bytes` are buffered for them (the oldest
is closed for a new one); at most `workers` requests are handled at once; with keep-alive a
connection goes back to the watcher between requests. So hundreds of silent or slow sockets neither
exhaust threads nor keep a scrape from being answered.
"""

from __future__ import annotations

import contextlib
import errno
import io
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

from triton_sre.httpframing import CONTINUE, TOO_LARGE, request_size, waits_for_continue
from triton_sre.redact import redact

__all__ = [
    "BoundedHTTPServer",
    "SafeHandler",
]

READ_TIMEOUT_SECONDS = 10.0
"""A started request must be complete within this many seconds (headers and body), and a read on a
worker (a body larger than the buffer) must get data within it."""
IDLE_TIMEOUT_SECONDS = 10.0
"""A connection that sends nothing for this long is closed without using a thread."""
WORKERS = 16
MAX_CONNECTIONS = 1024
MAX_HEADER_BYTES = 64 * 1024
"""A header block longer than this is answered 431 by the watcher."""
MAX_BODY_BUFFER = 4 * 1024 * 1024
"""A body up to this size is read before a worker takes the request; a larger one is left to the
handler (which may refuse it unread, as the bot does with 413)."""
MAX_PENDING_BYTES = 64 * 1024 * 1024
"""All waiting connections together buffer at most this much (the oldest is closed to stay under)."""
SHED_WAIT_SECONDS = 0.1
"""Out of file descriptors, the accept thread waits this long for the watcher to close a connection
(and, with none to close, before it tries again): the listening socket stays readable meanwhile."""
SHORTAGE_LOG_SECONDS = 60.0
"""At most one warning per this many seconds while accepts fail for want of a descriptor."""
class SafeHandler(BaseHTTPRequestHandler):
    """A request handler whose subclasses define `do_<METHOD>` for what they serve.

    Any other method, including ones `http.server` does not know (PROPFIND, made-up names), is
    answered 405 with an `Allow` header instead of 501. Reads time out after
    `READ_TIMEOUT_SECONDS`. Log lines carry the method, the path without its query and the status,
    and pass through `redact`.
    """

    timeout = READ_TIMEOUT_SECONDS
    logger = logging.getLogger(__name__)
    disable_nagle_algorithm = True
    """A response is written as headers then body: with Nagle's algorithm on, the body waited for the
    client's delayed ACK of the headers, 40 ms on every request of a kept-alive connection."""

    def setup(self) -> None:
        """As StreamRequestHandler's, but `rfile` first serves what the server's watcher has
        already read of this request (see `BoundedHTTPServer`)."""
        super().setup()
        if isinstance(self.server, BoundedHTTPServer):
            self._raw = _Prefixed(self.server.taken_bytes(), self.connection)
            self.rfile = io.BufferedReader(self._raw)

    body_read = False
    """Set by a handler that read the request's Content-Length body (`read_body`)."""

    def handle(self) -> None:
        """One request; a kept-alive connection then goes back to the server's watcher (with any
        bytes of a next request already read) instead of holding this thread. A connection whose
        request carried a body that was not read is closed instead (`body_left_unread`)."""
        self.close_connection = True
        self.body_read = False
        self.handle_one_request()
        if not self.close_connection and self.body_left_unread():
            self.close_connection = True
        if isinstance(self.server, BoundedHTTPServer):
            if not self.close_connection:
                self.server.keep_alive(self._unread())
            return
        while not self.close_connection:
            self.handle_one_request()

    def handle_expect_100(self) -> bool:
        """`100 Continue` for a body the watcher did not buffer (over its buffer, chunked); for one it
        buffers, the watcher sent it before the body came (`waits_for_continue`)."""
        if isinstance(self.server, BoundedHTTPServer):
            lengths = self.headers.get_all("Content-Length") or []
            buffered = (
                len(lengths) == 1
                and lengths[0].strip().isdigit()
                and int(lengths[0]) <= self.server.max_body_buffer
                and not self.headers.get_all("Transfer-Encoding")
            )
            if buffered:
                return True
        return super().handle_expect_100()

    def body_left_unread(self) -> bool:
        """Whether the request's body framing leaves bytes on the connection that would be read as
        the next request: a body no handler read (a GET with a Content-Length body), any
        Transfer-Encoding (never decoded here), or two Content-Length headers. Keeping such a
        connection alive let a body smuggle requests (a GET body holding a second request was
        answered as one)."""
        headers = getattr(self, "headers", None)
        if headers is None:  # the request line did not parse: closed already
            return False
        if headers.get_all("Transfer-Encoding"):
            return True
        lengths = headers.get_all("Content-Length") or []
        if len(lengths) > 1:
            return True
        return bool(lengths) and not self.body_read and lengths[0].strip() != "0"

    def read_body(self, length: int) -> bytes:
        """The request's Content-Length body (`length` bytes), marked read."""
        data = self.rfile.read(length)
        self.body_read = len(data) == length
        return data

    def _unread(self) -> bytes:
        """The bytes read from the connection but not by this request (a pipelined next one), plus
        whatever has arrived since, read without waiting."""
        self.connection.setblocking(False)
        try:
            return self.rfile.peek(1) + self._raw.rest()
        except OSError:
            return b""
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


class _Prefixed(io.RawIOBase):
    """A connection's bytes: first those the watcher read, then the socket's (None when a
    non-blocking socket has nothing: BufferedReader's convention)."""

    def __init__(self, prefix: bytes, sock: socket.socket) -> None:
        super().__init__()
        self._prefix = memoryview(prefix)
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        if self._prefix:
            count = min(len(buffer), len(self._prefix))
            buffer[:count] = self._prefix[:count]
            self._prefix = self._prefix[count:]
            return count
        try:
            return self._sock.recv_into(buffer)
        except BlockingIOError:
            return None

    def rest(self) -> bytes:
        """The watcher's bytes not yet read (taken: they are read no more)."""
        rest, self._prefix = bytes(self._prefix), memoryview(b"")
        return rest


class _Waiting:
    """A connection on the watcher: what it has sent of its next request and until when it may."""

    __slots__ = ("address", "continued", "data", "deadline")

    def __init__(self, address: Any, data: bytes, deadline: float) -> None:
        self.address = address
        self.data = bytearray(data)
        self.deadline = deadline
        self.continued = False  # `100 Continue` sent for the request being read


def listening_on(host: str, port: int) -> str:
    """HOST:PORT of a listener for a start line, with the `port` bound: `--listen 127.0.0.1:0` lets the OS
    choose one, and a start line saying `on 127.0.0.1:0` told nobody where to scrape or post."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class BoundedHTTPServer(HTTPServer):
    """An HTTP server with bounded threads, request deadlines and idle timeouts (see the module doc)."""

    request_queue_size = socket.SOMAXCONN  # listen backlog: bursts of connections wait in the kernel

    @property
    def local_url(self) -> str:
        """http://HOST:PORT a client on this machine reaches it on (an any-address listener: loopback)."""
        host, port = self.server_address[:2]
        host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        *,
        workers: int | None = None,
        max_connections: int | None = None,
        idle_timeout: float | None = None,
        request_timeout: float | None = None,
        max_body_buffer: int | None = None,
        max_pending_bytes: int | None = None,
    ) -> None:
        if ":" in address[0]:  # an IPv6 literal (`--listen [::1]:8003`): AF_INET could not bind it
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)
        self.max_connections = max_connections or MAX_CONNECTIONS
        self.idle_timeout = idle_timeout or IDLE_TIMEOUT_SECONDS
        self.request_timeout = request_timeout or getattr(handler, "timeout", None) or READ_TIMEOUT_SECONDS
        self.max_body_buffer = max_body_buffer or MAX_BODY_BUFFER
        self.max_pending_bytes = max_pending_bytes or MAX_PENDING_BYTES
        # Daemon workers: like ThreadingHTTPServer's daemon_threads, a connection still open at
        # shutdown (a keep-alive client) never delays the process's exit.
        self._jobs: queue.SimpleQueue[tuple[socket.socket, Any, bytes] | None] = queue.SimpleQueue()
        self._local = threading.local()  # per worker: the request's bytes, whether to keep the connection
        self._workers = [
            threading.Thread(target=self._work, name=f"http-worker-{i}", daemon=True)
            for i in range(workers or WORKERS)
        ]
        for worker in self._workers:
            worker.start()
        self._incoming: queue.SimpleQueue[tuple[socket.socket, Any, bytes]] = queue.SimpleQueue()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._closing = False
        self._waiting_count = 0
        self.descriptor_shortages = 0  # accepts that failed with EMFILE/ENFILE (a metric of both services)
        self._shed_wanted = False
        self._shed = threading.Event()
        self._shed_dropped = False
        self._shortage_logged = -SHORTAGE_LOG_SECONDS
        self._watcher = threading.Thread(target=self._watch, name="http-watch", daemon=True)
        self._watcher.start()

    def get_request(self) -> tuple[socket.socket, Any]:
        """Accept a connection. Out of file descriptors (`ulimit -n`, a flood of idle sockets: EMFILE)
        the listening socket stays readable, so `serve_forever` retried at once: 100% of a CPU and no
        answer until the idle sockets timed out. Now the watcher closes the oldest waiting connection
        (an idle one first) to make room and the accept waits for it, counted and logged."""
        try:
            return super().get_request()  # type: ignore[no-any-return]
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE):
                self._short_of_descriptors(exc)
            raise  # socketserver drops this accept; the next one follows

    def _short_of_descriptors(self, exc: OSError) -> None:
        self.descriptor_shortages += 1
        now = time.monotonic()
        if now - self._shortage_logged >= SHORTAGE_LOG_SECONDS:
            self._shortage_logged = now
            logging.getLogger(__name__).warning(
                "cannot accept a connection on %s: %s; closing the oldest waiting connection to make room",
                self.server_address,
                exc.strerror or exc,
            )
        self._shed.clear()
        self._shed_wanted = True
        self._wake()
        if not self._shed.wait(SHED_WAIT_SECONDS) or not self._shed_dropped:
            time.sleep(SHED_WAIT_SECONDS)  # nothing of ours to close: do not spin on the readable socket

    def process_request(self, request: Any, client_address: Any) -> None:
        """Called on the accept thread: hand the connection to the watcher, never block."""
        self._give_back(request, client_address, b"")

    def _give_back(self, request: Any, client_address: Any, data: bytes) -> None:
        self._incoming.put((request, client_address, data))
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # buffer full (a wake-up is pending already) or closed
            self._wake_w.send(b"\0")

    @property
    def waiting(self) -> int:
        """Connections on the watcher: idle, or with a request not complete yet (for tests)."""
        return self._waiting_count

    def _watch(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._wake_r, selectors.EVENT_READ)
        waiting: dict[socket.socket, _Waiting] = {}  # insertion order = oldest first
        continues = getattr(self.RequestHandlerClass, "protocol_version", "") >= "HTTP/1.1"

        def drop(sock: socket.socket) -> None:
            del waiting[sock]
            selector.unregister(sock)
            self.shutdown_request(sock)

        def advance(sock: socket.socket, conn: _Waiting) -> None:
            """Hand the request to a worker once complete; 431 for an endless header block."""
            size = request_size(conn.data, self.max_body_buffer)
            if size is not None and len(conn.data) >= size:
                del waiting[sock]
                selector.unregister(sock)
                self._jobs.put((sock, conn.address, bytes(conn.data)))
            elif size is None and len(conn.data) > MAX_HEADER_BYTES:
                with contextlib.suppress(OSError):
                    sock.setblocking(False)
                    sock.send(TOO_LARGE)
                drop(sock)
            elif not conn.continued and continues and waits_for_continue(conn.data, self.max_body_buffer):
                conn.continued = True  # the client holds its body back until it gets this
                with contextlib.suppress(OSError):
                    sock.setblocking(False)
                    sock.send(CONTINUE)

        try:
            while not self._closing:
                deadlines = [conn.deadline for conn in waiting.values()]
                timeout = max(0.0, min([1.0, *(d - time.monotonic() for d in deadlines)]))
                for key, _ in selector.select(timeout):
                    if key.fileobj is self._wake_r:
                        with contextlib.suppress(OSError):
                            while self._wake_r.recv(4096):
                                pass
                        continue
                    sock: socket.socket = key.fileobj  # type: ignore[assignment]
                    conn = waiting[sock]
                    try:
                        chunk = sock.recv(65536)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:
                        chunk = b""
                    if not chunk:  # closed by the client (or reset)
                        drop(sock)
                        continue
                    if not conn.data:  # a request starts: it has until the deadline to complete
                        conn.deadline = time.monotonic() + self.request_timeout
                    conn.data += chunk
                    advance(sock, conn)
                while True:
                    try:
                        sock, address, data = self._incoming.get_nowait()
                    except queue.Empty:
                        break
                    while waiting and len(waiting) >= self.max_connections:
                        drop(next(iter(waiting)))
                    try:
                        selector.register(sock, selectors.EVENT_READ)
                    except (OSError, ValueError):  # closed meanwhile: nothing to wait for
                        self.shutdown_request(sock)
                        continue
                    wait = self.request_timeout if data else self.idle_timeout
                    waiting[sock] = _Waiting(address, data, time.monotonic() + wait)
                    advance(sock, waiting[sock])
                if self._shed_wanted:  # the accept thread is out of descriptors
                    self._shed_wanted = False
                    victim = next(
                        (s for s, conn in waiting.items() if not conn.data), next(iter(waiting), None)
                    )
                    if victim is not None:
                        drop(victim)
                    self._shed_dropped = victim is not None
                    self._shed.set()
                pending = sum(len(conn.data) for conn in waiting.values())
                for sock in list(waiting):  # oldest first: over the byte budget, they give way
                    if pending <= self.max_pending_bytes:
                        break
                    if waiting[sock].data:
                        pending -= len(waiting[sock].data)
                        drop(sock)
                now = time.monotonic()
                for sock in [s for s, conn in waiting.items() if conn.deadline <= now]:
                    drop(sock)
                self._waiting_count = len(waiting)
        finally:
            for sock in waiting:
                self.shutdown_request(sock)
            selector.close()

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            self._serve(*job)

    def taken_bytes(self) -> bytes:
        """Called by the handler on a worker thread: the bytes the watcher read of its request."""
        data, self._local.data = self._local.data, b""
        return data

    def keep_alive(self, unread: bytes = b"") -> None:
        """Called by the handler on a worker thread: wait for the connection's next request (of
        which `unread` has arrived) without a thread, once the handler has finished."""
        self._local.keep = True
        self._local.unread = unread

    def _serve(self, request: Any, client_address: Any, data: bytes) -> None:
        self._local.keep, self._local.data, self._local.unread = False, data, b""
        try:
            self.finish_request(request, client_address)
        except Exception:
            self._local.keep = False
            self.handle_error(request, client_address)
        if self._local.keep and not self._closing:
            self._give_back(request, client_address, self._local.unread)  # back to the watcher
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
