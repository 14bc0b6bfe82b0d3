"""Benchmark (issue 21): which scaling signal acts before the latency SLO burns, on the real Triton.

A real `tritonserver` (LocalTriton) serves `slow_model` (one instance, no batching, 0.1 s per
request: 10 req/s of capacity) and `vector_scale` (fast, never queues). A real Prometheus scrapes it
every 2 s (`--scrape`) and evaluates the generated autoscaling rules (alerts/triton-autoscaling-rules.yaml).
Traffic ramps on slow_model past its capacity (closed-loop clients with 0.5 s think time, +2 clients
per step) while vector_scale keeps a steady load. Every 5 s each candidate signal is read from
Prometheus, each with the target the spec derives by default (autoscale_spec.default_target on the
shipped slos.yaml) unless noted:

- `pending`: job:triton_pending_requests:sum, per replica (AverageValue), the shipped default signal;
- `pending_instant`, `pending_30s`, `pending_45s`, `pending_1m`: the same backlog queried raw, at an
  instant and averaged over each window (autoscale30: which window; no rule-evaluation delay);
- `weighted`: job:triton_queue_seconds_per_request:ratio_rate1m (Value);
- `naive`: the average of per-model queue averages (seconds), the weighted signal's target;
- `nvidia`: NVIDIA k8s-onprem's adapter query, avg(delta(queue_us[30s]) / (1 + delta(success[30s]))),
  the same target in µs;
- `cpu`: nv_cpu_utilization (host CPU, 0..1), target 0.8 (the usual HPA CPU target).

The Kubernetes HPA algorithm (Hpa below) runs on a signal every 15 s: usage = value / target (per
replica signals: the total over the ready replicas / (target x replicas)); within the 10 % tolerance
nothing changes, else desired = ceil(replicas x usage), limited by the rendered scale-up policy (at
most double, or +1, per scale-up period) and max_replicas 10; no scale-down within the run (the
rendered scale-down window, 300 s at least, is longer than a phase). A replica asked for at t serves
from t + the measured model load time (LocalTriton's startup with the two models).

Two kinds of phase, each on a fresh Triton and Prometheus:
- `open`: no replica is ever added; every signal is replayed on the same samples. Its first scale-out
  does not depend on the loop (nothing was added before it), so it says when each signal acts
  relative to the burn of an unscaled server; what happens after is not modelled.
- `closed:<signal>`: the HPA on that signal runs live and its replicas take load. A load balancer
  spreads the clients evenly over the ready replicas; all replicas see the same load, so the one real
  Triton plays one of them with ceil(clients / ready) clients on slow_model (vector_scale's 2 stay:
  they are not the bottleneck). Its signals are then exactly what each replica would export.
The burn starts at the first sample where slow_model's p99 (Triton's summary) exceeds the shipped
latency SLO's threshold (500 ms). The load average of the machine is sampled with the signals.

    python bench/bench_autoscale.py [--step 30] [--steps 8] [--phases open,closed:pending] [--scrape 2]
                                    [--json]

`--scrape` sets Prometheus' scrape and rule-evaluation interval (default 2 s, the earlier runs'; 15 s
is the interval the shipped rules are built for, where a [30s] window holds two scrapes).

Loopback only; bounded (per phase: steps x step seconds + ~20 s). The machine it ran on is shared
(see bench/RESULTS.md): absolute latencies move with the load, the order of the signals is the result.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
import yaml

from triton_sre import conventions as c
from triton_sre.autoscale_spec import Autoscaling, default_target
from triton_sre.demo import SAMPLE_REPOSITORY
from triton_sre.demo.traffic import TrafficDriver
from triton_sre.probes import startup_budget
from triton_sre.promql import by, label_sets, rate, selector
from triton_sre.slo import default_spec
from triton_sre.stack.local_triton import LocalTriton
from triton_sre.stack.processes import free_port

REPO = Path(__file__).resolve().parents[1]
SLOW, FAST = "slow_model", "vector_scale"
SYNC_S = 15.0  # the HPA controller's sync period
SAMPLE_S = 5.0
TICK_S = 1.0  # how often the closed loop moves clients to the replicas that became ready
CLIENTS_PER_STEP = 2
MAX_REPLICAS = 10  # the shipped slos.yaml entry's max_replicas (the HPA clamps desired to it)
CPU_TARGET = 0.8
JOB = c.DEFAULT_TRITON_JOB


def slo_threshold() -> tuple[float, float]:
    """The shipped spec's tightest latency SLO: (threshold seconds, quantile)."""
    latency = [s for s in default_spec().slos if s.type == c.SLO_LATENCY]
    tightest = min(latency, key=lambda s: s.threshold_s)
    return tightest.threshold_s, float(tightest.quantile)


