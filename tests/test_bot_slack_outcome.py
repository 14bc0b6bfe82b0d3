"""The `outcome` label of the bot's Slack calls comes from a bounded set (issue #28, item 6)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from triton_sre.bot.slack import (
    INVALID_RESPONSE,
    MAX_RETRY_AFTER_SECONDS,
    DeliveryError,
    SlackDelivery,
    retry_after_seconds,
)


@pytest.fixture
def html_proxy() -> Iterator[str]:
    """A proxy in front of Slack answering every call 200 with its own HTML page, different each time."""
    served = [0]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            served[0] += 1
            page = f"<html><head><title>Proxy notice {served[0]}</title></head><body>{'x' * 300}</body>"
            body = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/api/"
    httpd.shutdown()
    httpd.server_close()


def test_an_html_page_is_one_outcome_value(html_proxy: str) -> None:
    outcomes: list[str] = []
    delivery = SlackDelivery("xoxb-test", html_proxy, timeout=5, on_call=lambda m, o: outcomes.append(o))
    for _ in range(3):
        with pytest.raises(DeliveryError) as raised:
            delivery.post("#c", "hello")
        assert raised.value.retryable
    assert outcomes == [INVALID_RESPONSE] * 3
    assert "Proxy notice" in str(raised.value)  # the operator still sees what answered


class _Slack:
    """A loopback 'Slack' answering `{"ok": true, ...}` one byte every 0.4 s, or redirecting away."""

    def __init__(self, trickle: bool = False, location: str = "") -> None:
        stop = self.stop = threading.Event()
        self.hits = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.hits += 1
                if location:
                    self.send_response(302)
                    self.send_header("Location", location + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = b'{"ok": true, "channel": "C1", "ts": "1.000001"}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    for i in range(len(body)):
                        if trickle and stop.wait(0.4):
                            return
                        self.wfile.write(body[i : i + 1])
                        self.wfile.flush()
                except OSError:
                    pass

            def do_GET(self) -> None:  # urllib turns a redirected POST into a GET
                owner.hits += 1
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/api/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def test_slack_answer_trickled_is_a_retryable_network_error_at_the_deadline() -> None:
    import time

    fast, slow = _Slack(), _Slack(trickle=True)
    try:
        assert SlackDelivery("xoxb-test", fast.url, timeout=1).post("#c", "hello") == "1.000001"
        outcomes: list[str] = []
        delivery = SlackDelivery("xoxb-test", slow.url, timeout=1, on_call=lambda m, o: outcomes.append(o))
        started = time.monotonic()
        with pytest.raises(DeliveryError) as raised:
            delivery.post("#c", "hello")
        assert time.monotonic() - started < 3  # the answer would take ~19 s
        assert raised.value.retryable and outcomes == ["network"]
    finally:
        fast.close()
        slow.close()


def test_slack_redirect_to_another_host_is_not_followed() -> None:
    other = _Slack()
    redirecting = _Slack(location=other.url.removesuffix("/api/"))
    try:
        with pytest.raises(DeliveryError):
            SlackDelivery("xoxb-secret", redirecting.url, timeout=2).post("#c", "hello")
        assert other.hits == 0  # the bot token never went to the other host
    finally:
        other.close()
        redirecting.close()


@pytest.mark.parametrize(
    ("header", "low", "high"),
    [
        ("7", 7.0, 7.0),
        ("inf", 1.0, 1.0),
        ("nan", 1.0, 1.0),
        ("-3", 1.0, 1.0),
        ("soon", 1.0, 1.0),
        ("1e12", MAX_RETRY_AFTER_SECONDS, MAX_RETRY_AFTER_SECONDS),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0, 0.0),  # an HTTP date in the past: go now
        (None, 1.0, 1.0),
    ],
)
def test_retry_after_is_a_bounded_pause(header: str | None, low: float, high: float) -> None:
    assert low <= retry_after_seconds(header) <= high


def test_retry_after_as_an_http_date_is_the_time_until_it() -> None:
    now = 1_800_000_000.0
    assert retry_after_seconds(formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30.0)
