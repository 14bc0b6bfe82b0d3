"""Benchmark: the exporter's whole poll+derive cycle on a 1,000-model × 2-version Triton.

A loopback HTTP server answers like Triton (metrics text from `tests/synthetic.py`,
shaped like the real 2.51 output; `/v2/models/stats` and the repository index shaped like the
real JSON), and `Exporter.poll_once()` runs against it: fetch, parse, snapshot, window, derive.
The figure of merit is the cycle time as a ratio to prometheus_client's text parser alone on
the same metrics payload, plus the process's peak RSS.

    python bench/bench_poll.py [--models 1000] [--versions 2] [--polls 8] [--lean]
                               [--interval 2] [--window 60] [--two-ports]

`--lean` serves Triton's default text without the latency summaries (~1.9 MB at 1,000 × 2);
without it the payload carries them (~8 MB), which makes the library's parse slower. The fake
clock advances by `--interval` per poll; the exporter's window is `--window`. Configs are warmed
first, then the window is filled, then the steady state is measured. `--two-ports` serves the
metrics on a second listener, as Triton does (8002 beside 8000): the exporter then reads the HTTP
API on a second thread while it reads and parses the metrics.

Target (issue #13): cycle ≤ 0.25 × parse-alone on both payloads, peak RSS ≤ 100 MB.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import resource
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # synthetic.py: test support

from synthetic import triton_metrics_payload

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.exporter.heap import keep_heap
from triton_sre.exporter.service import Exporter
from triton_sre.pricing import Pricing

# Triton's /v2/models/stats keys. Read with a fallback so the payload can be served to a baseline tree
# (--baseline-src) older than the conventions that name them.
STATS_KEY = getattr(c, "STATS_INFERENCE_STATS", "inference_stats")
MEMORY_KEY = getattr(c, "STATS_MEMORY_USAGE", "memory_usage")


def stats_payload(models: int, versions: int, poll: int) -> bytes:
    """`GET /v2/models/stats` for every model version, shaped like the real server's answer."""
    entries = []
    for m in range(models):
        for v in range(1, versions + 1):
            n = 1000 * poll + m + v
            batches = [
                {
                    "batch_size": size,
                    "compute_input": {"count": n, "ns": 61_231 * n},
                    "compute_infer": {"count": n, "ns": 13_760_935 * n},
                    "compute_output": {"count": n, "ns": 1_325_036 * n},
                }
                for size in (1, 4, 8, 16)
            ]
            stage = {"count": 29 * n, "ns": 2_334_830 * n}
            entries.append(
                {
                    "name": f"model_{m:04d}",
                    "version": str(v),
                    "last_inference": 1795969641818,
                    "inference_count": 29 * n,
                    "execution_count": 4 * n,
                    STATS_KEY: {
                        key: stage
                        for key in (
                            "success",
                            "fail",
                            "queue",
                            "compute_input",
                            "compute_infer",
                            "compute_output",
                            "cache_hit",
                            "cache_miss",
                        )
                    },
                    "response_stats": {},
                    "batch_stats": batches,
                    MEMORY_KEY: [],
                }
            )
    return json.dumps({"model_stats": entries}).encode()


def index_payload(models: int, versions: int) -> bytes:
    return json.dumps(
        [
            {"name": f"model_{m:04d}", "version": str(v), "state": "READY"}
            for m in range(models)
            for v in range(1, versions + 1)
        ]
    ).encode()


CONFIG_BODY = json.dumps({"max_batch_size": 16, "dynamic_batching": {}}).encode()


