"""A global view over two clusters (issue 24): each cluster a simulated Triton (counters growing at
known rates) scraped by its own Prometheus with external_labels {cluster: ...}, remote-writing to a
global Prometheus (remote-write receiver, the SLO rules generated with cluster_label) and to
VictoriaMetrics (vmalert evaluating the same rules). East fails 2 requests in 10, west none: both
global evaluators page for east only, at east's burn rate, and the fleet-wide request and error
counts equal the sum of the clusters'. Loopback only; every process is stopped.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from binaries import binary, stop
from live_prometheus import Prom, start_prometheus, stop_prometheus, wait_ready
from test_cluster_label import CLUSTER, TWO_CLUSTERS
from victoria import victoria_metrics

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.generate.command import render_all
from triton_sre.slo import parse_spec
from triton_sre.stack.processes import free_port

RATES = {"east": (8.0, 2.0), "west": (10.0, 0.0)}  # (successes, failures) per second
BUDGET = 0.01  # TWO_CLUSTERS: objective 99


@contextmanager
def simulated_triton(success: float, failure: float) -> Iterator[int]:
    """A loopback `/metrics` with Triton's request counters growing at the given rates."""
    started = time.time()
    labels = {c.LABEL_MODEL: "m", c.LABEL_VERSION: "1"}
    failed = {**labels, c.LABEL_REASON: "BACKEND"}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # vmalert's notifier (it needs one): alerts are read from ALERTS
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            elapsed = time.time() - started
            body = "\n".join(
                (
                    f"{pq.selector(c.NV_REQUEST_SUCCESS, pq.equal(labels.items()))} {int(success * elapsed)}",
                    f"{pq.selector(c.NV_REQUEST_FAILURE, pq.equal(failed.items()))} {int(failure * elapsed)}",
                    "",
                )
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextmanager
def prometheus(work: Path, config: dict[str, Any], *extra: str) -> Iterator[Prom]:
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    proc, log = start_prometheus(work, config, port, *extra)
    try:
        yield wait_ready(proc, work, port)
    finally:
        stop_prometheus(proc, log)


@contextmanager
def vmalert(work: Path, rules: Path, vm_url: str, notifier_url: str) -> Iterator[None]:
    log = (work / "vmalert.log").open("wb")
    proc = subprocess.Popen(
        [
            binary("vmalert"),
            f"-rule={rules}",
            f"-datasource.url={vm_url}",
            f"-remoteWrite.url={vm_url}",
            f"-notifier.url={notifier_url}",
            "-evaluationInterval=2s",
            f"-httpListenAddr=127.0.0.1:{free_port()}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield
    finally:
        stop(proc)
        log.close()


@pytest.mark.slow
def test_a_burn_in_one_cluster_pages_for_it_on_the_global_view(tmp_path: Path) -> None:
    spec = parse_spec(TWO_CLUSTERS, str(tmp_path / "slos.yaml"))
    for rel, content in render_all(spec, "runbooks/").items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(content)
    rules = tmp_path / "alerts" / "triton-slo-rules.yaml"
    firing = pq.selector(c.ALERTS_SERIES, [("alertstate", "=", "firing"), (c.L_WINDOW, "=", "1h")])
    with ExitStack() as stack:
        vm = stack.enter_context(victoria_metrics(tmp_path / "vm"))
        sink = stack.enter_context(simulated_triton(0, 0))  # answers vmalert's notifications too
        stack.enter_context(vmalert(tmp_path / "vm", rules, vm.url, f"http://127.0.0.1:{sink}"))
        global_config = {"global": {"evaluation_interval": "2s"}, "rule_files": [str(rules)]}
        glob = stack.enter_context(
            prometheus(tmp_path / "global", global_config, "--web.enable-remote-write-receiver")
        )
        clusters: dict[str, Prom] = {}
        for name, (success, failure) in RATES.items():
            port = stack.enter_context(simulated_triton(success, failure))
            config = {
                "global": {"scrape_interval": "1s", "external_labels": {CLUSTER: name}},
                "scrape_configs": [
                    {"job_name": c.DEFAULT_TRITON_JOB, "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}
                ],
                "remote_write": [
                    {"url": f"{glob.url}/api/v1/write", "queue_config": {"batch_send_deadline": "1s"}},
                    {"url": f"{vm.url}/api/v1/write", "queue_config": {"batch_send_deadline": "1s"}},
                ],
            }
            clusters[name] = stack.enter_context(prometheus(tmp_path / name, config))
        deadline = time.monotonic() + 120
        prom_alerts: list[dict[str, str]] = []
        vm_alerts: list[dict[str, str]] = []
        while time.monotonic() < deadline and not (prom_alerts and vm_alerts):
            time.sleep(0.5)  # was 2 s: up to 2 s after both fired went unseen
            prom_alerts = glob.query(firing)
            vm_alerts = vm.query(firing, time.time())
        assert prom_alerts and vm_alerts, (tmp_path / "vm" / "vmalert.log").read_text()[-3000:]
        for alerts in (prom_alerts, vm_alerts):
            assert {a["metric"][CLUSTER] for a in alerts} == {"east"}, alerts
            assert {a["metric"][c.L_SEVERITY] for a in alerts} == {c.SEVERITY_PAGE}
        # east's figures: 2 failures in 10 requests over the 5m rates, a burn rate of 20x
        errors = c.rec_slo_errors("5m")
        burn = {r["metric"][CLUSTER]: float(r["value"][1]) / BUDGET for r in glob.query(errors)}
        assert burn["east"] == pytest.approx(20, rel=0.1) and burn["west"] == 0, burn
        # fleet-wide counts = the sum of the clusters' own, sample for sample (a past instant every
        # cluster has already remote-written)
        at = time.time() - 10
        for family in (c.NV_REQUEST_SUCCESS, c.NV_REQUEST_FAILURE):
            own = sum(float(r["value"][1]) for p in clusters.values() for r in p.query(f"sum({family})", at))
            fleet = float(glob.query(f"sum({family})", at)[0]["value"][1])
            fleet_vm = float(vm.query(f"sum({family})", at)[0]["value"][1])
            assert fleet == fleet_vm == own, (family, fleet, fleet_vm, own)
            assert own > 0 or family == c.NV_REQUEST_FAILURE
