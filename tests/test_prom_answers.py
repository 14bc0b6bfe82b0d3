"""The Prometheus client (triton_sre/prom.py) on answers no healthy Prometheus gives: JSON nested
100,000 deep, ``"data": null``, a megabyte of error text. Each is the client's own `PromError`, so
every caller (`report`, `rollout check`, `doctor`) prints one bounded line and exits 2.

The answers come from a loopback server that is also a minimal Triton (for `doctor`, which reads
Triton before Prometheus)."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.prom import MAX_ERROR_CHARS, PromError, Prometheus

BODIES = {
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "null-data": json.dumps({"status": "success", "data": None}).encode(),
    "huge-error": json.dumps({"status": "error", "errorType": "bad_data", "error": "x" * 100_000}).encode(),
    "multi-line-error": json.dumps({"status": "error", "error": "line one\n" * 5000}).encode(),
    # JSON that is no API answer: each was `/api/v1/query '<query>': 200`, a bare status
    "json-null": b"null",
    "json-list": b"[1, 2, 3]",
    "json-string": b'"hello"',
    "no-status": json.dumps({"data": {"resultType": "vector", "result": []}}).encode(),
}
SAYS = {
    "deep": "the answer is nested too deeply",
    "null-data": "unexpected answer from Prometheus: data is None",
    "huge-error": f"({MAX_ERROR_CHARS} first characters)",
    "multi-line-error": "line one line one",
    "json-null": "HTTP 200, not a Prometheus API answer (JSON null)",
    "json-list": "HTTP 200, not a Prometheus API answer (JSON array)",
    "json-string": "HTTP 200, not a Prometheus API answer (JSON string)",
    "no-status": "HTTP 200, not a Prometheus API answer (JSON status None)",
}
TRITON = {  # what `doctor` reads of Triton before it asks Prometheus
    "/v2": (b'{"name": "triton", "version": "2.51.0", "extensions": []}', "application/json"),
    "/v2/repository/index": (b"[]", "application/json"),
    "/v2/models/stats": (b'{"model_stats": []}', "application/json"),
    "/metrics": (b"", "text/plain"),
}


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, dict[str, bytes]]]:
    """(url, answer): every Prometheus API path answers ``answer["body"]``; Triton's paths answer an
    empty, healthy Triton."""
    answer: dict[str, bytes] = {"body": b""}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            body, kind = (
                (answer["body"], "application/json")
                if path.startswith("/api/")
                else TRITON.get(path, (b"{}", "application/json"))
            )
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", answer
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("kind", list(BODIES))
def test_the_client_raises_its_own_bounded_error(server: tuple[str, dict[str, bytes]], kind: str) -> None:
    url, answer = server
    answer["body"] = BODIES[kind]
    client = Prometheus(url, timeout=10)
    for call in (
        lambda: client.api("/api/v1/targets"),
        lambda: client.vector("up"),
        lambda: client.query_range("up", 0, 60, 15),
    ):
        with pytest.raises(PromError) as raised:
            call()
        message = str(raised.value)
        assert SAYS[kind] in message and "\n" not in message and len(message) < 600, message[:600]


def test_an_answer_that_is_a_list_where_an_object_is_due_is_refused(
    server: tuple[str, dict[str, bytes]],
) -> None:
    url, answer = server
    answer["body"] = json.dumps({"status": "success", "data": [1, 2]}).encode()
    with pytest.raises(PromError, match="data is a list of 2 item"):
        Prometheus(url, timeout=10).api("/api/v1/alertmanagers")


COMMANDS = {
    "report": ["report", "--start", "1000", "--end", "1060", "--step", "10", "--prometheus-url"],
    "rollout": ["rollout", "check", "--model", "m", "--baseline-version", "1", "--candidate-version", "2"],
    "doctor": ["doctor", "--triton-url", "{u}", "--metrics-url", "{u}/metrics", "--prometheus-url"],
}
COMMANDS["rollout"] += ["--step", "15s", "--prometheus"]


@pytest.mark.parametrize("kind", list(BODIES))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_caller_prints_one_bounded_line_and_exits_2(
    server: tuple[str, dict[str, bytes]], tmp_path: Path, command: str, kind: str
) -> None:
    """Each was `internal error: RecursionError` (deep), `AttributeError` (doctor on null data), or a
    100,062-byte line (error text)."""
    url, answer = server
    answer["body"] = BODIES[kind]
    argv = [a.format(u=url) for a in COMMANDS[command]] + [url]
    if command == "report":
        argv += ["--out", str(tmp_path / "out")]
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        code = main(argv)
    lines = err.getvalue().splitlines()
    assert code == c.EXIT_USAGE, lines
    assert len(lines) == 1 and len(lines[0]) < 700, [line[:300] for line in lines]
    assert "internal error" not in lines[0] and SAYS[kind] in lines[0], lines[0][:600]


@pytest.mark.parametrize("result", [None, "matrix", {"a": 1}])
def test_a_range_answer_whose_result_is_not_a_list_says_so(
    server: tuple[str, dict[str, bytes]], result: object
) -> None:
    """It said `expected a matrix, got 'matrix'`: the resultType was right, the result was not a list."""
    url, answer = server
    answer["body"] = json.dumps(
        {"status": "success", "data": {"resultType": "matrix", "result": result}}
    ).encode()
    with pytest.raises(PromError) as raised:
        Prometheus(url, timeout=10).query_range("up", 0, 60, 15)
    message = str(raised.value)
    assert "the result is not a list" in message and "got 'matrix'" not in message, message
