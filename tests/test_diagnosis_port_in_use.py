"""A port Triton cannot bind (``server-port-in-use``): the real 2.51 server, and the wording of the
releases and layers that report the same failure.

The captures under ``tests/data/logs/real/port-in-use-<endpoint>.log`` come from a second real
server started on one port of a first one (regenerate them with
``python tests/test_diagnosis_port_in_use.py``); the live test makes them again against the shared
server and checks the same diagnosis.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
from corpus import FIXTURES, OK_PY, build_repository, config_pbtxt, diagnose_server_capture, run_until_exit

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.stack.local_triton import LocalTriton

# endpoint -> the service name main.cc gives it ("failed to start <name> service")
SERVICES = {"grpc": "GRPC", "http": "HTTP", "metrics": "Metrics"}
MODELS: dict[str, tuple[dict[str, str], str | None]] = {
    "ok_model": ({"config.pbtxt": config_pbtxt("ok_model"), "1/model.py": OK_PY}, None)
}


def fixture_path(endpoint: str) -> Path:
    return FIXTURES / f"port-in-use-{endpoint}.log"


def capture(holder: LocalTriton, endpoint: str, workdir: Path, log_path: Path, attempts: int = 3) -> int | None:
    """Start a real server on ``holder``'s ``endpoint`` port, wait for it to exit, return its code.

    The other two ports are picked free just before the bind; when another process takes one in
    between, the server fails on that endpoint first: run it again."""
    code = None
    for attempt in range(attempts):
        if attempt:
            log_path.unlink(missing_ok=True)
        code = _capture_once(holder, endpoint, workdir / f"try{attempt}", log_path)
        if f"failed to start {SERVICES[endpoint]} service" in log_path.read_text(errors="replace"):
            break
    return code


def _capture_once(holder: LocalTriton, endpoint: str, workdir: Path, log_path: Path) -> int | None:
    port = {f"{endpoint}_port": getattr(holder, f"{endpoint}_port")}
    repo = build_repository(workdir / "repo", MODELS)
    server = LocalTriton(repo, workdir=workdir / "triton", log_path=log_path, startup_timeout=60, **port)  # type: ignore[arg-type]
    return run_until_exit(server)  # start() may see the holder answer on the shared port


def check(endpoint: str, path: Path) -> None:
    report = diagnose_server_capture(path)
    assert report.findings, path
    top = report.findings[0]
    assert (top.model, top.runbook, top.severity) == (None, c.RUNBOOK_SERVER_PORT_IN_USE, c.IMPACT_CRITICAL)
    quoted = [e.text for e in top.evidence]
    assert any(f"failed to start {SERVICES[endpoint]} service" in t and "already in use" in t for t in quoted), quoted


@pytest.mark.parametrize("endpoint", sorted(SERVICES))
def test_committed_capture(endpoint: str) -> None:
    path = fixture_path(endpoint)
    assert path.exists(), f"missing fixture {path}: run python {Path(__file__).name}"
    assert "successfully loaded 'ok_model'" in path.read_text(), "the model loaded before the bind failed"
    check(endpoint, path)


def test_live_second_server_on_a_taken_port(triton: LocalTriton, tmp_path: Path) -> None:
    """Each endpoint of a second real server on a port of the shared one: exit 1, one critical finding."""
    for endpoint in sorted(SERVICES):
        log = tmp_path / f"{endpoint}.log"
        code = capture(triton, endpoint, tmp_path / endpoint, log)
        assert code not in (None, 0), f"{endpoint}: the second server did not fail ({code})"
        check(endpoint, log)
    assert triton.is_running()


# -------------------------------------------------------------- the wording of other releases and layers
@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        # Today's CI, Triton 2.51 (24.10), JSON-quoted message.
        (
            "E1201 22:34:10.571872 4002 main.cc:293] \"failed to start Metrics service: Unavailable - Socket '127.0.0.1:40949' already in use \"\n",
            "failed to start Metrics service",
        ),
        # pytriton#1 (PyTriton 0.5.0, Triton 2.41): the three endpoints, unquoted form.
        (
            "E0118 08:31:52.149680 840 main.cc:257] failed to start HTTP service: Unavailable - Socket '0.0.0.0:1111' already in use\n",
            "failed to start HTTP service",
        ),
        # server qa/L0_lifecycle/test.sh asserts this line (r22.05 on).
        (
            "E0905 10:00:00.000000 1 main.cc:245] failed to start GRPC service: Unavailable - Socket '0.0.0.0:8001' already in use \n",
            "failed to start GRPC service",
        ),
        # server PR #4071 (r22.04): "Port '<addr>' already in use " before the address option.
        (
            "E0420 10:00:00.000000 1 main.cc:229] failed to start GRPC service: Unavailable - Port '0.0.0.0:8001' already in use \n",
            "Port '0.0.0.0:8001' already in use",
        ),
        # tensorrtllm_backend#275: gRPC core's line before Triton's (multi-GPU launch, ports taken).
        (
            "E0109 19:34:35.165873190   11729 chttp2_server.cc:1080]      UNKNOWN:No address added out of total 1 resolved for '0.0.0.0:5001' {created_time:\"2024-01-09T19:34:35.165818739+00:00\", children:[UNKNOWN:Failed to add any wildcard listeners {children:[UNKNOWN:Unable to configure socket {fd:203, children:[UNKNOWN:Address already in use {syscall:\"bind\", os_error:\"Address already in use\", errno:98}]}]}]}\n"
            "E0109 19:34:35.166155 11729 main.cc:245] failed to start GRPC service: Unavailable - Socket '0.0.0.0:5001' already in use \n",
            "No address added out of total 1 resolved",
        ),
        # Docker (libnetwork port allocator), as users quote it (reaction-development-platform docs).
        (
            "ERROR: for reactionusers_web_1  Cannot start service web: driver failed programming external connectivity on endpoint reactionusers_web_1 (0f45bf5f): Bind for 0.0.0.0:4000 failed: port is already allocated\n",
            "port is already allocated",
        ),
        # Docker's userland proxy (uvlhub docs).
        (
            "docker: Error response from daemon: driver failed programming external connectivity on endpoint mariadb_container (3a1b): Error starting userland proxy: listen tcp4 0.0.0.0:3306: bind: address already in use.\n",
            "address already in use",
        ),
        # kube-scheduler NodePorts plugin (kubectl describe pod, a hostPort pod with more replicas than nodes).
        (
            "  Warning  FailedScheduling  60s   default-scheduler  0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..\n",
            "didn't have free ports for the requested pod ports",
        ),
        # Python code binding a socket (a launcher, a Python model): OSError's strerror.
        (
            "Traceback (most recent call last):\n  File \"/opt/launch.py\", line 12, in <module>\n    sock.bind(('0.0.0.0', 8000))\nOSError: [Errno 98] Address already in use\n",
            "[Errno 98] Address already in use",
        ),
    ],
)
def test_port_in_use_wording(text: str, quoted: str) -> None:
    report = diagnose_events(parse_text(text))
    assert report.findings, text
    top = report.findings[0]
    assert (top.model, top.runbook, top.severity) == (None, c.RUNBOOK_SERVER_PORT_IN_USE, c.IMPACT_CRITICAL)
    assert quoted in top.evidence[0].text


def test_a_pod_short_of_gpus_as_well_as_ports_stays_unschedulable() -> None:
    """A scheduler message that also lacks GPUs is the GPU page's: freeing a port would not place it."""
    text = "  Warning  FailedScheduling  default-scheduler  0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't have free ports for the requested pod ports.\n"
    assert diagnose_events(parse_text(text)).findings[0].runbook == c.RUNBOOK_POD_UNSCHEDULABLE


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        holder = LocalTriton(build_repository(root / "holder-repo", MODELS), workdir=root / "holder")
        holder.start()
        try:
            for endpoint in sorted(SERVICES):
                out = fixture_path(endpoint)
                out.unlink(missing_ok=True)
                print(endpoint, capture(holder, endpoint, root / endpoint, out))
                check(endpoint, out)
        finally:
            holder.stop()
    sys.exit(0)
