"""Outbound HTTP with a deadline for the whole response, and no redirect to another host.

A per-read socket timeout does not bound a response: a server that sends a complete, valid answer
one byte every 0.4 s never trips it. `deadline(seconds)` arms a timer for the calling thread; every
connection a `new_session()` session uses inside it registers with the timer, which shuts the socket
down when the time is up (connect, headers and body alike), and `Deadline.expired` says so even
when the cut body happened to look complete. Sessions follow a redirect only to the same
scheme://host:port: another host's data is never served as this server's.

A leaf: requests and urllib3 only. Used by the Triton client (exporter, triage, bot) and the
Prometheus client (bot, report, demo).
"""

from __future__ import annotations

import contextlib
import ipaddress
import netrc  # noqa: F401 - requests imports it inside each request (get_netrc_auth): out of descriptors, that import failed
import socket
import ssl
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from requests.adapters import HTTPAdapter
from requests.utils import select_proxy
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

__all__ = [
    "Deadline",
    "DeadlineExceeded",
    "deadline",
    "describe",
    "fetch",
    "get",
    "is_loopback",
    "new_session",
    "watching",
]

_current = threading.local()


class DeadlineExceeded(TimeoutError):
    """The whole response did not arrive within the deadline."""


class Deadline:
    """One armed deadline: the connections used under it, cut when it expires."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def start(self) -> None:
        """Arm the timer (`deadline()` does it; a response read after its request's block, like a
        streamed body, arms one itself and `stop()`s it when read)."""
        self._timer.start()

    def stop(self) -> None:
        self._timer.cancel()

    def watch(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _cut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _cut(sock)


def _cut(sock: socket.socket) -> None:
    # The plain socket's shutdown (an SSLSocket's own would drop its state under the reader): the
    # blocked recv returns at once.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[Deadline]:
    """Every request of a `new_session()` session made by this thread inside the block ends within
    `seconds` (its socket is shut down); check `expired` afterwards, or catch `DeadlineExceeded`."""
    armed = Deadline(seconds)
    armed.start()
    try:
        with watching(armed):
            yield armed
    finally:
        armed.stop()


@contextlib.contextmanager
def watching(armed: Deadline) -> Iterator[None]:
    """The connections this thread's `new_session()` requests use inside the block are cut when
    `armed` expires, also after the block (their bodies may be read later, by any thread)."""
    outer = getattr(_current, "deadline", None)
    _current.deadline = armed
    try:
        yield
    finally:
        _current.deadline = outer


def _watch(conn: HTTPConnection) -> None:
    armed: Deadline | None = getattr(_current, "deadline", None)
    if armed is not None:
        armed.watch(conn.sock)


class _DeadlineHTTPConnection(HTTPConnection):
    def connect(self) -> None:
        super().connect()
        _watch(self)

    def request(self, *args: Any, **kwargs: Any) -> None:
        _watch(self)  # a kept-alive connection: connect() is not called again
        super().request(*args, **kwargs)


class _DeadlineHTTPSConnection(HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        _watch(self)

    def request(self, *args: Any, **kwargs: Any) -> None:
        _watch(self)
        super().request(*args, **kwargs)


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _DeadlineHTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _DeadlineHTTPSConnection


class _DeadlineAdapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        if kwargs.get("proxies") and is_loopback(urlsplit(request.url or "").hostname):
            kwargs["proxies"] = {}  # every way a request is sent (redirects too) passes here
            # requests puts the proxy's credentials on a redirected plain-http request for the proxy it
            # chose (rebuild_proxies); sent directly, they would go to the server itself
            request.headers.pop("Proxy-Authorization", None)
        proxied = bool(kwargs.get("proxies")) and bool(select_proxy(request.url or "", kwargs["proxies"]))
        try:
            return super().send(request, *args, **kwargs)
        except (requests.exceptions.InvalidURL, requests.exceptions.InvalidSchema) as exc:
            if not proxied:
                raise
            # The proxy's URL, not the request's, was refused ('[::1' is not a valid host, no SOCKS
            # support installed): said as the proxy's, so the request's URL is not blamed.
            raise requests.exceptions.ProxyError(f"its URL cannot be used: {exc}", request=request) from None


def is_loopback(host: str | None) -> bool:
    """`localhost` or a loopback address: never reached through a proxy from the environment.

    A sidecar reaches Triton and Prometheus on `localhost`; a proxy set for the pod or the machine
    (`HTTP_PROXY` without `localhost` in `NO_PROXY`) would be asked for its own loopback instead. Go's
    net/http, which Prometheus and Alertmanager use, never proxies these hosts either.

    An address is read as the C library reads it when it connects (`getaddrinfo` on a numeric host,
    no lookup): `127.1`, `0x7f000001`, `2130706433`, `0177.0.0.1` and `127.000.000.001` are 127.0.0.1
    there, though Python's and Go's parsers refuse them. The unspecified address (`0.0.0.0`, `0`, `::`)
    is this machine too: Linux connects it to loopback.

    Other names, those `/etc/hosts` maps to 127.0.0.1 included (`localhost.localdomain`, `ip6-localhost`),
    go to the proxy, as in Go 1.19's net/http; curl 7.88 and plain requests proxy even `localhost`
    (measured, probes20). Knowing them would take a lookup before choosing the proxy: the local resolver
    would be asked (and waited on) for names the proxy is there to resolve. `NO_PROXY` lists them."""
    if not host:
        return False
    name = host.rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        found = socket.getaddrinfo(name.split("%", 1)[0], None, flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError, ValueError):
        return False  # a name (its resolution is the proxy's), or no address at all
    return bool(found) and all(_this_machine(entry[4][0]) for entry in found)


def _this_machine(text: str) -> bool:
    address = ipaddress.ip_address(text.split("%", 1)[0])
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1, as Go reads it
    return any(a is not None and (a.is_loopback or a.is_unspecified) for a in (address, mapped))


class _SameHostSession(requests.Session):
    def get_redirect_target(self, resp: requests.Response) -> str | None:
        target = super().get_redirect_target(resp)
        if target is None:
            return None
        here, there = urlsplit(resp.url), urlsplit(urljoin(resp.url, target))
        if (there.scheme, there.netloc) != (here.scheme, here.netloc):
            return None  # the 3xx itself is the answer: the caller reports the status
        return target


def new_session(host_url: str | None = None) -> requests.Session:
    """A session whose requests honour `deadline` and follow redirects on the same host only.

    With `host_url` (a session that only talks to that scheme://host:port, as its redirects do) the
    environment's settings (proxies and NO_PROXY, CA bundle, .netrc credentials) are read once for
    it, not on every request: requests walks the whole environment twice per call, ~0.5 ms, which
    was most of doctor's time per model config on a 20,000-model server."""
    session = _SameHostSession()
    adapter = _DeadlineAdapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    if host_url is not None:
        settings = session.merge_environment_settings(host_url, {}, None, None, None)
        session.proxies.update(settings["proxies"])
        session.verify = settings["verify"]
        session.auth = requests.utils.get_netrc_auth(host_url)
        session.trust_env = False
    return session


def get(url: str, timeout: float, **kwargs: Any) -> requests.Response:
    """One GET on a session of its own (`new_session()`): like `requests.get`, but loopback is never
    asked of the environment's proxy (the local stack's readiness and status reads)."""
    with new_session() as session:
        return session.get(url, timeout=timeout, **kwargs)


def fetch(
    session: requests.Session, method: str, url: str, seconds: float, **kwargs: Any
) -> requests.Response:
    """One request of a `new_session()` session whose whole answer, body read, ends within `seconds`:
    `DeadlineExceeded` when the time ran out (its socket shut down), requests' own errors otherwise."""
    response = None
    with deadline(seconds) as armed:
        try:
            response = session.request(method, url, timeout=seconds, **kwargs)
            response.content  # noqa: B018  # the body is read inside the deadline
        except requests.RequestException:
            if not armed.expired:
                raise
    if armed.expired or response is None:  # raised here: no cut connection's error in its context
        raise DeadlineExceeded(f"no whole answer within {seconds:g} s")
    return response


def describe(exc: BaseException) -> str:
    """The reason a request failed, in a few words: the operating system's reason at the bottom of
    requests' and urllib3's wrappers (`Connection refused`, `Name or service not known`), `timed out`,
    else the exception's own text cut to 200 characters. Never the pool and retry wording
    (`HTTPConnectionPool(...): Max retries exceeded ... NewConnectionError(...)`). A request that failed
    at the proxy the environment names says so (its URL, which may hold credentials, unsaid)."""
    seen = _chain(exc)
    reason = _reason(exc, seen)
    if any(type(link).__name__ == "ProxyError" for link in seen):
        return f"{PROXY_FAILED}: {reason}"
    return reason


PROXY_FAILED = "at the proxy set in the environment (HTTP_PROXY, HTTPS_PROXY or ALL_PROXY)"


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and every exception under it: __cause__/__context__, urllib3's `reason`, exceptions held in
    args; depth first, the last held first."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo:
        link = todo.pop()
        if any(link is old for old in seen):
            continue
        seen.append(link)
        nested = (link.__cause__, link.__context__, getattr(link, "reason", None), *link.args)
        todo.extend(n for n in nested if isinstance(n, BaseException))
    return seen


def _reason(exc: BaseException, seen: list[BaseException]) -> str:
    said = None  # urllib3's own OSError without an errno: "Tunnel connection failed: 403 Forbidden"
    for link in seen:
        if isinstance(link, ssl.SSLError):
            return _tls_reason(link)
        if type(link).__name__ == "IncompleteRead":  # urllib3's and http.client's
            return _cut_short(link)
        if type(link).__name__ == "InvalidChunkLength" or str(link) == "Response ended prematurely":
            return CUT_CHUNKED  # urllib3 met the closed connection where a chunk should be
        if type(link).__name__ in ("ContentDecodingError", "DecodeError"):  # requests' and urllib3's
            return UNDECODABLE
        if isinstance(link, OSError) and link.strerror:
            return str(link.strerror)
        if type(link) is OSError and said is None and link.args and isinstance(link.args[0], str):
            said = link.args[0]
    if any(isinstance(link, (TimeoutError, socket.timeout, requests.Timeout)) for link in seen):
        return "timed out"
    text = said or str(exc)
    return text if len(text) <= 200 else text[:197] + "..."


PLAIN_HTTP_CLOSED = (
    "the server closed the connection without answering it (Triton's HTTP and metrics ports, which "
    "serve plain HTTP, do that: use http://, not https://, unless this server serves TLS)"
)
"""What a plain-HTTP server that reads a TLS hello as a bad request and hangs up says (measured: Triton
2.51's HTTP and metrics ports, Python's http.server); one that answers the hello in text is named above."""
_PLAIN_HTTP_REASONS = frozenset({"WRONG_VERSION_NUMBER", "HTTP_REQUEST", "RECORD_LAYER_FAILURE"})
"""OpenSSL's reasons when the other side answers a TLS handshake in plain text (an https:// URL
given for a plain-HTTP port)."""


CA_BUNDLE_ENV = "REQUESTS_CA_BUNDLE"
"""requests' variable naming the CA certificates to trust: every session here reads it (a private CA,
a self-signed server). No command has an option of its own for it."""
_UNTRUSTED_ISSUER = frozenset({2, 18, 19, 20, 21})
"""OpenSSL's verify codes for a certificate whose issuer is not trusted here: unable to get issuer
certificate (locally), self-signed (leaf or in the chain), unable to verify the leaf. A wrong host
name (62) or an expired certificate (10) is no question of trust: no hint."""


def _tls_reason(exc: ssl.SSLError) -> str:
    """A failed TLS handshake in words: a plain-HTTP port is named as such (OpenSSL says `wrong
    version number`), a certificate problem keeps OpenSSL's own text."""
    if (exc.reason or "").upper() in _PLAIN_HTTP_REASONS:
        return "TLS handshake failed: the server answered in plain HTTP (use http://, not https://)"
    if isinstance(exc, ssl.SSLEOFError):  # OpenSSL 3: UNEXPECTED_EOF_WHILE_READING
        return f"TLS handshake failed: {PLAIN_HTTP_CLOSED}"
    text = getattr(exc, "verify_message", None) or exc.reason or str(exc)
    if getattr(exc, "verify_code", None) in _UNTRUSTED_ISSUER:
        text += f" (to trust it, point {CA_BUNDLE_ENV} at its CA's PEM file)"
    return f"TLS handshake failed: {text}"


CUT_CHUNKED = "the answer was cut: the connection closed before its last chunk (a chunked answer)"
UNDECODABLE = (
    "the body does not decode as its Content-Encoding says (a proxy labelling what it did not compress?)"
)


def _cut_short(exc: BaseException) -> str:
    """An answer whose connection closed before its Content-Length: how far it got."""
    partial = getattr(exc, "partial", None)
    got = len(partial) if isinstance(partial, bytes | bytearray) else partial
    more = getattr(exc, "expected", None)
    if isinstance(got, int) and isinstance(more, int):
        short = f"{more:,} short of its Content-Length"
        return f"the answer stopped after {got:,} bytes, {short} (connection closed)"
    return "the answer was cut: the connection closed before its end"
