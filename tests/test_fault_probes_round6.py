"""Fault probes, round six (branch `probes6`, 2026-12-05): the HTTP edges of the exporter and the
bot (request bodies and their framing, `Expect: 100-continue`) and the Triton side as the commands
see it (docs/failure-behaviour.md, "Fault probes, round six")."""

from __future__ import annotations

import re
import socket
from urllib.parse import urlsplit

import pytest
from test_bot_receiver import WEBHOOK_TOKEN, bot, standin
from test_http_slow_clients import exporter

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.exporter.service import ExporterServer

__all__ = ["bot", "exporter", "standin"]  # fixtures shared with those modules
AUTH = b"Authorization: Bearer %s\r\n" % WEBHOOK_TOKEN.encode()


def exchange(port: int, data: bytes, wait: float = 3.0) -> bytes:
    """`data` sent on one connection, then everything the server answers until it closes the
    connection or stays silent for `wait` seconds."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(data)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except TimeoutError:
            pass
    return answer


def statuses(answer: bytes) -> list[bytes]:
    """The status lines of the responses in `answer` (a pipelined or smuggled request's too)."""
    return re.findall(rb"HTTP/1\.[01] \d{3} ", answer)


def port_of(server: Bot | ExporterServer) -> int:
    return int(urlsplit(server.url).port or 0)


# -- request bodies that would be read as the next request ---------------------------------------
SMUGGLED = b"GET /nosuch HTTP/1.1\r\nHost: x\r\n\r\n"


def _body_requests() -> dict[str, bytes]:
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(SMUGGLED), SMUGGLED)
    webhook = c.PATH_BOT_ALERTMANAGER.encode()
    return {
        "a GET with a Content-Length body": b"GET %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
        % (c.PATH_HEALTHZ.encode(), len(SMUGGLED), SMUGGLED),
        "a GET with a chunked body": b"GET %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%s"
        % (c.PATH_HEALTHZ.encode(), chunked),
        "a POST whose Transfer-Encoding ends in chunked, with a Content-Length": (
            b"POST %s HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\nContent-Length: 2\r\n"
            b"Transfer-Encoding: gzip, chunked\r\n\r\n{}%s" % (webhook, AUTH, SMUGGLED)
        ),
        "a POST with two Content-Length headers": (
            b"POST %s HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\nContent-Length: 2\r\n"
            b"Content-Length: %d\r\n\r\n{}%s" % (webhook, AUTH, 2 + len(SMUGGLED), SMUGGLED)
        ),
    }


@pytest.mark.parametrize("case", list(_body_requests()))
def test_a_request_body_is_never_read_as_the_next_request(bot: Bot, case: str) -> None:
    """The bot speaks HTTP/1.1 with keep-alive. A GET's body was left on the connection and read as
    the next request (a second response, 404, for the request inside the body); a chunked GET body
    was answered with an HTML 400 page; `Transfer-Encoding: gzip, chunked` beside a Content-Length was
    read by the Content-Length (only `chunked` exactly was refused), the rest taken as a request. Now
    any body the handler does not read closes the connection after the answer, and the webhook
    refuses any Transfer-Encoding (411) and two Content-Length headers (400)."""
    answer = exchange(port_of(bot), _body_requests()[case])
    lines = statuses(answer)
    assert len(lines) == 1, answer
    assert b"404" not in lines[0] and b"<html" not in answer.lower(), answer


def test_the_exporter_answers_a_get_with_a_body_once(exporter: ExporterServer) -> None:
    request = _body_requests()["a GET with a Content-Length body"]
    keep = request.replace(b"Host: x\r\n", b"Host: x\r\nConnection: keep-alive\r\n", 1)
    lines = statuses(exchange(port_of(exporter), keep))
    assert lines == [b"HTTP/1.0 200 "], lines


def test_keep_alive_still_serves_a_second_request_after_a_read_body(bot: Bot) -> None:
    """Only a connection with a body left unread is closed: two plain GETs on one connection are
    both answered."""
    plain = b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % c.PATH_HEALTHZ.encode()
    lines = statuses(exchange(port_of(bot), plain + plain, wait=1.0))
    assert lines == [b"HTTP/1.1 200 "] * 2, lines
