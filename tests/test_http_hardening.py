"""The exporter's HTTP server against hostile clients (issue #12, defects 5 and 6): idle and
stalled connections are closed, threads stay bounded, a scrape is answered while hundreds of
silent sockets are open, and every method but GET/HEAD is 405 with an Allow header."""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import requests

from triton_sre import conventions as c
from triton_sre import httpserve
from triton_sre.config import ExporterSettings
from triton_sre.exporter.service import Exporter, ExporterServer
from triton_sre.stack.processes import free_port


@pytest.fixture
def server() -> Iterator[ExporterServer]:
    """An exporter whose Triton is absent: the HTTP side is what is under test."""
    absent = f"http://127.0.0.1:{free_port()}"
    settings = ExporterSettings(triton_url=absent, metrics_url=absent + "/metrics", interval=30, timeout=0.5)
    with ExporterServer(Exporter(settings), "127.0.0.1", 0) as running:
        yield running


def raw_request(port: int, method: str, path: str = c.PATH_METRICS) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request(method, path)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


@pytest.mark.parametrize(
    "method", ["OPTIONS", "TRACE", "PROPFIND", "BREW", "POST", "PUT", "DELETE", "PATCH", "CONNECT"]
)
def test_methods_other_than_get_and_head_are_405(server: ExporterServer, method: str) -> None:
    for path in (c.PATH_METRICS, "/nope"):
        response = raw_request(server.port, method, path)
        assert response.status == 405, (method, path)
        assert response.getheader("Allow") == "GET, HEAD"


def test_get_and_head_still_work(server: ExporterServer) -> None:
    assert raw_request(server.port, "GET", c.PATH_HEALTHZ).status == 200
    head = raw_request(server.port, "HEAD", c.PATH_METRICS)
    assert head.status == 200 and int(head.getheader("Content-Length")) > 0


def test_600_idle_sockets_hold_no_threads_and_a_scrape_is_answered(server: ExporterServer) -> None:
    threads_before = threading.active_count()
    idle = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(600)]
    try:
        # wait until the server has accepted them all (or has spent a thread on each)
        limit = threads_before + httpserve.WORKERS
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if getattr(server._httpd, "waiting", 0) == 600 or threading.active_count() > limit:
                break
            time.sleep(0.05)
        assert threading.active_count() <= limit
        response = requests.get(server.url + c.PATH_METRICS, timeout=5)
        assert response.status_code == 200
        assert c.M_UP in response.text
        assert threading.active_count() <= limit
        assert server._httpd.waiting == 600  # all still open, none holding a thread
    finally:
        for sock in idle:
            sock.close()


def test_idle_and_stalled_connections_are_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(httpserve, "IDLE_TIMEOUT_SECONDS", 0.3)
    monkeypatch.setattr(httpserve.SafeHandler, "timeout", 0.3)
    absent = f"http://127.0.0.1:{free_port()}"
    settings = ExporterSettings(triton_url=absent, metrics_url=absent + "/metrics", interval=30, timeout=0.5)
    with ExporterServer(Exporter(settings), "127.0.0.1", 0) as running:
        silent = socket.create_connection(("127.0.0.1", running.port), timeout=10)
        stalled = socket.create_connection(("127.0.0.1", running.port), timeout=10)
        stalled.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never finishes its headers
        with contextlib.closing(silent), contextlib.closing(stalled):
            assert silent.recv(100) == b""  # closed by the server, well before our 10 s
            assert stalled.recv(100) == b""


def test_oldest_waiting_connection_gives_way_when_full() -> None:
    class Hello(httpserve.SafeHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

    httpd = httpserve.BoundedHTTPServer(("127.0.0.1", 0), Hello, max_connections=3)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        port = httpd.server_address[1]
        first = socket.create_connection(("127.0.0.1", port), timeout=10)
        others = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(3)]
        assert first.recv(10) == b""  # evicted for the newest
        assert requests.get(f"http://127.0.0.1:{port}/", timeout=5).text == "ok"
        for sock in [first, *others]:
            sock.close()
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_keep_alive_connections_wait_between_requests_without_a_thread() -> None:
    class KeepAlive(httpserve.SafeHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

    httpd = httpserve.BoundedHTTPServer(("127.0.0.1", 0), KeepAlive, workers=1, idle_timeout=1.0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        port = httpd.server_address[1]
        first = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        first.request("GET", "/")
        assert first.getresponse().read() == b"ok"  # the connection stays open (HTTP/1.1)
        # the only worker is free again: another client is answered while `first` idles
        second = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        second.request("GET", "/")
        assert second.getresponse().read() == b"ok"
        first.request("GET", "/")  # the kept-alive connection still works
        assert first.getresponse().read() == b"ok"
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        raw.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")  # pipelined
        received = b""
        while received.count(b"ok") < 2:
            received += raw.recv(4096)
        assert raw.recv(10) == b""  # then closed after the idle timeout, by the watcher
        for conn in (first, second, raw):
            conn.close()
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_port_in_use_is_an_oserror_not_a_crash_in_cleanup() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError) as raised:
            httpserve.BoundedHTTPServer(("127.0.0.1", taken.getsockname()[1]), httpserve.SafeHandler)
        assert not isinstance(raised.value, AttributeError)
