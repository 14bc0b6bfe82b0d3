"""Benchmark: the exporter's memory on hostile and label-heavy `/metrics` bodies.

A loopback Triton stand-in (bench_poll.py's handler, in its own process) serves the index and
statistics of `--models` models and a `/metrics` body made of that fleet's real-shaped text
(`tests/synthetic.py`) plus one of the hostile parts below, each filling about `--mb` MB (under the
exporter's 32 MiB `max_response_bytes`):

- `huge-labels`: two sample lines of a few hundred thousand label pairs each (round 14's probe);
- `distinct`: `nv_inference_count` / `nv_inference_exec_count` series of as many distinct models
  as fit (about 300,000 each);
- `long-values`: three per-model counters whose `model` label value is a third of the part;
- `duplicates`: one `nv_inference_count` series repeated as many times as fit;
- `unread`: distinct label sets of a family the exporter does not read, as many as fit;
- `none`: the fleet's body alone.

Each body is polled `--polls` times in a fresh child process; the table gives the peak RSS of the
first poll and the highest of the later polls (VmHWM, reset between polls through
/proc/self/clear_refs), their CPU time, the exporter's own `/metrics` size and `up`.

    python bench/bench_exporter_hostile.py [--bodies none,huge-labels,...] [--mb 30] [--polls 3]
                                           [--models 10] [--tree=PATH]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

# bench_exporter_fleet puts the exporter measured (this checkout's, or --tree=PATH's) and tests/ on the path
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_exporter_fleet import index_payload
from bench_poll import serve_bodies, stats_payload
from synthetic import triton_metrics_payload

import triton_sre
from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.exporter.heap import keep_heap
from triton_sre.exporter.service import Exporter

BODIES = ("none", "huge-labels", "distinct", "long-values", "duplicates", "unread")


def hostile_part(kind: str, size: int) -> str:
    """About `size` bytes of hostile exposition text of `kind` (complete lines)."""
    if kind == "none":
        return ""
    if kind == "huge-labels":
        pairs = size // 2 // 13
        return "".join(
            "hostile_labels{" + ",".join(f'l{i:06d}="{line}"' for i in range(pairs)) + "} 1\n"
            for line in range(2)
        )
    if kind == "distinct":
        each = size // 2 // len(f'{c.NV_EXEC_COUNT}{{model="h0000000",version="1"}} 1000000\n')
        return "".join(
            f'{family}{{model="h{m:07d}",version="1"}} {m}\n'
            for family in (c.NV_INFERENCE_COUNT, c.NV_EXEC_COUNT)
            for m in range(each)
        )
    if kind == "long-values":
        value = "x" * (size // 3)
        return "".join(
            f'{family}{{model="{value}",version="1"}} 5\n'
            for family in (c.NV_INFERENCE_COUNT, c.NV_EXEC_COUNT, c.NV_REQUEST_SUCCESS)
        )
    if kind == "duplicates":
        line = f'{c.NV_INFERENCE_COUNT}{{model="dup",version="1"}} 1\n'
        return line * (size // len(line))
    if kind == "unread":
        return "".join(f'unread{{a="{i:07d}"}} 1\n' for i in range(size // len('unread{a="0000000"} 1\n')))
    raise ValueError(kind)


def serve(models: int, kind: str, size: int, port_out: multiprocessing.Queue) -> None:
    part = hostile_part(kind, size)
    metrics = [
        (triton_metrics_payload(models, 3, seed=p, summaries=False) + part).encode() for p in range(2)
    ]
    stats = [stats_payload(models, 3, p) for p in range(2)]
    serve_bodies(metrics, stats, index_payload(models, 3), port_out, len(metrics[0]))


def _hwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _reset_hwm() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def one(kind: str, models: int, size: int, polls: int) -> None:
    ports: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve, args=(models, kind, size, ports), daemon=True)
    server.start()
    port, body_bytes = ports.get(timeout=600)
    url = f"http://127.0.0.1:{port}"
    clock = {"t": 1_700_000_000.0}
    keep_heap()
    exporter = Exporter(
        ExporterSettings(
            triton_url=url, metrics_url=f"{url}/metrics", interval=2.0, window=60.0, timeout=60.0
        ),
        clock=lambda: clock["t"],
    )
    peaks, cpus = [], []
    for _ in range(polls):
        _reset_hwm()
        started = time.process_time()
        exporter.poll_once()
        exposed = exporter.metrics_text()
        cpus.append(time.process_time() - started)
        peaks.append(_hwm_mb())
        clock["t"] += 2.0
    server.terminate()
    gauge = getattr(c, "M_METRICS_OVER_BUDGET", None)  # absent from a tree without the budgets
    over = [
        line.decode(errors="replace")
        for line in exposed.splitlines()
        if gauge and line.startswith(f"{gauge}{{".encode()) and not line.endswith(b" 0.0")
    ]
    print(
        f"| {kind} | {body_bytes / 1e6:.1f} MB | {peaks[0]:.0f} MB / {cpus[0]:.2f} s "
        f"| {max(peaks[1:]):.0f} MB / {max(cpus[1:]):.2f} s | {len(exposed) / 1e6:.2f} MB "
        f"| {int(exporter.up)} | {'; '.join(o.split('{', 1)[1] for o in over) or 'none'} |",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bodies", default=",".join(BODIES))
    parser.add_argument("--mb", type=float, default=30.0, help="size of the hostile part, MB")
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--polls", type=int, default=3)
    parser.add_argument("--tree", help="another checkout whose exporter polls (--tree=PATH)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    size = int(args.mb * 1e6)
    if args.polls < 2:
        parser.error("--polls must be at least 2 (the first poll and later ones are reported apart)")
    if args.one:
        one(args.one, args.models, size, args.polls)
        return 0
    print(
        f"exporter from {Path(triton_sre.__file__).parent}; load average {os.getloadavg()[0]:.1f}\n"
        "| body | /metrics size | first poll peak RSS / CPU | later polls (highest) | own /metrics "
        "| up | over budget |\n| --- | --- | --- | --- | --- | --- | --- |"
    )
    for kind in args.bodies.split(","):
        if kind not in BODIES:
            parser.error(f"--bodies: unknown body {kind!r}; known: {', '.join(BODIES)}")
        # each body in a child of its own, with this run's arguments (its own `--one` last: it wins)
        forwarded = sys.argv[1:] if argv is None else argv
        subprocess.run([sys.executable, __file__, *forwarded, "--one", kind], check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
