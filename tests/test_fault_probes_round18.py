"""Fault probes, round eighteen (branch `probes18`, 2026-12-06): a proxy in the environment, the CLI's
flags as argparse reads them, the spec's cluster label, endpoint URLs — docs/failure-behaviour.md, "Fault
probes, round eighteen". Each test failed before its change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests
from backfilled_prometheus import backfilled
from faultproxy import FaultProxy

from triton_sre import conventions as c
from triton_sre.httpclient import is_loopback
from triton_sre.stack.processes import free_port

ROOT = Path(__file__).resolve().parents[1]


def _cli(
    *argv: str, cwd: Path | None = None, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    """`triton-sre ARGV` in its own process, this checkout's code, `env` added to the environment."""
    return subprocess.run(
        [sys.executable, "-m", "triton_sre", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )


# -- a proxy in the environment ------------------------------------------------------------------------
class RecordingProxy:
    """A forward proxy that answers every request 502 and keeps the URL it was asked for (a corporate
    proxy that cannot reach the pod's own loopback)."""

    def __init__(self) -> None:
        asked: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                asked.append(self.path)
                self.send_response(502)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_POST = do_GET

            def log_message(self, *args: object) -> None:
                pass

        self.asked = asked
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def environment(self) -> dict[str, str]:
        """Every variable requests reads a proxy from, `NO_PROXY` unset (as a pod's may be)."""
        names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
        return {name: self.url for name in names} | {"NO_PROXY": "", "no_proxy": ""}

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def proxy() -> Iterator[RecordingProxy]:
    server = RecordingProxy()
    yield server
    server.close()


def _on_localhost(url: str) -> str:
    return url.replace("127.0.0.1", "localhost")


def test_triage_of_a_triton_on_localhost_never_asks_the_environments_proxy(
    triton, proxy: RecordingProxy
) -> None:
    """Before: with `HTTP_PROXY` set and `localhost` not in `NO_PROXY`, `triage --triton-url
    http://localhost:PORT` asked the proxy for the repository index: `answered HTTP 502`, exit 2, though
    Triton was next to it. Go's net/http (Prometheus, Alertmanager) never proxies a loopback host."""
    for url in (triton.http_url, _on_localhost(triton.http_url)):
        done = _cli("triage", "--format", "json", "--triton-url", url, **proxy.environment())
        assert done.returncode == c.EXIT_FAILURE, done.stderr
        assert json.loads(done.stdout)["findings"], done.stdout
    assert proxy.asked == []
    # a host that is not this machine's still goes through the proxy the environment names
    far = _cli("triage", "--triton-url", "http://triton.example.invalid:8000", **proxy.environment())
    assert far.returncode == c.EXIT_USAGE, far.stderr
    assert "HTTP 502" in far.stderr
    assert proxy.asked == ["http://triton.example.invalid:8000/v2/repository/index"]


def test_the_exporter_sidecar_reads_triton_on_localhost_past_the_environments_proxy(
    tmp_path: Path, triton, proxy: RecordingProxy
) -> None:
    """Before: the sidecar behind a pod-wide `HTTP_PROXY` polled its own Triton through the proxy:
    `triton_sre_up` 0 and every poll an `http_status` error, for as long as it ran."""
    listen = free_port()
    argv = [
        sys.executable, "-m", "triton_sre", "export",
        "--triton-url", _on_localhost(triton.http_url),
        "--metrics-url", _on_localhost(triton.metrics_url),
        "--listen", f"127.0.0.1:{listen}",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), **proxy.environment()}
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env)
    up = None
    try:
        ends = time.monotonic() + 60
        while time.monotonic() < ends and up != 1.0:
            time.sleep(0.5)
            try:
                text = requests.get(f"http://127.0.0.1:{listen}{c.PATH_METRICS}", timeout=5).text
            except requests.ConnectionError:
                continue
            lines = [line.split() for line in text.splitlines() if line.startswith(f"{c.M_UP} ")]
            up = float(lines[0][1]) if lines else None
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert up == 1.0, proc.stderr.read() if proc.stderr else ""
    assert proxy.asked == []


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_proxy_that_refuses_is_named_as_the_proxy_not_the_server(scheme: str) -> None:
    """Before: a proxy from the environment that refused the connection read `cannot reach
    http://triton…: Connection refused`, as if Triton had; its password never shown, then as now."""
    dead = f"http://user:s3cret@127.0.0.1:{free_port()}"
    proxies = {name: dead for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}
    done = _cli("triage", "--triton-url", f"{scheme}://triton.example.invalid:8000", **proxies, NO_PROXY="")
    assert done.returncode == c.EXIT_USAGE, done.stderr
    said = "at the proxy set in the environment (HTTP_PROXY, HTTPS_PROXY or ALL_PROXY): Connection refused"
    assert said in done.stderr
    assert "s3cret" not in done.stderr


