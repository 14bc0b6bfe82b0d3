"""Time doctor's `families_present` (also the exporter's input checks) on a synthetic Triton payload.

    python bench/bench_doctor_families.py --models 1000 --versions 2 --repeat 7

Three bodies: Triton's text as written (`# TYPE` lines declare the families), the same with every
`# TYPE ` written `#TYPE ` (the families untyped: each watched family is then looked for as sample
lines), and the lean body without summaries. The table shows the best and the median run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # synthetic.py: test support

from synthetic import triton_metrics_payload

from triton_sre.doctor.facts import WATCHED_FAMILIES, families_present


def timed(text: str, repeat: int) -> tuple[list[float], int]:
    runs = []
    found = 0
    for _ in range(repeat):
        start = time.perf_counter()
        found = len(families_present(text))
        runs.append(time.perf_counter() - start)
    return runs, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--versions", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    full = triton_metrics_payload(args.models, args.versions, summaries=True)
    bodies = {
        "with summaries, typed": full,
        "with summaries, '#TYPE' (untyped)": full.replace("# TYPE ", "#TYPE "),
        "lean, typed": triton_metrics_payload(args.models, args.versions, summaries=False),
    }
    print(f"| body | MB | watched found (of {len(WATCHED_FAMILIES)}) | best ms | median ms |")
    print("| --- | --- | --- | --- | --- |")
    for name, text in bodies.items():
        runs, found = timed(text, args.repeat)
        best, median = min(runs) * 1000, statistics.median(runs) * 1000
        print(f"| {name} | {len(text) / 1e6:.1f} | {found} | {best:.1f} | {median:.1f} |")


if __name__ == "__main__":
    main()
