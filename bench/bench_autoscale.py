"""Benchmark (issue 21): which scaling signal acts before the latency SLO burns, on the real Triton.

A real `tritonserver` (LocalTriton) serves `slow_model` (one instance, 0.1 s per request: 10 req/s
of capacity) and `vector_scale` (fast, never queues). A real Prometheus scrapes it every 2 s and
evaluates the generated autoscaling rules (alerts/triton-autoscaling-rules.yaml). Traffic ramps on
slow_model past its capacity (closed-loop clients with think time, +2 clients per step) while
vector_scale keeps a steady load. Every 5 s each candidate signal is read from Prometheus:

- `weighted`: instance:triton_queue_seconds_per_request:ratio_rate1m (what we ship), target 100 ms;
- `pending`: instance:triton_pending_requests:sum, target 5 per replica;
- `naive`: the average of per-model queue averages (seconds), target 100 ms;
- `nvidia`: NVIDIA k8s-onprem's adapter query, avg(delta(queue_us[30s]) / (1 + delta(success[30s]))),
  target 100,000 µs;
- `cpu`: nv_cpu_utilization (host CPU, 0..1), target 0.8 (the usual HPA CPU target).

The Kubernetes HPA algorithm is replayed on each: every 15 s, desired = ceil(current x value /
target) (per-replica signals: ceil(value / target)), ignored within the 10 % tolerance, scale-up
stabilisation 0 s, clamped to max_replicas 10; a replica added at t serves from t + the measured
load time. Open loop: the one real Triton keeps all the load, so the signal is not re-split over
the replicas asked for (the replay says when and how many, not what they would have fixed). The burn starts at
the first sample where slow_model's p99 (Triton's summary) exceeds the SLO threshold (500 ms).
Output: a table of when each signal first scales out relative to the burn, and replicas asked.

    python bench/bench_autoscale.py [--step 30] [--steps 8] [--json]

Loopback only; bounded (steps x step seconds + ~1 min). The machine it ran on is shared (see
bench/RESULTS.md): absolute latencies move with the load, the order of the signals is the result.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests
import yaml

from triton_sre import conventions as c
from triton_sre.demo import SAMPLE_REPOSITORY
from triton_sre.demo.traffic import TrafficDriver
from triton_sre.promql import by, label_sets, rate, selector
from triton_sre.stack.local_triton import LocalTriton, free_port

REPO = Path(__file__).resolve().parents[1]
SLOW, FAST = "slow_model", "vector_scale"
THRESHOLD_S = 0.5
SYNC_S = 15.0  # the HPA controller's sync period
SAMPLE_S = 5.0
MAX_REPLICAS = 10  # the shipped slos.yaml entry's max_replicas (the HPA clamps desired to it)
JOB = c.DEFAULT_TRITON_JOB


def signals() -> dict[str, tuple[str, float, bool]]:
    """name -> (PromQL, target, per replica)."""
    m = [(c.LABEL_JOB, "=", JOB)]
    server = label_sets().server
    per_model = f"{rate(c.NV_QUEUE_DURATION_US, m, '1m')} / {rate(c.NV_REQUEST_SUCCESS, m, '1m')}"
    nvidia = (
        f"avg({rate(c.NV_QUEUE_DURATION_US, m, '30s', 'delta')} / "
        f"(1 + {rate(c.NV_REQUEST_SUCCESS, m, '30s', 'delta')}))"
    )
    return {
        "weighted": (selector(c.REC_QUEUE_PER_REQUEST_INSTANCE, m), 0.1, False),
        "pending": (selector(c.REC_PENDING_INSTANCE, m), 5.0, True),
        "naive": (f"avg {by(server)} ({per_model}) / 1e6", 0.1, False),
        "nvidia": (nvidia, 100_000.0, False),
        "cpu": (f"max({selector(c.NV_CPU_UTILIZATION, m)})", 0.8, False),
    }


def p99_expr() -> str:
    return selector(c.NV_REQUEST_SUMMARY_US, [(c.LABEL_MODEL, "=", SLOW), (c.LABEL_QUANTILE, "=", "0.99")])


def query(url: str, expr: str) -> float | None:
    body = requests.get(f"{url}/api/v1/query", params={"query": expr}, timeout=10).json()
    values = [float(r["value"][1]) for r in body["data"]["result"]]
    values = [v for v in values if math.isfinite(v)]
    return max(values) if values else None


def replay(samples: list[dict[str, Any]], name: str, target: float, per_replica: bool, load_s: float) -> dict:
    """The HPA algorithm on one signal; returns the first scale-out and the replicas asked for."""
    current, first, asked_max, last_sync = 1, None, 1, -SYNC_S
    for s in samples:
        if s["t"] - last_sync < SYNC_S or s[name] is None:
            continue
        last_sync = s["t"]
        value = s[name]
        ratio = value / target / (current if per_replica else 1)
        if abs(ratio - 1) <= c.HPA_TOLERANCE:
            continue
        desired = min(MAX_REPLICAS, max(1, math.ceil(current * ratio)))
        asked_max = max(asked_max, desired)
        if desired > current:
            if first is None:
                first = {"t": s["t"], "desired": desired, "value": value, "useful_at": s["t"] + load_s}
            current = desired
    return {"first": first, "max_desired": asked_max}


def run(step_s: float, steps: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-autoscale-"))
    triton = LocalTriton(
        SAMPLE_REPOSITORY, model_control_mode="explicit", load_models=[SLOW, FAST], workdir=work / "triton"
    )
    prom_port, prom = free_port(), None
    drivers: list[TrafficDriver] = []
    try:
        triton.start()
        load_s = float(triton.startup_seconds or 0.0)
        config = {
            "global": {"scrape_interval": "2s", "evaluation_interval": "2s"},
            "rule_files": [str(REPO / "alerts" / "triton-autoscaling-rules.yaml")],
            "scrape_configs": [
                {
                    "job_name": JOB,
                    "static_configs": [{"targets": [triton.metrics_url.split("//")[1].split("/")[0]]}],
                }
            ],
        }
        (work / "prometheus.yml").write_text(yaml.safe_dump(config))
        log = (work / "prometheus.log").open("wb")
        prom = subprocess.Popen(
            [
                shutil.which("prometheus") or "prometheus",
                f"--config.file={work / 'prometheus.yml'}",
                f"--storage.tsdb.path={work / 'data'}",
                f"--web.listen-address=127.0.0.1:{prom_port}",
                "--log.level=warn",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{prom_port}"
        for _ in range(150):
            try:
                if requests.get(f"{url}/-/ready", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            time.sleep(0.2)
        total = step_s * steps + 90
        drivers.append(
            TrafficDriver(triton.http_url, {FAST: 2}, max_duration_s=total, think_time_s=0.05).start()
        )
        sigs = signals()
        samples: list[dict[str, Any]] = []
        t0 = time.monotonic()
        for step in range(steps):
            drivers.append(
                TrafficDriver(triton.http_url, {SLOW: 2}, max_duration_s=total, think_time_s=0.5).start()
            )
            end = t0 + (step + 1) * step_s
            while time.monotonic() < end:
                row: dict[str, Any] = {"t": round(time.monotonic() - t0, 1), "clients": 2 * (step + 1)}
                for name, (expr, _, _) in sigs.items():
                    row[name] = query(url, expr)
                p99 = query(url, p99_expr())
                row["p99_s"] = p99 / 1e6 if p99 is not None else None
                samples.append(row)
                time.sleep(max(0.0, min(SAMPLE_S, end - time.monotonic())))
        burn = next((s["t"] for s in samples if (s["p99_s"] or 0) > THRESHOLD_S), None)
        result: dict[str, Any] = {
            "load_s": round(load_s, 2),
            "burn_t": burn,
            "samples": samples,
            "signals": {},
        }
        for name, (_, target, per) in sigs.items():
            r = replay(samples, name, target, per, load_s)
            first = r["first"]
            result["signals"][name] = {
                "target": target,
                "first_scale_out_t": first and first["t"],
                "lead_s": (round(burn - first["t"], 1) if first and burn is not None else None),
                "desired_at_first": first and first["desired"],
                "max_desired": r["max_desired"],
            }
        return result
    finally:
        for d in drivers:
            d.stop()
        if prom is not None:
            prom.terminate()
            try:
                prom.wait(timeout=15)
            except subprocess.TimeoutExpired:
                prom.kill()
        triton.stop()
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--step", type=float, default=30.0, help="seconds per ramp step (+2 clients)")
    parser.add_argument("--steps", type=int, default=8, help="ramp steps (at most 12)")
    parser.add_argument("--json", action="store_true", help="print every sample as JSON too")
    args = parser.parse_args(argv)
    result = run(args.step, min(max(args.steps, 1), 12))
    print(
        f"model load (LocalTriton startup, 2 models): {result['load_s']} s; "
        f"p99 of {SLOW} first over {THRESHOLD_S * 1000:.0f} ms at t={result['burn_t']} s"
    )
    print(f"{'signal':<10} {'target':>9} {'scales out at':>14} {'before burn':>12} {'asks':>5} {'max':>4}")
    for name, s in result["signals"].items():
        print(
            f"{name:<10} {s['target']:>9g} {s['first_scale_out_t']!s:>14} {s['lead_s']!s:>12} "
            f"{s['desired_at_first']!s:>5} {s['max_desired']:>4}"
        )
    if args.json:
        print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
