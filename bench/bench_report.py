"""Benchmark: `triton-sre report` over 1,000 series per family (100 models × 10 Tritons) at the
default step, read from a fake Prometheus HTTP API on loopback.

The fake answers `/api/v1/query_range` for any range and step: each of Triton's per-model counter
families and the exporter's per-model gauges has 100 models × 10 instances (the latency summary
× 3 quantiles; the server cost and idle share one series per instance; the throughput chart's
`sum by (model)` 100 series; the SLO section's per-step availability queries, `sum by (model,
version) (increase(…))`, 100 series); every other query (LLM, capacity, histogram buckets) is empty.
The count queries the report asks before choosing its step get the number of series of the query
they count.
Counters grow linearly, one reset half-way. The report runs in a child process (the CLI, all
three formats); its peak RSS (`wait4`) and wall time are the figures.

    python bench/bench_report.py [--models 100] [--tritons 10] [--hours 24] [--repeat 1] [--step S]
        [--slo-file slos.yaml]

24 h at the default step (range / 2000 → 44 s) is 1,964 samples per series. Like Prometheus, the fake
refuses a query of more than 11,000 points per series: `--step 1` over 24 h (86,401 points) is read
in slices by the shared client (`range_slices`).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # test support

from fake_prometheus import serve

from triton_sre import conventions as c
from triton_sre.promcore import PROMETHEUS_MAX_POINTS

END = 1_764_000_000.0
PER_MODEL = frozenset((*c.PER_MODEL_COUNTERS, c.M_COST_PER_HOUR, c.M_BATCHING_RATIO, c.M_BATCH_FILL_RATIO))
PER_INSTANCE = frozenset((c.M_SERVER_COST_PER_HOUR, c.M_IDLE_COST_FRACTION))
_NAME = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)")
_COUNT = re.compile(r"^count\((?:count by \(([^)]*)\) \()?last_over_time\(([a-zA-Z_:][a-zA-Z0-9_:]*)")
_STEP = re.compile(r"^sum by \(([^)]*)\) \(increase\(([a-zA-Z_:][a-zA-Z0-9_:]*)")
REFUSAL = b'{"status":"error","error":"exceeded maximum resolution of 11,000 points per timeseries"}'


def _values(start: float, end: float, step: float, counter: bool) -> str:
    """The JSON text of one series' `values` over the range (shared by every series: only the
    sizes matter here)."""
    points = []
    n = int((end - start) // step) + 1
    for i in range(n):
        ts = start + i * step
        value = (i % (n // 2 + 1)) * 37.0 if counter else 0.25
        points.append(f'[{ts:.3f},"{value:g}"]')
    return "[" + ",".join(points) + "]"


def _series(labels: dict[str, str], values: str) -> str:
    return '{"metric":' + json.dumps(labels) + ',"values":' + values + "}"


def _answer(query: str, start: float, end: float, step_s: float, models: int, tritons: int) -> bytes:
    name_match = _NAME.match(query)
    name = name_match.group(1) if name_match else ""
    parts: list[str] = []
    step = _STEP.match(query)
    if step and step.group(2) in c.PER_MODEL_COUNTERS:  # the SLO section's, per model version
        values = _values(start, end, step_s, counter=False)
        parts = [
            _series({c.LABEL_MODEL: f"model-{m:03d}", c.LABEL_VERSION: "1"}, values) for m in range(models)
        ]
    elif query.startswith("(sum by"):
        values = _values(start, end, step_s, counter=False)
        parts = [_series({c.LABEL_MODEL: f"model-{m:03d}"}, values) for m in range(models)]
    elif name in PER_MODEL or name == c.NV_REQUEST_SUMMARY_US:
        counter = name in c.PER_MODEL_COUNTERS
        values = _values(start, end, step_s, counter=counter)
        quantiles = c.LATENCY_QUANTILES if name == c.NV_REQUEST_SUMMARY_US else (None,)
        for m in range(models):
            for t in range(tritons):
                for q in quantiles:
                    labels = {
                        "__name__": name,
                        c.LABEL_MODEL: f"model-{m:03d}",
                        c.LABEL_VERSION: "1",
                        "instance": f"triton-{t}:8002",
                        "job": "triton",
                    }
                    if q is not None:
                        labels[c.LABEL_QUANTILE] = q
                    if name == c.M_COST_PER_HOUR:
                        labels[c.L_CURRENCY] = "USD"
                    parts.append(_series(labels, values))
    elif name in PER_INSTANCE:
        values = _values(start, end, step_s, counter=False)
        parts = [
            _series({"__name__": name, "instance": f"exporter-{t}:8003", c.L_CURRENCY: "USD"}, values)
            for t in range(tritons)
        ]
    body = '{"status":"success","data":{"resultType":"matrix","result":[' + ",".join(parts) + "]}}"
    return body.encode()


def _count(query: str, models: int, tritons: int) -> list[dict]:
    """The answer to a count query (`queries.count_expr`): the series of the query it counts."""
    match = _COUNT.match(query)
    if not match:
        return []
    labels, name = (match.group(1) or ""), match.group(2)
    quantiles = len(c.LATENCY_QUANTILES) if name == c.NV_REQUEST_SUMMARY_US else 1
    if name in PER_MODEL or name == c.NV_REQUEST_SUMMARY_US:
        series = (
            models * (quantiles if c.LABEL_QUANTILE in labels else 1)
            if labels
            else models * tritons * quantiles
        )
    elif name in PER_INSTANCE:
        series = tritons
    else:
        return []
    return [{"metric": {}, "value": [END, str(series)]}]


def _serve(models: int, tritons: int, port_out: multiprocessing.Queue) -> None:
    def answer(query: str, stamps: list[float]) -> bytes:
        if len(stamps) > PROMETHEUS_MAX_POINTS:
            return REFUSAL
        step = stamps[1] - stamps[0] if len(stamps) > 1 else 1.0
        return _answer(query, stamps[0], stamps[-1], step, models, tritons)

    httpd = serve(answer, thread=False, instant=lambda query: _count(query, models, tritons))
    port_out.put(httpd.server_address[1])
    httpd.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--tritons", type=int, default=10)
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--step", type=float, help="the report's --step (default: its own)")
    parser.add_argument("--slo-file", help="the report's --slo-file (its SLO section; default none)")
    args = parser.parse_args()
    ports: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(args.models, args.tritons, ports), daemon=True)
    server.start()
    url = f"http://127.0.0.1:{ports.get(timeout=60)}"
    start = END - args.hours * 3600
    print(
        f"{args.models} models x {args.tritons} Tritons = {args.models * args.tritons} series per family, "
        f"{args.hours:g} h at " + (f"--step {args.step:g}" if args.step else "the default step")
    )
    try:
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as out:
                command = [
                    sys.executable,
                    "-m",
                    "triton_sre.cli",
                    "report",
                    "--prometheus-url",
                    url,
                    "--start",
                    f"{start:.0f}",
                    "--end",
                    f"{END:.0f}",
                    "--out",
                    out,
                    *(["--step", f"{args.step:g}"] if args.step else []),
                    *(["--slo-file", args.slo_file] if args.slo_file else []),
                ]
                started = time.perf_counter()
                pid = os.spawnv(os.P_NOWAIT, sys.executable, command)
                _, status, usage = os.wait4(pid, 0)
                seconds = time.perf_counter() - started
                code = os.waitstatus_to_exitcode(status)
                print(
                    f"exit {code}, wall {seconds:.1f} s, CPU {usage.ru_utime + usage.ru_stime:.1f} s, "
                    f"peak RSS {usage.ru_maxrss / 1024:.0f} MB, load {os.getloadavg()[0]:.1f}"
                )
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
