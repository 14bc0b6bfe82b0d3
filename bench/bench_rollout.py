"""Benchmark: `rollout check` over long ranges, each run under `/usr/bin/time -v`.

A stand-in Prometheus (tests/fake_prometheus.py, in this process) answers every range query with
one series of `window / step` points (a canary's figure summed over its pods: one series a side,
however many pods the selector matches), values drawn around a level with noise, the candidate's
compute time 30 % worse so the verdict is a fail with real rank tests behind it. Like Prometheus,
it refuses a query of more than 11,000 points per series (`--no-limit`: answers it). The check runs
with `--step 15s` over windows of 30 days / 16, / 4 and whole (10,800, 43,200 and 172,800 points a
query, ~18 queries): the step ratio shows whether reading and judging grow linearly.

    python bench/bench_rollout.py [--days 30] [--step 15] [--scales 1,4,16]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_fleet_inputs import print_table, timed
from fake_prometheus import serve

from triton_sre import conventions as c

_bodies: dict[tuple[int, bool], bytes] = {}


def body(points: int, worse: bool, start: float, step: float) -> bytes:
    """One series of `points` samples from `start`: values around 1.0 (1.3 when `worse`), noisy."""
    key = (points, worse)
    if key not in _bodies:
        rng = random.Random(points * 2 + worse)
        level = 1.3 if worse else 1.0
        values = ",".join(
            f'[{start + i * step:.3f},"{level * (1 + rng.gauss(0, 0.05)):.6g}"]' for i in range(points)
        )
        text = (
            '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":['
            + values
            + "]}]}}"
        )
        _bodies[key] = text.encode()
    return _bodies[key]


LIMIT = [11_000]  # Prometheus' own: more points per series are refused (--no-limit: answered)
REFUSAL = b'{"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points"}'


def answer(query: str, stamps: list[float]) -> bytes:
    if LIMIT[0] and len(stamps) > LIMIT[0]:
        return REFUSAL
    worse = c.NV_COMPUTE_INFER_DURATION_US in query and '"2"' in query  # the candidate version's compute
    step = stamps[1] - stamps[0] if len(stamps) > 1 else 15.0
    return body(len(stamps), worse, stamps[0], step)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=float, default=30.0)
    parser.add_argument("--step", type=float, default=15.0)
    parser.add_argument("--scales", default="1,4,16", help="window = days x scale / the largest scale")
    parser.add_argument("--no-limit", action="store_true", help="answer more than 11,000 points a query")
    args = parser.parse_args(argv)
    LIMIT[0] = 0 if args.no_limit else LIMIT[0]
    scales = [int(s) for s in args.scales.split(",")]
    httpd = serve(answer)
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-rollout-") as tmp:
        for scale in scales:
            window_s = args.days * 86400 * scale / max(scales)
            points = int(window_s // args.step)
            argv_ = [
                "rollout", "check", "--prometheus", url, "--model", "m", "--baseline-version", "1",
                "--candidate-version", "2", "--window", f"{int(window_s)}s", "--step", f"{args.step:g}s",
                "--timeout", "600", "--deadline", "3600", "--format", "json",
            ]  # fmt: skip
            out = Path(tmp) / f"out-{scale}.json"
            notes: list[str] = []
            figures = timed(argv_, Path(tmp), notes, stdout=out)
            verdict = json.loads(out.read_text())["verdict"] if out.stat().st_size else "-"
            name = f"rollout check, {window_s / 86400:.3g} days at {args.step:g}s ({points:,} points/query)"
            rows.append((f"{name}, {verdict}", figures))
    httpd.shutdown()
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
