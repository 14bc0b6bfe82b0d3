"""Benchmark: the report's SLO section at fleet size, in process: many clusters, many SLOs (fleet34).

- `clusters`: `report/slo.cluster_tables` of one availability SLO (the spec's `cluster_label` set) on
  parts as `slo_section` hands them: per-series increases and per-step frames of `--models` models in each
  of K clusters, `--points` steps each (K from `--clusters`);
- `slos`: `report/slo_text.with_unserved` on a section of N SLOs (from `--slos`; regexes and lists in
  turn) with a table in two clusters of every three of `--slo-clusters`, and `--unserved` models not
  served spread over the clusters.

Each size runs in a child process (CPU time of the call, the child's peak RSS, a digest of the tables
it returned: the same inputs give the same digest in every tree).

    python bench/bench_report_slo_fleet.py [--clusters 10,40] [--slos 200,800] [--src DIR]

`--src DIR` measures another checkout's package (e.g. /work/main) on the same inputs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from childrun import add_src_and_child, run_child


def clusters_case(k: int, models: int, points: int) -> tuple[float, str, int]:
    import numpy as np
    import pandas as pd

    from triton_sre import conventions as c
    from triton_sre.report.slo import BAD, FAILURE, SUCCESS, cluster_tables
    from triton_sre.slo import parse_spec

    spec = "cluster_label: cluster\nslos:\n  - {name: av, type: availability, models: all, objective: 99}"
    slo = parse_spec(spec).slos[0]
    rng = np.random.default_rng(34)
    names = [f"k{i:03d}" for i in range(k)]

    def increases(failures: bool) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "cluster": np.repeat(names, models),
                c.LABEL_MODEL: np.tile([f"m{m}" for m in range(models)], k),
                c.LABEL_VERSION: "1",
                c.LABEL_JOB: "triton",
                **({c.LABEL_REASON: "BACKEND"} if failures else {}),
                "increase": rng.integers(1, 1000, k * models).astype(float),
            }
        )

    def steps() -> pd.DataFrame:
        n = k * models
        return pd.DataFrame(
            {
                "cluster": np.repeat(names, models * points),
                c.LABEL_MODEL: np.tile(np.repeat([f"m{m}" for m in range(models)], points), k),
                c.LABEL_VERSION: "1",
                "timestamp": np.tile(np.arange(points) * 15.0, n),
                "value": rng.random(n * points),
            }
        )

    parts = (
        {BAD: increases(True), SUCCESS: increases(False), FAILURE: increases(True)},
        {p: steps() for p in (BAD, SUCCESS, FAILURE)},
    )
    started = time.process_time()
    tables = cluster_tables(slo, parts, 86400.0, "cluster")
    cpu = time.process_time() - started
    digest = hashlib.sha256("".join(f"{t.cluster}\n{t.rows.to_csv()}" for t in tables).encode()).hexdigest()
    return cpu, digest[:16], len(tables)


def slos_case(n: int, clusters: int, unserved: int) -> tuple[float, str, int]:
    import pandas as pd

    from triton_sre.report.slo import COLUMNS, SLOSection, SLOTable
    from triton_sre.report.slo_text import with_unserved
    from triton_sre.slo import parse_spec

    lines = ["slos:"]
    for i in range(n):
        selector = f'{{regex: "m{i}_.*"}}' if i % 2 == 0 else f"[m{i}_a, m{i}_b]"
        lines.append(
            f"  - {{name: av-{i}, type: availability, models: {selector}, objective: 99, period: 30d}}"
        )
    slos = parse_spec("\n".join(lines) + "\n").slos
    tables = [
        SLOTable(
            slo, pd.DataFrame([{col: f"m{i}_a" if col == "model" else 0 for col in COLUMNS}]), cluster=f"c{k}"
        )
        for i, slo in enumerate(slos)
        for k in range(clusters)
        if (i + k) % 3
    ]
    gone = tuple((f"c{u % clusters}", f"m{u % n}_{'ab'[u % 2]}", "UNAVAILABLE") for u in range(unserved))
    section = SLOSection(tables=tuple(tables), unserved=gone)
    started = time.process_time()
    out = with_unserved(section, slos)
    cpu = time.process_time() - started
    text = repr([(t.slo.name, t.cluster, t.unserved, list(t.rows["model"])) for t in out.tables])
    return cpu, hashlib.sha256(text.encode()).hexdigest()[:16], len(out.tables)


def child(case: str, size: int, args: argparse.Namespace) -> None:
    if case == "clusters":
        cpu, digest, tables = clusters_case(size, args.models, args.points)
    else:
        cpu, digest, tables = slos_case(size, args.slo_clusters, args.unserved)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"cpu_s": cpu, "digest": digest, "tables": tables, "rss_mb": rss}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", default="10,40", help="cluster counts of the `clusters` case")
    parser.add_argument("--models", type=int, default=10, help="models in each cluster")
    parser.add_argument("--points", type=int, default=500, help="steps of each per-step series")
    parser.add_argument("--slos", default="200,800", help="SLO counts of the `slos` case")
    parser.add_argument("--slo-clusters", type=int, default=10, help="clusters of the `slos` case")
    parser.add_argument("--unserved", type=int, default=100, help="models not served in the `slos` case")
    parser.add_argument("--only", default="clusters,slos")
    add_src_and_child(parser, nargs=2, metavar=("CASE", "SIZE"))
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]), args)
        return 0
    passed = [f"--models={args.models}", f"--points={args.points}", f"--slo-clusters={args.slo_clusters}"]
    passed.append(f"--unserved={args.unserved}")
    print("| case | size | CPU of the call | peak RSS | tables | digest |")
    print("| --- | --- | --- | --- | --- | --- |")
    for case in args.only.split(","):
        sizes = args.clusters if case == "clusters" else args.slos
        for size in sizes.split(","):
            r = run_child(__file__, [*passed, "--child", case, size], args.src)
            what = "clusters" if case == "clusters" else f"SLOs ({args.slo_clusters} clusters)"
            print(
                f"| {case} | {int(size):,} {what} | {r['cpu_s']:.2f} s | {r['rss_mb']:.0f} MB "
                f"| {r['tables']:,} | {r['digest']} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
