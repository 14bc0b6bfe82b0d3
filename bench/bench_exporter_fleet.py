"""Benchmark: the exporter against a fleet-sized repository index (many models, many UNAVAILABLE).

A loopback Triton stand-in (bench_poll.py's handler, in its own process) serves `--models` models ×
`--versions` versions: every third model's versions UNAVAILABLE with a long reason of its own (a
stack trace's worth, distinct per model), the rest READY; `/metrics` from `tests/synthetic.py`
(Triton's default text, no summaries) and the statistics of every version. `Exporter.poll_once()`
runs `--polls` times after the first (which sees every model appear); reports the first, the
second and the median later poll (wall and CPU time of the process), the render of the exporter's
own `/metrics` (time, size, series), the peak RSS, the model versions with statistics in the last
poll's snapshot and the statistics' poll faults.

    python bench/bench_exporter_fleet.py [--models 1000,10000] [--versions 3] [--polls 5] [--custom 0]
                                         [--tree=PATH]

`--tree=PATH` polls with the exporter of another checkout (e.g. main's, for a before/after pair).

`--custom N` appends N custom metric families (Python backend's pb_utils.MetricFamily) of 100 series
each to `/metrics`.

`--metrics-down` points the exporter's metrics URL at a port that refuses connections: every figure
the metrics would give comes from the statistics (exporter/statsfallback.py). The last column counts
the model versions whose batching ratio or stage split came from the statistics, and the bytes the
window's poll arrays hold (counters, and the statistics' fallback).

Each size runs in a fresh child process, so the RSS of one does not carry into the next.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# the exporter measured: this checkout's, or --tree=PATH's
sys.path.insert(
    0,
    next(
        (arg.split("=", 1)[1] for arg in sys.argv if arg.startswith("--tree=")),
        str(Path(__file__).resolve().parent.parent),
    ),
)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_poll import serve_bodies, stats_payload
from synthetic import triton_metrics_payload

import triton_sre
from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.exporter.heap import keep_heap
from triton_sre.exporter.service import Exporter
from triton_sre.pricing import Pricing

REASON = (
    'Internal: Traceback (most recent call last):\\n  File \\"/models/{name}/1/model.py\\", line 12, in '
    "initialize\\n    import transformers\\nModuleNotFoundError: No module named 'transformers_{n}' "
)


def index_payload(models: int, versions: int) -> bytes:
    rows = []
    for m in range(models):
        name = f"model_{m:04d}"
        for v in range(1, versions + 1):
            if m % 3 == 0:
                reason = REASON.format(name=name, n=m) + "x" * 400
                rows.append({"name": name, "version": str(v), "state": "UNAVAILABLE", "reason": reason})
            else:
                rows.append({"name": name, "version": str(v), "state": "READY", "reason": ""})
    return json.dumps(rows).encode()


def custom_families(families: int, poll: int) -> str:
    """`families` Python-backend custom metric families (pb_utils.MetricFamily), 100 series each."""
    lines = []
    for f in range(families):
        name = f"custom_app_metric_{f}_total"
        lines += [f"# HELP {name} An application counter.", f"# TYPE {name} counter"]
        lines += [f'{name}{{model="model_{s:04d}",route="r{s % 7}"}} {poll * 10 + s}' for s in range(100)]
    return "\n".join(lines) + "\n" if lines else ""


def serve(
    models: int, versions: int, custom: int, port_out: multiprocessing.Queue, stats_in_turn: bool = False
) -> None:
    metrics = [
        (
            triton_metrics_payload(models, versions, seed=p, summaries=False) + custom_families(custom, p)
        ).encode()
        for p in range(2)
    ]
    stats = [stats_payload(models, versions, p) for p in range(2)]
    index = index_payload(models, versions)
    serve_bodies(metrics, stats, index, port_out, len(index), len(metrics[0]), stats_in_turn=stats_in_turn)


def fleet_exporter(
    models: int, versions: int, custom: int = 0, stats_in_turn: bool = False, **settings: Any
) -> tuple[multiprocessing.Process, Exporter, dict[str, float], int, int]:
    """The loopback Triton in its own process and an exporter polling it on a fake clock (the
    caller advances `clock["t"]`): (server, exporter, clock, index bytes, metrics bytes).
    `settings`: more `ExporterSettings` fields (`timeout`, `metrics_url`); `stats_in_turn`: the
    statistics advance at each request of theirs (for an exporter that never reads the metrics)."""
    ports: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(
        target=serve, args=(models, versions, custom, ports, stats_in_turn), daemon=True
    )
    server.start()
    port, index_bytes, metrics_bytes = ports.get(timeout=600)
    url = f"http://127.0.0.1:{port}"
    clock = {"t": 1_700_000_000.0}
    exporter_settings = ExporterSettings(
        **{
            "triton_url": url,
            "metrics_url": f"{url}/metrics",
            "interval": 2.0,
            "window": 60.0,
            "pricing": Pricing(node_hour=0.36),
            **settings,
        }
    )
    keep_heap()
    exporter = Exporter(exporter_settings, clock=lambda: clock["t"])
    return server, exporter, clock, index_bytes, metrics_bytes


def one(models: int, versions: int, polls: int, custom: int, metrics_down: bool = False) -> None:
    refusing = socket.socket()  # bound, never listening: connecting is refused
    refusing.bind(("127.0.0.1", 0))
    down = {"metrics_url": f"http://127.0.0.1:{refusing.getsockname()[1]}/metrics"} if metrics_down else {}
    server, exporter, clock, index_bytes, metrics_bytes = fleet_exporter(
        models, versions, custom, stats_in_turn=metrics_down, **down
    )
    times = []
    cpu = []
    stats_models = 0
    for _ in range(polls + 1):
        started, started_cpu = time.perf_counter(), time.process_time()
        snapshot = exporter.poll_once()
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
        stats_models = len(snapshot.stats or {}) if snapshot is not None else 0
        clock["t"] += 2.0
    started = time.perf_counter()
    exposed = exporter.metrics_text()
    render = time.perf_counter() - started
    series = sum(1 for line in exposed.splitlines() if line and not line.startswith(b"#"))
    stats_target = f'target="{c.TARGET_STATS}"'.encode()
    faults = [
        line.decode()
        for line in exposed.splitlines()
        if line.startswith(c.M_POLL_ERRORS.encode()) and stats_target in line and not line.endswith(b" 0.0")
    ]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    server.terminate()
    refusing.close()
    from_stats = sum(
        1
        for m in exporter.derivation.models
        if getattr(m, "source", None) == getattr(c, "SOURCE_STATS", ())
        and (m.batching_ratio is not None or m.stage_seconds)
    )
    window = exporter._window
    held = [
        sum(totals.nbytes for _, totals in series.polls)
        for series in (window.counters, getattr(window, "fallback", None))
        if series is not None
    ]
    extra = f", {custom:,} custom families" if custom else ""
    print(
        f"| {models:,} × {versions}{extra} | {index_bytes / 1e6:.1f} MB / {metrics_bytes / 1e6:.1f} MB "
        f"| {times[0]:.2f} s / {cpu[0]:.2f} s | {times[1]:.2f} s / {cpu[1]:.2f} s "
        f"| {statistics.median(times[2:]):.2f} s / {statistics.median(cpu[2:]):.2f} s "
        f"| {render * 1000:.0f} ms "
        f"| {len(exposed) / 1e6:.1f} MB, {series:,} series | {rss:.0f} MB "
        f"| {stats_models:,} | {'; '.join(f.split('{')[1] for f in faults) or 'none'} "
        f"| {from_stats:,}; {' / '.join(f'{b / 1e6:.2f} MB' for b in held)} |",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="1000,10000")
    parser.add_argument("--versions", type=int, default=3)
    parser.add_argument("--polls", type=int, default=5)
    parser.add_argument("--custom", type=int, default=0, help="custom metric families of 100 series each")
    parser.add_argument("--tree", help="another checkout whose exporter polls (--tree=PATH)")
    parser.add_argument("--metrics-down", action="store_true", help="the exporter's metrics URL refuses")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.polls < 2:
        parser.error("--polls must be at least 2 (the second poll and later ones are reported apart)")
    if args.one:
        one(args.one, args.versions, args.polls, args.custom, args.metrics_down)
        return 0
    print(
        f"exporter from {Path(triton_sre.__file__).parent}; load average {os.getloadavg()[0]:.1f}\n"
        "| models × versions | index / metrics body | first poll wall / CPU | second poll | "
        "later poll (median) | render "
        "| own /metrics | peak RSS | versions with stats (last poll) | stats faults "
        "| derived from stats; window arrays (counters / fallback) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for models in (int(x) for x in args.models.split(",")):
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                str(models),
                "--versions",
                str(args.versions),
                "--polls",
                str(args.polls),
                "--custom",
                str(args.custom),
                *([f"--tree={args.tree}"] if args.tree else []),
                *(["--metrics-down"] if args.metrics_down else []),
            ],
            check=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
