"""Benchmark: doctor's LLM-SLO check (`doctor/llmslo.uncovered_llm_slos`) with large selectors (fleet34).

Two cases, each size in a child process (CPU of the call, a digest of its answer: the same inputs give
the same digest in every tree):
- `list`: `--slos` ttft SLOs, each a list naming half of N models (every other one), against the N plain
  models of the server (N from `--models`);
- `mixed`: 2,000 ttft SLOs, a regex and a two-name list in turn, against N models.

    python bench/bench_doctor_llm_slos.py [--models 2500,10000] [--slos 4] [--src DIR]

`--src DIR` measures another checkout's package (e.g. /work/main) on the same inputs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from childrun import add_src_and_child, run_child


def run(case: str, models: int, slos: int) -> dict[str, float | str]:
    from triton_sre.doctor.facts import ModelFacts
    from triton_sre.doctor.llmslo import uncovered_llm_slos
    from triton_sre.slo import parse_spec

    lines = ["slos:"]
    if case == "list":
        names = ", ".join(f"m{j}" for j in range(0, models, 2))
        for i in range(slos):
            lines.append(
                f"  - {{name: ttft-{i}, type: ttft, models: [{names}], objective: 99, threshold: 250ms}}"
            )
    else:
        for i in range(2000):
            selector = f'{{regex: "m{i}_.*"}}' if i % 2 == 0 else f"[m{i}_a, m{i}_b]"
            lines.append(
                f"  - {{name: ttft-{i}, type: ttft, models: {selector}, objective: 99, threshold: 250ms}}"
            )
    spec = parse_spec("\n".join(lines) + "\n")
    if case == "list":
        facts = [ModelFacts(name=f"m{j}") for j in range(models)]
    else:
        facts = [ModelFacts(name=f"m{j % 2000}_{'ab'[j % 2] if j < 4000 else j}") for j in range(models)]
    started = time.process_time()
    out = uncovered_llm_slos(facts, spec)
    cpu = time.process_time() - started
    return {"cpu_s": cpu, "slos": len(out), "digest": hashlib.sha256(repr(out).encode()).hexdigest()[:16]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="2500,10000", help="comma-separated model counts")
    parser.add_argument("--slos", type=int, default=4, help="list SLOs of the `list` case")
    parser.add_argument("--only", default="list,mixed")
    add_src_and_child(parser, nargs=2, metavar=("CASE", "MODELS"))
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run(args.child[0], int(args.child[1]), args.slos)))
        return 0
    print("| case | models | CPU of the call | SLOs reported | digest |")
    print("| --- | --- | --- | --- | --- |")
    for case in args.only.split(","):
        for n in args.models.split(","):
            r = run_child(__file__, [f"--slos={args.slos}", "--child", case, n], args.src)
            print(f"| {case} | {int(n):,} | {r['cpu_s']:.2f} s | {r['slos']} | {r['digest']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