class FakeTritonHandler(BaseHTTPRequestHandler):
    """Answers like Triton: GET /metrics, GET /v2/models/stats, POST the repository index, and one
    config for any other GET. Subclasses give the bodies."""

    index_body = b"[]"

    def metrics_body(self) -> bytes:
        raise NotImplementedError

    def stats_body(self) -> bytes:
        raise NotImplementedError

    def do_GET(self) -> None:
        if self.path == "/metrics":
            self._send(self.metrics_body())
        elif self.path == "/v2/models/stats":
            self._send(self.stats_body())
        else:
            self._send(CONFIG_BODY)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._send(self.index_body)

    def _send(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def serve_fake_triton(
    models: int,
    versions: int,
    polls: int,
    summaries: bool,
    port_out: multiprocessing.Queue,
    two_ports: bool = False,
) -> None:
    """Answer like Triton on loopback; every `/metrics` request advances to the next poll's data.

    Runs in its own process so its precomputed bodies do not count in the exporter's RSS.
    """
    metrics = [
        triton_metrics_payload(models, versions, seed=p, summaries=summaries).encode() for p in range(polls)
    ]
    stats = [stats_payload(models, versions, p) for p in range(polls)]
    serve_bodies(metrics, stats, index_payload(models, versions), port_out, two_ports=two_ports)


def serve_bodies(
    metrics: list[bytes],
    stats: list[bytes],
    index: bytes,
    port_out: multiprocessing.Queue,
    *extra: object,
    two_ports: bool = False,
    stats_in_turn: bool = False,
) -> None:
    """Serve these bodies like Triton: each `/metrics` request takes the next of `metrics` (in turn),
    the statistics follow it (with `stats_in_turn` each statistics request takes the next of `stats`:
    an exporter that never reads the metrics); puts `(port, *extra)` (the port alone without `extra`)
    on `port_out`, then the metrics listener's port with `two_ports`."""
    state = {"poll": -1, "stats": -1}

    class Handler(FakeTritonHandler):
        index_body = index

        def metrics_body(self) -> bytes:
            state["poll"] += 1
            return metrics[state["poll"] % len(metrics)]

        def stats_body(self) -> bytes:
            if stats_in_turn:
                state["stats"] += 1
                return stats[state["stats"] % len(stats)]
            return stats[max(0, state["poll"]) % len(stats)]

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port_out.put((httpd.server_address[1], *extra) if extra else httpd.server_address[1])
    if two_ports:  # the metrics on a listener of their own
        metrics_httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        port_out.put(metrics_httpd.server_address[1])
        threading.Thread(target=metrics_httpd.serve_forever, daemon=True).start()
    httpd.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--versions", type=int, default=2)
    parser.add_argument("--polls", type=int, default=8, help="measured polls (after configs are cached)")
    parser.add_argument("--lean", action="store_true", help="no latency summaries (Triton's default)")
    parser.add_argument("--interval", type=float, default=2.0, help="exporter poll interval (clock step)")
    parser.add_argument("--window", type=float, default=60.0, help="exporter derivation window")
    parser.add_argument("--two-ports", action="store_true", help="metrics on a second listener")
    args = parser.parse_args()

    ports: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(
        target=serve_fake_triton,
        args=(args.models, args.versions, args.polls + 1, not args.lean, ports, args.two_ports),
        daemon=True,
    )
    server.start()
    url = f"http://127.0.0.1:{ports.get(timeout=120)}"
    metrics_url = f"http://127.0.0.1:{ports.get(timeout=120)}/metrics" if args.two_ports else f"{url}/metrics"
    clock = {"t": 0.0}
    settings = ExporterSettings(
        triton_url=url,
        metrics_url=metrics_url,
        interval=args.interval,
        window=args.window,
        pricing=Pricing(node_hour=0.36),
    )
    keep_heap()  # as `triton-sre export` does
    exporter = Exporter(settings, clock=lambda: clock["t"])
    configs_needed = args.models * args.versions
    while True:  # warm the config cache (a one-off cost when models appear)
        exporter.poll_once()
        clock["t"] += args.interval
        if len(exporter._configs) >= min(configs_needed, args.models):
            break
    fill = math.ceil(args.window / args.interval) + 1
    for _ in range(fill):  # fill the window: the steady state holds a full window
        exporter.poll_once()
        clock["t"] += args.interval
    cycles = []
    cpu_cycles = []  # this process's CPU only: the fake Triton runs in another process
    for _ in range(args.polls):
        started, cpu_started = time.perf_counter(), time.process_time()
        exporter.poll_once()
        cycles.append(time.perf_counter() - started)
        cpu_cycles.append(time.process_time() - cpu_started)
        clock["t"] += args.interval
    render_started = time.perf_counter()
    exposed = exporter.metrics_text()
    render = time.perf_counter() - render_started
    cycle = statistics.median(cycles)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before the reference parser runs

    text = triton_metrics_payload(args.models, args.versions, summaries=not args.lean)
    samples = 0
    parse_times = []
    parse_cpu = []
    for _ in range(3):
        started, cpu_started = time.perf_counter(), time.process_time()
        samples = sum(len(f.samples) for f in text_string_to_metric_families(text))
        parse_times.append(time.perf_counter() - started)
        parse_cpu.append(time.process_time() - cpu_started)
    parse_alone = statistics.median(parse_times)
    parse_alone_cpu = statistics.median(parse_cpu)
    cycle_cpu = statistics.median(cpu_cycles)
    server.terminate()

    print(
        f"payload: {args.models} models x {args.versions} versions, {samples} samples, "
        f"{len(text) / 1e6:.1f} MB metrics text ({'lean' if args.lean else 'with summaries'}); "
        f"stats JSON of {configs_needed} model versions"
    )
    print(f"exporter --interval {args.interval:g} --window {args.window:g}: window of {fill} polls filled")
    print(f"prometheus_client parse alone (median of 3): {parse_alone * 1000:8.1f} ms")
    print(
        f"poll+derive cycle (median of {args.polls}):        {cycle * 1000:8.1f} ms"
        f"   ratio {cycle / parse_alone:.3f}  (target <= 0.25)"
    )
    print(f"  min/max cycle: {min(cycles) * 1000:.1f} / {max(cycles) * 1000:.1f} ms")
    print(
        f"CPU time (load-independent): parse alone {parse_alone_cpu * 1000:.1f} ms, "
        f"cycle {cycle_cpu * 1000:.1f} ms   ratio {cycle_cpu / parse_alone_cpu:.3f}  (target <= 0.25)"
    )
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"render /metrics (one scrape): {render * 1000:8.1f} ms, {len(exposed) / 1e6:.1f} MB")
    print(f"exporter process peak RSS: {rss_mb:.0f} MB (target <= 100 MB)")


if __name__ == "__main__":
    main()
