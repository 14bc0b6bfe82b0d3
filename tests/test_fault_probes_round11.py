"""Fault probes, round eleven (branch `probes11`, 2026-12-06): a stop signal against a hung Triton,
fleet-sized and adversarial inputs, clocks, network edges, the environment —
docs/failure-behaviour.md, "Fault probes, round eleven"."""

from __future__ import annotations

import os
import shutil
import signal
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from test_fault_probes import Silent

from triton_sre import conventions as c
from triton_sre.stack.processes import free_port

ROOT = Path(__file__).resolve().parents[1]


def _cli(*argv: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """`triton-sre ARGV` in its own process, this checkout's code, `env` added to the environment."""
    return subprocess.run(
        [sys.executable, "-m", "triton_sre", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )


@pytest.fixture
def hung_triton() -> Iterator[Silent]:
    server = Silent()
    yield server
    server.close()


# -- a stop signal while the poll in flight hangs --------------------------------------------------------
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_export_stops_within_a_second_of_a_stop_signal_while_triton_hangs(
    tmp_path: Path, hung_triton: Silent, sig: str
) -> None:
    """Before: `export` stopped only when its poll in flight reached its deadline (4.5-5.3 s at the
    5 s default, 30 s with `timeout: 30`): a Triton that hangs mid-poll held a SIGTERM that long, past
    many a pod's grace period. Now it stops within about a second, exit 0, whatever the timeout."""
    config = tmp_path / "exporter.yaml"
    config.write_text("exporter:\n  timeout: 30\n")
    argv = [
        sys.executable, "-m", "triton_sre", "export", "--triton-url", hung_triton.url,
        "--metrics-url", f"{hung_triton.url}/metrics", "--listen", f"127.0.0.1:{free_port()}",
        "--config", str(config),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env)
    try:
        assert hung_triton.accepted.wait(60), "the exporter never polled"
        time.sleep(0.5)  # well inside the poll: its calls wait on the hung Triton
        sent = time.monotonic()
        proc.send_signal(getattr(signal, sig))
        code = proc.wait(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = proc.stderr.read() if proc.stderr else ""
    assert code == c.EXIT_OK, stderr
    assert f"exporter stopped by {sig}" in stderr
    # 0.4-1.0 s on a quiet machine; the old stop waited 10 s for the poll thread (10.6 s measured). The
    # bound leaves room for a loaded machine's interpreter start-up and exit (over 2 s once beside CI)
    assert took < 5.0, f"stopped {took:.1f}s after {sig} (poll timeout 30 s)"


# -- gameday: a malformed fault list ---------------------------------------------------------------------
_SCENARIO = """
def inject(ctx):
    pass

def restore(ctx):
    pass

expect = {{"alert": "TritonModelUnavailable", "runbook": {runbook!r}}}
"""


def test_a_gameday_scenario_expecting_no_runbook_id_is_refused_before_the_stack_starts(
    tmp_path: Path,
) -> None:
    """Before: `expect = {"runbook": "model-file-invalidd"}` (a typo, or a page that does not exist) was
    accepted: the whole stack started, the fault was injected, and the scenario could only fail, since
    no alert and no diagnosis names a runbook that is not in runbooks/. Now it is exit 2 at once,
    naming the key and the closest runbook id."""
    real = sorted(c.RUNBOOK_IDS)[0]
    typo = real[:-1]
    scenario = tmp_path / "typo.py"
    scenario.write_text(_SCENARIO.format(runbook=typo))
    started = time.monotonic()
    run = _cli("gameday", "--scenario-file", str(scenario), cwd=tmp_path)
    assert run.returncode == c.EXIT_USAGE, run.stderr
    assert "expect.runbook" in run.stderr and f"did you mean {real!r}" in run.stderr, run.stderr
    assert time.monotonic() - started < 30  # refused, not a stack started
    scenario.write_text(_SCENARIO.format(runbook=real))
    from triton_sre.gameday.scenarios import load_file

    assert load_file(scenario).expect.runbook == real


# -- network edges: a self-signed certificate ---------------------------------------------------------------
def _answering(body: bytes, content_type: str) -> type[BaseHTTPRequestHandler]:
    """A handler answering every GET and POST 200 with `body`."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET

    return Handler


_VECTOR = _answering(b'{"status":"success","data":{"resultType":"vector","result":[]}}', "application/json")
_LOGIN_PAGE = _answering(
    b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head><form>login</form>", "text/html"
)


@pytest.fixture
def self_signed(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTPS server on 127.0.0.1 whose certificate is self-signed; its URL and the certificate."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make the test's certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _VECTOR)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"https://127.0.0.1:{httpd.server_address[1]}", cert
    httpd.shutdown()
    httpd.server_close()


def test_a_self_signed_certificate_names_the_variable_that_trusts_it(
    tmp_path: Path, self_signed: tuple[str, Path]
) -> None:
    """Before: `TLS handshake failed: self-signed certificate`, and no word of how to trust it (every
    client reads requests' REQUESTS_CA_BUNDLE; no command has an option of its own). Now the error
    names it; set, the same command gets past the handshake."""
    from triton_sre.httpclient import CA_BUNDLE_ENV

    url, cert = self_signed
    argv = [
        "report",
        "--prometheus-url",
        url,
        "--start",
        "1000",
        "--end",
        "2000",
        "--out",
        str(tmp_path / "o"),
    ]
    untrusted = {CA_BUNDLE_ENV: "", "CURL_CA_BUNDLE": ""}  # requests reads an empty one as unset
    run = _cli(*argv, cwd=tmp_path, **untrusted)
    assert run.returncode == c.EXIT_USAGE, run.stderr
    assert "self-signed certificate" in run.stderr and CA_BUNDLE_ENV in run.stderr, run.stderr
    trusted = _cli(*argv, cwd=tmp_path, **{**untrusted, CA_BUNDLE_ENV: str(cert)})
    assert "TLS" not in trusted.stderr and "expected a matrix" in trusted.stderr, trusted.stderr


# -- network edges: IPv6 literals --------------------------------------------------------------------------
def _free_port_v6() -> int:
    import socket

    with socket.socket(socket.AF_INET6) as probe:
        probe.bind(("::1", 0))
        return probe.getsockname()[1]


def test_export_listens_on_an_ipv6_literal(tmp_path: Path, hung_triton: Silent) -> None:
    """Before: `export --listen [::1]:PORT` (or `[::]:8003`, every address of an IPv6-only pod) was
    `cannot listen on [::1]:PORT: Address family for hostname not supported`, exit 1: the server
    was AF_INET only. Now it serves there (the bot's server is the same class)."""
    import requests

    port = _free_port_v6()
    argv = [sys.executable, "-m", "triton_sre", "export", "--triton-url", hung_triton.url,
            "--listen", f"[::1]:{port}"]  # fmt: skip
    proc = subprocess.Popen(
        argv, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    try:
        answer = None
        ends = time.monotonic() + 60
        while answer is None and proc.poll() is None and time.monotonic() < ends:
            try:
                answer = requests.get(f"http://[::1]:{port}{c.PATH_HEALTHZ}", timeout=5)
            except requests.ConnectionError:
                time.sleep(0.2)
        assert answer is not None and answer.status_code == 200, proc.stderr.read() if proc.poll() else ""
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def test_the_http_servers_local_url_brackets_an_ipv6_host() -> None:
    from triton_sre.config import ExporterSettings
    from triton_sre.exporter.service import Exporter, ExporterServer

    settings = ExporterSettings(triton_url="http://127.0.0.1:9", interval=3600)
    server = ExporterServer(Exporter(settings), "::1", 0)
    try:
        assert server.url == f"http://[::1]:{server.port}"
    finally:
        server._httpd.server_close()


# -- time: command-line times and durations ------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["report", "--prometheus-url", "http://127.0.0.1:9", "--last", "1e3"], "--last"),
        (["report", "--prometheus-url", "http://127.0.0.1:9", "--start", "1e301"], "1970-01-01"),
        (
            ["rollout", "check", "--prometheus", "http://127.0.0.1:9", "--model", "m", "--window", "1e3"],
            "--window",
        ),
    ],
)
def test_a_command_line_value_in_exponent_form_gets_no_yaml_advice(argv: list[str], named: str) -> None:
    """Before: `report --last 1e3` said `got '1e3' (text: YAML 1.1 reads this exponent form as a
    string; write 1.0e+3)`: no YAML read it, and `1.0e+3` is no duration either (nor a time past
    9999 for `--start 1e301`). The advice stays for values of a YAML file."""
    from triton_sre.redact import bounded

    run = _cli(*argv)
    assert run.returncode == c.EXIT_USAGE, run.stderr
    assert named in run.stderr and "YAML" not in run.stderr, run.stderr
    assert "YAML 1.1" in bounded("1e-3")  # a price in a config file: still told how YAML reads it


def test_a_report_start_in_the_future_says_so_not_that_the_range_is_empty() -> None:
    """Before: `report --start <tomorrow>` (no --end: now) said `the range is empty: --start must be
    before --end`, an --end the user never gave. Now it names the start, and now, as times."""
    from triton_sre.rfc3339 import utc_text

    tomorrow = int(time.time()) + 86_400
    argv = ["report", "--prometheus-url", "http://127.0.0.1:9", "--start", str(tomorrow)]
    run = _cli(*argv)
    assert run.returncode == c.EXIT_USAGE, run.stderr
    assert f"--start {utc_text(tomorrow)} is in the future" in run.stderr, run.stderr
    assert "--end defaults to now" in run.stderr


# -- network edges: a proxy answering 200 with its login page ---------------------------------------------
def test_triage_behind_a_proxys_login_page_says_an_html_page_came(tmp_path: Path) -> None:
    """Before: `... /v2/repository/index did not return JSON: Expecting value: line 1 column 1 (char
    0)`, the JSON parser's words for an SSO proxy's 200 login page. Now the error says an HTML page
    came instead (doctor already asked whether it is Triton's HTTP port)."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _LOGIN_PAGE)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        run = _cli("triage", "--triton-url", f"http://127.0.0.1:{httpd.server_address[1]}", cwd=tmp_path)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert run.returncode == c.EXIT_USAGE, run.stderr
    assert "an HTML page came instead" in run.stderr and "Expecting value" not in run.stderr, run.stderr
