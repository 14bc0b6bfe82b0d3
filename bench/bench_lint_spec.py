"""Benchmark: `triton-sre lint --spec` on a fleet's repository beside a spec of many latency SLOs.

The queue-delay check (`lint/batching.py`) asks, for every model with `dynamic_batching`, which latency
SLOs cover it. The repository has `--models` copies of the sample `vector_scale` (each batching, its
`max_queue_delay_microseconds` 0-6 ms in turn), named `team<k>_<j>` with k = j mod `--slos`; the spec has
`--slos` latency SLOs, in turn a regex (`team<k>_.*`) and a list of two models, thresholds 2-10 ms
(queue share 0.5), so some delays are over their budget and lint warns. Each size runs
`lint --format json --target cpu --spec S REPO` under `/usr/bin/time -v` and prints wall, CPU, peak RSS,
the exit code and a SHA-256 of the output (the same input gives the same answer in every tree).

    python bench/bench_lint_spec.py [--models 500,2000] [--slos 500] [--src DIR]

`--src DIR` runs another checkout's package (e.g. `/work/main`) on the same inputs.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_fleet_inputs import timed_command

from triton_sre.demo import SAMPLE_REPOSITORY

SAMPLE = SAMPLE_REPOSITORY / "vector_scale"


def repository(root: Path, models: int, slos: int) -> Path:
    repo = root / "repository"
    repo.mkdir()
    config = (SAMPLE / "config.pbtxt").read_text()
    for j in range(models):
        name = f"team{j % slos}_{j:05d}"
        target = repo / name
        shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns("__pycache__"))
        text = config.replace('name: "vector_scale"', f'name: "{name}"')
        delay = f"max_queue_delay_microseconds: {j % 7 * 1000}"
        text = text.replace("max_queue_delay_microseconds: 3000", delay)
        (target / "config.pbtxt").write_text(text)
    return repo


def spec(root: Path, models: int, slos: int) -> Path:
    lines = ["slos:"]
    for i in range(slos):
        if i % 2:
            picked = [f"team{j % slos}_{j:05d}" for j in (i, i + slos) if j < models]
            selector = "[" + ", ".join(picked or [f"absent{i}"]) + "]"
        else:
            selector = f'{{regex: "team{i}_.*"}}'
        lines.append(
            f"  - {{name: latency-{i}, type: latency, models: {selector}, objective: 99, period: 30d, "
            f"threshold: {2 * (i % 5 + 1)}ms, queue_time_share: 0.5}}"
        )
    path = root / "slos.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="200,800", help="comma-separated repository sizes")
    parser.add_argument("--slos", type=int, default=300, help="latency SLOs in the spec")
    parser.add_argument("--src", type=Path, help="checkout whose package runs (default: this one)")
    args = parser.parse_args(argv)
    cwd = (args.src or Path(__file__).resolve().parent.parent).resolve()
    print("| models × latency SLOs | wall | CPU | peak RSS | exit | output SHA-256 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for models in (int(n) for n in args.models.split(",")):
        with tempfile.TemporaryDirectory(prefix="bench-lint-spec-") as tmp:
            root = Path(tmp)
            repo, slo_file = repository(root, models, args.slos), spec(root, models, args.slos)
            out = root / "out"
            command = [sys.executable, "-m", "triton_sre.cli", "lint", "--format", "json", "--target", "cpu"]
            # cwd first on sys.path under `-m`: the package of `cwd` is the one measured
            r = timed_command([*command, "--spec", str(slo_file), str(repo)], cwd, stdout=out)
            digest = hashlib.sha256(out.read_bytes().replace(tmp.encode(), b"TMP")).hexdigest()[:16]
        print(
            f"| {models:,} × {args.slos:,} | {r['wall_s']:.1f} s | {r['cpu_s']:.1f} s | {r['rss_mb']:.0f} MB "
            f"| {r['exit']:.0f} | {digest} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
