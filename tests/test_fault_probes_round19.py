"""Fault probes, round nineteen (branch `probes19`, 2026-12-07): loopback however it is spelled, and the
probes listed in docs/failure-behaviour.md, "Fault probes, round nineteen". Each test failed before its
change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from test_exporter_scale_and_traces import otlp_collector  # noqa: F401 - the fixture
from test_fault_probes_round9b import serving
from test_fault_probes_round18 import ROOT, RecordingProxy, _cli
from test_stack_lifecycle import _free_block

from triton_sre import conventions as c
from triton_sre import tracing
from triton_sre.demo import VECTOR_SCALE
from triton_sre.demo.traffic import drive, infer
from triton_sre.exporter.service import Exporter, ExporterSettings
from triton_sre.httpclient import PROXY_FAILED, fetch, is_loopback, new_session
from triton_sre.stack.local import PORT_OFFSETS, Stack
from triton_sre.stack.processes import free_port

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture
def proxy() -> Iterator[RecordingProxy]:
    server = RecordingProxy()
    yield server
    server.close()


# -- loopback as the C library reads it ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.1", True), ("127.0.1", True), ("0x7f000001", True), ("2130706433", True), ("0177.0.0.1", True),
        ("127.000.000.001", True), ("017700000001", True), ("0x7f.1", True), ("0:0:0:0:0:0:0:1", True),
        ("0000::1", True), ("::ffff:7f00:1", True), ("0.0.0.0", True), ("0", True), ("::", True),
        ("10.1", False), ("0x0a000001", False), ("167772161", False), ("1.0x7f", False),
        ("::127.0.0.1", False), ("128.0.0.1", False), ("vm", False), ("127.0.0.1.evil.example", False),
        ("модель", False), ("a" * 300, False),
    ],
)  # fmt: skip
def test_a_host_is_loopback_as_the_resolver_connects_it(host: str, loopback: bool) -> None:
    """Before: `127.1`, `0x7f000001`, `2130706433`, `0177.0.0.1`, `127.000.000.001` (127.0.0.1 to the C
    library's `getaddrinfo`, which the connection uses) and the unspecified address (Linux connects it to
    loopback) were handed to the environment's proxy, which reached its own loopback instead."""
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("host", ["127.1", "0x7f000001", "2130706433", "127.000.000.001", "0177.0.0.1"])
def test_triage_of_the_real_triton_on_any_spelling_of_loopback_never_asks_the_proxy(
    triton, proxy: RecordingProxy, host: str
) -> None:
    """Before: `triage --triton-url http://127.1:PORT` behind `HTTP_PROXY` asked the proxy for the index:
    `answered HTTP 502`, exit 2. The real Triton listens on 127.0.0.1."""
    url = triton.http_url.replace("127.0.0.1", host)
    done = _cli("triage", "--format", "json", "--triton-url", url, **proxy.environment())
    assert done.returncode == c.EXIT_FAILURE, done.stderr
    assert json.loads(done.stdout)["findings"], done.stdout
    assert proxy.asked == []


@pytest.mark.parametrize("host", ["[0:0:0:0:0:0:0:1]", "[::]"])
def test_an_ipv6_loopback_spelled_long_is_connected_directly(proxy: RecordingProxy, host: str) -> None:
    """Nothing listens there: the refusal is the connection's own, not the proxy's 502."""
    done = _cli("triage", "--triton-url", f"http://{host}:{free_port()}", **proxy.environment())
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert proxy.asked == []
    assert "HTTP 502" not in done.stderr and "at the proxy" not in done.stderr


