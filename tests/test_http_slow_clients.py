"""Slow clients against the shared HTTP base (issue #26, item 1): connections that trickle their
headers or body (each read arrives in time, the request never completes) take no worker, so the
exporter's and the bot's scrapes keep being answered; their requests are closed at the deadline."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

from triton_sre import conventions as c
from triton_sre import httpframing, httpserve
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings
from triton_sre.config import ExporterSettings
from triton_sre.exporter.service import Exporter, ExporterServer
from triton_sre.stack.processes import free_port

TRICKLERS = 60
TRICKLE_SECONDS = 6.0
SCRAPE_TIMEOUT = 2.0


def absent_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture
def exporter() -> Iterator[ExporterServer]:
    absent = absent_url()
    settings = ExporterSettings(triton_url=absent, metrics_url=absent + "/metrics", interval=30, timeout=0.5)
    with ExporterServer(Exporter(settings), "127.0.0.1", 0) as running:
        yield running


@pytest.fixture
def bot(tmp_path: Path) -> Iterator[Bot]:
    settings = BotSettings(channel="#t", listen="127.0.0.1:0", triton_url=absent_url())
    tokens = ("am-" + uuid.uuid4().hex, "xoxb-" + uuid.uuid4().hex)
    with Bot(settings, tmp_path / "outbox.sqlite3", *tokens, absent_url(), "sig") as running:
        yield running


Step = Callable[[int], bytes]


def trickle(port: int, first: bytes, step: Step, stop: threading.Event) -> list[socket.socket]:
    """TRICKLERS connections sending `first`, then `step(i)` every second, until `stop`."""
    socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(TRICKLERS)]
    for sock in socks:
        sock.sendall(first)

    def drive() -> None:
        i = 0
        while not stop.wait(1.0):
            for sock in socks:
                with contextlib.suppress(OSError):
                    sock.sendall(step(i))
            i += 1

    threading.Thread(target=drive, daemon=True).start()
    return socks


def scrapes_while_trickling(url: str, port: int, first: bytes, step: Step) -> list[float]:
    """The seconds each scrape of `url` took while TRICKLERS slow clients were connected."""
    stop = threading.Event()
    socks = trickle(port, first, step, stop)
    took: list[float] = []
    try:
        end = time.monotonic() + TRICKLE_SECONDS
        while time.monotonic() < end:
            start = time.monotonic()
            response = requests.get(url, timeout=SCRAPE_TIMEOUT)
            took.append(time.monotonic() - start)
            assert response.status_code == 200
            time.sleep(0.5)
    finally:
        stop.set()
        for sock in socks:
            sock.close()
    return took


def header_lines(i: int) -> bytes:
    return f"X-Slow-{i}: {'a' * 20}\r\n".encode()


def test_trickled_headers_do_not_starve_the_exporters_scrapes(exporter: ExporterServer) -> None:
    took = scrapes_while_trickling(
        exporter.url + c.PATH_METRICS, exporter.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n", header_lines
    )
    assert len(took) >= 8 and max(took) < SCRAPE_TIMEOUT


def test_trickled_headers_and_bodies_do_not_starve_the_bot(bot: Bot) -> None:
    port = int(bot.url.rsplit(":", 1)[1])
    body_head = (
        b"POST " + c.PATH_BOT_ALERTMANAGER.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"
    )
    took = scrapes_while_trickling(bot.url + c.PATH_HEALTHZ, port, body_head, lambda i: b" ")
    assert len(took) >= 8 and max(took) < SCRAPE_TIMEOUT
    took = scrapes_while_trickling(bot.url + c.PATH_METRICS, port, b"GET / HTTP/1.1\r\n", header_lines)
    assert len(took) >= 8 and max(took) < SCRAPE_TIMEOUT


def test_a_request_not_complete_by_its_deadline_is_closed() -> None:
    class Hello(httpserve.SafeHandler):
        timeout = 1.0

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = httpserve.BoundedHTTPServer(("127.0.0.1", 0), Hello, workers=1)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        port = httpd.server_address[1]
        slow = socket.create_connection(("127.0.0.1", port), timeout=10)
        slow.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
        start = time.monotonic()
        with contextlib.suppress(OSError):
            for _ in range(20):  # a byte every 0.3 s: each in time, the whole never (10 needs 3 s)
                slow.sendall(b"x")
                time.sleep(0.3)
        assert slow.recv(100) == b""  # closed unanswered ...
        assert time.monotonic() - start < 2.5  # ... at the 1 s request deadline (plus a tick)
        slow.close()
        # a body that completes in time is answered by the only worker, all of it
        done = socket.create_connection(("127.0.0.1", port), timeout=10)
        done.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab")
        time.sleep(0.3)
        done.sendall(b"cd")
        answer = b""
        while chunk := done.recv(4096):  # HTTP/1.0: the server closes after the answer
            answer += chunk
        assert answer.startswith(b"HTTP/1.0 200") and answer.endswith(b"\r\n\r\nabcd")
        done.close()
        huge = socket.create_connection(("127.0.0.1", port), timeout=10)
        huge.sendall(b"GET / HTTP/1.1\r\n" + b"X: " + b"a" * (httpserve.MAX_HEADER_BYTES + 10))
        assert huge.recv(100).startswith(b"HTTP/1.1 431")
        huge.close()
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_request_size() -> None:
    head = b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n"
    assert httpframing.request_size(head[:-2], 100) is None
    assert httpframing.request_size(head, 100) == len(head) + 5
    assert httpframing.request_size(head, 4) == len(head)  # too large to buffer: the handler's
    assert httpframing.request_size(b"GET / HTTP/1.0\n\n", 100) == 16
    chunked = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
    assert httpframing.request_size(chunked, 100) == len(chunked)
