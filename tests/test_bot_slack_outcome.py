"""The `outcome` label of the bot's Slack calls comes from a bounded set (issue #28, item 6)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from triton_sre.bot.slack import INVALID_RESPONSE, DeliveryError, SlackDelivery


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
