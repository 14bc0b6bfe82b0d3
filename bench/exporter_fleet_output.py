"""Check: the exporter's own /metrics after each poll of the fleet bench's inputs, from one source tree.

Runs `bench_exporter_fleet.py`'s loopback Triton (N models × V versions) and polls it `--polls` times with
the exporter of `--tree` (a checkout; default: this one), under a deadline no poll reaches (`--timeout`)
and a fixed clock, and writes each poll's rendered exposition to `--out`/poll-<i>.txt, less the
`triton_sre_poll_duration_seconds` lines and prometheus_client's `*_created` lines (wall times,
different at every run). Two trees given the same
inputs must write identical files:

    python bench/exporter_fleet_output.py --tree /path/to/main --out /tmp/a --models 1000
    python bench/exporter_fleet_output.py --out /tmp/b --models 1000
    diff -r /tmp/a /tmp/b
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", default=str(HERE.parent), help="the checkout whose exporter polls")
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--versions", type=int, default=3)
    parser.add_argument("--polls", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    sys.path.insert(0, args.tree)
    triton_sre = importlib.import_module("triton_sre")  # the tree's, before the bench's path is added
    sys.path[1:1] = [str(HERE), str(HERE.parent / "tests")]
    fleet = importlib.import_module("bench_exporter_fleet")
    from triton_sre import conventions as c

    print(f"exporter from {Path(triton_sre.__file__).parent}", flush=True)
    server, exporter, clock, _, _ = fleet.fleet_exporter(args.models, args.versions, timeout=args.timeout)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    timing = re.compile(rb"^(?:" + re.escape(c.M_POLL_DURATION.encode()) + rb"|[^ {]*_created[ {])")
    for poll in range(args.polls):
        exporter.poll_once()
        clock["t"] += 2.0
        body = b"".join(
            line for line in exporter.metrics_text().splitlines(keepends=True) if not timing.match(line)
        )
        (out / f"poll-{poll}.txt").write_bytes(body)
        print(f"poll {poll}: {len(body):,} bytes, sha256 {hashlib.sha256(body).hexdigest()[:16]}", flush=True)
    server.terminate()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