def default_targets() -> dict[str, float]:
    """What the spec derives for each signal when an entry names no target."""
    spec = default_spec()
    pairs = [(s.threshold_s, float(s.quantile)) for s in spec.slos if s.type == c.SLO_LATENCY]
    return {
        signal: default_target(
            signal, pairs, spec.operational.queue_time_threshold_s, spec.operational.pending_requests, 0.9
        )
        for signal in (c.SIGNAL_QUEUE_TIME, c.SIGNAL_PENDING)
    }


def signals() -> dict[str, tuple[str, float, bool]]:
    """name -> (PromQL, target, per replica)."""
    m = [(c.LABEL_JOB, "=", JOB)]
    server = label_sets().server
    per_model = f"{rate(c.NV_QUEUE_DURATION_US, m, '1m')} / {rate(c.NV_REQUEST_SUCCESS, m, '1m')}"
    nvidia = (
        f"avg({rate(c.NV_QUEUE_DURATION_US, m, '30s', 'delta')} / "
        f"(1 + {rate(c.NV_REQUEST_SUCCESS, m, '30s', 'delta')}))"
    )
    targets = default_targets()
    queue = targets[c.SIGNAL_QUEUE_TIME]
    gauge = selector(c.NV_PENDING_REQUEST_COUNT, m)
    pending = targets[c.SIGNAL_PENDING]
    return {
        "pending": (selector(c.REC_PENDING_JOB, m), pending, True),
        # the backlog's candidate readings, queried raw (no rule-evaluation delay) on the same samples
        "pending_instant": (f"sum({gauge})", pending, True),
        **{
            f"pending_{w}": (f"sum(avg_over_time({gauge}[{w}]))", pending, True)
            for w in PENDING_WINDOWS
        },
        "weighted": (selector(c.REC_QUEUE_PER_REQUEST_JOB, m), queue, False),
        "naive": (f"avg {by(server)} ({per_model}) / 1e6", queue, False),
        "nvidia": (nvidia, queue * 1e6, False),
        "cpu": (f"max({selector(c.NV_CPU_UTILIZATION, m)})", CPU_TARGET, False),
    }


# The averaging windows of the backlog compared beside the instant (autoscale30).
PENDING_WINDOWS = ("30s", "45s", "1m")

# Extra targets replayed on the open phase's samples (no new traffic): the old defaults and the
# targets around the shipped ones, to show how sensitive the lead is to the target.
EXTRA_TARGETS: dict[str, tuple[float, ...]] = {"pending": (5.0, 2.0), "weighted": (0.1, 0.025)}


def p99_expr(quantile: float) -> str:
    return selector(
        c.NV_REQUEST_SUMMARY_US, [(c.LABEL_MODEL, "=", SLOW), (c.LABEL_QUANTILE, "=", format(quantile, "g"))]
    )


def query(url: str, expr: str) -> float | None:
    body = requests.get(f"{url}/api/v1/query", params={"query": expr}, timeout=10).json()
    values = [float(r["value"][1]) for r in body["data"]["result"]]
    values = [v for v in values if math.isfinite(v)]
    return max(values) if values else None


@dataclass
class Hpa:
    """The HPA controller on one signal (see the module docstring). `value` is what one replica's
    Prometheus reports: for a per-replica signal, the total the HPA divides is value x ready (open
    loop: the one server holds the total, ready is 1)."""

    target: float
    per_replica: bool
    load_s: float
    period_s: float
    replicas: int = 1
    ready_at: list[float] = field(default_factory=lambda: [0.0])
    ups: list[tuple[float, int]] = field(default_factory=list)
    first: dict[str, Any] | None = None
    most: int = 1

    def ready(self, t: float) -> int:
        return sum(1 for r in self.ready_at if r <= t)

    def sync(self, t: float, value: float, ready: int = 1) -> int:
        total = value * ready if self.per_replica else value
        usage = total / (self.target * self.replicas) if self.per_replica else value / self.target
        if abs(usage - 1) <= c.HPA_TOLERANCE:
            return self.replicas
        desired = min(MAX_REPLICAS, max(1, math.ceil(self.replicas * usage)))
        self.most = max(self.most, desired)
        if desired <= self.replicas:
            return self.replicas  # no scale-down within a phase (the scale-down window is longer)
        # the rendered policy: at most double, or +1, the replicas of one period ago (selectPolicy Max)
        base = self.replicas - sum(n for at, n in self.ups if t - at < self.period_s)
        allowed = min(desired, max(2 * base, base + 1))
        if allowed > self.replicas:
            added = allowed - self.replicas
            if self.first is None:
                self.first = {"t": t, "desired": desired, "value": value, "useful_at": t + self.load_s}
            self.ups.append((t, added))
            self.ready_at += [t + self.load_s] * added
            self.replicas = allowed
        return self.replicas


