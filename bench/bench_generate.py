"""Time and peak memory of `triton-sre generate` on a synthetic spec of N SLOs (issue 28 item 7).

Each SLO covers one model of its own (`models: [model-i]`) and the four SLO types take turns
(availability, latency, ttft, time_per_output_token, shaped like the shipped slos.yaml); with
`--type availability`, every SLO is an availability one (bench/RESULTS.md's 10,000-SLO runs).
Every N runs in a fresh child process, so its peak RSS is its own: the child runs the command
(`triton-sre generate --spec S --out D`, D a new temporary directory: every file it writes, rules,
promtool tests, dashboards, deploy/) and reports wall time, CPU time (user + system,
resource.getrusage) and ru_maxrss.

    python bench/bench_generate.py            # N = 10, 100, 1000
    python bench/bench_generate.py 10 100     # chosen sizes
    python bench/bench_generate.py --type availability 1000 3000 10000
    python bench/bench_generate.py --same-as /work/main 40   # same bytes as another checkout?

`--same-as DIR N` runs generate on the N-SLO spec with this checkout and with the one in DIR (each
in a child process, PYTHONPATH set to it) and compares a SHA-256 of every file written: a speed-up
must not change a byte of the output (exit 1 if it does).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_TEMPLATES = (
    "  - {{name: availability-{i}, type: availability, models: [model-{i}], objective: 99.9,"
    " period: 30d, min_request_rate: 0.1}}",
    "  - {{name: latency-{i}, type: latency, models: [model-{i}], objective: 99, period: 30d,"
    " threshold: 500ms, latency_sli: auto, time_slice: 1m, quantile: 0.99, queue_time_share: 0.5,"
    " min_request_rate: 0.1}}",
    "  - {{name: ttft-{i}, type: ttft, models: [model-{i}], objective: 99, period: 30d,"
    " threshold: 250ms, min_request_rate: 0.1}}",
    "  - {{name: tpot-{i}, type: time_per_output_token, models: [model-{i}], objective: 99,"
    " period: 30d, threshold: 100ms, min_request_rate: 1}}",
)


def spec_text(n: int, kind: str = "mixed") -> str:
    """A valid spec of `n` SLOs, one model each, the four types in turn (or availability only)."""
    lines = ["scrape: {triton_job: triton, exporter_job: triton-sre, latency_metrics: [summary]}", "slos:"]
    templates = _TEMPLATES[:1] if kind == "availability" else _TEMPLATES
    lines += [templates[i % len(templates)].format(i=i) for i in range(n)]
    return "\n".join(lines) + "\n"


def generate(n: int, kind: str, out: Path) -> None:
    """`triton-sre generate` on the N-SLO spec into `out`, in this process, as the CLI runs it."""
    from triton_sre.cli import main as cli

    spec = out.parent / f"synthetic-{n}.yaml"
    spec.write_text(spec_text(n, kind), encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli(["generate", "--spec", str(spec), "--out", str(out), "--runbook-base-url", "runbooks/"])
    if code != 0:
        raise SystemExit(f"generate exited {code}")


def _written(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def digest(n: int, kind: str) -> str:
    h = hashlib.sha256()
    with tempfile.TemporaryDirectory() as tmp:
        files = _written(_run(n, kind, Path(tmp)))
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name] + b"\0")
    return f"{h.hexdigest()} {len(files)} files"


def _run(n: int, kind: str, tmp: Path) -> Path:
    out = tmp / "out"
    generate(n, kind, out)
    return out


def same_as(reference: str, n: int, kind: str) -> int:
    """0 if this checkout and `reference` render the N-SLO spec to the same bytes."""
    here = str(Path(__file__).resolve().parents[1])
    found = {}
    for tree in (here, reference):
        env = {**os.environ, "PYTHONPATH": tree}
        argv = [sys.executable, __file__, "--type", kind, "--digest", str(n)]
        found[tree] = subprocess.run(argv, check=True, capture_output=True, text=True, env=env).stdout.strip()
        print(f"{tree}: {found[tree]}")
    return 0 if found[here] == found[reference] else 1


def child(n: int, kind: str) -> dict[str, float]:
    for module in (
        "triton_sre.cli",
        "triton_sre.generate.command",
        "triton_sre.slo",
        "triton_sre.stack.render",
    ):
        importlib.import_module(module)  # imported outside the measurement, as generate needs them

    with tempfile.TemporaryDirectory() as tmp:
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        out = _run(n, kind, Path(tmp))
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rss = after.ru_maxrss / 1024
    return {"n": n, "wall_s": wall, "cpu_s": cpu, "peak_rss_mb": rss, "output_mb": size / 1e6}


def main(argv: list[str]) -> int:
    kind = "mixed"
    if argv[:1] == ["--type"]:
        kind, argv = argv[1], argv[2:]
    if argv[:1] == ["--child"]:
        print(json.dumps(child(int(argv[1]), kind)))
        return 0
    if argv[:1] == ["--digest"]:
        print(digest(int(argv[1]), kind))
        return 0
    if argv[:1] == ["--same-as"]:
        return same_as(argv[1], int(argv[2]), kind)
    sizes = [int(a) for a in argv] or [10, 100, 1000]
    print("| SLOs | wall | CPU | per SLO (CPU) | peak RSS | output |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in sizes:
        out = subprocess.run(
            [sys.executable, __file__, "--type", kind, "--child", str(n)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        r = json.loads(out.strip().splitlines()[-1])
        print(
            f"| {n} | {r['wall_s']:.1f} s | {r['cpu_s']:.1f} s | {1000 * r['cpu_s'] / n:.0f} ms |"
            f" {r['peak_rss_mb']:.0f} MB | {r['output_mb']:.1f} MB |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
