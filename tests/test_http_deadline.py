"""Prometheus queries (bot, report) end within their deadline, whole answer included (issue #28)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from triton_sre.prom import PromError, Prometheus

ANSWER = json.dumps(
    {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1, "2"]}]}}
).encode()


class _Server:
    """A loopback server answering every GET with a valid Prometheus answer, trickled or redirected."""

    def __init__(self, trickle: float = 0.0, location: str = "") -> None:
        stop = self.stop = threading.Event()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if location:
                    self.send_response(302)
                    self.send_header("Location", location + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(ANSWER)))
                self.end_headers()
                try:
                    for i in range(len(ANSWER)):
                        if trickle and stop.wait(trickle):
                            return
                        self.wfile.write(ANSWER[i : i + 1])
                        self.wfile.flush()
                except OSError:
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def servers() -> Iterator[list[_Server]]:
    made: list[_Server] = []
    yield made
    for server in made:
        server.close()


def test_a_trickled_valid_answer_is_an_error_at_the_deadline(servers: list[_Server]) -> None:
    servers.append(_Server(trickle=0.4))
    client = Prometheus(servers[0].url, timeout=1.0)
    started = time.monotonic()
    with pytest.raises(PromError, match="within 1s"):
        client.instant("up")
    assert time.monotonic() - started < 3  # the answer would take ~40 s


def test_a_prompt_answer_is_read(servers: list[_Server]) -> None:
    servers.append(_Server())
    assert Prometheus(servers[0].url, timeout=1.0).instant("up") == 2.0


def test_a_redirect_to_another_host_is_not_followed(servers: list[_Server]) -> None:
    other = _Server()
    servers.extend([other, _Server(location=other.url)])
    with pytest.raises(PromError, match="HTTP 302"):
        Prometheus(servers[1].url, timeout=1.0).instant("up")
