"""Benchmark: `triton-sre generate` for a fleet of clusters: the cluster label set, N autoscaled
deployments (each its own scrape job, the signals in turn), N blue/green pairs and N SLOs (one
model each, availability and latency in turn), each run under `/usr/bin/time -v`; the same spec
rendered as `stack up` renders its workdir (`render_all` and the Prometheus, Alertmanager and
Grafana configs, in a child under `/usr/bin/time -v`: `--child-stack N`).

Sizes go 1x, 4x, 16x of `--base` (default 250: 250 / 1,000 / 4,000 of each): the ratios show
whether a part grows faster than its input.

    python bench/bench_generate_fleet.py [--base 250] [--scales 1,4,16]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_fleet_inputs import print_table, timed, timed_command

ROOT = Path(__file__).resolve().parent.parent
SIGNALS = ("pending_requests", "queue_time", "llm_waiting", "llm_kv_cache")


def spec_text(n: int) -> str:
    lines = [
        "scrape: {triton_job: triton, exporter_job: triton-sre, latency_metrics: [summary]}",
        "cluster_label: cluster",
        "slos:",
    ]
    for i in range(n):
        if i % 2:
            lines.append(
                f"  - {{name: latency-{i}, type: latency, models: [model-{i}], objective: 99, period: 30d,"
                " threshold: 500ms, quantile: 0.99, min_request_rate: 0.1}"
            )
        else:
            lines.append(
                f"  - {{name: availability-{i}, type: availability, models: [model-{i}], objective: 99.9,"
                " period: 30d, min_request_rate: 0.1}"
            )
    lines.append("autoscaling:")
    for i in range(n):
        lines.append(
            f"  - {{deployment: triton-{i}, job: triton-{i}, signal: {SIGNALS[i % len(SIGNALS)]},"
            " min_replicas: 2, max_replicas: 20, load_time: 45s}"
        )
    lines.append("rollout:\n  pairs:")
    lines += [
        f"    - {{name: pair-{i}, baseline: model-{i}_blue, candidate: model-{i}_green}}" for i in range(n)
    ]
    return "\n".join(lines) + "\n"


def stack_child(n: int) -> None:
    """What `stack up` renders before it starts anything (stack/local.py Stack.render), in memory."""
    from triton_sre.generate.command import no_full_collections, render_all
    from triton_sre.slo import parse_spec
    from triton_sre.stack import render

    spec = parse_spec(spec_text(n), "fleet.yaml")
    with no_full_collections():
        files = {**render_all(spec, "runbooks/"), **render.render_configs(spec, render.compose_topology())}
    print(sum(len(text) for text in files.values()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=int, default=250)
    parser.add_argument("--scales", default="1,4,16")
    parser.add_argument("--only", default="generate,stack")
    parser.add_argument("--child-stack", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_stack is not None:
        stack_child(args.child_stack)
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-genfleet-") as tmp:
        for scale in (int(s) for s in args.scales.split(",")):
            n = args.base * scale
            spec = Path(tmp) / f"spec-{n}.yaml"
            spec.write_text(spec_text(n))
            if "stack" in args.only:
                rows.append(
                    (
                        f"stack up's render, {n:,} SLOs + autoscaled jobs + pairs",
                        timed_command([sys.executable, __file__, "--child-stack", str(n)], ROOT),
                    )
                )
            if "generate" not in args.only:
                continue
            notes: list[str] = []
            figures = timed(
                ["generate", "--spec", str(spec), "--out", str(Path(tmp) / f"out-{n}")], Path(tmp), notes
            )
            files = sum(1 for p in (Path(tmp) / f"out-{n}").rglob("*") if p.is_file())
            rows.append(
                (f"generate, cluster label, {n:,} SLOs + autoscaled jobs + pairs ({files} files)", figures)
            )
            for note in notes[-3:]:
                print(note, file=sys.stderr)
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
