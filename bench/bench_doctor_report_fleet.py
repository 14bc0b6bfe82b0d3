"""Benchmark: `doctor` and `report` on fleet-sized inputs, each run under `/usr/bin/time -v`.

- `doctor --format json` against a stand-in Triton of `--models` models (tests/fleet_standins.py:
  index, per-model configs, statistics, a synthetic 2.51 `/metrics` body without summaries; every
  1,000th model a vLLM one), and once with `--prometheus-url` on a stand-in Prometheus with
  `--targets` active targets;
- `report` over one hour at the default step against a stand-in Prometheus whose per-model families
  have `--series` series each (models x 10 Tritons; counters that are a function of time alone).
  Unless `--base-only`, the fleet also has the families an LLM fleet of 24.11+ adds
  (`FleetPrometheus(families=True)`): the first-response histogram, whose 5 buckets make it 5 x
  `--series` series; the vLLM token counters and TensorRT-LLM's token-length sums, `--series` each;
  the capacity families, `--series` for per-model memory and load time, 8 GPUs per Triton for the
  per-GPU ones, one per exporter for the host's.

Stand-ins run in their own processes (Python HTTP servers: their answer time is part of the wall
figure, ~1 ms per model config on a quiet machine). Wall time, user+system CPU and peak RSS are GNU
time's, of the CLI process only. Each report's step (from report.md) and its stderr notes (the step
raised, the histogram's own step) are printed before the table.

    python bench/bench_doctor_report_fleet.py [--models 2000,5000,20000,50000] [--series 20000,200000]
        [--targets 20000] [--only doctor,report] [--base-only]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # test support
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_fleet_inputs import print_table, timed

from triton_sre import conventions as c

TRITONS = 10
END = 1_764_003_600
_STEP = re.compile(r", step (\S+) s\)")  # report.md's range line


def _serve(kind: str, size: int, urls: multiprocessing.Queue, families: bool) -> None:
    from fleet_standins import FleetPrometheus, FleetTriton

    if kind == "triton":
        server = FleetTriton(size)
    elif kind == "targets":
        server = FleetPrometheus(size)
    else:
        server = FleetPrometheus(0, models=size // TRITONS, tritons=TRITONS, families=families)
    urls.put(server.url)
    server.serve_forever()


def standin(kind: str, size: int, families: bool = False) -> tuple[multiprocessing.Process, str]:
    urls: multiprocessing.Queue = multiprocessing.get_context("spawn").Queue()
    process = multiprocessing.get_context("spawn").Process(
        target=_serve, args=(kind, size, urls, families), daemon=True
    )
    process.start()
    return process, urls.get(timeout=300)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="2000,5000,20000,50000")
    parser.add_argument("--series", default="20000,200000")
    parser.add_argument("--targets", type=int, default=20000)
    parser.add_argument("--only", default="doctor,report")
    parser.add_argument(
        "--base-only",
        action="store_true",
        help="report: only the families measured before (no histogram, token or capacity families)",
    )
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    rows: list[tuple[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory(prefix="bench-doctor-report-") as tmp:
        work = Path(tmp)
        if "doctor" in only:
            prom, prom_url = standin("targets", args.targets)
            for models in (int(m) for m in args.models.split(",")):
                triton, url = standin("triton", models)
                metrics = f"{url}{c.PATH_METRICS}"
                base = ["doctor", "--triton-url", url, "--metrics-url", metrics, "--format", "json"]
                rows.append((f"doctor, {models:,} models", timed([*base, "--timeout", "60"], work)))
                if models == min(int(m) for m in args.models.split(",")):
                    rows.append(
                        (
                            f"doctor, {models:,} models + {args.targets:,} targets",
                            timed([*base, "--timeout", "60", "--prometheus-url", prom_url], work),
                        )
                    )
                triton.terminate()
            prom.terminate()
        if "report" in only:
            for series in (int(s) for s in args.series.split(",")):
                prom, url = standin("range", series, families=not args.base_only)
                command = ["report", "--prometheus-url", url, "--start", str(END - 3600), "--end", str(END)]
                notes: list[str] = []
                out = work / f"report-{series}"
                rows.append(
                    (
                        f"report 1 h, {series:,} series per family"
                        + ("" if args.base_only else " + histogram, tokens, capacity"),
                        timed([*command, "--out", str(out)], work, notes),
                    )
                )
                step = _STEP.search((out / "report.md").read_text(encoding="utf-8"))
                print(f"{rows[-1][0]}: step {step[1] if step else '?'} s; stderr: {notes}")
                prom.terminate()
    print(f"load {os.getloadavg()[0]:.1f}")
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