def test_a_proxy_refusing_the_tunnel_says_so_without_the_pools_wording(proxy: RecordingProxy) -> None:
    """Before: an https URL through a proxy that refused the CONNECT read `HTTPSConnectionPool(host=…):
    Max retries exceeded with url: … (Caused by ProxyError('Unable to connect to proxy', OSError("Tunnel
    connection fai...`, cut at 200 characters."""
    done = _cli("triage", "--triton-url", "https://triton.example.invalid:8000", **proxy.environment())
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert "at the proxy set in the environment" in done.stderr
    assert "Tunnel connection failed: 501" in done.stderr
    assert "Max retries" not in done.stderr and "ConnectionPool" not in done.stderr


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True), ("LOCALHOST.", True), ("triton.localhost", True), ("127.0.0.1", True),
        ("127.9.9.9", True), ("::1", True), ("::ffff:127.0.0.1", True), ("::ffff:10.0.0.1", False),
        ("10.0.0.1", False), ("triton", False), ("fe80::1%lo", False), ("", False), (None, False),
    ],
)  # fmt: skip
def test_the_hosts_never_proxied_are_this_machines_own(host: str | None, loopback: bool) -> None:
    """What Go's net/http never proxies (Prometheus, Alertmanager): `localhost` and loopback addresses,
    an IPv4-mapped one among them (`::ffff:127.0.0.1`, proxied before this round's second change)."""
    assert is_loopback(host) is loopback


# -- --format json as argparse reads it -----------------------------------------------------------------
@pytest.mark.parametrize(
    "flags", [["--fo", "json"], ["--form=json"], ["--format", "text", "--format", "json"]]
)
def test_an_abbreviated_or_repeated_format_flag_keeps_the_error_json(
    tmp_path: Path, flags: list[str]
) -> None:
    """Before: `triage --fo json MISSING` (argparse takes any prefix of an option) printed its error on
    stderr only: stdout empty, a script's JSON parser failed on it."""
    done = _cli("triage", *flags, str(tmp_path / "missing.log"), cwd=tmp_path)
    assert done.returncode == c.EXIT_USAGE
    answer = json.loads(done.stdout)
    assert answer["exit_code"] == c.EXIT_USAGE
    assert "missing.log" in answer["error"] and "No such file" in answer["error"]


def test_the_last_format_given_wins_on_the_error_path_too(tmp_path: Path) -> None:
    """`--format json --format text` asks for text (argparse keeps the last): before, its error came as
    JSON."""
    done = _cli("triage", "--format", "json", "--format", "text", str(tmp_path / "missing.log"), cwd=tmp_path)
    assert done.returncode == c.EXIT_USAGE
    assert done.stdout == ""
    assert "missing.log" in done.stderr


# -- the spec's cluster label ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "label",
    [
        c.LABEL_NAMESPACE, c.KSM_LABEL_POD, c.KSM_LABEL_CONTAINER, c.KSM_LABEL_DEPLOYMENT, c.LABEL_FIGURE,
        c.TRT_LABEL_REQUEST_TYPE,
    ],
)  # fmt: skip
def test_a_cluster_label_the_rules_already_group_by_is_refused(tmp_path: Path, label: str) -> None:
    """Before: `cluster_label: namespace` (or `pod`, `container`, `deployment`: kube-state-metrics' labels
    the container-restart and autoscaling rules group by; `figure`: the rollout guard's; `request_type`:
    TensorRT-LLM's) generated rules grouping `by (namespace, namespace, pod, container)`, exit 0: an
    external label of that name is never added to a series that has one (Kubernetes' namespace, Triton's
    model namespacing), so those series' "cluster" was another thing. Refused like `job` or `model`."""
    spec = (ROOT / "slos.yaml").read_text().replace("# cluster_label: cluster", f"cluster_label: {label}")
    assert f"cluster_label: {label}" in spec
    (tmp_path / "slos.yaml").write_text(spec)
    done = _cli("generate", "--spec", "slos.yaml", "--out", "out", cwd=tmp_path)
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert f"cluster_label: '{label}' is a label the rules already use" in done.stderr
    assert not (tmp_path / "out").exists()


