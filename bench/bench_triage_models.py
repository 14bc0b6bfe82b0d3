"""Benchmark: `triage` of a log in which N distinct models fail (a fleet's repository all at once).

The log is Triton 2.51's shape: N `loading:` lines, N `failed to load` E lines (three reasons in
turn), the status table of N UNAVAILABLE rows, `failed to load all models`. Each size is run by
the whole CLI under GNU time (bench_fleet_inputs.timed), in text and JSON.

`--live 600,6000` also runs `triage --triton-url` against bench_exporter_fleet.py's loopback Triton
of that many models (every third UNAVAILABLE with a long reason of its own).

    python bench/bench_triage_models.py [--models 5000,50000] [--live 600,6000]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_exporter_fleet import serve
from bench_fleet_inputs import print_table, timed

REASONS = (
    "Invalid argument: unexpected inference output 'y', allowed outputs are: x",
    "Internal: ModuleNotFoundError: No module named 'transformers'",
    "Not found: unable to load shared library: libcudart.so.12: cannot open shared object file: "
    "No such file or directory",
)


def write_log(path: Path, models: int) -> None:
    with path.open("w") as out:
        for i in range(models):
            out.write(f"I1204 10:00:00.{i % 10**6:06d} 1 model_lifecycle.cc:469] loading: model_{i:06d}:1\n")
        for i in range(models):
            out.write(
                f"E1204 10:00:01.{i % 10**6:06d} 1 model_lifecycle.cc:654] failed to load "
                f"'model_{i:06d}' version 1: {REASONS[i % 3]}\n"
            )
        out.write("I1204 10:00:02.000000 1 server.cc:662] \n+--------------+---------+--------+\n")
        out.write("| Model        | Version | Status |\n+--------------+---------+--------+\n")
        for i in range(models):
            out.write(f"| model_{i:06d} | 1       | UNAVAILABLE: {REASONS[i % 3]} |\n")
        out.write("+--------------+---------+--------+\n")
        out.write("E1204 10:00:03.000000 1 main.cc:260] failed to load all models\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="5000,50000")
    parser.add_argument("--live", default="")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for models in (int(x) for x in args.live.split(",") if x):
            ports: multiprocessing.Queue = multiprocessing.Queue()
            server = multiprocessing.Process(target=serve, args=(models, 1, 0, ports), daemon=True)
            server.start()
            url = f"http://127.0.0.1:{ports.get(timeout=600)[0]}"
            for fmt in ("text", "json"):
                figures = timed(["triage", "--format", fmt, "--triton-url", url], Path(tmp))
                rows.append(
                    (f"triage --format {fmt} --triton-url, {models:,} models, 1/3 UNAVAILABLE", figures)
                )
            server.terminate()
        for models in (int(x) for x in args.models.split(",")):
            log = Path(tmp) / f"{models}.log"
            write_log(log, models)
            size = log.stat().st_size / 1e6
            for fmt in ("text", "json"):
                figures = timed(["triage", "--format", fmt, str(log)], Path(tmp))
                rows.append((f"triage --format {fmt}, {models:,} models failing ({size:.0f} MB)", figures))
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
