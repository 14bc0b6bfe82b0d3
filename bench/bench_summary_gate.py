"""Benchmark: how long a summary quantile outlives Triton's own window on VictoriaMetrics, and whether
a model with sparse traffic loses its figure, for each `_count` gate window (fleet26).

A real Triton 2.51 (`summary_latencies=true`) serves three sample models: `vector_scale` busy for
`--busy` seconds then idle, `text_echo` one request every `--sparse` seconds, `slow_model` one every
`--steady` seconds. Per scrape interval in `--intervals`, one real Prometheus scrapes it and
remote-writes every sample to its own real VictoriaMetrics: both stores hold the same samples, except
the NaN Triton writes for an empty summary, which VictoriaMetrics drops.

After the run every second is evaluated by an instant query of the p99 by model for each `--gates`
gate (`current`: `promql.summary_quantile`, the quantile's last sample as recent as its `_count`'s; a
duration: the `_count` rate over it, as before fleet26) on both stores. The truth is Prometheus' raw
p99 at that second: finite (a request in Triton's 60 s window) or NaN. Per store, interval, gate, model:

- lost: seconds where the truth is finite and the gated figure is missing;
- stale: seconds where the truth is NaN and the gated figure is present;
- the busy model's last gated second after its last request.

    python bench/bench_summary_gate.py [--intervals 5 15] [--gates 2m 90s 75s 60s current] [--duration 420]

Everything listens on 127.0.0.1 and stops at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from live_prometheus import start_prometheus, stop_prometheus, wait_ready
from victoria import victoria_metrics

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.demo import SAMPLE_REPOSITORY, SLOW_MODEL, TEXT_ECHO, VECTOR_SCALE
from triton_sre.demo.traffic import infer
from triton_sre.stack.local_triton import LocalTriton
from triton_sre.stack.processes import free_port

QUANTILE = "0.99"
MODELS = (VECTOR_SCALE, TEXT_ECHO, SLOW_MODEL)


def _range(url: str, expr: str, start: float, end: float) -> dict[str, dict[int, float]]:
    """model -> {second: value} of a 1 s range query."""
    params = {"query": expr, "start": start, "end": end, "step": "1s", "nocache": "1"}
    body = requests.get(f"{url}/api/v1/query_range", params=params, timeout=120).json()
    assert body["status"] == "success", body
    out: dict[str, dict[int, float]] = {}
    for row in body["data"]["result"]:
        model = row["metric"].get(c.LABEL_MODEL, "")
        out.setdefault(model, {}).update({round(float(t)): float(v) for t, v in row["values"]})
    return out


def _instants(url: str, expr: str, seconds: range) -> dict[str, set[int]]:
    """model -> the seconds an instant query (what vmalert, a panel's last value and the bot ask)
    answers for it: VictoriaMetrics' range queries look back less far than its instant ones."""
    out: dict[str, set[int]] = {}
    with requests.Session() as session:
        for t in seconds:
            params = {"query": expr, "time": t, "nocache": "1"}
            body = session.get(f"{url}/api/v1/query", params=params, timeout=30).json()
            assert body["status"] == "success", body
            for row in body["data"]["result"]:
                out.setdefault(row["metric"].get(c.LABEL_MODEL, ""), set()).add(t)
    return out


def _gate(gate: str, job: list) -> str:
    """The p99 by model: `current` (promql.summary_quantile now) or a `_count` rate window (before)."""
    family = c.NV_REQUEST_SUMMARY_US
    if gate == "current":
        return pq.summary_quantile(family, job, QUANTILE, (c.LABEL_MODEL,))
    series = pq.selector(family, [*job, (c.LABEL_QUANTILE, "=", QUANTILE)])
    seen = f"({pq.rate(f'{family}_count', job, gate)} > 0)"
    return f"max by ({c.LABEL_MODEL}) (({series} >= 0) and ignoring ({c.LABEL_QUANTILE}) {seen})"


def _traffic(url: str, stop: threading.Event, t0: float, busy: float, every: dict[str, float]) -> dict:
    """Send the run's requests; returns each model's request times (unix seconds)."""
    sent: dict[str, list[float]] = {m: [] for m in MODELS}

    def busy_client() -> None:
        while not stop.is_set() and time.time() < t0 + busy:
            infer(url, VECTOR_SCALE)
            sent[VECTOR_SCALE].append(time.time())
            time.sleep(0.2)

    def sparse_client(model: str, period: float) -> None:
        k = 0
        while not stop.wait(max(0.0, t0 + k * period - time.time())):
            infer(url, model)
            sent[model].append(time.time())
            k += 1

    threads = [threading.Thread(target=busy_client, daemon=True)]
    threads += [threading.Thread(target=sparse_client, args=(m, p), daemon=True) for m, p in every.items()]
    for t in threads:
        t.start()
    return {"sent": sent, "threads": threads}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--intervals", type=int, nargs="+", default=[5, 15], help="scrape intervals, seconds")
    ap.add_argument("--gates", nargs="+", default=["2m", "90s", "75s", "60s", "current"])
    ap.add_argument("--duration", type=float, default=420.0)
    ap.add_argument("--busy", type=float, default=60.0)
    ap.add_argument("--sparse", type=float, default=70.0, help="text_echo's seconds between requests")
    ap.add_argument("--steady", type=float, default=40.0, help="slow_model's seconds between requests")
    args = ap.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="bench-summary-gate-"))
    repo = work / "models"
    for name in MODELS:
        shutil.copytree(SAMPLE_REPOSITORY / name, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
    stores: dict[int, tuple[str, str]] = {}
    with contextlib.ExitStack() as stack:
        triton = stack.enter_context(LocalTriton(repo, workdir=work / "triton"))
        target = triton.metrics_url.removeprefix("http://").split("/")[0]
        vms = []
        for interval in args.intervals:
            vm = stack.enter_context(victoria_metrics(work / f"vm{interval}"))
            config = {
                "global": {
                    "scrape_interval": f"{interval}s",
                    "scrape_timeout": f"{min(interval, 10) * 1000 - 500}ms",
                },
                "scrape_configs": [
                    {"job_name": c.DEFAULT_TRITON_JOB, "static_configs": [{"targets": [target]}]}
                ],
                "remote_write": [
                    {"url": f"{vm.url}/api/v1/write", "queue_config": {"batch_send_deadline": "1s"}}
                ],
            }
            (work / f"prom{interval}").mkdir()
            port = free_port()
            proc, log = start_prometheus(work / f"prom{interval}", config, port)
            stack.callback(stop_prometheus, proc, log)
            prom = wait_ready(proc, work / f"prom{interval}", port)
            stores[interval] = (prom.url, vm.url)
            vms.append(vm)
        t0 = time.time() + 2
        stop = threading.Event()
        every = {TEXT_ECHO: args.sparse, SLOW_MODEL: args.steady}
        traffic = _traffic(triton.http_url, stop, t0, args.busy, every)
        time.sleep(max(0.0, t0 + args.duration - time.time()))
        stop.set()
        for t in traffic["threads"]:
            t.join(timeout=30)
        time.sleep(max(args.intervals) + 5)  # the last scrapes remote-written
        for vm in vms:
            vm.flush()
        _report(args, stores, traffic["sent"], t0)
    shutil.rmtree(work, ignore_errors=True)
    return 0


def _report(args: argparse.Namespace, stores: dict[int, tuple[str, str]], sent: dict, t0: float) -> None:
    start, end = t0 + 90, t0 + args.duration  # from 90 s: every gate's window filled
    job = [(c.LABEL_JOB, "=", c.DEFAULT_TRITON_JOB)]
    raw = pq.selector(c.NV_REQUEST_SUMMARY_US, [*job, (c.LABEL_QUANTILE, "=", QUANTILE)])
    last_busy = max(sent[VECTOR_SCALE])
    print(f"requests: { {m: len(v) for m, v in sent.items()} }; busy model's last at +{last_busy - t0:.1f} s")
    print(f"evaluated every second from +{start - t0:.0f} to +{end - t0:.0f} s")
    head = [
        "interval",
        "store",
        "gate",
        "model",
        "truth finite s",
        "lost s",
        "stale s",
        "busy: last gated s after",
    ]
    print("| " + " | ".join(head) + " |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    seconds = range(round(start), round(end) + 1)
    for interval, (prom_url, vm_url) in stores.items():
        truth = _range(prom_url, raw, start, end)
        for store, url in (("Prometheus", prom_url), ("VictoriaMetrics", vm_url)):
            for gate in args.gates:
                gated = _instants(url, _gate(gate, job), seconds)
                for model in MODELS:
                    real = {t for t, v in truth.get(model, {}).items() if not math.isnan(v)} & set(seconds)
                    seen = gated.get(model, set())
                    tail = ""
                    if model == VECTOR_SCALE:
                        after = [t for t in seen if t > last_busy]
                        tail = f"{max(after) - last_busy:.0f}" if after else "none"
                    row = [
                        f"{interval} s",
                        store,
                        gate,
                        model,
                        len(real),
                        len(real - seen),
                        len(seen - real),
                        tail,
                    ]
                    print("| " + " | ".join(str(x) for x in row) + " |")
        busy = [t for t, v in truth.get(VECTOR_SCALE, {}).items() if not math.isnan(v) and t > last_busy]
        if busy:
            print(f"| {interval} s | Prometheus raw | | {VECTOR_SCALE} | | | | {max(busy) - last_busy:.0f} |")


if __name__ == "__main__":
    sys.exit(main())
