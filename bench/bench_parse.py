"""Time prometheus_client's text parser against triton_sre.triton.exposition on a synthetic Triton payload.

    python bench/bench_parse.py --models 1000 --versions 2 --repeat 5

Each parser runs `--repeat` times on the same body; the table shows the best and the median run
and each time as a fraction of prometheus_client's best. Results are freed outside the timed
region, so deallocation is not counted for either parser.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # synthetic.py: test support

from prometheus_client.parser import text_string_to_metric_families
from synthetic import triton_metrics_payload

from triton_sre import conventions as c
from triton_sre.triton.exposition import parse

PER_MODEL = frozenset(c.PER_MODEL_COUNTERS) | frozenset(c.PER_MODEL_GAUGES)


def _prometheus_client(text: str) -> list[Any]:
    return list(text_string_to_metric_families(text))


def _ours(text: str) -> list[Any]:
    return parse(text)


def _ours_keep(text: str) -> list[Any]:
    return parse(text, keep=PER_MODEL.__contains__)


def _count(result: list[Any]) -> int:
    return sum(len(item.samples) if hasattr(item, "samples") else 1 for item in result)


def _time(fn: Callable[[str], list[Any]], text: str, repeat: int) -> tuple[list[float], int]:
    times: list[float] = []
    count = 0
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn(text)
        times.append(time.perf_counter() - start)
        count = _count(result)
        del result  # freeing 100k objects is not parsing: keep it out of the timed region
    return times, count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--versions", type=int, default=2)
    parser.add_argument("--gpus", type=int, default=0, help="add gpu_uuid series and nv_gpu_* families")
    parser.add_argument("--no-summaries", action="store_true", help="omit the latency summaries")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    text = triton_metrics_payload(
        args.models, args.versions, args.gpus, args.seed, summaries=not args.no_summaries
    )
    lines = text.count("\n")
    print(
        f"payload: {args.models} models x {args.versions} versions, gpus={args.gpus}, "
        f"summaries={not args.no_summaries}: {len(text.encode()) / 1e6:.2f} MB, {lines} lines"
    )
    print(f"python {sys.version.split()[0]}, best/median of {args.repeat} runs\n")

    rows = [
        ("prometheus_client.parser", _prometheus_client),
        ("exposition.parse", _ours),
        ("exposition.parse, keep=per-model families", _ours_keep),
    ]
    baseline = 0.0
    print(f"{'parser':<42} {'samples':>8} {'best ms':>9} {'median ms':>10} {'ratio':>7}")
    for label, fn in rows:
        times, count = _time(fn, text, args.repeat)
        best = min(times)
        if not baseline:
            baseline = best
        median = statistics.median(times)
        print(f"{label:<42} {count:>8} {best * 1e3:>9.1f} {median * 1e3:>10.1f} {best / baseline:>7.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
