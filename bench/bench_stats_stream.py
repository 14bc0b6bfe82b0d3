"""Benchmark: reading `/v2/models/stats` of a fleet, streamed vs the whole body (the exporter's stats step).

A loopback Triton stand-in (bench_poll.py's handler, in its own process) serves the statistics of
`--models` models × `--versions` versions (bench_poll.stats_payload: 4 batch sizes each, ~1.3 kB per
version). Each way runs `--rounds` times in a fresh child process: `whole` = the body fetched whole
under an unlimited cap, then its entries decoded from the text (`iter_model_stats`, the way before
the streamed read); `stream` = `TritonClient.all_stats()` under the default 32 MiB cap; both folded by
`snapshot.stats_from_json` as the exporter does. Reports the median wall time of the fetch + decode,
the versions decoded and the child's peak RSS (a baseline child that starts the same way and decodes
nothing is the floor).

    python bench/bench_stats_stream.py [--models 1000,10000] [--versions 3] [--rounds 3]
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_poll import serve_bodies, stats_payload

from triton_sre import conventions as c
from triton_sre.exporter.snapshot import stats_from_json
from triton_sre.triton.client import TritonClient, iter_model_stats


def serve(models: int, versions: int, port_out: multiprocessing.Queue) -> None:
    stats = [stats_payload(models, versions, 0)]
    serve_bodies([b""], stats, b"[]", port_out, len(stats[0]))


def read(client: TritonClient, how: str) -> int:
    if how == "stream":
        return len(stats_from_json(client.all_stats()))
    body = client._fetch(c.TARGET_STATS, "GET", f"{client.triton_url}/v2/models/stats")
    text = body.decode()
    del body
    return len(stats_from_json(iter_model_stats(text)))


def one(models: int, versions: int, how: str, rounds: int) -> None:
    ports: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve, args=(models, versions, ports), daemon=True)
    server.start()
    port, size = ports.get(timeout=600)
    url = f"http://127.0.0.1:{port}"
    cap = c.DEFAULT_MAX_RESPONSE_BYTES if how == "stream" else 1 << 40
    client = TritonClient(url, f"{url}/metrics", timeout=60.0, max_bytes=cap)
    times, decoded = [], 0
    for _ in range(rounds if how != "baseline" else 0):
        started = time.perf_counter()
        decoded = read(client, how)
        times.append(time.perf_counter() - started)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    server.terminate()
    took = f"{statistics.median(times):.2f} s" if times else "–"
    print(f"| {models:,} × {versions} | {size / 1e6:.1f} MB | {how} | {took} | {decoded:,} | {rss:.0f} MB |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="1000,10000")
    parser.add_argument("--versions", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--how", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        one(args.one, args.versions, args.how, args.rounds)
        return 0
    print("| models × versions | stats body | read | fetch + decode (median) | versions decoded | peak RSS |")
    print("| --- | --- | --- | --- | --- | --- |")
    for models in (int(x) for x in args.models.split(",")):
        for how in ("baseline", "whole", "stream"):
            command = [sys.executable, __file__, "--one", str(models), "--how", how]
            command += ["--versions", str(args.versions), "--rounds", str(args.rounds)]
            subprocess.run(command, check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
