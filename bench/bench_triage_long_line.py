"""Benchmark: `triton-sre triage` of a log that is one long line (fleet34): a `failed to load` E line whose
reason is `--mb` MB of words (a config or a tensor dump pasted into the error), under `/usr/bin/time -v`.

    python bench/bench_triage_long_line.py [--mb 1,4]

Prints wall, CPU, peak RSS and the exit code per size, and the first finding's runbook: a line read in
bounded pieces keeps the peak RSS flat whatever its length.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_fleet_inputs import timed

HEAD = "E1207 03:00:00.000000 1 model_lifecycle.cc:654] failed to load 'big' version 1: Internal: "
WORDS = [
    "model",
    "tensor",
    "shape",
    "INPUT__0",
    "[1,3,224,224]",
    "error:",
    "memory",
    "0x7f",
    '{"key":',
    '"v"},',
]


def write_line(path: Path, mb: int) -> None:
    rng = random.Random(34)
    with path.open("w") as f:
        f.write(HEAD)
        written = 0
        while written < mb * 2**20:
            chunk = " ".join(rng.choice(WORDS) for _ in range(2000)) + " "
            f.write(chunk)
            written += len(chunk)
        f.write("\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", default="1,4", help="comma-separated sizes of the line, MB")
    args = parser.parse_args(argv)
    print("| one line of | wall | CPU | peak RSS | exit | first finding |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory(prefix="bench-long-line-") as tmp:
        for mb in (int(x) for x in args.mb.split(",")):
            log, out = Path(tmp) / f"line-{mb}.log", Path(tmp) / "out.json"
            write_line(log, mb)
            r = timed(["triage", "--format", "json", str(log)], Path(tmp), stdout=out)
            findings = json.loads(out.read_text())["findings"]
            first = findings[0]["runbook"] if findings else "-"
            print(
                f"| {mb} MB | {r['wall_s']:.1f} s | {r['cpu_s']:.2f} s | {r['rss_mb']:.0f} MB "
                f"| {r['exit']:.0f} | {first} |"
            )
            log.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
