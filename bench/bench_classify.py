"""Benchmark: classifying texts (`frames._first_rule` under `diagnose_reason`), and the corpus's findings.

Times, in a child process per source tree, `diagnose_reason` over the 3,334 distinct UNAVAILABLE
reasons of `bench_exporter_fleet.py`'s 10,000-model index (what its first poll diagnoses) and
`diagnose_events(parse_text(text))` over every corpus log (tests/data/logs/**/*.log).
``--baseline-src DIR`` (``git archive COMMIT triton_sre runbooks | tar -x -C DIR``) runs the same
on an older tree and counts the logs whose findings (runbook, severity, model, evidence) are identical.

    python bench/bench_classify.py [--baseline-src DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "tests" / "data" / "logs"


def measure(src: str) -> dict:
    """Run in the child: the timings and every log's findings under source tree ``src``."""
    sys.path.insert(0, src)
    from triton_sre.diagnosis import frames
    from triton_sre.diagnosis.engine import diagnose_events, diagnose_reason
    from triton_sre.diagnosis.logparse import parse_text

    sys.path.insert(0, str(ROOT / "bench"))  # after the package: bench_exporter_fleet puts ROOT first
    from bench_exporter_fleet import REASON

    assert frames.__file__.startswith(src), frames.__file__

    reasons = [REASON.format(name=f"model_{m:04d}", n=m) + "x" * 400 for m in range(0, 10000, 3)]
    start = time.process_time()
    [diagnose_reason(r) for r in reasons]
    reasons_s = time.process_time() - start
    findings = {}
    start = time.process_time()
    for path in sorted(LOGS.rglob("*.log")):
        report = diagnose_events(parse_text(path.read_text(encoding="utf-8", errors="replace")))
        findings[str(path.relative_to(LOGS))] = [
            [f.runbook, f.severity, f.model, [[e.line, e.text] for e in f.evidence]] for f in report.findings
        ]
    corpus_s = time.process_time() - start
    return {"reasons": len(reasons), "reasons_cpu_s": round(reasons_s, 3), "corpus_cpu_s": round(corpus_s, 3),
            "findings": findings}  # fmt: skip


def run(src: Path) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(src)], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--baseline-src", type=Path, help="also measure this older source tree")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        return 0
    after = run(ROOT)
    rows = {"after": after}
    if args.baseline_src:
        rows["before"] = run(args.baseline_src.resolve())
    for name, r in rows.items():
        per = r["reasons_cpu_s"] / r["reasons"] * 1e3
        print(f"{name}: {r['reasons']} reasons {r['reasons_cpu_s']} s CPU ({per:.2f} ms each); "
              f"{len(r['findings'])} corpus logs {r['corpus_cpu_s']} s CPU")  # fmt: skip
    if args.baseline_src:
        before, logs = rows["before"]["findings"], after["findings"]
        same = sum(before.get(k) == v for k, v in logs.items())
        print(f"findings: {same} of {len(logs)} logs identical")
        return 0 if same == len(logs) == len(before) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
