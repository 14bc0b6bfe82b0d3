"""Benchmark: `triton-sre lint` on hostile config.pbtxt files (issue #12, defect 4).

Each case is a one-model repository linted in its own process (`triton-sre lint --format json`);
the table shows wall time, the process's peak RSS and the finding. The baseline is the sample
repository (imports and the schema dominate).

    python bench/bench_lint.py [--mb 50]

Target: a config over the size limit or nested too deep is a `config-parse-error` finding with
time and memory close to the baseline, whatever its size.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from triton_sre.demo import SAMPLE_REPOSITORY

RUN = (
    "import resource, sys\n"
    "from triton_sre.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)\n"
)
HEAD = 'name: "m"\nbackend: "python"\nmax_batch_size: 0\n'
PARAM = 'parameters { key: "k%d" value { string_value: "v" } }\n'


def write_cases(root: Path, mb: int) -> dict[str, Path]:
    size = mb * 1024 * 1024
    cases = {}
    for name, write in {
        f"{mb} MB of '{{'": lambda f: f.write(b"{" * size),
        f"valid {mb} MB config": lambda f: _valid(f, size),
        "nested 100,000 deep": lambda f: f.write(
            (HEAD + "parameters " + "{ a " * 100_000 + "}" * 100_000).encode()
        ),
    }.items():
        repo = root / f"case{len(cases)}"
        (repo / "m" / "1").mkdir(parents=True)
        (repo / "m" / "1" / "model.py").write_text("")
        with open(repo / "m" / "config.pbtxt", "wb") as handle:
            write(handle)
        cases[name] = repo
    return cases


def _valid(handle, size: int) -> None:
    handle.write(HEAD.encode())
    written, i = len(HEAD), 0
    while written < size:
        line = (PARAM % i).encode()
        handle.write(line)
        written += len(line)
        i += 1


def lint(repo: Path) -> tuple[float, int, str]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", RUN, "lint", "--format", "json", "--target", "cpu", str(repo)],
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.monotonic() - started
    rss_kb = int(done.stderr.strip().splitlines()[-1])
    findings = json.loads(done.stdout)["findings"]
    first = findings[0]["evidence"][0]["text"][:90] if findings else "no finding"
    return elapsed, rss_kb // 1024, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=50, help="size of the large cases in MB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cases = {"sample repository (baseline)": Path(SAMPLE_REPOSITORY), **write_cases(Path(tmp), args.mb)}
        print("| case | wall time | peak RSS | finding |\n| --- | --- | --- | --- |")
        for name, repo in cases.items():
            elapsed, rss_mb, first = lint(repo)
            print(f"| {name} | {elapsed:.2f} s | {rss_mb} MB | {first} |")


if __name__ == "__main__":
    main()
