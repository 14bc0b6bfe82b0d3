"""Benchmark: triage on hostile log shapes, where one regex or one loop going superlinear shows.

Each case is a few MB at most, built so that a pattern which rescans a line from every position (a lazy
``.*?`` between repeated anchors, two blank runs before a ``|``), a hard-wrapped paste rejoined without
a bound, or a per-model lookup over every model seen would turn seconds into minutes. Figures are CPU
seconds of `diagnosis.api.diagnose_stream` in this process (best of ``--repeat``); with
``--baseline-src DIR`` the same cases run against another checkout's package in a child process.

    python bench/bench_triage_hostile.py [--repeat 3] [--baseline-src /path/to/older/checkout]
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cases() -> dict[str, bytes]:
    """The hostile inputs, by name."""
    glog = b"E1203 10:00:00.000000 1 model_lifecycle.cc:626] "
    return {
        "blank run (200 KB line)": b" " * 200_000 + b"x\n",
        "padded status rows (1 MB)": (
            b"| m " + b" " * 5000 + b"| 1 " + b" " * 5000 + b"| UNAVAILABLE: " + b"a " * 5000 + b"|\n"
        )
        * 50,
        # Blanks between two words: a template whose regex started with a blank run was tried from each
        # blank (quadratic in the run; the baseline of 2026-12-04 took about 50 s here).
        "blank run between words (20 KB line, twice)": (b"x" + b" " * 20_000 + b"x\n") * 2,
        # The scheduler's head repeated: a reasons list read without a bound from each head.
        "repeated scheduler head (100 KB line)": b"0/3 nodes are available: " * 4_000 + b"\n",
        # A template's first word repeated: the value after it was read to the line's end from each one.
        "repeated template head (45 KB line)": glog + b"ensemble " * 5_000 + b"\n",
        "repeated quote anchor (210 KB line)": b"model '" * 30_000 + b"\n",
        "repeated failed-to-load (380 KB line)": glog + b"failed to load 'a' " * 20_000 + b"\n",
        "80-wide lines, 100k (8 MB)": (b"x" * 80 + b"\n") * 100_000,
        "stub failures, 30k models (2.6 MB)": b"".join(
            b"I1203 10:00:00.000000 1 pb_stub.cc:1] Failed to initialize Python stub for model 'm%d'\n" % i
            for i in range(30_000)
        ),
        # A level word and many places a relayed line could start (relay_prefix's candidates).
        "relay candidates, 50k lines (4.3 MB)": (b"x INFO " + b"| a " * 19 + b"|\n") * 50_000,
        "load failures, 50k models (4.5 MB)": b"".join(
            glog + b"failed to load 'm%d' version 1: Internal: x\n" % i for i in range(50_000)
        ),
    }


def run(repeat: int) -> dict[str, float]:
    """CPU seconds per case with the package importable from sys.path."""
    from triton_sre.diagnosis.api import diagnose_stream
    from triton_sre.diagnosis.catalog import load_catalog

    catalog = load_catalog()
    out: dict[str, float] = {}
    for name, data in cases().items():
        best = float("inf")
        for _ in range(repeat):
            start = time.process_time()
            diagnose_stream(io.BytesIO(data), catalog.titles, catalog.remediations)
            best = min(best, time.process_time() - start)
        out[name] = best
        print(f"  {name}: {best:.2f} s", file=sys.stderr, flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline-src", type=Path)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # the child's output
    args = parser.parse_args(argv)
    if args.json:
        print(json.dumps(run(args.repeat)))
        return 0
    sys.path.insert(0, str(ROOT))
    now = run(args.repeat)
    base: dict[str, float] = {}
    if args.baseline_src is not None:
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--json", "--repeat", str(args.repeat)],
            env={"PYTHONPATH": str(args.baseline_src.resolve()), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=True,
        )
        base = json.loads(done.stdout)
    print("| input | CPU s | baseline CPU s |")
    print("| --- | --- | --- |")
    for name, seconds in now.items():
        before = f"{base[name]:.2f}" if name in base else "-"
        print(f"| {name} | {seconds:.2f} | {before} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
