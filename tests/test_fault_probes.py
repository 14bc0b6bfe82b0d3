"""Fault probes of every command: bad files, bad servers, Ctrl-C.

Each probe runs the real CLI in a child process and asserts the documented exit code, a one-line
message that names the input and the reason, and no traceback. The servers are local sockets:
a port nobody listens on, one that accepts and never answers, one that answers an HTML page.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from triton_sre import conventions as c

ROOT = Path(__file__).resolve().parents[1]
HTML = b"<html><body><h1>502 Bad Gateway</h1></body></html>"


def _cli(args: list[str], cwd: Path, **kwargs: object) -> subprocess.Popen[bytes]:
    # the bot's secrets are set so that its probes reach the file under test
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        c.ENV_SLACK_BOT_TOKEN: "xoxb-probe",
        c.ENV_BOT_TOKEN: "probe",
    }
    env.pop(c.ENV_CONFIG, None)
    return subprocess.Popen(
        [sys.executable, "-m", "triton_sre.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        **kwargs,  # type: ignore[call-overload]
    )


def run(args: list[str], cwd: Path) -> tuple[int, str, str]:
    proc = _cli(args, cwd)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def assert_clean_error(code: int, err: str, expected_code: int, *needles: str) -> None:
    assert code == expected_code, err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines, "no message on stderr"
    message = lines[-1]
    assert message.startswith("triton-sre "), err
    for needle in needles:
        assert needle in message, (needle, err)


def assert_stdout_of_error(line: str, out: str | bytes, code: int, err: str | bytes) -> None:
    """Nothing on stdout, but with `--format json` one object naming the error and the exit code: a
    script parsing stdout reads why the command failed instead of choking on an empty input."""
    out = out.decode("utf-8", "replace") if isinstance(out, bytes) else out
    err = err.decode("utf-8", "replace") if isinstance(err, bytes) else err
    if "--format json" not in line:
        assert out == ""
        return
    message = [x.strip() for x in err.splitlines() if x.strip()][-1]
    assert json.loads(out) == {"error": message, "exit_code": code}
    assert out.count("\n") == 1


# -- local servers --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def refused_url() -> str:
    """A loopback port that was just free: connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class Silent:
    """Accepts connections and never answers; `accepted` is set at the first connection."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.accepted = threading.Event()
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.sock.accept()
                self.held.append(conn)
                self.accepted.set()

    def close(self) -> None:
        for conn in self.held:
            conn.close()
        self.sock.close()


@pytest.fixture
def silent() -> Iterator[Silent]:
    server = Silent()
    yield server
    server.close()


def _serve(answer: Callable[[str], tuple[bytes, str]]) -> Iterator[str]:
    """A loopback HTTP server answering every GET and POST 200 with ``answer(path)`` (body, type)."""

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            body, kind = answer(self.path.split("?")[0])
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def html_url() -> Iterator[str]:
    yield from _serve(lambda path: (HTML, "text/html"))


MALFORMED = {  # a Prometheus answer whose envelope is right and whose samples are not
    "/api/v1/query_range": {"resultType": "matrix", "result": [{"metric": {}, "values": "x"}]},
    "/api/v1/query": {"resultType": "vector", "result": [{"metric": {}, "value": [1]}]},
}


@pytest.fixture(scope="module")
def malformed_url() -> Iterator[str]:
    def answer(path: str) -> tuple[bytes, str]:
        return json.dumps({"status": "success", "data": MALFORMED.get(path, {})}).encode(), "application/json"

    yield from _serve(answer)


# -- bad files ------------------------------------------------------------------------------------
def _bad_files(tmp: Path) -> dict[str, Path]:
    (tmp / "folder").mkdir()
    (tmp / "empty.yaml").write_bytes(b"")
    (tmp / "binary").write_bytes(bytes(range(256)) * 64)
    (tmp / "latin1.yaml").write_bytes(b"slos:\n  - name: caf\xe9\n")
    (tmp / "malformed.yaml").write_text("slos: [\n  - {name: x\n")
    # a YAML loader that builds Python objects would run this and create the marker file
    (tmp / "tagged.yaml").write_text("slos: !!python/object/apply:os.system ['touch PWNED']\n")
    whole = gzip.compress(b"E1129 17:06:12.139408 1 model_lifecycle.cc:642] x\n" * 2000)
    # damaged mid-stream (a log cut short is diagnosed as far as it decodes: tests/test_triage_cut_logs.py)
    damaged = bytearray(whole)
    damaged[len(whole) // 2 : len(whole) // 2 + 16] = b"\xff" * 16
    (tmp / "damaged.log.gz").write_bytes(bytes(damaged))
    return {p.name: p for p in tmp.iterdir()} | {"missing": tmp / "missing"}


FILE_PROBES = [
    # (command line with {f} for the file, file, the reason the message must give)
    ("triage {f}", "missing", "No such file or directory"),
    ("triage {f}", "folder", "directory"),
    ("triage --format json {f}", "binary", "binary"),
    ("triage {f}", "damaged.log.gz", "gzip"),
    ("triage {f}", "empty.yaml", "the log is empty"),  # was exit 0, "No load failure found."
    ("triage --runbooks {f} log", "folder", "no runbook page"),  # was accepted: findings without fixes
    ("lint --runbooks {f} .", "folder", "no runbook page"),
    ("generate --check --spec {f}", "missing", "No such file or directory"),
    ("generate --check --spec {f}", "folder", "directory"),
    ("generate --check --spec {f}", "empty.yaml", "mapping"),
    ("generate --check --spec {f}", "binary", "UTF-8"),
    ("generate --check --spec {f}", "latin1.yaml", "UTF-8"),
    ("generate --check --spec {f}", "malformed.yaml", "YAML"),
    ("generate --check --spec {f}", "tagged.yaml", "python/object"),
    ("lint {f}", "missing", "not a directory"),
    ("lint --format json {f}", "binary", "not a directory"),
    ("lint --slo-file {f} .", "tagged.yaml", "python/object"),
    ("export --listen 127.0.0.1:0 --config {f}", "tagged.yaml", "python/object"),
    ("export --listen 127.0.0.1:0 --config {f}", "binary", "UTF-8"),
    ("bot --channel c --listen 127.0.0.1:0 --config {f}", "malformed.yaml", "YAML"),
    ("report --prometheus-url http://127.0.0.1:9 --slo-file {f}", "tagged.yaml", "python/object"),
    (
        "rollout check --prometheus http://127.0.0.1:9 --model m --baseline-version 1 --candidate-version 2 "
        "--spec {f}",
        "binary",
        "UTF-8",
    ),
    ("doctor --triton-url http://127.0.0.1:9 --spec {f}", "malformed.yaml", "YAML"),
    ("stack up --workdir w --slo-file {f}", "tagged.yaml", "python/object"),
    # checked before anything starts (it was exit 1 after the exporter died at start)
    ("stack up --workdir w --exporter-config {f}", "tagged.yaml", "python/object"),
    ("gameday --scenario-file {f}", "binary", "not a Python file"),
]


@pytest.mark.parametrize(
    ("line", "name", "reason"), FILE_PROBES, ids=[f"{p[0].split()[0]}-{p[1]}" for p in FILE_PROBES]
)
def test_a_bad_file_is_exit_2_with_a_one_line_reason(
    tmp_path: Path, line: str, name: str, reason: str
) -> None:
    path = _bad_files(tmp_path)[name]
    code, out, err = run(line.format(f=path).split(), tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, path.name, reason)
    assert not (tmp_path / "PWNED").exists()  # the python tag was refused, not run
    assert_stdout_of_error(line, out, code, err)  # nothing half-written that a JSON reader would choke on


# -- bad servers ----------------------------------------------------------------------------------
SERVER_PROBES = [
    ("triage --format json --triton-url {u}", "cannot read the repository index"),
    ("report --out out --prometheus-url {u}", "Prometheus"),
    (
        "rollout check --format json --model m --baseline-version 1 --candidate-version 2 --prometheus {u}",
        "Prometheus",
    ),
    ("doctor --format json --triton-url {u}", "cannot read Triton"),
]
IDS = [p[0].split()[0] for p in SERVER_PROBES]


@pytest.mark.parametrize(("line", "what"), SERVER_PROBES, ids=IDS)
def test_a_refused_connection_names_the_reason(
    tmp_path: Path, refused_url: str, line: str, what: str
) -> None:
    code, out, err = run(line.format(u=refused_url).split(), tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, what, "Connection refused")
    assert "Max retries" not in err and "HTTPConnectionPool" not in err and "_HTTPPool" not in err
    assert_stdout_of_error(line, out, code, err)


@pytest.mark.parametrize(("line", "what"), SERVER_PROBES, ids=IDS)
def test_an_html_page_instead_of_the_api_is_named(
    tmp_path: Path, html_url: str, line: str, what: str
) -> None:
    code, out, err = run(line.format(u=html_url).split(), tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, what)
    assert "JSON" in err or "not a Prometheus API answer" in err, err
    assert_stdout_of_error(line, out, code, err)


@pytest.mark.parametrize(("line", "what"), SERVER_PROBES[1:3], ids=IDS[1:3])
def test_malformed_samples_in_a_prometheus_answer_are_named(
    tmp_path: Path, malformed_url: str, line: str, what: str
) -> None:
    code, out, err = run(line.format(u=malformed_url).split(), tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, "unexpected answer from Prometheus")
    assert "internal error" not in err
    assert_stdout_of_error(line, out, code, err)


@pytest.mark.parametrize(
    "line",
    [
        "triage --triton-url {u}",  # its fixed 5 s deadline
        "rollout check --timeout 1 --model m --baseline-version 1 --candidate-version 2 --prometheus {u}",
        "doctor --timeout 1 --triton-url {u}",
    ],
    ids=["triage", "rollout", "doctor"],
)
def test_a_server_that_never_answers_is_a_named_bounded_timeout(
    tmp_path: Path, silent: Silent, line: str
) -> None:
    code, _, err = run(line.format(u=silent.url).split(), tmp_path)
    assert silent.accepted.is_set()
    assert_clean_error(code, err, c.EXIT_USAGE)
    assert "within" in err and "s" in err.split("within", 1)[1], err


# -- Ctrl-C ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "triage --triton-url {u}",
        "report --out out --prometheus-url {u}",
        "doctor --triton-url {u}",
        "rollout check --model m --baseline-version 1 --candidate-version 2 --prometheus {u}",
    ],
    ids=["triage", "report", "doctor", "rollout"],
)
def test_ctrl_c_is_exit_130_with_one_line(tmp_path: Path, silent: Silent, line: str) -> None:
    # SIGINT at default disposition in the child, whatever the test runner inherited
    proc = _cli(
        line.format(u=silent.url).split(),
        tmp_path,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert silent.accepted.wait(60), "the command never connected"
    proc.send_signal(signal.SIGINT)
    out, err_bytes = proc.communicate(timeout=60)
    err = err_bytes.decode()
    assert_clean_error(proc.returncode, err, c.EXIT_INTERRUPTED, "interrupted")
    assert "KeyboardInterrupt" not in err and out == b""


def test_ctrl_c_on_a_log_read_from_stdin(tmp_path: Path) -> None:
    """A long triage of `-`: stop it once it has read the first block (the reader is waiting)."""
    proc = _cli(
        ["triage", "-"],
        tmp_path,
        stdin=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdin is not None
    proc.stdin.write(b"I1129 17:06:12.139408 1 server.cc:1] started\n" * 1000)
    proc.stdin.flush()
    deadline = time.monotonic() + 60
    # wait until the child is blocked reading stdin (its state in /proc), not for a fixed time
    while time.monotonic() < deadline and not _reading_a_pipe(_wchan(proc.pid)):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err_bytes = proc.communicate(timeout=60)
    err = err_bytes.decode()
    assert_clean_error(proc.returncode, err, c.EXIT_INTERRUPTED, "interrupted")
    assert out == b""


def _reading_a_pipe(wchan: str) -> bool:
    """The kernel's name for a reader blocked on an empty pipe: `pipe_read`/`pipe_wait` on older kernels,
    `anon_pipe_read` since the anonymous-pipe split (6.x)."""
    return wchan in {"pipe_read", "pipe_wait"} or wchan.endswith("_pipe_read")


def _wchan(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return ""


def test_the_exit_codes_are_in_every_help(tmp_path: Path) -> None:
    code, out, _ = run(["triage", "--help"], tmp_path)
    assert code == 0 and "130 interrupted" in " ".join(out.split())


def test_json_output_of_a_probe_that_succeeds_is_valid(tmp_path: Path) -> None:
    """Non-UTF-8 bytes inside a failure line: found, and the JSON stays valid UTF-8."""
    log = tmp_path / "latin1.log"
    log.write_bytes(
        b"E1129 17:06:12.139408 10326 model_lifecycle.cc:642] \"failed to load 'm\xff' version 1: "
        b"Invalid argument: unable to find backend library for backend 'b\xe9'\"\n"
    )
    code, out, err = run(["triage", "--format", "json", str(log)], tmp_path)
    assert code == 1 and "Traceback" not in err
    findings = json.loads(out)["findings"]
    assert [f["runbook"] for f in findings] == [c.RUNBOOK_BACKEND_NOT_FOUND]


def test_an_empty_log_on_stdin_is_exit_2(tmp_path: Path) -> None:
    proc = _cli(["triage", "--format", "json", "-"], tmp_path, stdin=subprocess.DEVNULL)
    out, err = proc.communicate(timeout=120)
    assert_clean_error(proc.returncode, err.decode(), c.EXIT_USAGE, "the log is empty")
    assert_stdout_of_error("--format json", out, c.EXIT_USAGE, err)


def test_an_empty_gzip_log_is_exit_2(tmp_path: Path) -> None:
    """A .gz holding 0 bytes said "No load failure found." and exit 0, which reads as a healthy server."""
    log = tmp_path / "triton.log.gz"
    log.write_bytes(gzip.compress(b""))
    code, out, err = run(["triage", "--format", "json", str(log)], tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, "the log is empty once decompressed")
    assert_stdout_of_error("--format json", out, code, err)


@pytest.mark.parametrize(
    "body", [b"\n\n   \n", b"\x00\x00\n\x00\n", b"\r\n\t\r\n"], ids=["blank", "nul-lines", "crlf-tabs"]
)
def test_a_log_without_text_is_exit_2(tmp_path: Path, body: bytes) -> None:
    """Blank lines, whitespace or NUL bytes with newlines said "No load failure found." and exit 0 (probes18),
    which reads as a healthy server, while a 0-byte log is refused."""
    log = tmp_path / "triton.log"
    log.write_bytes(body)
    code, out, err = run(["triage", "--format", "json", str(log)], tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, "the log holds no text")
    assert_stdout_of_error("--format json", out, code, err)


# -- numbers that are not numbers -----------------------------------------------------------------
NUMBER_PROBES = [
    ("doctor --triton-url {u} --timeout nan", "--timeout"),
    (
        "rollout check --model m --baseline-version 1 --candidate-version 2 --prometheus {u} --timeout -1",
        "--timeout",
    ),
    ("report --out out --prometheus-url {u} --step inf", "--step"),
    ("report --out out --prometheus-url {u} --start nan", "'nan' is not a time"),
    ("report --out out --prometheus-url {u} --end inf", "'inf' is not a time"),
    ("demo --interval nan", "--interval"),
    ("demo --duration inf", "--duration"),
    ("demo --report-every 0", "--report-every"),
    ("stack up --interval nan", "--interval"),
    ("stack up --group-wait -inf", "--group-wait"),
    ("stack up --gameday --gameday-scale inf", "--gameday-scale"),
    ("gameday --scale nan", "--scale"),
    ("gameday --scale 1e9", "--scale"),
    # a Prometheus duration flag: each of these was `internal error: DurationError`
    *(
        (
            f"rollout check --model m --baseline-version 1 --candidate-version 2 --prometheus {{u}} {flag}",
            flag.split()[0].split("=")[0],
        )
        for flag in (
            "--window 0",
            "--window 0s",
            "--window=-1",
            "--window nan",
            "--window 1e9",
            "--window 15251w",  # past Prometheus' own limit (a Go duration)
            "--step inf",
            "--step " + "9" * 400 + "s",  # past a float: was OverflowError
        )
    ),
]


@pytest.mark.parametrize(("line", "flag"), NUMBER_PROBES, ids=[p[0] for p in NUMBER_PROBES])
def test_a_nan_infinite_or_negative_number_is_exit_2_before_anything_starts(
    tmp_path: Path, refused_url: str, line: str, flag: str
) -> None:
    """NaN passes every `x <= 0` check; infinity passes `x >= 1`: each refused by name, at once."""
    code, out, err = run(line.format(u=refused_url).split(), tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, flag)
    assert "internal error" not in err and "started" not in out + err
    assert not (tmp_path / "out").exists()