# -- endpoint URLs that paths are added to --------------------------------------------------------------
@pytest.mark.parametrize("tail", ["?verbose=1", "/?verbose=1", "#models"])
def test_a_triton_url_with_a_query_or_fragment_is_a_usage_error(triton, tail: str) -> None:
    """Before: `--triton-url http://triton:8000?verbose=1` became `http://triton:8000?verbose=1/v2/repository/
    index`, a request for `/` whose query held the API path (a fragment: `/` itself), and the real Triton's
    answer was named as the index's: a puzzle, exit 2 after the request. Now a usage error naming it, before
    any request."""
    done = _cli("triage", "--format", "json", "--triton-url", f"{triton.http_url}{tail}")
    assert done.returncode == c.EXIT_USAGE, done.stderr
    error = json.loads(done.stdout)["error"]
    assert "--triton-url" in error and "query string or fragment" in error, error
    assert "verbose" not in error  # a query string may hold a token: never quoted
    # the same URL without them is read
    assert _cli("triage", "--triton-url", triton.http_url).returncode == c.EXIT_FAILURE


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "--prometheus-url", "http://127.0.0.1:9?token=s3cret", "--last", "1h"],
        ["rollout", "check", "--prometheus", "http://127.0.0.1:9#x", "--model", "m",
         "--baseline-version", "1", "--candidate-version", "2"],
    ],
)  # fmt: skip
def test_a_prometheus_url_with_a_query_or_fragment_is_a_usage_error(tmp_path: Path, argv: list[str]) -> None:
    done = _cli(*argv, cwd=tmp_path)
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert "query string or fragment" in done.stderr
    assert "s3cret" not in done.stderr


