"""Benchmark: the CLI on fleet-sized inputs, each run under `/usr/bin/time -v`.

- `triage --format json` on a 200,000-line log, three shapes from `bench_triage.py`: `plain` (verbose
  request lines, a few failures), `errors` (a crash loop: every line an E/W line the engine reads),
  `docker-t` (the plain lines behind `docker logs -t` stamps);
- `lint --format json --target cpu` on a repository of `--models` models (the bundled sample's
  models copied round-robin under new names: Python, ensemble-free, broken ones included);
- `generate --out DIR --spec S` on a spec of `--slos` SLOs (`bench_generate.spec_text`).

Wall time, user+system CPU and peak RSS are GNU time's; the exit code is the command's.
The exporter with 2,000 models is `bench_poll.py --models 2000 --versions 1` (its own process split).

    python bench/bench_fleet_inputs.py [--lines 200000] [--models 1000] [--slos 1000]
        [--only triage,lint,generate]
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_generate import spec_text
from bench_triage import generate as generate_log

from triton_sre.demo import SAMPLE_REPOSITORY

TIME = "/usr/bin/time"
_FIELDS = {
    "wall": re.compile(r"Elapsed \(wall clock\) time .*: (?:(\d+):)?(\d+):([\d.]+)"),
    "user": re.compile(r"User time \(seconds\): ([\d.]+)"),
    "sys": re.compile(r"System time \(seconds\): ([\d.]+)"),
    "rss_kb": re.compile(r"Maximum resident set size \(kbytes\): (\d+)"),
}


def timed(
    args: list[str], cwd: Path, notes: list[str] | None = None, stdout: Path | None = None
) -> dict[str, float]:
    """Run `triton-sre ARGS` under GNU time; wall/CPU seconds, peak RSS in MB and the exit code.
    `notes`, when given, gets the command's own stderr lines (those starting `triton-sre `);
    `stdout`, when given, is the file the command's output goes to."""
    return timed_command([sys.executable, "-m", "triton_sre.cli", *args], cwd, notes, stdout)


def timed_command(
    command: list[str], cwd: Path, notes: list[str] | None = None, stdout: Path | None = None
) -> dict[str, float]:
    """`timed` of any command line (a bench's own child process), with this checkout first on
    PYTHONPATH: the package measured is the one beside the bench, whatever `cwd` would import."""
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    with open(stdout or os.devnull, "wb") as out:
        done = subprocess.run(
            [TIME, "-v", *command],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    if notes is not None:
        notes.extend(line for line in done.stderr.splitlines() if line.startswith("triton-sre "))
    found = {key: pattern.search(done.stderr) for key, pattern in _FIELDS.items()}
    if not all(found.values()):
        raise SystemExit(f"no GNU time figures in: {done.stderr[-500:]}")
    hours, minutes, seconds = found["wall"].groups()  # type: ignore[union-attr]
    wall = int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
    return {
        "wall_s": wall,
        "cpu_s": float(found["user"].group(1)) + float(found["sys"].group(1)),  # type: ignore[union-attr]
        "rss_mb": int(found["rss_kb"].group(1)) / 1024,  # type: ignore[union-attr]
        "exit": done.returncode,
    }


def print_table(rows: list[tuple[str, dict[str, float]]]) -> None:
    """`timed` figures as the Markdown table bench/RESULTS.md keeps."""
    print("| input | wall | CPU | peak RSS | exit |")
    print("| --- | --- | --- | --- | --- |")
    for name, r in rows:
        print(
            f"| {name} | {r['wall_s']:.1f} s | {r['cpu_s']:.1f} s | {r['rss_mb']:.0f} MB | {r['exit']:.0f} |"
        )


def log_of_lines(work: Path, shape: str, lines: int) -> Path:
    """The first `lines` lines of a bench_triage log of that shape."""
    whole = work / f"{shape}-whole.log"
    size_mb = 1
    while True:  # grow until the shape has enough lines (crash-loop lines are longer)
        generate_log(whole, shape, size_mb)
        with whole.open("rb") as f:
            if sum(1 for _ in f) >= lines:
                break
        size_mb *= 2
    out = work / f"{shape}-{lines}.log"
    with whole.open("rb") as src, out.open("wb") as dst:
        dst.writelines(itertools.islice(src, lines))
    whole.unlink()
    return out


def fleet_repository(root: Path, models: int) -> Path:
    """`models` models: the sample's models copied round-robin, each renamed in folder and config."""
    samples = sorted(p for p in SAMPLE_REPOSITORY.iterdir() if (p / "config.pbtxt").is_file())
    repo = root / "repository"
    repo.mkdir()
    for i in range(models):
        sample = samples[i % len(samples)]
        target = repo / f"{sample.name}_{i:04d}"
        shutil.copytree(sample, target, ignore=shutil.ignore_patterns("__pycache__"))
        config = target / "config.pbtxt"
        text = config.read_text()
        config.write_text(re.sub(r'^name:\s*"[^"]*"', f'name: "{target.name}"', text, count=1, flags=re.M))
    return repo


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--slos", type=int, default=1000)
    parser.add_argument("--only", default="triage,lint,generate")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    rows: list[tuple[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        work = Path(tmp)
        if "triage" in only:
            for shape in ("plain", "errors", "docker-t"):
                log = log_of_lines(work, shape, args.lines)
                size = log.stat().st_size / 1e6
                rows.append(
                    (
                        f"triage {shape}, {args.lines:,} lines ({size:.0f} MB)",
                        timed(["triage", "--format", "json", str(log)], work),
                    )
                )
                log.unlink()
        if "lint" in only:
            repo = fleet_repository(work, args.models)
            rows.append(
                (
                    f"lint, {args.models:,} models",
                    timed(["lint", "--format", "json", "--target", "cpu", str(repo)], work),
                )
            )
        if "generate" in only:
            spec = work / "fleet-slos.yaml"
            spec.write_text(spec_text(args.slos))
            rows.append(
                (
                    f"generate, {args.slos:,} SLOs",
                    timed(["generate", "--spec", str(spec), "--out", str(work / "out")], work),
                )
            )
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
