"""Kept-alive connections to the shared HTTP base (the bot's webhook receiver, the Slack stand-in):
a response's body is not held back behind its headers (Nagle's algorithm waited for the client's
delayed ACK, 40 ms per request; bench/RESULTS.md, twenty-first session)."""

from __future__ import annotations

import socket
import threading

import requests

from triton_sre.httpserve import BoundedHTTPServer, SafeHandler


class _Reports(SafeHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        nodelay = self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        self.send_json(200, {"nodelay": nodelay})


def test_every_request_of_a_kept_alive_connection_is_sent_without_delay() -> None:
    server = BoundedHTTPServer(("127.0.0.1", 0), _Reports)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        with requests.Session() as session:
            answers = [session.get(url, timeout=5) for _ in range(3)]
    finally:
        server.shutdown()
        server.server_close()
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert all(a.json()["nodelay"] for a in answers)