# -- the local stack's own reads under a pod-wide proxy ------------------------------------------------------
def test_the_local_triton_starts_and_takes_traffic_with_a_proxy_in_the_environment(
    fresh_triton_factory, proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: with `HTTP_PROXY` set and `NO_PROXY` empty, `LocalTriton.start` (`stack up`, `demo`,
    `gameday`) asked the proxy for `/v2/health/live` until it gave up: `tritonserver not up after 60 s
    (/v2/health/live answered 502 …)` (376 proxied reads in 40 s measured); the readiness checks, the
    demo's traffic and status reads went the same way (plain `requests`, which proxies loopback)."""
    for name, value in proxy.environment().items():
        monkeypatch.setenv(name, value)
    server = fresh_triton_factory(startup_timeout=60)
    assert Stack.http_ok(f"{server.http_url}/v2/health/live")()
    assert infer(server.http_url, VECTOR_SCALE)["outputs"]
    sent = drive(server.http_url, VECTOR_SCALE, requests_total=5, concurrency=2, timeout_s=30)
    assert (sent.ok, sent.total) == (5, 5), sent
    assert proxy.asked == []


@pytest.mark.triton
def test_stack_up_with_a_proxy_in_the_environment_comes_up_and_never_asks_it(
    tmp_path: Path, proxy: RecordingProxy
) -> None:
    """Before: `stack up` under a pod-wide `HTTP_PROXY` (no `NO_PROXY`) failed at its first component:
    `tritonserver not up after … (/v2/health/live answered 502 …)`, exit 1. Its children (the exporter,
    the bot, Go's Prometheus and Alertmanager) read loopback directly already."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")} | proxy.environment()
    env["PYTHONPATH"] = str(ROOT)
    base = _free_block(len(PORT_OFFSETS))
    workdir = tmp_path / "stack"
    up = [sys.executable, "-m", "triton_sre", "stack", "up", "--workdir", str(workdir)]
    try:
        up += ["--port-base", str(base), "--timeout", "120"]
        done = subprocess.run(up, capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        status = subprocess.run(
            [sys.executable, "-m", "triton_sre", "stack", "status", "--workdir", str(workdir)],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert status.returncode == 0, status.stdout + status.stderr
    finally:
        subprocess.run(
            [sys.executable, "-m", "triton_sre", "stack", "down", "--workdir", str(workdir)],
            capture_output=True, timeout=180, env=env,
        )  # fmt: skip
    assert proxy.asked == []


def test_spans_reach_a_collector_on_loopback_past_the_environments_proxy(
    triton, otlp_collector: list[bytes], proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    """Before: with `OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318` (a collector sidecar) and a pod-wide
    `HTTP_PROXY`, the OTLP exporter's own `requests` session posted the poll's spans to the proxy (502):
    every span lost, the collector asked nothing."""
    for name, value in proxy.environment().items():
        monkeypatch.setenv(name, value)
    exporter = Exporter(ExporterSettings(triton_url=triton.http_url, metrics_url=triton.metrics_url))
    exporter.poll_once()
    tracing.shutdown()  # flushes the batch processor
    assert otlp_collector, "no span reached the collector"
    assert proxy.asked == []


@pytest.mark.parametrize(
    "variable",
    [
        "ALL_PROXY=socks5h://user:s3cret@127.0.0.1:1", "HTTP_PROXY=http://user:s3cret@[::1",
        "HTTP_PROXY=http://user:s3cret@proxy.invalid:99999",
    ],
)  # fmt: skip
def test_a_proxy_url_that_cannot_be_used_is_named_as_the_proxys(variable: str) -> None:
    """Before: `cannot reach http://triton…: Missing dependencies for SOCKS support.` / `Failed to parse:
    '[::1' is not a valid host or port` / `Failed to parse: http://<redacted>@proxy.invalid:99999`, read as
    Triton's URL at fault; `HTTP_PROXY=ftp://…` and `http://:0` were already named by requests."""
    name, value = variable.split("=", 1)
    unset = dict.fromkeys(PROXY_VARIABLES, "")
    given = unset | {name: value, name.lower(): value}  # an empty lower-case variable unsets it
    done = _cli("triage", "--triton-url", "http://triton.example.invalid:8000", **given)
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert f"{PROXY_FAILED}: its URL cannot be used" in done.stderr
    assert "s3cret" not in done.stderr and "Traceback" not in done.stderr


def _moved_once(handler: BaseHTTPRequestHandler) -> None:
    """A same-host 307 for the first request, `[]` for the one it points to. (Triton never redirects; a
    proxy or front end in its place may.)"""
    moved = "again" not in handler.path
    handler.send_response(307 if moved else 200)
    if moved:
        handler.send_header("Location", f"{handler.path}?again=1")
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "0" if moved else "2")
    handler.end_headers()
    if not moved:
        handler.wfile.write(b"[]")


def test_a_redirect_on_loopback_never_carries_the_proxys_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: with `HTTP_PROXY=http://user:s3cret@proxy` and a same-host redirect from a server on loopback
    (reached directly), requests' redirect handling added `Proxy-Authorization: Basic dXNlcjpzM2NyZXQ=` to
    the redirected request, which went straight to that server: the proxy's password handed to it."""
    monkeypatch.setenv("HTTP_PROXY", "http://user:s3cret@127.0.0.1:1")
    monkeypatch.setenv("http_proxy", "http://user:s3cret@127.0.0.1:1")
    monkeypatch.setenv("NO_PROXY", "")
    monkeypatch.setenv("no_proxy", "")
    with serving(_moved_once) as (url, seen):
        for session in (new_session(url), new_session()):
            answer = fetch(session, "POST", f"{url}/v2/repository/index", 10, json={})
            assert (answer.status_code, answer.json()) == (200, [])
    assert len(seen) == 4  # each session: the first request and the redirected one
    assert [headers.get("Proxy-Authorization") for headers in seen] == [None] * 4


# -- lint before an upgrade (or a rollback) ---------------------------------------------------------------
def _one_model_repository(root: Path) -> Path:
    (root / "m" / "1").mkdir(parents=True)
    (root / "m" / "config.pbtxt").write_text('name: "m"\nbackend: "onnxruntime"\nmax_batch_size: 8\n')
    (root / "m" / "1" / "model.onnx").write_bytes(b"")
    return root


