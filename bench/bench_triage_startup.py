"""Benchmark the start-up of `triton-sre triage`: one pasted line, and `triage --help`.

An operator pasting one failed-load line, and a CI job triaging many small logs, wait for the CLI's start-up
more than for the diagnosis. Times, in a child process each (cwd a temporary directory, so `python -m` finds
the package on PYTHONPATH, not in the working directory):

- ``line``: ``triton-sre triage FILE`` of one real Triton 2.51 failed-load line (the ``bk_onnx``
  backend-not-found line of ``tests/data/logs/real/``; what ``echo LINE | triton-sre triage -`` reads);
- ``help``: ``triton-sre triage --help``;

``--runs`` times each (default 11; the median and the lowest are reported, in CPU seconds of the child,
user + system: the machine is shared), alternating with ``--baseline-src DIR`` (an older source tree of the
package, ``git archive COMMIT triton_sre runbooks | tar -x -C DIR``) when given, whose output must be the
same. Also reports the modules the one-line triage loaded (and whether numpy, requests, pandas, yaml are
among them), from one more run with ``-X importtime``. Python's bytecode cache is written once before
timing (``PYTHONDONTWRITEBYTECODE`` removed from the children's environment), as an installed package has it.

    python bench/bench_triage_startup.py
    python bench/bench_triage_startup.py --runs 15 --baseline-src /tmp/base
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench_triage import _run  # noqa: E402  # (wall s, CPU s, stdout, peak RSS MB) of one child

CAPTURES = ROOT / "tests" / "data" / "logs" / "real"
LINE_MARK = "failed to load 'bk_onnx' version 1"
WATCHED = ("numpy", "requests", "urllib3", "pandas", "yaml", "prometheus_client")


def _one_line() -> str:
    for path in sorted(CAPTURES.glob("*.log")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if LINE_MARK in line:
                return line + "\n"
    raise SystemExit(f"no line holding {LINE_MARK!r} under {CAPTURES}")


def _env(src: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(src)
    return env


def _cmd(case: str, stdin_path: Path) -> list[str]:
    base = [sys.executable, "-m", "triton_sre", "triage"]
    return [*base, "--help"] if case == "help" else [*base, str(stdin_path)]


def _modules(src: Path, log: Path) -> tuple[int, list[str]]:
    """How many modules the one-line triage imported, and which of `WATCHED`."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "triton_sre", "triage", str(log)],
        env=_env(src),
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        check=False,
    )
    rows = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
    names = [row.rsplit("|", 1)[-1].strip() for row in rows[1:]]  # (the first row is the header)
    return len(names), sorted({n for n in names if n in WATCHED})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=11, help="timed runs of each case and tree (default 11)")
    parser.add_argument("--baseline-src", type=Path, help="also time this older source tree, alternating")
    args = parser.parse_args(argv)
    trees = [("this", ROOT)] + ([("baseline", args.baseline_src.resolve())] if args.baseline_src else [])
    with tempfile.TemporaryDirectory(prefix="bench-triage-startup-") as tmp:
        log = Path(tmp) / "one.log"
        log.write_text(_one_line(), encoding="utf-8")
        outputs: dict[tuple[str, str], str] = {}
        for name, src in trees:  # warm the bytecode cache and the page cache; keep the outputs to compare
            for case in ("line", "help"):
                outputs[(name, case)] = _run(_cmd(case, log), env=_env(src))[2]
        cpu: dict[tuple[str, str], list[float]] = {key: [] for key in outputs}
        for _ in range(args.runs):
            for case in ("line", "help"):
                for name, src in trees:
                    cpu[(name, case)].append(_run(_cmd(case, log), env=_env(src))[1])
        print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        print(f"{'tree':9} {'case':5} {'median CPU s':>12} {'lowest':>7}  modules (watched)")
        for name, src in trees:
            count, watched = _modules(src, log)
            for case in ("line", "help"):
                times = cpu[(name, case)]
                mods = f"{count} ({', '.join(watched) or 'none'})" if case == "line" else ""
                print(f"{name:9} {case:5} {statistics.median(times):12.3f} {min(times):7.3f}  {mods}")
        if args.baseline_src:
            same = outputs[("this", "line")] == outputs[("baseline", "line")]
            print(f"one-line report the same as the baseline's: {same}")
            return 0 if same else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