def replay(samples: list[dict[str, Any]], name: str, target: float, per: bool, load_s: float) -> Hpa:
    """The HPA on the open phase's samples of one signal (nothing added: one server, ready 1)."""
    hpa, last = Hpa(target, per, load_s, scale_up_period(load_s)), -SYNC_S
    for s in samples:
        if s["t"] - last < SYNC_S or s[name] is None:
            continue
        last = s["t"]
        hpa.sync(s["t"], s[name])
    return hpa


def scale_up_period(load_s: float) -> float:
    """The rendered HPA's scale-up period for this load time (Autoscaling.scale_up_period_s)."""
    entry = Autoscaling("triton", "Deployment", JOB, c.SIGNAL_PENDING, 1.0, 1, MAX_REPLICAS, load_s)
    assert entry.startup_budget_s == startup_budget(load_s)
    return float(entry.scale_up_period_s)


class Stack:
    """A fresh LocalTriton (slow_model + vector_scale) and a Prometheus evaluating the shipped rules."""

    def __init__(self, scrape_s: float = 2.0) -> None:
        self.scrape_s = scrape_s
        self.work = Path(tempfile.mkdtemp(prefix="bench-autoscale-"))
        self.triton = LocalTriton(
            SAMPLE_REPOSITORY,
            model_control_mode="explicit",
            load_models=[SLOW, FAST],
            workdir=self.work / "triton",
        )
        self.prom: subprocess.Popen[bytes] | None = None
        self.url = ""

    def __enter__(self) -> Stack:
        try:
            self.triton.start()
            port = free_port()
            target = self.triton.metrics_url.split("//")[1].split("/")[0]
            config = {
                "global": {
                    "scrape_interval": f"{self.scrape_s:g}s",
                    "evaluation_interval": f"{self.scrape_s:g}s",
                },
                "rule_files": [str(REPO / "alerts" / "triton-autoscaling-rules.yaml")],
                "scrape_configs": [{"job_name": JOB, "static_configs": [{"targets": [target]}]}],
            }
            (self.work / "prometheus.yml").write_text(yaml.safe_dump(config))
            log = (self.work / "prometheus.log").open("wb")
            self.prom = subprocess.Popen(
                [
                    shutil.which("prometheus") or "prometheus",
                    f"--config.file={self.work / 'prometheus.yml'}",
                    f"--storage.tsdb.path={self.work / 'data'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                    "--log.level=warn",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            self.url = f"http://127.0.0.1:{port}"
            for _ in range(150):
                try:
                    if requests.get(f"{self.url}/-/ready", timeout=1).status_code == 200:
                        return self
                except requests.RequestException:
                    pass
                time.sleep(0.2)
            raise RuntimeError("Prometheus did not become ready")
        except BaseException:
            self.__exit__()
            raise

    def __exit__(self, *_: object) -> None:
        if self.prom is not None:
            self.prom.terminate()
            try:
                self.prom.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.prom.kill()
        self.triton.stop()
        shutil.rmtree(self.work, ignore_errors=True)


def run_phase(step_s: float, steps: int, drive: str | None, scrape_s: float = 2.0) -> dict[str, Any]:
    """One phase: open (drive None) or closed on the signal `drive` (see the module docstring)."""
    sigs = signals()
    threshold, quantile = slo_threshold()
    with Stack(scrape_s) as stack:
        load_s = float(stack.triton.startup_seconds or 0.0)
        total = step_s * steps + 60
        fast = TrafficDriver(
            stack.triton.http_url, {FAST: 2}, max_duration_s=total, think_time_s=0.05
        ).start()
        slow: list[TrafficDriver] = []
        hpa = None
        if drive is not None:
            _, target, per = sigs[drive]
            hpa = Hpa(target, per, load_s, scale_up_period(load_s))
        samples: list[dict[str, Any]] = []
        t0 = time.monotonic()
        next_sample = next_sync = 0.0
        try:
            while (t := time.monotonic() - t0) < step_s * steps:
                clients = CLIENTS_PER_STEP * (int(t // step_s) + 1)
                ready = hpa.ready(t) if hpa else 1
                wanted = math.ceil(clients / ready)
                while len(slow) < wanted:  # one driver per client, so the loop can add and remove them
                    slow.append(
                        TrafficDriver(
                            stack.triton.http_url, {SLOW: 1}, max_duration_s=total, think_time_s=0.5
                        ).start()
                    )
                while len(slow) > wanted:
                    slow.pop().stop(timeout=0)  # its request in flight finishes in the background
                if t >= next_sample:
                    next_sample += SAMPLE_S
                    row: dict[str, Any] = {"t": round(t, 1), "clients": clients, "on_this_replica": wanted}
                    for name, (expr, _, _) in sigs.items():
                        row[name] = query(stack.url, expr)
                    p99 = query(stack.url, p99_expr(quantile))
                    row["p99_s"] = p99 / 1e6 if p99 is not None else None
                    row["load1"] = round(os.getloadavg()[0], 2)
                    if hpa is not None and drive is not None and t >= next_sync:
                        next_sync += SYNC_S
                        if row[drive] is not None:
                            hpa.sync(t, row[drive], ready)
                    row["replicas"], row["ready"] = (hpa.replicas, ready) if hpa else (1, 1)
                    samples.append(row)
                time.sleep(TICK_S)
        finally:
            for d in [fast, *slow]:
                d.stop(timeout=0)
            for d in [fast, *slow]:
                d.stop()
    over = [s for s in samples if (s["p99_s"] or 0) > threshold]
    loads = [s["load1"] for s in samples]
    result: dict[str, Any] = {
        "phase": f"closed:{drive}" if drive else "open",
        "scrape_s": scrape_s,
        "load_s": round(load_s, 2),
        "scale_up_period_s": scale_up_period(load_s),
        "threshold_s": threshold,
        "burn_t": over[0]["t"] if over else None,
        "seconds_over_threshold": round(len(over) * SAMPLE_S),
        "worst_p99_s": max((s["p99_s"] or 0) for s in samples),
        "load_average": [min(loads), max(loads)] if loads else None,
        "samples": samples,
    }
    if hpa is not None:
        result["driver"] = {
            "signal": drive,
            "target": hpa.target,
            "first": hpa.first,
            "replicas": hpa.replicas,
            "ups": hpa.ups,
        }
    return result


def open_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """When each signal (at its default and the extra targets) first scales out, vs the burn."""
    rows = []
    burn = result["burn_t"]
    for name, (_, target, per) in signals().items():
        for t in (target, *EXTRA_TARGETS.get(name, ())):
            hpa = replay(result["samples"], name, t, per, result["load_s"])
            first = hpa.first
            rows.append(
                {
                    "signal": name,
                    "target": t,
                    "default": t == target,
                    "first_scale_out_t": first and first["t"],
                    "lead_s": round(burn - first["t"], 1) if first and burn is not None else None,
                    "desired_at_first": first and first["desired"],
                    "most_asked": hpa.most,
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--step", type=float, default=30.0, help="seconds per ramp step (+2 clients)")
    parser.add_argument("--steps", type=int, default=8, help="ramp steps (at most 12)")
    parser.add_argument(
        "--phases",
        default="open,closed:pending",
        help="comma-separated: open, closed:<signal> (signals: " + ", ".join(signals()) + ")",
    )
    parser.add_argument(
        "--scrape", type=float, default=2.0, help="Prometheus' scrape and rule-evaluation interval, seconds"
    )
    parser.add_argument("--json", action="store_true", help="print every sample as JSON too")
    args = parser.parse_args(argv)
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    for phase in phases:
        if phase != "open" and not (phase.startswith("closed:") and phase.split(":", 1)[1] in signals()):
            parser.error(f"unknown phase {phase!r}")
    steps = min(max(args.steps, 1), 12)
    results = []
    for phase in phases:
        drive = None if phase == "open" else phase.split(":", 1)[1]
        result = run_phase(args.step, steps, drive, args.scrape)
        results.append(result)
        print(
            f"[{result['phase']}] load {result['load_s']} s "
            f"(scale-up period {result['scale_up_period_s']:g} s); "
            f"{SLOW} p{slo_threshold()[1] * 100:g} first over {result['threshold_s'] * 1000:.0f} ms at "
            f"t={result['burn_t']} s, {result['seconds_over_threshold']} s over, worst "
            f"{result['worst_p99_s'] * 1000:.0f} ms; load average {result['load_average']}"
        )
        if drive is None:
            result["table"] = open_table(result)
            print(
                f"{'signal':<10} {'target':>9} {'scales out at':>14} {'before burn':>12} "
                f"{'asks':>5} {'max':>4}"
            )
            for r in result["table"]:
                print(
                    f"{r['signal']:<10} {r['target']:>9g}{'*' if r['default'] else ' '}"
                    f"{r['first_scale_out_t']!s:>14} {r['lead_s']!s:>12} {r['desired_at_first']!s:>5} "
                    f"{r['most_asked']:>4}"
                )
        else:
            d = result["driver"]
            print(f"  HPA on {drive} (target {d['target']:g}): first {d['first']}, scale-ups {d['ups']}")
        sys.stdout.flush()
    if args.json:
        print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