@pytest.mark.parametrize("flags", [["--release="], ["--release", "25.01", "--from-release", " "]])
def test_an_empty_release_is_a_usage_error_not_a_check_without_one(tmp_path: Path, flags: list[str]) -> None:
    """Before: `lint models/ --release "$RELEASE"` with the variable unset checked no release at all:
    `no problem found`, exit 0, as if the upgrade had been checked."""
    done = _cli("lint", str(_one_model_repository(tmp_path / "repo")), *flags)
    assert done.returncode == c.EXIT_USAGE, done.stdout + done.stderr
    assert "is empty: give a release like 25.01" in done.stderr


def test_a_from_release_newer_than_the_release_is_called_a_downgrade(tmp_path: Path) -> None:
    """Before: `--release 25.01 --from-release 25.02` (a rollback) read `upgrading from 25.02`."""
    repo = str(_one_model_repository(tmp_path / "repo"))
    back = _cli("lint", repo, "--release", "25.01", "--from-release", "25.02")
    assert back.returncode == 0, back.stderr
    assert "against release 25.01 (tritonserver 2.54), downgrading from 25.02" in back.stdout
    forward = _cli("lint", repo, "--release", "25.01", "--from-release", "24.12")
    assert "upgrading from 24.12" in forward.stdout


# -- a path flag given an empty value (`--flag "$VAR"`, the variable unset) -------------------------------
@pytest.mark.parametrize(
    "argv",
    [
        ["stack", "up", "--workdir", ""], ["stack", "status", "--workdir", " "], ["demo", "--workdir", ""],
        ["gameday", "--workdir", ""], ["gameday", "--attach", ""], ["lint", ""], ["lint", ".", "--spec", ""],
        ["export", "--config", "", "--triton-url", "http://127.0.0.1:9"], ["bot", "--config", ""],
        ["bot", "--outbox", ""], ["generate", "--out", ""], ["doctor", "--spec", ""],
        ["triage", "--runbooks", ""], ["triage", "--format", "json", ""],
    ],
)  # fmt: skip
def test_an_empty_path_is_a_usage_error_not_the_current_directory(tmp_path: Path, argv: list[str]) -> None:
    """Before: an empty path was the current directory: `stack up --workdir ""` started the whole stack
    there (exit 0), `lint ""` linted it, `export --config ""` ran without a config, `bot --outbox ""`…"""
    done = _cli(*argv, cwd=tmp_path, timeout=60)
    assert done.returncode == c.EXIT_USAGE, done.stdout + done.stderr
    assert "is empty" in done.stderr + done.stdout and "give a path" in done.stderr + done.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("flag", ["--cluster", "--model", "--candidate-version", "--job"])
def test_an_empty_rollout_name_is_a_usage_error(tmp_path: Path, flag: str) -> None:
    """Before: `rollout check … --cluster "$CLUSTER"` with the variable unset judged the sides summed over
    every cluster (an empty `--cluster` read as not given); an empty `--model` read `--baseline-version/
    --candidate-version need --model`, an empty version `… go together`. Nothing is asked of Prometheus."""
    argv = {"--model": "m", "--baseline-version": "1", "--candidate-version": "2", flag: ""}
    flat = [part for pair in argv.items() for part in pair]
    done = _cli("rollout", "check", "--prometheus", f"http://127.0.0.1:{free_port()}", *flat, cwd=tmp_path)
    assert done.returncode == c.EXIT_USAGE, done.stdout + done.stderr
    assert f"argument {flag}: is empty, got '': give a name" in done.stderr


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", ["export", "bot"])
@pytest.mark.parametrize("host", ["127.0.0.1.", "no-such-host.invalid"])
def test_a_listen_host_that_does_not_resolve_is_usage(tmp_path: Path, command: str, host: str) -> None:
    """Round nineteen's leftover: `--listen 127.0.0.1.:P` (a trailing dot) was `cannot listen on …: Name or
    service not known`, exit 1 as for a port in use; a host that does not resolve is the flag's value: exit
    2, the flag named. (A port in use stays 1: tests/test_cli.py.)"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    env.pop(c.ENV_CONFIG, None)
    env.update({"PYTHONPATH": str(ROOT), c.ENV_SLACK_BOT_TOKEN: "xoxb-1", c.ENV_BOT_TOKEN: "hook"})
    argv = [command, "--listen", f"{host}:{free_port()}"]
    if command == "export":
        argv += ["--triton-url", "http://127.0.0.1:9"]
    else:
        argv += ["--outbox", str(tmp_path / "outbox.db"), "--channel", "#x"]
    done = subprocess.run(
        [sys.executable, "-m", "triton_sre.cli", *argv], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert f"--listen {host}:" in done.stderr and "does not resolve" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
