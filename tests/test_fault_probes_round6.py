"""Fault probes, round six (branch `probes6`, 2026-12-05): the HTTP edges of the exporter and the
bot (request bodies and their framing, `Expect: 100-continue`) and the Triton side as the commands
see it (docs/failure-behaviour.md, "Fault probes, round six")."""

from __future__ import annotations

import contextlib
import gzip
import json
import re
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from test_bot_receiver import WEBHOOK_TOKEN, bot, notification, post, standin, total
from test_fault_probes import _serve, assert_clean_error, html_url, run
from test_http_slow_clients import exporter

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.exporter.service import ExporterServer
from triton_sre.stack.components import STATE_FILE

__all__ = ["bot", "exporter", "html_url", "standin"]  # fixtures shared with those modules
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


# -- Expect: 100-continue -------------------------------------------------------------------------
def _expecting(bot: Bot, body: bytes, token: bytes) -> tuple[bytes, float, bytes]:
    """A client that sends its headers with `Expect: 100-continue` and holds the body back until the
    server says `100 Continue` (as .NET, Go with ExpectContinueTimeout, and curl for large bodies do):
    what came before the body was sent, how long that took, and the final answer."""
    head = (
        b"POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
        b"Expect: 100-continue\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
        % (c.PATH_BOT_ALERTMANAGER.encode(), token, len(body))
    )
    with socket.create_connection(("127.0.0.1", port_of(bot)), timeout=15) as sock:
        sock.sendall(head)
        start = time.monotonic()
        interim = sock.recv(65536)
        waited = time.monotonic() - start
        sock.sendall(body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return interim, waited, answer


def test_a_client_waiting_for_100_continue_gets_it_and_its_webhook_is_queued(bot: Bot) -> None:
    """The watcher waited for the Content-Length body before any handler ran, and nothing sent
    `100 Continue`: a client that waits for it before sending its body (RFC 9110) got no answer and
    was dropped at the 10 s request deadline, its notification lost to the retry of Alertmanager's
    sender. Now the watcher sends `100 Continue` once the header block is in and keeps reading."""
    before = total(bot)
    body = json.dumps(notification(uuid.uuid4().hex[:8])).encode()
    interim, waited, answer = _expecting(bot, body, WEBHOOK_TOKEN.encode())
    assert interim.startswith(b"HTTP/1.1 100 Continue\r\n\r\n") and waited < 2.0, (interim, waited)
    assert statuses(interim + answer)[-1] == b"HTTP/1.1 200 ", answer
    assert b'"queued"' in answer and total(bot) == before + 1


def test_a_wrong_token_after_100_continue_is_still_refused(bot: Bot) -> None:
    before = total(bot)
    interim, _, answer = _expecting(bot, b"{}", b"wrong")
    assert statuses(interim + answer) == [b"HTTP/1.1 100 ", b"HTTP/1.1 401 "], interim + answer
    assert total(bot) == before


# -- the Triton side and Prometheus as the commands see them ---------------------------------------
CUT_BODY = b'{"name": "triton", "version": "2.51.0", "exte'


@pytest.fixture(scope="module")
def cut_short_url() -> Iterator[str]:
    """A server that answers 200 with `Content-Length: 100` and closes after 45 bytes of JSON (a
    proxy or a Triton that dies mid-answer)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = listener.accept()
                with conn:
                    head = b""
                    while b"\r\n\r\n" not in head and (chunk := conn.recv(4096)):
                        head += chunk
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                        + CUT_BODY
                    )
                    conn.shutdown(socket.SHUT_RDWR)

    threading.Thread(target=serve, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


VERSIONS = ["--baseline-version", "1", "--candidate-version", "2"]
CUT_SHORT = f"the answer stopped after {len(CUT_BODY)} bytes, {100 - len(CUT_BODY)} short"


@pytest.mark.parametrize("command", ["doctor", "triage", "rollout"])
def test_an_answer_that_stops_mid_json_is_named_as_such(
    tmp_path: Path, cut_short_url: str, command: str
) -> None:
    """urllib3's text came out as it was: `('Connection broken: IncompleteRead(44 bytes read, 45 more
    expected)', IncompleteRead(44 bytes read, 45 more expected))`. Now `httpclient.describe` says how
    far the answer got."""
    secret = cut_short_url.replace("http://", "http://probe:hunter2@")
    args = {
        "doctor": ["doctor", "--triton-url", secret, "--timeout", "3"],
        "triage": ["triage", "--triton-url", secret],
        "rollout": ["rollout", "check", "--prometheus", secret, "--model", "m", *VERSIONS],
    }[command]
    code, out, err = run(args, tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, CUT_SHORT, "(connection closed)")
    assert "IncompleteRead" not in err and "hunter2" not in err + out


def test_an_https_url_to_a_plain_http_port_says_so(tmp_path: Path, html_url: str) -> None:
    """OpenSSL's words came out as they were: `[SSL: WRONG_VERSION_NUMBER] wrong version number
    (_ssl.c:1006)`."""
    url = html_url.replace("http://", "https://")
    code, _, err = run(["doctor", "--triton-url", url, "--timeout", "3"], tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, "TLS handshake failed", "plain HTTP", "use http://")
    assert "_ssl.c" not in err


@pytest.fixture(scope="module")
def empty_metrics_url() -> Iterator[str]:
    """A Triton stand-in with one READY model whose metrics endpoint answers 200 with no body."""
    answers = {
        "/v2": {"name": "triton", "version": "2.51.0"},
        "/v2/repository/index": [{"name": "m", "version": "1", "state": c.STATE_READY}],
        "/v2/models/stats": {"model_stats": []},
        "/v2/models/m/config": {"name": "m", "max_batch_size": 0},
    }

    def answer(path: str) -> tuple[bytes, str]:
        if path == c.PATH_METRICS:
            return b"", "text/plain"
        return json.dumps(answers.get(path, {})).encode(), "application/json"

    yield from _serve(answer)


def test_doctor_on_a_metrics_endpoint_answering_an_empty_body_says_so(
    tmp_path: Path, empty_metrics_url: str
) -> None:
    """An empty 200 (a proxy, another service on the port) was read as a Triton that exports
    nothing: `MISSING latency-quantiles: Triton exports latency averages only`, `MISSING cpu-metrics`,
    exit 1, fixes for flags that were not the problem. Triton writes every loaded model's request
    counters, so an empty body beside READY models is the wrong endpoint: exit 2, one line."""
    url = empty_metrics_url.replace("http://", "http://probe:hunter2@")
    code, out, err = run(["doctor", "--triton-url", url, "--metrics-url", url + c.PATH_METRICS], tmp_path)
    assert_clean_error(
        code, err, c.EXIT_USAGE, "answered an empty body", "1 model(s) are READY", "--metrics-url"
    )
    assert out == "" and "hunter2" not in err


def test_a_compressed_webhook_is_refused_as_such(bot: Bot) -> None:
    """A gzip body (a proxy compressing requests) was answered 400 `body is not valid JSON`: the
    sender was told its JSON was wrong. Now 415 naming the encoding, nothing queued; the same
    webhook sent plain is queued."""
    before = total(bot)
    body = json.dumps(notification(uuid.uuid4().hex[:8])).encode()
    compressed = post(
        bot, gzip.compress(body), **{"Content-Type": "application/json", "Content-Encoding": "gzip"}
    )
    assert compressed.status_code == 415 and "gzip" in compressed.json()["error"], compressed.text
    assert total(bot) == before
    plain = post(bot, body, **{"Content-Type": "application/json", "Content-Encoding": "identity"})
    assert plain.status_code == 200 and total(bot) == before + 1, plain.text


@pytest.mark.parametrize("command", [["stack", "up"], ["demo"]])
@pytest.mark.parametrize("interval", ["0.05", "100000"])
def test_an_interval_the_exporter_refuses_is_refused_before_the_stack_starts(
    tmp_path: Path, command: list[str], interval: str
) -> None:
    """`stack up --interval 0.05` passed parsing (any number above 0), started the exporter, which
    refused it (`configuration error: --interval: must be at least 0.1`), then stopped: exit 1, a
    failure while running. The flag is the exporter's poll interval, so it is checked as such at
    parsing: exit 2, nothing started (no state file)."""
    workdir = tmp_path / "stack"
    args = [*command, "--workdir", str(workdir), "--interval", interval]
    code, out, err = run(args, tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, "--interval", "0.1 to 86400", repr(interval))
    assert not (workdir / STATE_FILE).exists() and "started" not in err and out == ""


# -- a Prometheus whose configuration answer is not what Prometheus writes -----------------------
CONFIG_SHAPES = {  # the answer's `yaml` -> the interval read (Prometheus' default 1m when unsaid)
    "yaml is a number": (5, None),
    "global is a list": ("global: [1]\n", 60.0),
    "scrape_configs is a number": ("scrape_configs: 5\n", 60.0),
    "a scrape config is text": ("scrape_configs: [triton]\nglobal: {scrape_interval: 30s}\n", 30.0),
}
TRITON_ANSWERS = {
    "/v2": {"name": "triton", "version": "2.51.0"},
    "/v2/repository/index": [],
    "/v2/models/stats": {"model_stats": []},
}


def _prometheus_with_config(config: object) -> Iterator[str]:
    """Prometheus' API answering `config` as its configuration, and a Triton with no model."""

    def answer(path: str) -> tuple[bytes, str]:
        if path == c.PATH_METRICS:
            return f"{c.NV_REQUEST_SUCCESS} 1\n".encode(), "text/plain"
        if path in TRITON_ANSWERS:
            return json.dumps(TRITON_ANSWERS[path]).encode(), "application/json"
        data: object = {"yaml": config} if path == "/api/v1/status/config" else {}
        if path == "/api/v1/targets":
            data = {"activeTargets": []}
        return json.dumps({"status": "success", "data": data}).encode(), "application/json"

    yield from _serve(answer)


@pytest.mark.parametrize("shape", list(CONFIG_SHAPES))
def test_a_configuration_answer_of_another_shape_has_no_scrape_interval(tmp_path: Path, shape: str) -> None:
    """`Prometheus.scrape_interval` (doctor's scrape-interval check, the report) indexed the answer as
    Prometheus writes it: `doctor --prometheus-url` ended in `internal error: AttributeError: 'int'
    object has no attribute 'read'` (`yaml: 5`), `'list' object has no attribute 'get'` (`global:
    [1]`), `TypeError: 'int' object is not iterable` (`scrape_configs: 5`). Now such an answer says
    no interval (None, the global one where it is readable), and doctor reports its checks."""
    from triton_sre.prom import Prometheus

    config, expected = CONFIG_SHAPES[shape]
    servers = _prometheus_with_config(config)
    url = next(servers)
    try:
        assert Prometheus(url, timeout=3).scrape_interval("triton") == expected
        code, _, err = run(
            ["doctor", "--triton-url", url, "--metrics-url", url + c.PATH_METRICS, "--prometheus-url", url],
            tmp_path,
        )
        assert "internal error" not in err and "Traceback" not in err, err
        assert code == c.EXIT_FAILURE, err  # checks reported: the generated rules are not loaded
    finally:
        servers.close()


@pytest.mark.parametrize(("written", "fix"), [("1e-3", "1.0e-3"), ("5E2", "5.0e+2"), ("1.0e3", "1.0e+3")])
def test_a_number_yaml_reads_as_text_says_why_and_how_to_write_it(
    tmp_path: Path, written: str, fix: str
) -> None:
    """`min_request_rate: 1e-3` said `must be a number, got '1e-3'`: YAML 1.1 needs a dot and a signed
    exponent for a float, so the text looked like a number and the message did not say why it was not."""
    text = (Path(__file__).resolve().parents[1] / "slos.yaml").read_text(encoding="utf-8")
    old = "min_request_rate: 0.1      #"
    assert old in text
    spec = tmp_path / "slos.yaml"
    spec.write_text(text.replace(old, f"min_request_rate: {written.ljust(6)}#", 1), encoding="utf-8")
    code, _, err = run(["generate", "--spec", str(spec), "--out", str(tmp_path / "out")], tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, f"got '{written}' (text: YAML 1.1", f"write {fix}")


@pytest.mark.parametrize("text", ["1e-3", "5E2", "1.0e3", ".5e3", "1.e3", "-2e5"])
def test_the_suggested_spelling_loads_as_the_same_number(text: str) -> None:
    import yaml

    from triton_sre.redact import bounded

    suggested = bounded(text).rsplit("write ", 1)[1].rstrip(")")
    assert yaml.safe_load(f"x: {text}")["x"] == text  # YAML 1.1 keeps it as text
    assert yaml.safe_load(f"x: {suggested}")["x"] == float(text)


@pytest.mark.parametrize("text", [".e5", "1.0e-3", "e5", "1e", "abc"])
def test_text_that_is_no_number_gets_no_spelling(text: str) -> None:
    from triton_sre.redact import bounded

    assert bounded(text) == repr(text)