def test_a_config_files_triton_url_with_a_query_is_a_configuration_error(tmp_path: Path) -> None:
    config = tmp_path / "exporter.yaml"
    config.write_text("exporter:\n  triton_url: http://127.0.0.1:9/?api_key=s3cret\n")
    argv = ["export", "--config", str(config), "--listen", f"127.0.0.1:{free_port()}"]
    try:
        done = _cli(*argv, cwd=tmp_path, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("the exporter started polling a URL it cannot use (before: it ran on, up 0)")
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert "triton_url" in done.stderr and "query string or fragment" in done.stderr
    assert "s3cret" not in done.stderr


# -- https:// to the real Triton's plain-HTTP ports ---------------------------------------------------------
def test_an_https_url_to_the_real_tritons_port_says_to_use_http(triton) -> None:
    """Round six named a server answering a TLS hello in plain text; the real Triton 2.51 (its HTTP port)
    hangs up instead. Before: `TLS handshake failed: UNEXPECTED_EOF_WHILE_READING`, OpenSSL's word, and
    nothing about the scheme."""
    https = triton.http_url.replace("http://", "https://")
    done = _cli("triage", "--triton-url", https)
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert "TLS handshake failed: the server closed the connection without answering it" in done.stderr
    assert "use http://, not https://" in done.stderr
    assert "UNEXPECTED_EOF" not in done.stderr and "Traceback" not in done.stderr


# -- label values that are not text in a Prometheus answer -------------------------------------------------
def _two_healthy_versions() -> list[tuple[str, dict[str, str], list[tuple[float, float]]]]:
    """Versions 1 and 2 of `m` in one namespace, each serving 10 requests/s for the last 30 minutes."""
    start = time.time() - 1800
    stamps = [start + 15 * i for i in range(120)]
    return [
        (c.NV_REQUEST_SUCCESS,
         {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_MODEL: "m", c.LABEL_VERSION: v, c.LABEL_NAMESPACE: "/m"},
         [(t, 10.0 * (t - start)) for t in stamps])
        for v in ("1", "2")
    ]  # fmt: skip


def _labels_rewritten(value: object) -> Callable[[bytes], bytes]:
    """An instant or range answer whose every series' label values are `value` (a proxy's or another
    store's doing: Prometheus writes every label value as a string)."""

    def rewrite(body: bytes) -> bytes:
        answer = json.loads(body)
        for series in answer["data"]["result"]:
            series["metric"] = dict.fromkeys(series["metric"], value)
        return json.dumps(answer).encode()

    return rewrite


@pytest.mark.parametrize("value", [2, None, ["2"]], ids=["number", "null", "array"])
def test_a_label_value_that_is_no_string_is_named_not_an_internal_error(
    tmp_path: Path, value: object
) -> None:
    """Before (a real Prometheus, its answers rewritten by a proxy): an array was `rollout check`'s
    `internal error: TypeError: unhashable type: 'list'`; a number or null went through, the report
    writing `2` and `None` as the model's and version's names, exit 0. Now the answer is refused naming
    the label, as a sample value that is no number is (round one): the report exit 2, the rollout's side
    reads "not read"."""
    series = _two_healthy_versions()
    with backfilled(tmp_path / "prom", series) as prom, FaultProxy(prom.url) as proxy:
        for path in ("/api/v1/query", "/api/v1/query_range"):
            proxy.set_fault(path, _labels_rewritten(value))
        rollout = _cli(
            "rollout", "check", "--prometheus", proxy.url, "--model", "m",
            "--baseline-version", "1", "--candidate-version", "2",
        )  # fmt: skip
        report = _cli("report", "--prometheus-url", proxy.url, "--last", "1h", "--out", str(tmp_path / "r"))
    for done in (rollout, report):
        assert "internal error" not in done.stderr
        assert "is a JSON" in done.stderr and "not a string" in done.stderr, done.stderr
    assert report.returncode == c.EXIT_USAGE, report.stderr
    # the rollout's side reads (namespaces, the exporter's marks) say they were not read, as for any
    # refused answer, and its figures (sums without labels) judge
    assert "namespaces not read" in rollout.stderr


def _namespaces_refused(body: bytes) -> bytes:
    """An instant answer that names a namespace becomes a proxy's error page; the others pass."""
    answer = json.loads(body)
    if any(c.LABEL_NAMESPACE in series["metric"] for series in answer["data"]["result"]):
        return b"<html>502 Bad Gateway</html>"
    return body


def test_a_pass_whose_namespaces_could_not_be_read_is_inconclusive(tmp_path: Path) -> None:
    """Before: the read of the namespaces each side served in failing (here: its answer an HTML page) left
    the verdict as it was: `PASS`, exit 0, though round sixteen makes a pass on a side summing two
    namespaces inconclusive and that read is what tells. Now inconclusive, exit 3, the reason saying why."""
    series = _two_healthy_versions()
    argv = ["rollout", "check", "--model", "m", "--baseline-version", "1", "--candidate-version", "2"]
    with backfilled(tmp_path / "prom", series) as prom:
        read = _cli(*argv, "--format", "json", "--prometheus", prom.url)
        with FaultProxy(prom.url) as proxy:
            proxy.set_fault("/api/v1/query", _namespaces_refused)
            unread = _cli(*argv, "--format", "json", "--prometheus", proxy.url)
    assert read.returncode == c.EXIT_OK, read.stderr  # one namespace a side, read: a pass
    assert "namespaces not read" in unread.stderr
    assert unread.returncode == c.EXIT_INCONCLUSIVE, unread.stdout
    verdict = json.loads(unread.stdout)
    assert verdict["verdict"] == c.ROLLOUT_INCONCLUSIVE
    assert "namespaces each side served in could not be read" in verdict["reason"]


# -- the API prefix given in the Triton URL ---------------------------------------------------------------
@pytest.mark.parametrize("tail", ["/v2", "/v2/"])
def test_a_triton_url_ending_in_the_api_prefix_says_to_give_the_root(triton, tail: str) -> None:
    """Before: `--triton-url http://T/v2` (Triton's API prefix, as in its curl examples) gave the real
    Triton's `…/v2/v2/repository/index answered HTTP 404: {"error":"Not Found"}` and nothing more."""
    done = _cli("triage", "--triton-url", f"{triton.http_url}{tail}")
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert "HTTP 404" in done.stderr
    assert f"(the Triton URL ends in /v2: give the server's root, {triton.http_url})" in done.stderr


# -- Triton's metrics port given as the Triton URL ---------------------------------------------------------
@pytest.mark.parametrize("command", [["triage", "--triton-url"], ["doctor", "--triton-url"]])
def test_the_metrics_port_given_as_the_triton_url_says_so(triton, command: list[str]) -> None:
    """Before (probes18 left it): the real metrics port's `405 {"error":"Method Not Allowed"}` to the index's
    POST, and its empty 200 to every other GET, were named with the URL and nothing more."""
    metrics_root = triton.metrics_url.rsplit("/", 1)[0]
    done = _cli(*command, metrics_root)
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr
    assert "is it Triton's metrics port? It serves /metrics only: give its HTTP port" in done.stderr
